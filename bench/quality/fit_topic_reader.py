"""Fit how a speaker timeline decides a quote is on a topic: the topic rule, its margin, and a
trained topic reader beside them.

    .venv/bin/python -m bench.quality.fit_topic_reader --model /tmp/byline-topics/model \
        --timelines quote_timeline quote_timeline_blind [--labels] [--library /tmp/byline-tl]

``--model`` is a cross-encoder trained by ``bench/reader/train_reader.py`` on
``bench/quality/topic_pairs.py``'s pairs (the blind topic labels of ``bench/data/topics``). Each
(speaker, topic) of every timeline set (``bench/data/quote_timeline*``) is scored as the
timeline scores it: every stored quote of the person, with ``quote_topics.TopicMatcher``'s rule
score and the reader's calibrated log-odds on ``topic_pairs.topic_candidate``. For each reader weight ``w``
and margin on a grid, the threshold on ``rule + w * logit`` with the best F1 is chosen on the
fitting quotes (the timeline folders named by ``--timelines``, the ones the rule was fitted on,
and with ``--labels`` or without ``--timelines`` the labels' ``--split``: speakers the reader
never trained on), and the same setting is then scored on every other timeline folder. Weight 0
is the rule alone (``TopicRule.margin`` was chosen so). Recall and precision here are over stored
quotes, so they differ from ``eval_quote_timeline``'s end-to-end figures.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.paths import DATA, PROJECT
from bench.quality.eval_quote_timeline import load_pairs, matches, open_library
from bench.quality.topic_pairs import candidate_texts, load_labels
from retrieval.answering.reader import Reader
from retrieval.features.quote_timeline import speaker_timeline
from retrieval.features.quote_topics import RULE, TopicMatcher
from retrieval.library import Library

# (the (speaker, topic) it was scored for, rule score, reader logit, labelled on topic): one quote
Scored = tuple[str, float, float, bool]


def scored_pair(library: Library, reader: Reader, speakers: list[str], topic: str, labelled) -> list[Scored]:  # type: ignore[no-untyped-def]
    """The stored quotes of ``speakers`` that ``labelled(quote text)`` labels (True/False; None:
    not labelled, skipped), each with its rule score and logit."""
    ranges = library.store.speaker_quote_ranges(speakers)
    if not len(ranges):
        return []
    quotes = library.store.quotes_by_ids(ranges[:, 0].tolist())
    labels = [labelled(quotes[int(row[0])].text) for row in ranges.tolist()]
    keep = [i for i, label in enumerate(labels) if label is not None]
    if not keep:
        return []
    ranges = ranges[keep]
    matcher = TopicMatcher(library, topic)
    scores = matcher.score_ranges(ranges)
    logits = reader.calibrated_logits(topic, candidate_texts(library, ranges))
    key = f"{'/'.join(speakers)}|{topic}"
    return [(key, s.score, float(lg), bool(labels[i])) for s, lg, i in zip(scores, logits.tolist(), keep, strict=True)]


def _grouped(found: list[Scored]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(rule scores, logits, labels) of each (speaker, topic), as the timeline scores them together."""
    groups: dict[str, list[Scored]] = defaultdict(list)
    for item in found:
        groups[item[0]].append(item)
    return [
        (np.array([s[1] for s in g]), np.array([s[2] for s in g]), np.array([s[3] for s in g], dtype=bool))
        for g in groups.values()
    ]


def timeline_figures(
    groups: list[tuple[np.ndarray, np.ndarray, np.ndarray]], weight: float, threshold: float, margin: float
) -> tuple[float, float, float]:
    """Recall, precision and F1 over stored quotes when a timeline keeps a quote whose
    ``rule + weight * logit`` is at least ``threshold`` and within ``margin`` of its person's best."""
    right = returned = labelled = 0
    for rule, logit, labels in groups:
        values = rule + weight * logit
        kept = (values >= threshold) & (values >= values.max() - margin)
        right += int((kept & labels).sum())
        returned += int(kept.sum())
        labelled += int(labels.sum())
    recall, precision = right / max(1, labelled), right / max(1, returned)
    return recall, precision, (2 * recall * precision / (recall + precision) if right else 0.0)


MARGINS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, math.inf)
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5, 1.0)


def fit_and_score(by_folder: dict[str, list[Scored]], fit_names: list[str]) -> int:
    """For each weight and margin, the threshold with the best F1 on ``fit_names``' quotes (the
    pairs the rule itself was fitted on), then the same setting on the other folders."""
    fit = _grouped([s for name in fit_names for s in by_folder[name]])
    rest = {name: _grouped(found) for name, found in by_folder.items() if name not in fit_names}
    print(f"fit on {', '.join(fit_names)}; then scored on {', '.join(rest)}")
    results = []
    for weight in WEIGHTS:
        values = sorted({round(float(v), 3) for rule, logit, _ in fit for v in rule + weight * logit})
        for margin in MARGINS:
            best = max(((timeline_figures(fit, weight, t, margin), t) for t in values), key=lambda r: r[0][2])
            results.append((best[0], weight, margin, best[1]))
    results.sort(key=lambda r: -r[0][2])
    shipped = [(timeline_figures(fit, 0.0, RULE.threshold, m), 0.0, m, RULE.threshold) for m in (math.inf, RULE.margin)]
    print("the rule without and with its margin (shipped), then the best settings by F1 on the fitting quotes:")
    for (recall, precision, f), weight, margin, threshold in shipped + results[:15]:
        others = "; ".join(
            "R {:.3f} P {:.3f}".format(*timeline_figures(groups, weight, threshold, margin)[:2])
            for groups in rest.values()
        )
        print(
            f"weight {weight:4} margin {margin:5} threshold {threshold:6.3f}: fit R {recall:.3f} P {precision:.3f} "
            f"F1 {f:.3f} | {others}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bbc", type=Path, default=PROJECT.parent / "shared" / "data" / "bbc-news")
    parser.add_argument("--library", type=Path, default=Path("/tmp/byline-tl"))
    parser.add_argument("--model", type=Path, required=True, help="a topic reader trained by train_reader.py --out")
    parser.add_argument("--split", default="dev", choices=("dev", "train"))
    parser.add_argument(
        "--timelines",
        nargs="+",
        default=[],
        help="fit on these timeline folders (those the rule was fitted on) and score the others",
    )
    parser.add_argument("--labels", action="store_true", help="with --timelines: fit on the labels' split too")
    args = parser.parse_args(argv)
    if not (args.bbc / "politics").is_dir():
        print(f"Skipped: no BBC corpus at {args.bbc}.")
        return 0
    library = open_library(args.bbc, args.library)
    reader = Reader(args.model)
    by_folder: dict[str, list[Scored]] = {}
    for folder in sorted(DATA.glob("quote_timeline*")):
        found: list[Scored] = []
        for pair in load_pairs(folder):
            speakers = speaker_timeline(library, pair.asked_as, group=False).speakers
            texts = pair.texts
            found += scored_pair(
                library, reader, speakers, pair.topic, lambda quote, texts=texts: any(matches(t, quote) for t in texts)
            )
        by_folder[folder.name] = found
    fit_on = list(args.timelines)
    if args.labels or not fit_on:
        by_folder[f"labels-{args.split}"] = labelled_quotes(library, reader, args.split)
        fit_on.append(f"labels-{args.split}")
    library.close()
    return fit_and_score(by_folder, fit_on)


def labelled_quotes(library: Library, reader: Reader, split: str) -> list[Scored]:
    """The quotes of ``bench/data/topics`` in ``split``, each scored for its labelled topics."""
    topics: dict[tuple[str, str], list[tuple[str, bool]]] = defaultdict(list)
    for row in load_labels(split):
        topics[(row["speaker"], row["topic"])].append((row["text"], bool(row["on_topic"])))
    scored: list[Scored] = []
    for (speaker, topic), labelled in topics.items():
        scored += scored_pair(
            library,
            reader,
            [speaker],
            topic,
            lambda quote, labelled=labelled: next((on for text, on in labelled if matches(text, quote)), None),
        )
    return scored


if __name__ == "__main__":
    sys.exit(main())
