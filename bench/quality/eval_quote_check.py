"""The quote check (``byline verify``) against its labelled set, through ``verify --batch``.

    python -m bench.quality.eval_quote_check ../shared/data/bbc-news [--data /tmp/qc_data] [--set dev|test|all]

Ingests the BBC folder's business, entertainment, politics and tech sections into a temporary
data directory (a few minutes), or reuses ``--data`` (ingesting into it only when it is empty),
then runs every item of ``bench/data/quote_check/<set>.jsonl`` (``--set blind``: the items
written by hand from the article text, after the check was tuned) through ``run_batch``, the
function behind ``byline verify --batch FILE --json``, and prints: the right verdicts per kind
and overall, how many altered or fabricated quotes were called verbatim (the figure that must be
0), and the time per check. Without the BBC folder it says so and exits 0.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.paths import DATA
from bot.cli.verify import run_batch
from retrieval.library import Library

SECTIONS = ("business", "entertainment", "politics", "tech")
SETS = DATA / "quote_check"


def load_set(name: str) -> list[dict]:
    """The items of one set (or both), header lines left out."""
    names = ("dev", "test") if name == "all" else (name,)
    items = []
    for each in names:
        for line in (SETS / f"{each}.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if not row.get("header"):
                items.append(row)
    return items


def open_library(bbc: Path, data: Path) -> Library:
    library = Library.open(data)
    if library.store.article_count() == 0:
        print(f"Ingesting {', '.join(SECTIONS)} from {bbc} into {data} (a few minutes)…", file=sys.stderr)
        report = library.ingest([bbc / section for section in SECTIONS])
        print(f"  {report.summary()}", file=sys.stderr)
    return library


def evaluate(library: Library, items: list[dict]) -> dict:
    """Run the items through ``run_batch`` and tally the verdicts."""
    with tempfile.TemporaryDirectory() as folder:
        batch = Path(folder) / "batch.jsonl"
        batch.write_text(
            "".join(
                json.dumps({"id": i, "text": r["text"], "speaker": r["speaker"]}) + "\n" for i, r in enumerate(items)
            ),
            encoding="utf-8",
        )
        out = io.StringIO()
        started = time.perf_counter()
        run_batch(library, batch, as_json=True, out=out)
        seconds = time.perf_counter() - started
    results = {row["id"]: row for row in map(json.loads, out.getvalue().splitlines())}
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    wrong = []
    for index, item in enumerate(items):
        got = results[index].get("verdict", "error")
        total[item["kind"]] += 1
        if got == item["expected"]:
            right[item["kind"]] += 1
        else:
            wrong.append((item, got))
    false_verbatim = sum(1 for item, got in wrong if item["kind"] in ("altered", "fabricated") and got == "verbatim")
    return {
        "right": right,
        "total": total,
        "wrong": wrong,
        "false_verbatim": false_verbatim,
        "ms_per_check": 1000 * seconds / max(1, len(items)),
    }


def report(name: str, tally: dict, show_wrong: bool) -> None:
    right, total = tally["right"], tally["total"]
    print(f"\nQuote check, set {name}: {sum(total.values())} items")
    for kind in ("verbatim", "partial", "ellipsis", "unattributed", "altered", "misattributed", "fabricated"):
        if total[kind]:
            print(f"  {kind:<14} {right[kind]:>4} / {total[kind]:<4} {right[kind] / total[kind]:.3f}")
    overall = sum(right.values()) / max(1, sum(total.values()))
    print(f"  right verdicts overall: {sum(right.values())} / {sum(total.values())} = {overall:.3f}")
    print(f"  altered or fabricated called verbatim: {tally['false_verbatim']}")
    print(f"  {tally['ms_per_check']:.1f} ms per check (batch, warm)")
    if show_wrong:
        for item, got in tally["wrong"]:
            print(f"  - {item['id']} {item['kind']} -> {got}: {item['text'][:100]!r} (speaker {item['speaker']!r})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bbc", type=Path, help="the bbc-news folder")
    parser.add_argument("--data", type=Path, help="a data directory to reuse (ingested into when empty)")
    parser.add_argument(
        "--set",
        choices=("dev", "test", "all", "blind"),
        default="all",
        help="dev, test, both (all), or blind: the set written by hand, blind, after the check was tuned",
    )
    parser.add_argument("--wrong", action="store_true", help="list the items given a wrong verdict")
    args = parser.parse_args(argv)
    if not all((args.bbc / section).is_dir() for section in SECTIONS):
        print(f"Skipped: no BBC news folder with {', '.join(SECTIONS)} at {args.bbc}.")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        library = open_library(args.bbc, args.data or Path(scratch))
        try:
            names = ("dev", "test", "all") if args.set == "all" else (args.set,)
            for name in names:
                report(name, evaluate(library, load_set(name)), args.wrong)
        finally:
            library.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
