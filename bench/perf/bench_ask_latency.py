"""Warm `ask` latency on a built library, over the natural questions, by kind.

    .venv/bin/python -m bench.perf.bench_ask_latency --library /tmp/byline-eval/bbc --rounds 3

Asks the first ``--questions`` dev questions of ``bench/data/natural`` ``--rounds`` times each from
one warm process (model traced, indexes loaded) and prints p50 / p95 for speaker questions ("what
did X say", "person present, detail absent") and for the others. The library is any data
directory; the eval harness builds the BBC one under ``--cache``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from bench.quality.eval_natural import dev_questions, open_warm_library


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", type=Path, default=Path("/tmp/byline-eval/bbc"))
    parser.add_argument("--questions", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    library = open_warm_library(args.library)
    if library is None:
        return 1
    questions = dev_questions(args.questions)
    for question in questions[:20]:  # caches warm, as in a running bot
        library.ask(question.text)
    seconds: dict[str, list[float]] = {"speaker": [], "other": []}
    for _ in range(args.rounds):
        for question in questions:
            started = time.perf_counter()
            library.ask(question.text)
            kind = "speaker" if question.kind in ("speaker", "detail_absent") else "other"
            seconds[kind].append(time.perf_counter() - started)
    for kind, values in seconds.items():
        if not values:
            continue
        values.sort()
        p50, p95 = statistics.median(values), values[int(0.95 * (len(values) - 1))]
        print(f"{kind:8} questions: p50 {1000 * p50:.1f} ms, p95 {1000 * p95:.1f} ms ({len(values)} asks)")
    library.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
