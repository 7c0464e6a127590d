"""A small, fast run of the evaluation harness on a few SQuAD paragraphs (skipped without data)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench import eval as evaluation

PROJECT = Path(__file__).resolve().parent.parent.parent
DATA = PROJECT.parent / "shared" / "data"


@pytest.mark.skipif(not (DATA / "squad2-dev-subset.json").exists(), reason="SQuAD subset not present")
def test_eval_harness_runs_end_to_end_on_a_few_paragraphs(tmp_path: Path) -> None:
    args = evaluation._args(
        [
            "--data",
            str(DATA),
            "--cache",
            str(tmp_path),
            "--squad-paragraphs",
            "6",
            "--half",
            "all",
            "--skip",
            "ooc",
            "quotes",
        ]
    )
    lines: list[str] = []
    results = evaluation.evaluate(args, lines)
    table = "\n".join(lines)
    assert "SQuAD recall@1" in table and "dense" in table
    for key in ("squad_recall_at_1", "squad_recall_at_5", "squad_mrr", "squad_answer_hit", "squad_false_abstention"):
        assert 0.0 <= results[key] <= 1.0 and not math.isnan(results[key])
    assert results["squad_recall_at_5"] >= results["squad_recall_at_1"]
    # Six paragraphs are easy to tell apart; a broken pipeline would fall far below this.
    assert results["squad_recall_at_5"] >= 0.9
    assert results["squad_spans_verbatim"] == 1.0


def test_eval_skips_cleanly_without_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert evaluation.main(["--data", str(tmp_path / "absent"), "--cache", str(tmp_path)]) == 0
    assert "nothing to evaluate" in capsys.readouterr().out
