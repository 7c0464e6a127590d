"""Labelled (topic, quote) pairs for the timeline's topic reader, from ``bench/data/topics``.

    .venv/bin/python -m bench.quality.topic_pairs --library /tmp/byline-tl --out /tmp/byline-topics/pairs.jsonl

``bench/data/topics/labels.jsonl`` holds 12,123 (topic, quote, on topic?) rows written blind
(its header says how). Each labelled quote is found again among the stored quotes of its
speaker in ``--library`` (the four BBC sections, never sport; built once and reused) and read
as a topic reader would read it (``quote_topics.topic_candidate``: the quote's
sentences and the headline). Rows whose quote is no longer stored under that speaker (the
quote rules moved it) are dropped and counted.

Split by speaker (a hash of the name): ~15% ``dev`` (calibration and the combination with the
topic rule), the rest ``train``. The timeline evaluation sets (``bench/data/quote_timeline*``)
become ``heldout`` rows: every stored quote of each labelled speaker against that pair's
topic, labelled 1 when a label holds its words. Their articles were never given to the
labellers, so nothing trained on overlaps them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

from bench.paths import DATA, PROJECT
from bench.quality.eval_quote_timeline import load_pairs, matches, open_library
from retrieval.features.quote_timeline import speaker_timeline
from retrieval.features.quote_topics import TopicMatcher
from retrieval.library import Library

DEV_SHARE = 0.15
LABELS = DATA / "topics" / "labels.jsonl"


def split_of(speaker: str) -> str:
    share = int(hashlib.sha1(f"topics:{speaker}".encode()).hexdigest(), 16) % 1000 / 1000
    return "dev" if share < DEV_SHARE else "train"


def quote_candidates(library: Library, speakers: list[str]) -> list[tuple[str, str, str]]:
    """(article key, quote text, candidate text) for every stored quote of these speakers."""
    ranges = library.store.speaker_quote_ranges(speakers)
    if not len(ranges):
        return []
    quotes = library.store.quotes_by_ids(ranges[:, 0].tolist())
    articles = library.store.articles(sorted(set(ranges[:, 4].tolist())))
    candidates = TopicMatcher(library, "").candidates(ranges)
    return [
        (articles[int(row[4])].key, quotes[int(row[0])].text, candidate)
        for row, candidate in zip(ranges.tolist(), candidates, strict=True)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bbc", type=Path, default=PROJECT.parent / "shared" / "data" / "bbc-news")
    parser.add_argument("--library", type=Path, default=Path("/tmp/byline-tl"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/byline-topics/pairs.jsonl"))
    args = parser.parse_args(argv)
    if not (args.bbc / "politics").is_dir():
        print(f"No BBC corpus at {args.bbc}.", file=sys.stderr)
        return 2
    library = open_library(args.bbc, args.library)
    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    rows = [row for row in rows if "header" not in row]
    counts: Counter[tuple[str, int]] = Counter()
    dropped = 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w") as out:
        stored: dict[str, list[tuple[str, str, str]]] = {}
        for row in rows:
            speaker = row["speaker"]
            if speaker not in stored:
                stored[speaker] = quote_candidates(library, [speaker])
            candidate = next(
                (
                    candidate
                    for key, text, candidate in stored[speaker]
                    if key.endswith(row["article"]) and matches(row["text"], text)
                ),
                None,
            )
            if candidate is None:
                dropped += 1
                continue
            split, label = split_of(speaker), int(row["on_topic"])
            counts[(split, label)] += 1
            qid = hashlib.sha1(f"{speaker}|{row['topic']}".encode()).hexdigest()[:12]
            out.write(
                json.dumps(
                    {"split": split, "qid": qid, "question": row["topic"], "candidate": candidate, "label": label}
                )
                + "\n"
            )
        for folder in sorted(DATA.glob("quote_timeline*")):
            for pair in load_pairs(folder):
                speakers = speaker_timeline(library, pair.asked_as, group=False).speakers
                qid = f"{folder.name}/{pair.name}"
                for _, quote, candidate in quote_candidates(library, speakers):
                    label = int(any(matches(text, quote) for text in pair.texts))
                    counts[("heldout", label)] += 1
                    out.write(
                        json.dumps(
                            {
                                "split": "heldout",
                                "qid": qid,
                                "question": pair.topic,
                                "candidate": candidate,
                                "label": label,
                            }
                        )
                        + "\n"
                    )
    library.close()
    print(f"dropped {dropped} labelled rows whose quote is stored under another speaker now")
    for (split, label), n in sorted(counts.items()):
        print(f"{split:8} label {label}: {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
