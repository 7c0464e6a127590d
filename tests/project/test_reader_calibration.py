"""The reader's calibration (``bench/reader/train_reader.platt``), on logits shaped like a trained
cross-encoder's: scores of +-5 to 10, a quarter positive."""

from __future__ import annotations

import numpy as np

from bench.reader.train_reader import _log_loss, platt


def test_platt_scaling_converges_where_a_plain_newton_step_overshoots() -> None:
    rng = np.random.default_rng(0)
    labels = (rng.random(2000) < 0.25).astype(float)
    logits = np.where(labels == 1, rng.normal(1.5, 2, 2000), rng.normal(-1.5, 2, 2000)) * 1.8
    a, b = platt(logits, labels)
    # A plain Newton step from (1, 0) ran off to a ~ 3.6e9 on these; the halved steps land on the
    # optimum: the log-loss's gradient vanishes there and it is below the starting point's.
    assert 0.1 < a < 2.0 and -5.0 < b < 5.0
    p = 1 / (1 + np.exp(-(a * logits + b)))
    gradient = np.stack([logits, np.ones_like(logits)], axis=1).T @ (p - labels) / len(labels)
    assert np.abs(gradient).max() < 1e-4
    assert _log_loss(a, b, logits, labels) < _log_loss(1.0, 0.0, logits, labels)
