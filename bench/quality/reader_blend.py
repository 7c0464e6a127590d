"""Fit how each kind of question blends the reader with the hand rules, fold-honestly, and score it.

    .venv/bin/python -m bench.quality.reader_blend --models /tmp/r2/model_f0 /tmp/r2/model_f1 \\
        --library /tmp/byline-reader/bbc --out /tmp/r2/blend.json

Every natural question (dev, test and final parts) is read by the model trained without its
article's fold (``bench/reader/reader_pairs.py``'s two folds), through the real answer path
with ``BYLINE_READER=on``. A blend (``retrieval.answering.reader.Blend``) orders the candidates
by ``logit(p) + rules_weight * rules score`` and refuses below a threshold.

1. For each rules weight in ``WEIGHTS``, with no refusal by the reader, each question of the fit
   parts is answered and judged (``bench.quality.eval_natural.judge``); the kind the answer path
   reads it as (speaker, who_said, fact) and the reader's best probability are kept.
2. Per kind, the (weight, threshold) that gets the most fit-part questions right is chosen: a
   refusal by the reader counts right for the absent kinds only; ties go to the rules (the
   larger weight, the lower threshold).
3. The dev, test and final parts are then answered for real with the rules alone, the reader's
   order alone, and the fitted blends, and printed per part and question kind.

The reader's probabilities are cached per (question, candidates), so each configuration after
the first costs only the rest of the answer path. ``--write FOLDER`` stores the fitted blends in
that model's ``reader.json``. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

WEIGHTS = [0.0, 2.0, 5.0, 10.0, 20.0, 40.0, 80.0, math.inf]
THRESHOLDS = [0.0, 0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.15, 0.2]
ANSWERABLE = ("speaker", "fact", "who_said")
NEVER_REFUSES = 1e-12
REFUSAL_RIGHT = ("absent", "detail_absent")


def cached(probabilities: Callable[[str, Sequence[str]], np.ndarray], best: dict[str, float | None]) -> Any:
    """``probabilities`` remembered per (question, candidates); ``best`` holds the last best."""
    seen: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}

    def read(question: str, candidates: Sequence[str]) -> np.ndarray:
        key = (question, tuple(candidates))
        if key not in seen:
            seen[key] = probabilities(question, candidates)
        found = seen[key]
        best["p"] = float(found.max()) if len(found) else None
        return found

    return read


def path_kind(library: Any, text: str) -> str:
    """The blend the answer path uses for this question (``pipeline.answer_question``'s routing)."""
    from retrieval.answering.question import parse
    from retrieval.answering.who import resolve_speakers

    question = parse(text)
    if question.kind == "speaker" and resolve_speakers(library, question.who):
        return "speaker"
    return "who_said" if question.kind == "who_said" else "fact"


class Run:
    """The library, the two fold readers, and the questions each reads."""

    def __init__(self, models: list[Path], library_dir: Path) -> None:
        os.environ["BYLINE_READER"] = "on"
        from bench.quality.eval_reader import natural_parts
        from retrieval.answering.reader import Reader
        from retrieval.library import Library

        self.library = Library.open(library_dir)
        self.library.warm_up()
        self.best: dict[str, float | None] = {}
        self.readers: list[Reader] = []
        self.questions: list[tuple[int, str, Any]] = []
        for fold, model in enumerate(models):
            reader = Reader(model)
            reader.probabilities = cached(reader.probabilities, self.best)  # type: ignore[method-assign]
            self.readers.append(reader)
            for part, questions in natural_parts(["dev", "test", "final"], fold).items():
                self.questions.extend((fold, part, question) for question in questions)
        self.kinds = {q.text: path_kind(self.library, q.text) for _, _, q in self.questions}

    def answer(self, blends: dict[str, Any], parts: Sequence[str]) -> list[dict[str, Any]]:
        """Each question of ``parts``, answered and judged with these blends (kind -> Blend)."""
        from bench.quality.eval_natural import judge
        from retrieval.answering import TUNING, answer_question
        from retrieval.answering.reader import use_reader

        rows = []
        for reader in self.readers:
            reader.calibration = replace(reader.calibration, blends=blends)
        for fold, part, question in self.questions:
            if part not in parts:
                continue
            use_reader(self.readers[fold])  # the model that never saw this article's fold
            self.best["p"] = None
            answer = answer_question(self.library, question.text, (), TUNING)
            rows.append(
                {
                    "part": part,
                    "kind": question.kind,
                    "path": self.kinds[question.text],
                    "q": question.text,
                    "ok": bool(judge(question, answer)),
                    "answered": answer.answered,
                    "refused_by": answer.refused_by,
                    "best": self.best["p"],
                }
            )
        return rows


def with_floor(row: dict[str, Any], threshold: float) -> bool:
    """Whether the row is right once the reader refuses below ``threshold``."""
    if row["answered"] and row["best"] is not None and row["best"] < threshold:
        return bool(row["kind"] in REFUSAL_RIGHT)
    return bool(row["ok"])


def fit(by_weight: dict[float, list[dict[str, Any]]]) -> dict[str, tuple[float, float, int]]:
    """Per kind: the (weight, threshold) with the most right answers, and that count."""
    fitted = {}
    from retrieval.answering.reader import BLEND_KINDS

    for kind in BLEND_KINDS:
        options = []
        for weight, rows in by_weight.items():
            mine = [row for row in rows if row["path"] == kind]
            for threshold in THRESHOLDS:
                right = sum(with_floor(row, threshold) for row in mine)
                options.append((right, weight, -threshold))
        right, weight, negative = max(options)
        fitted[kind] = (weight, -negative, right)
    return fitted


def table(name: str, rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    for part in ("dev", "test", "final"):
        mine = [row for row in rows if row["part"] == part]
        if not mine:
            continue
        right: Counter[str] = Counter(row["kind"] for row in mine if row["ok"])
        asked: Counter[str] = Counter(row["kind"] for row in mine)
        answerable = [row for row in mine if row["kind"] in ANSWERABLE]
        refused = sum(not row["answered"] for row in answerable) / max(1, len(answerable))
        kinds = "  ".join(f"{kind} {right[kind] / asked[kind]:.3f}" for kind in sorted(asked))
        lines.append(f"{name:14} {part:5} right {sum(right.values()):4}/{len(mine):4}  refused {refused:.3f}  {kinds}")
    return lines


def main(argv: list[str] | None = None) -> int:
    from retrieval.answering.reader import BLEND_KINDS, Blend

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, nargs=2, required=True, help="readers trained without fold 0 and 1")
    parser.add_argument("--library", type=Path, default=Path("/tmp/byline-reader/bbc"))
    parser.add_argument("--fit", nargs="+", default=["dev"], help="the parts the blends are fitted on")
    parser.add_argument("--out", type=Path, default=Path("/tmp/byline-reader/blend.json"))
    parser.add_argument("--write", type=Path, help="store the fitted blends in this model folder's reader.json")
    args = parser.parse_args(argv)
    run = Run(args.models, args.library)
    by_weight = {}
    for weight in WEIGHTS:
        # A threshold of 0 with the rules' order would skip reading (``Blend.reads_nothing``); the
        # fit needs each question's best probability, so these runs read with a floor that refuses nothing.
        never = {kind: Blend(weight, NEVER_REFUSES) for kind in BLEND_KINDS}
        by_weight[weight] = run.answer(never, args.fit)
        print(f"weight {weight}: {sum(row['ok'] for row in by_weight[weight])} right", file=sys.stderr, flush=True)
    fitted = fit(by_weight)
    blends = {kind: Blend(weight, threshold) for kind, (weight, threshold, _) in fitted.items()}
    print(
        f"fitted on {' '.join(args.fit)}: " + "; ".join(f"{k} {w} / {t} ({r} right)" for k, (w, t, r) in fitted.items())
    )
    every = ["dev", "test", "final"]
    configs = {
        "rules": {kind: Blend(math.inf, 0.0) for kind in blends},
        "reader's order": {kind: Blend(0.0, 0.0) for kind in blends},
        "blend": blends,
    }
    report: dict[str, Any] = {
        "fitted": {k: b.to_json() for k, b in blends.items()},
        "fit_parts": args.fit,
        "grid": {str(weight): rows for weight, rows in by_weight.items()},
    }
    for name, config in configs.items():
        rows = run.answer(config, every)
        report[name] = rows
        print("\n".join(table(name, rows)), flush=True)
    paths: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for row in report["blend"]:
        paths[row["part"]][row["path"]] += 1
    print("questions per reading kind:", {part: dict(counts) for part, counts in paths.items()})
    args.out.write_text(json.dumps(report))
    if args.write:
        meta_path = args.write / "reader.json"
        meta = json.loads(meta_path.read_text())
        meta["blends"] = report["fitted"]
        meta["blends_fitted_on"] = f"natural parts {', '.join(args.fit)}, fold-honest (bench/quality/reader_blend.py)"
        meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    run.library.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
