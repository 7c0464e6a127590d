"""The shipped reader: it loads offline from the package, reads a right candidate above a wrong
one, and the answer path refuses through it (``refused_by: reader``) when nothing answers."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from retrieval.answering import TUNING, answer_question, checks
from retrieval.answering.reader import (
    BLEND_KINDS,
    MODEL_DIR,
    Blend,
    Calibration,
    Reader,
    ReaderSettingError,
    reader_mode,
    shared_reader,
    use_model,
    use_reader,
)
from retrieval.answering.reader_input import candidate_text
from retrieval.library import Library

# Hand-made (question, right candidate, wrong candidate) triples, none from the training data:
# the wrong one is about the same thing but does not say what is asked.
PAIRS = [
    (
        "How much did the company pay for the factory?",
        candidate_text(
            "The firm bought the Leeds factory for £12m last year.", "", "Textile maker expands in Yorkshire"
        ),
        candidate_text("The factory employs 300 people and makes curtains.", "", "Textile maker expands in Yorkshire"),
    ),
    (
        "What did Smith say about the strike?",
        candidate_text(
            "The strike is a disaster for passengers and must end now.",
            "John Smith",
            "Rail strike enters third day",
            after="Smith said talks would resume on Monday.",
        ),
        candidate_text(
            "Trains between London and Leeds were cancelled on Tuesday.", "", "Rail strike enters third day"
        ),
    ),
    (
        "When will the new stadium open?",
        candidate_text("The stadium is due to open in August 2026.", "", "City approves new stadium"),
        candidate_text("Fans have campaigned for a new ground for a decade.", "", "City approves new stadium"),
    ),
]

# Reader only: the hand rules that refuse on the question's looks are off, so the refusal below
# can come from nothing but the reader.
READER_ONLY = replace(TUNING, disabled_checks=TUNING.disabled_checks | {c.name for c in checks.RULE_CHECKS})


@pytest.fixture(scope="module")
def reader() -> Reader:
    loaded = shared_reader()
    assert loaded is not None, f"the package ships no reader weights in {MODEL_DIR}"
    return loaded


def test_the_reader_ships_in_the_package_in_half_precision() -> None:
    weights = MODEL_DIR / "model.safetensors"
    meta = json.loads((MODEL_DIR / "reader.json").read_text())
    assert weights.stat().st_size < 40_000_000
    assert 0.0 < meta["threshold"] < 1.0
    assert (MODEL_DIR / "MODEL_CARD.md").exists()


def test_the_reader_loads_offline_and_reads_the_right_candidate_higher(
    reader: Reader, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for question, right, wrong in PAIRS:
        p_right, p_wrong = reader.probabilities(question, [right, wrong]).tolist()
        assert 0.0 <= p_wrong < p_right <= 1.0, (question, p_right, p_wrong)


def test_the_answer_path_refuses_through_the_reader(
    seed_library: Library, reader: Reader, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BYLINE_READER", "on")
    # The seed article is about Mourinho's dressing-room row; it never says what the club paid.
    answer = answer_question(
        seed_library, "How much did Manchester United pay for their new stadium roof?", (), READER_ONLY
    )
    assert not answer.answered
    assert answer.refused_by == "reader"
    assert answer.closest  # the closest passages are still shown


def test_off_by_default_the_answer_path_never_reads(seed_library: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BYLINE_READER", raising=False)
    answer = answer_question(
        seed_library, "How much did Manchester United pay for their new stadium roof?", (), READER_ONLY
    )
    assert answer.refused_by != "reader"


def test_the_answer_path_answers_through_the_reader(
    seed_library: Library, reader: Reader, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BYLINE_READER", "on")
    answer = answer_question(seed_library, "Who was left with blood running down his face?", (), READER_ONLY)
    assert answer.answered, answer.message
    assert any("Arteta" in span.text for span in answer.spans)


def test_reader_setting() -> None:
    assert reader_mode({}) == "off"
    assert reader_mode({"BYLINE_READER": "on"}) == "on"
    assert reader_mode({"BYLINE_READER": " OFF "}) == "off"
    with pytest.raises(ReaderSettingError, match="BYLINE_READER"):
        reader_mode({"BYLINE_READER": "sometimes"})


def test_blends_load_per_kind_from_reader_json(tmp_path: Path) -> None:
    meta = json.loads((MODEL_DIR / "reader.json").read_text())
    meta["blends"] = {"speaker": {"rules_weight": None, "threshold": 0.02}, "fact": {"rules_weight": 5, "threshold": 0}}
    (tmp_path / "reader.json").write_text(json.dumps(meta))
    calibration = Calibration.load(tmp_path)
    assert calibration.blend("speaker") == Blend(math.inf, 0.02)  # null: the rules' order
    assert calibration.blend("fact") == Blend(5.0, 0.0)
    # A kind the file does not name reads in the reader's order, refused below the threshold.
    assert calibration.blend("who_said") == Blend(0.0, meta["threshold"])
    assert Blend.from_json(Blend(math.inf, 0.1).to_json()) == Blend(math.inf, 0.1)


QUESTIONS = [
    "what did Mourinho say about the referee?",
    "Who was left with blood running down his face?",
    "Who said the dressing room was a disgrace?",
]


def _spans(library: Library, question: str) -> list[tuple[str, str]]:
    return [(span.text, span.speaker) for span in answer_question(library, question, (), TUNING).spans]


def test_the_rules_order_blend_answers_as_the_rules_do(
    seed_library: Library, reader: Reader, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BYLINE_READER", raising=False)
    by_rules = {question: _spans(seed_library, question) for question in QUESTIONS}
    monkeypatch.setenv("BYLINE_READER", "on")
    # Without a floor the kind is not read at all; with one that refuses nothing it is read, and
    # the rules' order with the rules' scores comes through the reading unchanged.
    for floor in (0.0, 1e-12):
        rules_order = {kind: Blend(math.inf, floor) for kind in BLEND_KINDS}
        monkeypatch.setattr(reader, "calibration", replace(reader.calibration, blends=rules_order))
        assert {question: _spans(seed_library, question) for question in QUESTIONS} == by_rules, floor
    assert any(by_rules.values())
    # A floor above every probability refuses them all, whatever the order.
    refuse_all = {kind: Blend(math.inf, 1.01) for kind in BLEND_KINDS}
    monkeypatch.setattr(reader, "calibration", replace(reader.calibration, blends=refuse_all))
    for question in QUESTIONS:
        assert answer_question(seed_library, question, (), TUNING).refused_by == "reader", question


def test_a_bench_can_switch_the_process_reader(reader: Reader) -> None:
    """``use_model`` loads a folder's reader, ``use_reader`` installs one already loaded (a
    bench switching between fold models): either is what the answer path then reads with."""
    other = use_model(MODEL_DIR)
    try:
        assert other is not reader and shared_reader() is other
    finally:
        assert use_reader(reader) is reader
    assert shared_reader() is reader
