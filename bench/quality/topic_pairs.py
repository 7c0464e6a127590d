"""Labelled (topic, quote) pairs for the timeline's topic reader, from ``bench/data/topics``.

    .venv/bin/python -m bench.quality.topic_pairs --library /tmp/byline-tl --out /tmp/byline-topics/pairs.jsonl

``bench/data/topics/labels.jsonl`` holds 12,123 (topic, quote, on topic?) rows written blind
(its header says how). Each labelled quote is found again among the stored quotes of its
speaker in ``--library`` (the four BBC sections, never sport; built once and reused) and read
as a topic reader would read it (``topic_candidate``: the quote's
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.paths import DATA, PROJECT
from bench.quality.eval_quote_timeline import load_pairs, matches, open_library
from retrieval.answering.reader_input import candidate_text
from retrieval.features.quote_timeline import speaker_timeline
from retrieval.library import Library

DEV_SHARE = 0.15
LABELS = DATA / "topics" / "labels.jsonl"


def split_of(speaker: str) -> str:
    share = int(hashlib.sha1(f"topics:{speaker}".encode()).hexdigest(), 16) % 1000 / 1000
    return "dev" if share < DEV_SHARE else "train"


def topic_candidate(sentences: Sequence[str], title: str) -> str:
    """A quote as the topic reader reads it: the sentences holding it (they carry its attribution
    and, for a fragment, what it was said about) and the headline (what its article is about). No
    speaker: the question is the topic alone. The reader's own ``candidate_text`` lays it out."""
    return candidate_text(" ".join(sentences), "", title)


def candidate_texts(library: Library, ranges: np.ndarray) -> list[str]:
    """Each row of ``Store.speaker_quote_ranges`` as the topic reader reads it."""
    if not len(ranges):
        return []
    titles = {a.id: a.title for a in library.store.articles(sorted(set(ranges[:, 4].tolist()))).values()}
    ids = [i for row in ranges.tolist() for i in range(int(row[1]), int(row[2]) + 1)]
    texts = library.store.sentences_by_ids(ids)
    return [
        topic_candidate(
            [texts[i].text for i in range(int(row[1]), int(row[2]) + 1) if i in texts], titles.get(int(row[4]), "")
        )
        for row in ranges.tolist()
    ]


def load_labels(split: str = "") -> list[dict[str, Any]]:
    """The rows of ``labels.jsonl`` (its header left out), only ``split``'s speakers when given."""
    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    return [row for row in rows if "header" not in row and (not split or split_of(row["speaker"]) == split)]


def quote_candidates(library: Library, speakers: list[str]) -> list[tuple[str, str, str]]:
    """(article key, quote text, candidate text) for every stored quote of these speakers."""
    ranges = library.store.speaker_quote_ranges(speakers)
    if not len(ranges):
        return []
    quotes = library.store.quotes_by_ids(ranges[:, 0].tolist())
    articles = library.store.articles(sorted(set(ranges[:, 4].tolist())))
    return [
        (articles[int(row[4])].key, quotes[int(row[0])].text, candidate)
        for row, candidate in zip(ranges.tolist(), candidate_texts(library, ranges), strict=True)
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
    rows = load_labels()
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
