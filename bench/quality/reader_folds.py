"""Whether the reader helps the hand rules, measured fold-honestly: each natural question is read
by the model trained without its article's fold (``bench/reader/reader_pairs.py``'s two folds).

    .venv/bin/python -m bench.quality.reader_folds --models /tmp/r2/model_f0 /tmp/r2/model_f1 \\
        --library /tmp/byline-reader/bbc --out /tmp/r2/rows.json

For every question of the dev, test and final parts it answers twice through the real pipeline:
in the rules' order (the reader reads the rules' best candidates but changes nothing: this is the
rules' answer) and in the reader's order with no refusal by the reader (every hand rule still
applies). It records both verdicts (``bench.quality.eval_natural.judge``), the reader's best
probability and its probability for the rules' first candidate. Then it scores, per part, the
policies "switch to the reader's order when its best beats the rules' first by more than m" and
"refuse when the best is below t", fits (m, t) on dev and reports test and final.

To see inside one answer, this wraps the pipeline's two read functions (a measurement only: the
wrapped functions run unchanged, and nothing here is a test).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ANSWERABLE = ("speaker", "fact", "who_said")
MARGINS = [9.0, 0.5, 0.3, 0.2, 0.1, 0.05, -9.0]  # 9: never switch; -9: always the reader's order
FLOORS = [0.0, 0.01, 0.02, 0.03, 0.05, 0.08, 0.1]


def capture(models: list[Path], library_dir: Path) -> list[dict[str, Any]]:
    os.environ["BYLINE_READER"] = "on"
    import retrieval.answering.pipeline as pipeline
    from bench.quality.eval_natural import judge
    from bench.quality.eval_reader import natural_parts
    from retrieval.answering import TUNING, answer_question
    from retrieval.answering import read as read_stage
    from retrieval.answering.reader import use_model
    from retrieval.library import Library

    order = {"by": "rules"}
    seen: list[tuple[float, float | None]] = []

    def wrap(read: Any) -> Any:
        def wrapped(library: Any, reader: Any, question: str, items: list[Any]) -> Any:
            reading = read(library, reader, question, items)
            first = items[0] if items else None
            key = getattr(first, "sentence", None) or getattr(first, "quote", None)
            p_first = next(
                (x.score for x in reading.items if (getattr(x, "sentence", None) or getattr(x, "quote", None)) is key),
                None,
            )
            seen.append((reading.best, p_first))
            kept = reading.items if order["by"] == "reader" else items
            return read_stage.Reading(kept, reading.best, 0.0)  # threshold 0: the reader never refuses

        return wrapped

    pipeline.read_sentences = wrap(read_stage.read_sentences)  # type: ignore[assignment]
    pipeline.read_quotes = wrap(read_stage.read_quotes)  # type: ignore[assignment]
    library = Library.open(library_dir)
    library.warm_up()
    rows = []
    for fold, model in enumerate(models):
        use_model(model)
        for part, questions in natural_parts(["dev", "test", "final"], fold).items():
            for question in questions:
                row: dict[str, Any] = {"fold": fold, "part": part, "kind": question.kind, "q": question.text}
                for by in ("rules", "reader"):
                    order["by"] = by
                    seen.clear()
                    answer = answer_question(library, question.text, (), TUNING)
                    row[by] = {"ok": bool(judge(question, answer)), "answered": answer.answered}
                    if by == "rules":
                        row["best"] = max((best for best, _ in seen), default=None)
                        row["p_rules_top"] = seen[0][1] if seen else None
                rows.append(row)
            print(f"fold {fold} {part}: {len(questions)} questions", file=sys.stderr, flush=True)
    library.close()
    return rows


def outcome(row: dict[str, Any], margin: float, floor: float) -> tuple[bool, bool]:
    """(right, answered) under one policy."""
    best, first = row["best"], row["p_rules_top"]
    switch = best is not None and first is not None and best - first > margin
    chosen = row["reader"] if switch else row["rules"]
    if best is not None and best < floor and chosen["answered"]:
        return row["kind"] in ("absent", "detail_absent"), False
    return chosen["ok"], chosen["answered"]


def score(rows: list[dict[str, Any]], margin: float, floor: float) -> tuple[int, dict[str, float], float]:
    right: Counter[str] = Counter()
    asked: Counter[str] = Counter()
    refused = answerable = 0
    for row in rows:
        ok, answered = outcome(row, margin, floor)
        right[row["kind"]] += ok
        asked[row["kind"]] += 1
        if row["kind"] in ANSWERABLE:
            answerable += 1
            refused += not answered
    return (
        sum(right.values()),
        {k: round(right[k] / asked[k], 3) for k in asked},
        round(refused / max(1, answerable), 3),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, nargs=2, help="the readers trained without fold 0 and without fold 1")
    parser.add_argument("--library", type=Path, default=Path("/tmp/byline-reader/bbc"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/byline-reader/fold_rows.json"))
    parser.add_argument("--rows", type=Path, help="score rows captured before instead of capturing")
    args = parser.parse_args(argv)
    if args.rows:
        rows = json.loads(args.rows.read_text())
    else:
        rows = capture(args.models, args.library)
        args.out.write_text(json.dumps(rows))
    parts: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        parts[row["part"]].append(row)
    fitted = max(itertools.product(MARGINS, FLOORS), key=lambda mf: (score(parts["dev"], *mf)[0], mf[0], -mf[1]))
    print(f"fitted on dev: switch margin {fitted[0]}, refusal floor {fitted[1]}")
    for name, (margin, floor) in {
        "rules": (9.0, 0.0),
        "reader's order": (-9.0, 0.0),
        "fitted": fitted,
        "gate 0.02": (9.0, 0.02),
        "gate 0.05": (9.0, 0.05),
    }.items():
        for part in ("dev", "test", "final"):
            right, by_kind, refused = score(parts[part], margin, floor)
            print(f"  {name:15} {part:5} right {right}/{len(parts[part])}  refused {refused}  {by_kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
