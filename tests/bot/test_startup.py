"""Start-up: ``byline ask`` on a built data dir loads torch and the cached query encoder only,
and the cached encoder gives the vectors the model gives."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from retrieval.index.embedder import Embedder
from tests.conftest import PROJECT

QUESTIONS = ["what did Mourinho say about the referee?", "x", "é" * 600, "word " * 400, "José's café — naïve?"]


def test_the_cached_query_encoder_equals_the_model(embedder: Embedder, tmp_path: Path) -> None:
    writer = Embedder(cache_dir=tmp_path)
    writer._model = embedder.model  # the session's loaded model: tracing is what is under test
    writer.encode_one("warm up")  # traces, and saves the trace
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".pt"]
    reader = Embedder(cache_dir=tmp_path)
    for text in QUESTIONS:
        cached, batch = reader.encode_one(text), embedder.encode([text])[0]
        assert cached.dtype == batch.dtype and cached.shape == batch.shape
        assert float(np.abs(cached - batch).max()) < 1e-5, text
    assert reader._model is None  # answered without loading sentence-transformers


def test_a_damaged_cache_falls_back_to_the_model(embedder: Embedder, tmp_path: Path) -> None:
    writer = Embedder(cache_dir=tmp_path)
    writer._model = embedder.model
    writer.encode_one("warm up")
    for path in tmp_path.iterdir():
        path.write_bytes(b"not a trace")
    reader = Embedder(cache_dir=tmp_path)
    reader._model = None
    vector = reader.encode_one(QUESTIONS[0])
    assert float(np.abs(vector - embedder.encode([QUESTIONS[0]])[0]).max()) < 1e-5


def test_byline_ask_on_a_built_data_dir_never_imports_sentence_transformers(
    seed_data_dir: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BYLINE_", "SLACK_", "DISCORD_"))}
    env |= {"BYLINE_DATA_DIR": str(seed_data_dir), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    script = (
        "import sys\n"
        "from bot.cli.main import main\n"
        "code = main(['ask', 'what did Mourinho say about the referee?'])\n"
        "heavy = sorted(m for m in ('sentence_transformers', 'transformers', 'sklearn', 'trafilatura', 'discord',"
        " 'slack_bolt', 'feedparser') if m in sys.modules)\n"
        "print('HEAVY', ','.join(heavy), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )

    def ask() -> tuple[str, str]:
        result = subprocess.run(
            [sys.executable, "-c", script], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, result.stderr
        heavy = next(line for line in result.stderr.splitlines() if line.startswith("HEAVY"))
        return result.stdout, heavy.removeprefix("HEAVY").strip()

    first, _ = ask()  # the first question on this machine traces the encoder and caches it
    second, heavy = ask()
    assert "Mourinho" in second and second == first
    assert heavy == "", f"imported at start-up: {heavy}"
