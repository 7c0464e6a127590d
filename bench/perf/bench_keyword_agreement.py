"""How closely the Qdrant keyword index ranks like the own BM25, and how fast each searches.

    .venv/bin/python bench/perf/bench_keyword_agreement.py --bbc ../shared/data/bbc-news --queries 400

No ingest (no model, no store): the BBC articles are cut into passages by Byline's own
segmenter, tokenised with ``text.search_tokens`` and added to a ``sparse.SparseIndex`` and to a
``qdrant_keywords.QdrantKeywordIndex`` in local mode (in memory). The queries are the real
questions of ``bench/data/natural/*.tsv``. For each query, both indexes' top 10 are compared:

* top-10 agreement: the share of BM25's top 10 that Qdrant's top 10 holds (a tie at the 10th
  score counts as held: either passage is a correct 10th);
* top-1 agreement: Qdrant's best passage is BM25's best (or ties with it);
* median search latency of each (local mode is Python brute force; a server is another figure).

Qdrant is measured three ways over the same collection: as ``search`` answers (Qdrant's
candidates re-scored with the exact BM25 of now), Qdrant's own scores (the vectors encoded with
the reference average, which may be up to ``drift`` off the true one), and Qdrant's own scores
when the reference is never re-anchored (the first passage's length stays the estimate).
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
DATA = Path(__file__).resolve().parents[1] / "data"

from retrieval.index.qdrant_keywords import QdrantKeywordIndex  # noqa: E402
from retrieval.index.segment import build_passages  # noqa: E402
from retrieval.index.sparse import SparseIndex  # noqa: E402
from retrieval.ports import KeywordIndex  # noqa: E402
from retrieval.reading.loader import iter_article_files, read_article_file  # noqa: E402
from retrieval.reading.text import paragraphs, search_tokens  # noqa: E402

NATURAL = DATA / "natural"
K = 10
# Scores this close are a tie (sparse.py scores in float32).
TIE = 1e-4


def passages(bbc: Path, limit: int) -> list[list[str]]:
    """Search tokens of every passage of the corpus, in file order, at most ``limit``."""
    found: list[list[str]] = []
    for path in iter_article_files([bbc]):
        text = read_article_file(path).text
        for span in build_passages(text, paragraphs(text)):
            found.append(search_tokens(text[span.start : span.end]))
            if len(found) >= limit:
                return found
    return found


def questions(limit: int) -> list[list[str]]:
    """Tokenised questions of the natural question files, without repeats or empty ones."""
    seen: dict[str, list[str]] = {}
    for path in sorted(NATURAL.glob("*.tsv")):
        lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
        for row in csv.DictReader(lines, delimiter="\t"):
            tokens = search_tokens(row.get("question") or "")
            if tokens:
                seen.setdefault(" ".join(tokens), tokens)
    return list(seen.values())[:limit]


def timed_search(index: KeywordIndex, query: list[str], latencies: list[float]) -> list[tuple[int, float]]:
    started = time.perf_counter()
    found = index.search(query, K)
    latencies.append(time.perf_counter() - started)
    return found


def agreement(
    reference: list[tuple[int, float]], exact: dict[int, float], found: list[tuple[int, float]]
) -> tuple[float, bool]:
    """(top-10 share held, top-1 agrees), ties at the boundary counted as agreeing."""
    if not reference:
        return (1.0 if not found else 0.0), not found
    tenth, best = reference[-1][1], reference[0][1]
    held = sum(1 for doc_id, _ in found if exact.get(doc_id, 0.0) >= tenth - TIE)
    top = bool(found) and exact.get(found[0][0], 0.0) >= best - TIE
    return min(1.0, held / len(reference)), top


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bbc", type=Path, default=Path("/work/shared/data/bbc-news"))
    parser.add_argument("--passages", type=int, default=20_000, help="at most this many passages (local mode)")
    parser.add_argument("--queries", type=int, default=400)
    args = parser.parse_args()

    tokens = passages(args.bbc, args.passages)
    queries = questions(args.queries)
    print(f"{len(tokens)} passages, {len(queries)} queries, top {K}")

    bm25 = SparseIndex()
    anchored = QdrantKeywordIndex.in_memory()
    fixed = QdrantKeywordIndex.in_memory(drift=math.inf, rescore=False)
    for name, index in (("bm25", bm25), ("qdrant", anchored), ("qdrant, never re-anchored", fixed)):
        started = time.perf_counter()
        for doc_id, passage in enumerate(tokens):
            index.add(doc_id, passage)
        print(f"indexed by {name} in {time.perf_counter() - started:.1f} s")
    raw = QdrantKeywordIndex(anchored.client, rescore=False)  # the same collection, Qdrant's own scores

    measured = {"qdrant search (re-scored)": anchored, "qdrant own scores": raw, "qdrant own, never re-anchored": fixed}
    held: dict[str, list[float]] = {name: [] for name in measured}
    tops: dict[str, list[bool]] = {name: [] for name in measured}
    latency: dict[str, list[float]] = {name: [] for name in ("bm25", *measured)}
    for query in queries:
        reference = timed_search(bm25, query, latency["bm25"])
        exact = dict(bm25.search(query, 10 * K + 100))
        for name, index in measured.items():
            share, top = agreement(reference, exact, timed_search(index, query, latency[name]))
            held[name].append(share)
            tops[name].append(top)

    stats = anchored._records([])[0]
    print(f"reference average {stats['average']:.2f} tokens; true {stats['tokens'] / stats['passages']:.2f}")
    print(f"{'backend':32} {'top-10':>7} {'top-1':>7} {'median ms':>10}")
    print(f"{'bm25 (sparse.py)':32} {'':>7} {'':>7} {1000 * statistics.median(latency['bm25']):10.2f}")
    for name in measured:
        print(
            f"{name:32} {statistics.mean(held[name]):7.3f} {statistics.mean(tops[name]):7.3f} "
            f"{1000 * statistics.median(latency[name]):10.2f}"
        )


if __name__ == "__main__":
    main()
