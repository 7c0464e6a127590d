"""Pairwise precision and recall of "same story" on the labelled BBC News article pairs.

    .venv/bin/python -m bench.eval_story [--cache DIR] [--pairs FILE ...] [--tune]

The pairs (``bench/data/story_pairs/part*.tsv``: article_a, article_b, label, note; paths under
``../shared/data/bbc-news/``) were labelled blind, before any tuning: ``same_event`` (one event:
same actors, place and time), ``same_topic`` (alike subject, another event) or ``unrelated``.
A pair is positive when it is ``same_event``.

The pairs are split in two halves by the SHA-1 of the pair (its two paths, sorted): the
**tuning** half (first hex digit 0-7) is the only one the weights of ``retrieval.story.RULE``
were chosen on; the **report** half (8-f) was not looked at while tuning. Both are printed,
for the old topic clustering (``retrieval.digest.cluster``, the grouping before story
grouping) and the new pair rule (``retrieval.story``). ``--tune`` searches the rule's weights
on the tuning half and prints the best ones with precision >= 0.90 (it changes nothing).

The articles are ingested as they are (no near-duplicate merging, which would hide a pair)
into a temporary library, or into ``--cache DIR``, reused by the next run.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import itertools
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from retrieval.digest import cluster, digest_items
from retrieval.embedder import Embedder
from retrieval.library import Library, content_hash
from retrieval.loader import read_article_file
from retrieval.story import RULE, PairEvidence, StoryFeatures, StoryRule, evidence

ROOT = Path(__file__).resolve().parent.parent
BBC = (ROOT / ".." / "shared" / "data" / "bbc-news").resolve()
PAIRS = sorted((ROOT / "bench" / "data" / "story_pairs").glob("part*.tsv"))
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


def old_decision(means: dict[int, np.ndarray], words: dict[int, frozenset[str]], a: int, b: int) -> bool:
    """The topic clustering before story grouping, on the pair alone: one group or two."""
    return len(cluster([means[a], means[b]], [words[a], words[b]])) == 1


def score(pairs: list[Pair], decide: dict[tuple[str, str], bool]) -> Scores:
    result = Scores()
    for pair in pairs:
        result.add(decide[(pair.a, pair.b)], pair)
    return result


def tune(pairs: list[Pair], found: dict[tuple[str, str], PairEvidence]) -> None:
    """Grid search on the tuning half: the best recall at precision >= TARGET_PRECISION."""
    best: list[tuple[float, float, StoryRule]] = []
    for threshold, weight in itertools.product(np.arange(1.0, 2.61, 0.01), (0.0, 0.5, 0.75, 1.0, 1.25, 1.5)):
        rule = replace(RULE, threshold=round(float(threshold), 2), match_weight=weight)
        result = Scores()
        for pair in pairs:
            result.add(bool(found[(pair.a, pair.b)].same(rule)[0, 1]), pair)
        if result.precision >= TARGET_PRECISION:
            best.append((result.recall, result.precision, rule))
    best.sort(key=lambda item: (item[0], item[1]), reverse=True)
    print("\nBest rules on the tuning half (recall, precision):")
    for recall, precision, rule in best[:10]:
        print(f"  {recall:.3f} {precision:.3f}  {rule}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", nargs="*", type=Path, default=PAIRS, help="TSV files of labelled pairs")
    parser.add_argument("--cache", type=Path, help="keep the ingested articles here and reuse them")
    parser.add_argument("--tune", action="store_true", help="search the rule's weights on the tuning half")
    parser.add_argument("--errors", action="store_true", help="list the new rule's wrong pairs of the tuning half")
    args = parser.parse_args(argv)
    pairs = read_pairs(args.pairs)
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
        new: dict[tuple[str, str], bool] = {}
        found: dict[tuple[str, str], PairEvidence] = {}
        for pair in pairs:
            a, b = ids[pair.a], ids[pair.b]
            key = (pair.a, pair.b)
            if a == b:  # two files with one text: stored once, trivially one story
                old[key] = new[key] = True
                found[key] = evidence([features[a], features[a]], floor=-1.0)
                continue
            old[key] = old_decision(means, words, a, b)
            found[key] = evidence([features[a], features[b]], floor=-1.0)  # every match, for --tune
            new[key] = bool(found[key].same(RULE)[0, 1])
        counts = Counter(pair.label for pair in pairs)
        print(f"{len(pairs)} pairs: " + ", ".join(f"{label} {counts[label]}" for label in LABELS))
        print(f"Target: precision >= {TARGET_PRECISION:.2f} at recall >= {TARGET_RECALL:.2f} (positive = same_event)")
        for half in ("tuning", "report"):
            subset = [pair for pair in pairs if pair.half == half]
            positives = sum(pair.positive for pair in subset)
            print(f"\n{half} half ({len(subset)} pairs, {positives} same_event):")
            print(f"  old topic clustering: {score(subset, old).line()}")
            print(f"  story grouping:       {score(subset, new).line()}")
        tuning = [pair for pair in pairs if pair.half == "tuning"]
        if args.errors:
            print("\nWrong on the tuning half:")
            for pair in tuning:
                if new[(pair.a, pair.b)] != pair.positive:
                    e = found[(pair.a, pair.b)]
                    print(
                        f"  {pair.label:10} {pair.a} {pair.b} cosine {e.cosine[0, 1]:.3f}"
                        f" matches {e.matches[0, 1]:.3f} apart {bool(e.apart[0, 1])}"
                    )
        if args.tune:
            tune(tuning, found)
    finally:
        library.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
