"""Byline's reader: a small cross-encoder that reads a question with one candidate at a time.

It was trained here (``bench/reader/train_reader.py`` on ``bench/reader/reader_pairs.py``'s pairs; see
``retrieval/reader_model/MODEL_CARD.md``) and ships inside the package, so it loads offline,
from the package's own files, once per process, the first time a question needs it (or at
``Library.warm_up``). It gives the probability that a candidate (``reader_input``) answers the
question; the answer path orders its candidates by a blend of it with the rules' score and
refuses when the best is below a threshold, both per kind of question (``Blend``;
``refused_by: reader``).

``BYLINE_READER`` (``off``, the default, or ``on``) chooses whether the answer path reads with
it at all. It is off by default because, measured on the natural questions, the hand rules
answer more questions right than the reader, alone or blended with them (docs/reader.md).
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

MODEL_DIR = Path(__file__).resolve().parent.parent / "reader_model"
READER_VARIABLE = "BYLINE_READER"
READER_MODES = ("on", "off")
DEFAULT_MODE = "off"
# At most this many candidates are read per question: the warm-ask latency budget (docs/reader.md).
MAX_CANDIDATES = 6


class ReaderSettingError(ValueError):
    """``BYLINE_READER`` holds something other than on or off."""


def reader_mode(environ: Mapping[str, str] | None = None) -> str:
    """``on`` or ``off``, from ``BYLINE_READER`` (the default when unset or empty)."""
    environ = os.environ if environ is None else environ
    raw = environ.get(READER_VARIABLE, "")
    mode = raw.strip().lower() or DEFAULT_MODE
    if mode not in READER_MODES:
        raise ReaderSettingError(f"{READER_VARIABLE} must be on or off, not {raw!r}.")
    return mode


# The kinds of question the answer path reads, each with a blend of its own: a speaker's quotes,
# "who said ..." sentences, and every other fact sentence.
BLEND_KINDS = ("speaker", "who_said", "fact")


@dataclass(frozen=True)
class Blend:
    """How one kind of question weighs the reader against the hand rules' ranking.

    Candidates are ordered by ``logit(p) + rules_weight * rules score`` (``inf``: the rules'
    order; 0: the reader's alone), and the question is refused when the best ``p`` is below
    ``threshold``. Fitted per kind on held-out questions (``bench/quality/reader_blend.py``),
    because the rules' scores differ in scale and worth between quotes and sentences.
    """

    rules_weight: float
    threshold: float

    @property
    def reads_nothing(self) -> bool:
        """The rules' order with no refusal: reading could change nothing."""
        return math.isinf(self.rules_weight) and self.threshold <= 0.0

    @classmethod
    def from_json(cls, value: Mapping[str, float | None]) -> Blend:
        weight, threshold = value["rules_weight"], value["threshold"]
        # null: the rules' order (JSON has no infinity)
        return cls(math.inf if weight is None else float(weight), float(threshold or 0.0))

    def to_json(self) -> dict[str, float | None]:
        return {
            "rules_weight": None if math.isinf(self.rules_weight) else self.rules_weight,
            "threshold": self.threshold,
        }


@dataclass(frozen=True)
class Calibration:
    """What training fitted beside the weights: ``p = sigmoid(a * logit + b)``, the threshold,
    and the per-kind blends (a kind without one: the reader's order and the threshold)."""

    a: float
    b: float
    threshold: float
    max_length: int
    blends: Mapping[str, Blend] = field(default_factory=dict)

    def blend(self, kind: str) -> Blend:
        return self.blends.get(kind, Blend(0.0, self.threshold))

    @classmethod
    def load(cls, folder: Path) -> Calibration:
        meta = json.loads((folder / "reader.json").read_text())
        blends = {kind: Blend.from_json(value) for kind, value in meta.get("blends", {}).items()}
        return cls(
            float(meta["platt_a"]), float(meta["platt_b"]), float(meta["threshold"]), int(meta["max_length"]), blends
        )


class Reader:
    """The trained cross-encoder and its calibration, loaded from ``folder``."""

    def __init__(self, folder: Path = MODEL_DIR) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        # imported when first used: the model libraries take seconds to import.
        import torch
        from sentence_transformers import CrossEncoder

        self.calibration = Calibration.load(folder)
        # The weights are stored in half precision; CPU matrix products are faster in float32.
        self._model: Any = CrossEncoder(
            str(folder), device="cpu", local_files_only=True, model_kwargs={"dtype": torch.float32}
        )
        self._model.max_seq_length = self.calibration.max_length
        self._identity = torch.nn.Identity()
        self._lock = threading.Lock()

    @property
    def threshold(self) -> float:
        return self.calibration.threshold

    def probabilities(self, question: str, candidates: Sequence[str]) -> np.ndarray:
        """The calibrated probability that each candidate answers the question (one batch)."""
        return np.asarray(1.0 / (1.0 + np.exp(-self.calibrated_logits(question, candidates))))

    def calibrated_logits(self, question: str, candidates: Sequence[str]) -> np.ndarray:
        """``a * logit + b`` for each candidate: the log-odds that it answers the question."""
        if not candidates:
            return np.zeros(0)
        pairs = [(question, text) for text in candidates]
        with self._lock:  # one forward pass at a time: torch already uses every core
            logits = self._model.predict(
                pairs, batch_size=len(pairs), activation_fn=self._identity, show_progress_bar=False
            )
        logits = np.asarray(logits, dtype=np.float64).reshape(-1)
        return np.asarray(self.calibration.a * logits + self.calibration.b)


_shared: Reader | None = None
_shared_lock = threading.Lock()


def use_model(folder: Path) -> Reader:
    """Load the reader from ``folder`` as the process's one reader: a model trained with
    ``bench/reader/train_reader.py --out folder`` (``bench/quality/eval_reader.py --model`` scores each fold's)."""
    return use_reader(Reader(folder))


def use_reader(reader: Reader) -> Reader:
    """Make an already loaded reader the process's one reader (a bench that switches between
    fold models, ``bench/quality/reader_blend.py``, loads each once)."""
    global _shared
    with _shared_lock:
        _shared = reader
    return reader


def shared_reader() -> Reader | None:
    """The process's one reader, loaded on first use; None when the package has no weights."""
    global _shared
    if _shared is None:
        with _shared_lock:
            if _shared is None and (MODEL_DIR / "model.safetensors").exists():
                _shared = Reader()
    return _shared
