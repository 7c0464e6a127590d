"""The speaker timeline's recall and precision on the labelled BBC pairs (issue 35, part 2).

    python -m bench.quality.eval_quote_timeline ../shared/data/bbc-news [--library /tmp/byline-bbc]
        [--fit] [--misses] [--labels bench/data/quote_timeline_blind]

For each (speaker, topic) of ``bench/data/quote_timeline/*.jsonl`` the timeline is asked as a
user would (``asked_as``, ``topic``). A labelled quote is found when a returned quote holds its
words or is held by them (case, spacing and punctuation aside); a returned quote is right when
it matches some label. Labels are deduplicated by text (near-duplicate articles carry the same
quotes). ``--fit`` prints, for every weight pair on a small grid, the best threshold in sample
and the figures leave-one-pair-out (the threshold chosen on the other 14 pairs).

``--labels`` scores another folder of pairs: ``bench/data/quote_timeline_blind`` is the held-out
set, written blind after the rule was fitted on ``quote_timeline``; score it, never fit on it.

Without the BBC folder it says so and exits 0. The library is built once in ``--library``
(a few minutes for 1,713 articles) and reused.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench.paths import DATA
from retrieval.features.quote_timeline import speaker_timeline
from retrieval.features.quote_topics import RULE, TopicMatcher, TopicRule
from retrieval.library import Library

LABELS = DATA / "quote_timeline"
DEFAULT_LIBRARY = Path("/tmp/byline-bbc-quote-timeline")


@dataclass
class Pair:
    """One labelled (speaker, topic) and its quotes' words."""

    name: str
    asked_as: str
    topic: str
    texts: list[str] = field(default_factory=list)


def load_pairs(directory: Path = LABELS) -> list[Pair]:
    pairs = []
    for path in sorted(directory.glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        pair = Pair(path.stem, rows[0]["asked_as"], rows[0]["topic"])
        for row in rows:
            if _norm(row["text"]) not in {_norm(t) for t in pair.texts}:
                pair.texts.append(row["text"])
        pairs.append(pair)
    return pairs


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.replace("’", "'").replace("'", "")).lower().split())


def matches(label: str, found: str) -> bool:
    a, b = _norm(label), _norm(found)
    return bool(a and b) and (a in b or b in a)


@dataclass
class Tally:
    labels: int = 0
    found: int = 0
    returned: int = 0
    right: int = 0

    def add(self, other: Tally) -> None:
        self.labels += other.labels
        self.found += other.found
        self.returned += other.returned
        self.right += other.right

    @property
    def recall(self) -> float:
        return self.found / self.labels if self.labels else 0.0

    @property
    def precision(self) -> float:
        return self.right / self.returned if self.returned else 1.0


def score(pair: Pair, returned: Sequence[str]) -> Tally:
    return Tally(
        labels=len(pair.texts),
        found=sum(any(matches(t, r) for r in returned) for t in pair.texts),
        returned=len(returned),
        right=sum(any(matches(t, r) for t in pair.texts) for r in returned),
    )


def open_library(bbc: Path, directory: Path) -> Library:
    library = Library.open(directory)
    if library.store.article_count() == 0:
        print(f"Ingesting {bbc} into {directory} once (a few minutes); later runs reuse it.", file=sys.stderr)
        library.ingest([bbc / section for section in ("business", "entertainment", "politics", "tech")])
    return library


def run(library: Library, pairs: list[Pair], misses: bool = False) -> Tally:
    total = Tally()
    stored = 0  # labels that some stored quote of the matched speaker holds: recall's ceiling here
    print(f"{'pair':28} {'labels':>6} {'found':>5} {'returned':>8} {'right':>5}  speakers")
    for pair in pairs:
        timeline = speaker_timeline(library, pair.asked_as, pair.topic)
        returned = [q.quote.text for q in timeline.quotes]
        everything = [q.quote.text for q in speaker_timeline(library, pair.asked_as, group=False).quotes]
        stored += sum(any(matches(t, r) for r in everything) for t in pair.texts)
        tally = score(pair, returned)
        total.add(tally)
        print(
            f"{pair.name:28} {tally.labels:6} {tally.found:5} {tally.returned:8} {tally.right:5}  "
            f"{', '.join(timeline.speakers)[:60]}"
        )
        if misses:
            for text in pair.texts:
                if not any(matches(text, r) for r in returned):
                    print(f"    missed: {text[:100]!r}")
            for text in returned:
                if not any(matches(t, text) for t in pair.texts):
                    print(f"    extra:  {text[:100]!r}")
    print(
        f"\nrecall {total.recall:.3f} ({total.found}/{total.labels})  precision {total.precision:.3f} "
        f"({total.right}/{total.returned})\nlabels stored as a quote of the speaker at ingest: {stored}/{total.labels} "
        f"(recall's ceiling without better attribution; the rest are one-word quotes, unattributed, or "
        f"attributed to someone else)"
    )
    return total


# One stored quote of a labelled speaker: (pair index, closeness, article, words, labelled on
# topic, paragraph, gap), the parts of ``quote_topics.TopicScore``.
Candidate = tuple[int, float, float, float, bool, float, float]


def fit(library: Library, pairs: list[Pair]) -> None:
    """Every candidate quote's parts, then a grid over the weights and threshold."""
    candidates: list[Candidate] = []
    for index, pair in enumerate(pairs):
        timeline = speaker_timeline(library, pair.asked_as, "", group=False)
        ranges = library.store.speaker_quote_ranges(timeline.speakers)
        parts = TopicMatcher(library, pair.topic).score_ranges(ranges)
        quotes = library.store.quotes_by_ids(ranges[:, 0].tolist()) if len(ranges) else {}
        for row, part in zip(ranges.tolist(), parts, strict=True):
            quote = quotes[int(row[0])]
            label = any(matches(t, quote.text) for t in pair.texts)
            candidates.append((index, part.closeness, part.article, part.words, label, part.paragraph, part.gap))
    print(f"{len(candidates)} candidate quotes, {sum(c[4] for c in candidates)} labelled on topic")
    grid = [
        (a, w, p, g) for a in (1.0, 1.5) for w in (0.15, 0.3, 0.45, 0.6) for p in (0.5, 1.0, 1.5) for g in (0.0, 0.5)
    ]
    for article_weight, words_weight, paragraph_weight, gap_weight in grid:
        rule = TopicRule(article_weight, words_weight, 0.0, paragraph_weight, gap_weight)
        threshold, f = _best_threshold(candidates, rule, range(len(pairs)))
        held = Tally()
        for left_out in range(len(pairs)):
            others = [i for i in range(len(pairs)) if i != left_out]
            chosen, _ = _best_threshold(candidates, rule, others)
            held.add(_tally(candidates, replace(rule, threshold=chosen), [left_out], pairs))
        inside = _tally(candidates, replace(rule, threshold=threshold), range(len(pairs)), pairs)
        print(
            f"article {article_weight:.2f} words {words_weight:.2f} paragraph {paragraph_weight:.2f} "
            f"gap {gap_weight:.2f}: "
            f"threshold {threshold:.3f} in sample R {inside.recall:.3f} P {inside.precision:.3f}; "
            f"leave-one-pair-out R {held.recall:.3f} P {held.precision:.3f}"
        )


def _value(candidate: Candidate, rule: TopicRule) -> float:
    if max(candidate[1], candidate[5]) < rule.floor:
        return -9.0  # below the floor: off the topic at any threshold
    return (
        candidate[1]
        + rule.article_weight * candidate[2]
        + rule.words_weight * candidate[3]
        + rule.paragraph_weight * candidate[5]
        - rule.gap_weight * candidate[6]
    )


def _tally(candidates: list[Candidate], rule: TopicRule, pairs_in: Sequence[int] | range, pairs: list[Pair]) -> Tally:
    """Recall over the labelled texts' stored quotes, precision over those returned (candidates
    are stored quotes, so labels with no stored quote are not counted here)."""
    chosen = [c for c in candidates if c[0] in pairs_in]
    on = [c for c in chosen if _value(c, rule) >= rule.threshold]
    return Tally(
        labels=sum(c[4] for c in chosen), found=sum(c[4] for c in on), returned=len(on), right=sum(c[4] for c in on)
    )


def _best_threshold(
    candidates: list[Candidate], rule: TopicRule, pairs_in: Sequence[int] | range
) -> tuple[float, float]:
    """The threshold with the best F1 (recall and precision alike) over these pairs' quotes."""
    chosen = sorted(
        ((round(_value(c, rule), 3), c[4]) for c in candidates if c[0] in pairs_in), key=lambda vc: vc[0], reverse=True
    )
    labels = sum(on_topic for _, on_topic in chosen)
    best = (0.0, -1.0)
    right = 0
    # Highest value first: each distinct value is a threshold keeping everything above it.
    for index, (value, on_topic) in enumerate(chosen):
        right += on_topic
        if index + 1 < len(chosen) and chosen[index + 1][0] == value:
            continue  # a tie: the threshold keeps all of it
        if not labels:
            break
        recall, precision = right / labels, right / (index + 1)
        f = 2 * recall * precision / (recall + precision) if right else 0.0
        if f > best[1]:
            best = (value - 1e-6, f)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bbc", type=Path, help="the bbc-news folder (business, entertainment, politics, tech)")
    parser.add_argument("--library", type=Path, default=DEFAULT_LIBRARY, help="where the BBC library is built once")
    parser.add_argument("--fit", action="store_true", help="grid over the topic rule's weights (see the docstring)")
    parser.add_argument("--misses", action="store_true", help="list the labels missed and the quotes returned wrongly")
    parser.add_argument(
        "--labels", type=Path, action="append", help="a folder of labelled pairs (*.jsonl); repeat to join folders"
    )
    args = parser.parse_args(argv)
    if not (args.bbc / "politics").is_dir():
        print(f"Skipped: no BBC corpus at {args.bbc} (give the bbc-news folder).")
        return 0
    library = open_library(args.bbc, args.library)
    try:
        pairs = [pair for folder in args.labels or [LABELS] for pair in load_pairs(folder)]
        print(f"{len(pairs)} pairs, {sum(len(p.texts) for p in pairs)} labelled quotes; rule {RULE}")
        if args.fit:
            fit(library, pairs)
        else:
            run(library, pairs, args.misses)
    finally:
        library.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
