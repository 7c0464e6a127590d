"""Fit ranking weights and abstention thresholds on the fit half (even question positions).

    .venv/bin/python -m bench.quality.tune --data ../shared/data --cache /tmp/byline-eval

Runs the real pipeline once per candidate ``Tuning`` over the fit half of SQuAD and the
out-of-corpus questions, with query embeddings cached so that each candidate costs only the
retrieval and scoring. Prints one line per candidate; pick by the targets, then set the
defaults in ``retrieval/ranking.py`` and report with ``bench.eval`` on the other half. The
out-of-corpus files used are those seen while designing the rules, never the newest one (the
report set). ``names_only_min_cosine`` was fitted with
``--grid "names_only_min_cosine=0.45,0.5,0.55,0.6"``.
"""

from __future__ import annotations

import argparse
import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.paths import DATA, SHARED_DATA
from bench.quality.eval_common import ratio
from bench.quality.eval_squad import build_library, load_ooc, load_squad, run_ooc, run_squad
from retrieval.answering import TUNING
from retrieval.index.embedder import Embedder
from retrieval.library import Library


class CachingEmbedder(Embedder):
    """The real model, remembering query vectors so repeated questions are not re-encoded."""

    def __init__(self) -> None:
        super().__init__()
        self.cache: dict[str, np.ndarray] = {}

    def encode_one(self, text: str) -> np.ndarray:
        if text not in self.cache:
            self.cache[text] = super().encode_one(text)
        return self.cache[text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/byline-eval"))
    parser.add_argument("--grid", default="bm25_weight=0.25;lexical_weight=0.25")
    parser.add_argument(
        "--ooc",
        type=Path,
        nargs="+",
        default=[
            DATA / f"out_of_corpus{suffix}.txt"
            for suffix in ["", "_heldout", "_blind2", "_blind3", "_blind4", "_blind5"]
        ],
        help="out-of-corpus question files to fit on (default: all but the report set, blind-6)",
    )
    args = parser.parse_args(argv)
    embedder = CachingEmbedder()
    drafts, questions = load_squad(args.data / "squad2-dev-subset.json")
    squad = build_library(args.cache / "squad", drafts, embedder)
    bbc_dir = args.cache / "bbc"
    bbc = Library.open(bbc_dir, embedder) if (bbc_dir / "byline.sqlite3").exists() else None
    ooc = [question for path in args.ooc for question in load_ooc(path)]
    axes = [(k, [float(v) for v in vs.split(",")]) for k, vs in (a.split("=") for a in args.grid.split(";"))]
    for values in itertools.product(*[vs for _, vs in axes]):
        # Integer and boolean fields (type_window, absent_name_abstains) take whole numbers.
        changes: dict[str, Any] = {
            k: (int(v) if isinstance(getattr(TUNING, k), int) else v) for (k, _), v in zip(axes, values, strict=True)
        }
        tuning = replace(TUNING, **changes)
        tally, _ = run_squad(squad, questions, "fit", tuning)
        line = " ".join(f"{k}={v}" for (k, _), v in zip(axes, values, strict=True))
        line += (
            f" | r@1 {ratio(tally.at1, tally.answerable):.3f} r@5 {ratio(tally.at5, tally.answerable):.3f}"
            f" hit {ratio(tally.hit, tally.answerable):.3f}"
            f" false-abst {ratio(tally.false_abstained, tally.answerable):.3f}"
            f" imp-abst {ratio(tally.abstained_impossible, tally.impossible):.3f}"
        )
        if bbc is not None:
            ooc_tally, _ = run_ooc(bbc, ooc, tuning)
            line += f" | ooc-abst {ratio(ooc_tally.abstained, ooc_tally.asked):.3f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
