"""What related questions add to an answer: the time to find and check them, and how many.

    .venv/bin/python -m bench.perf.bench_related --library /tmp/byline-eval/bbc

Asks the first ``--questions`` dev questions of ``bench/data/natural`` from one warm process; for
each answered one, times ``related_questions`` with its check cache emptied first (what a new
article's first question pays) and again with it kept (the same article asked about again), and
prints p50 / p95 of each, with how many follow-ups were offered.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from pathlib import Path

from bench.quality.eval_natural import dev_questions, open_warm_library
from retrieval.features import related


def _p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[int(q * (len(values) - 1))] if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", type=Path, default=Path("/tmp/byline-eval/bbc"))
    parser.add_argument("--questions", type=int, default=120)
    parser.add_argument("--show", type=int, default=0, help="print the follow-ups of the first N answers")
    args = parser.parse_args(argv)
    library = open_warm_library(args.library)
    if library is None:
        return 1
    questions = [q.text for q in dev_questions(args.questions)]
    for question in questions[:20]:  # caches warm, as in a running bot
        related.related_questions(library, library.ask(question))
    cold: list[float] = []
    warm: list[float] = []
    asks: list[float] = []
    offered: Counter[int] = Counter()
    shown = 0
    for question in questions:
        started = time.perf_counter()
        answer = library.ask(question)
        asks.append(time.perf_counter() - started)
        if not answer.answered:
            continue
        related._cache.clear()
        started = time.perf_counter()
        found = related.related_questions(library, answer)
        cold.append(time.perf_counter() - started)
        started = time.perf_counter()
        related.related_questions(library, answer)
        warm.append(time.perf_counter() - started)
        offered[len(found)] += 1
        if shown < args.show:
            shown += 1
            print(f"{question}\n  -> {found}")
    print(f"ask alone: p50 {1000 * statistics.median(asks):.1f} ms ({len(asks)} questions)")
    print(f"related, unchecked article: p50 {1000 * _p(cold, 0.5):.1f} ms, p95 {1000 * _p(cold, 0.95):.1f} ms")
    print(f"related, checks remembered: p50 {1000 * _p(warm, 0.5):.1f} ms, p95 {1000 * _p(warm, 0.95):.1f} ms")
    print(f"follow-ups offered per answered question ({len(cold)}): {dict(sorted(offered.items()))}")
    library.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
