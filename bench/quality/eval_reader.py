"""The reader's rows: rules only, reader only, and both, on the natural parts and SQuAD.

    .venv/bin/python -m bench.quality.eval_reader --data ../shared/data --library /tmp/byline-reader/bbc \\
        --parts dev test final --squad --latency 200

- ``rules``: the hand rules alone (what ``BYLINE_READER=off``, the default, answers with);
- ``reader``: the reader orders and refuses, the hand rules that refuse on the question's and
  the evidence's looks (``checks.RULE_CHECKS``) switched off;
- ``both``: the reader and the rules.

Natural parts: ``dev`` and ``test`` are the non-final files split by article as
``bench/quality/eval_natural.py`` splits them; ``final`` is every blind final part together. With
``--fold K --model DIR``, only the questions on fold K's articles are asked, read by the model
trained without that fold (``bench/reader/reader_pairs.py``: two article-grouped folds), so no figure
comes from a model that read questions about the article asked about. SQuAD is
its test half (odd-numbered questions), articles Byline never saw. The latency is that of a
warm ask over the first ``--latency`` dev questions at the BBC library.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.paths import PROJECT
from bench.quality.eval_natural import ANSWERABLE, KINDS, NATURAL_DIR, NaturalQuestion, load_natural, run_natural
from bench.quality.eval_squad import build_library, load_squad, run_squad
from bench.reader.reader_pairs import fold_of
from retrieval.answering import TUNING, Tuning, answer_question, checks
from retrieval.answering.reader import READER_VARIABLE, use_model
from retrieval.index.embedder import Embedder
from retrieval.library import Library

SECTIONS = ("business", "entertainment", "politics", "tech")
CONFIGS: dict[str, Tuning] = {
    "rules": replace(TUNING, disabled_checks=TUNING.disabled_checks | {checks.READER.name}),
    "reader": replace(TUNING, disabled_checks=TUNING.disabled_checks | {c.name for c in checks.RULE_CHECKS}),
    "both": TUNING,
}


def natural_parts(parts: list[str], fold: int | None = None) -> dict[str, list[NaturalQuestion]]:
    """The questions of each part; with ``fold``, only those on that fold's articles."""
    found: dict[str, list[NaturalQuestion]] = {part: [] for part in parts}
    for path in sorted(NATURAL_DIR.glob("*.tsv")):
        final = path.stem.startswith("final")
        for question in load_natural(path, split=not final):
            part = "final" if final else question.part
            if fold is not None and fold_of(question.article or question.text) != fold:
                continue
            if part in found:
                found[part].append(question)
    return found


def _f(value: float) -> str:
    return "-" if value != value else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=PROJECT.parent / "shared" / "data")
    parser.add_argument("--library", type=Path, default=Path("/tmp/byline-reader/bbc"))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/byline-eval"), help="where SQuAD's library is built")
    parser.add_argument("--parts", nargs="*", default=["dev"], choices=["dev", "test", "final"])
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--squad", action="store_true", help="also SQuAD's test half")
    parser.add_argument("--latency", type=int, default=0, help="warm asks over this many dev questions")
    parser.add_argument("--misses", type=Path, default=None, help="write each configuration's misses here")
    parser.add_argument("--fold", type=int, default=None, help="only the natural questions of this fold's articles")
    parser.add_argument("--model", type=Path, default=None, help="the reader's folder (default: the shipped one)")
    args = parser.parse_args(argv)
    if args.model:
        use_model(args.model)
    # The reader is off by default; here each configuration says whether it reads (``CONFIGS``).
    os.environ[READER_VARIABLE] = "on"
    embedder = Embedder()
    lines: list[str] = []
    corpus = args.data / "bbc-news"
    if args.parts or args.latency:
        if not corpus.is_dir():
            print(f"No BBC corpus at {corpus}: natural parts skipped.", file=sys.stderr)
        else:
            library = Library.open(args.library, embedder)
            if library.store.article_count() == 0:
                print("Ingesting the four BBC sections once (a few minutes).", file=sys.stderr)
                library.ingest([corpus / section for section in SECTIONS])
            library.warm_up()
            _natural(args, library, lines)
            if args.latency:
                _latency(args, library, lines)
            library.close()
    squad_file = args.data / "squad2-dev-subset.json"
    if args.squad and squad_file.exists():
        drafts, questions = load_squad(squad_file)
        library = build_library(args.cache / "squad", drafts, embedder)
        lines.append(
            f"SQuAD test half ({len(drafts)} paragraphs): answer hit / false abstention / impossible abstained"
        )
        for name in args.configs:
            tally, _ = run_squad(library, questions, "test", CONFIGS[name])
            hit = tally.hit / tally.answerable
            false = tally.false_abstained / tally.answerable
            impossible = tally.abstained_impossible / max(1, tally.impossible)
            lines.append(f"  {name:7} {hit:.3f} / {false:.3f} / {impossible:.3f}")
        library.close()
    print("\n".join(lines))
    return 0


def _natural(args: argparse.Namespace, library: Library, lines: list[str]) -> None:
    for part, questions in natural_parts(args.parts, args.fold).items():
        if not questions:
            continue
        header = f"Natural {part} ({len(questions)} q)"
        lines.append(f"{header:28}" + "".join(f"{name:>9}" for name in args.configs))
        tallies = {}
        for name in args.configs:
            started = time.perf_counter()
            tallies[name], misses = run_natural(library, questions, CONFIGS[name])
            print(f"{part} {name}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
            if args.misses:
                args.misses.mkdir(parents=True, exist_ok=True)
                (args.misses / f"{part}-{name}.txt").write_text("\n".join(misses) + "\n")
        for kind in KINDS:
            asked = tallies[args.configs[0]].asked[kind]
            if asked:
                label = f"  {kind} ({asked})"
                lines.append(f"{label:28}" + "".join(f"{_f(tallies[n].score(kind)):>9}" for n in args.configs))
        lines.append(
            f"{'  answerable refused':28}" + "".join(f"{_f(tallies[n].answerable_refusal):>9}" for n in args.configs)
        )
        lines.append(f"{'  all kinds':28}" + "".join(f"{_f(tallies[n].overall):>9}" for n in args.configs))
        right = {n: sum(tallies[n].right.values()) for n in args.configs}
        lines.append(f"{'  right (count)':28}" + "".join(f"{right[n]:>9}" for n in args.configs))
        refused_by = {n: dict(tallies[n].refused_by.most_common(4)) for n in args.configs}
        for n in args.configs:
            lines.append(f"    {n} refused answerable by: {refused_by[n]}")


def _latency(args: argparse.Namespace, library: Library, lines: list[str]) -> None:
    questions = [q for q in natural_parts(["dev"])["dev"] if q.kind in (*ANSWERABLE, "absent", "detail_absent")]
    questions = questions[: args.latency]
    for name in args.configs:
        tuning = CONFIGS[name]
        answer_question(library, questions[0].text, (), tuning)  # the reader loads here, not in the timing
        seconds = []
        for question in questions:
            started = time.perf_counter()
            answer_question(library, question.text, (), tuning)
            seconds.append(time.perf_counter() - started)
        p50, p95 = (1000 * float(np.percentile(seconds, q)) for q in (50, 95))
        lines.append(f"Warm ask, {name}, {len(questions)} dev questions: p50 {p50:.0f} ms, p95 {p95:.0f} ms")


if __name__ == "__main__":
    sys.exit(main())
