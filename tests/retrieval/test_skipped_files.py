"""Issue 16, #7: every skipped file is named, once, with the reason, where `byline ingest` and
the watched folder of `byline serve` report it (a file over the size cap, one whose single
line is longer than an article may be, a binary file, an empty one)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.jobs.feed_poller import poll_round
from retrieval.ingest.fetch import Fetcher
from retrieval.library import MAX_ARTICLE_CHARS, Library
from retrieval.reading.loader import MAX_FILE_BYTES
from tests.conftest import PROJECT
from tests.fixture_articles import article_text

# file name -> (contents, what the reason says)
HOSTILE: dict[str, tuple[bytes, str]] = {
    "too-big.txt": (b"Headline\n\n" + b"word " * (MAX_FILE_BYTES // 5 + 10), "too big"),
    "long-line.txt": (b"Headline\n\n" + b"x" * (MAX_ARTICLE_CHARS + 10_000) + b"\n", "characters long"),
    "binary.txt": (b"\x00\x01\x02" * 100, "binary"),
    "empty.md": (b"", "empty"),
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "drop"
    path.mkdir()
    for name, (data, _) in HOSTILE.items():
        (path / name).write_bytes(data)
    (path / "good.txt").write_text(article_text(5), encoding="utf-8")
    return path


def named_once(lines: list[str], name: str, why: str) -> bool:
    hits = [line for line in lines if name in line]
    return len(hits) == 1 and hits[0].count(name) == 1 and why in hits[0]


def test_byline_ingest_names_every_skipped_file(folder: Path, tmp_path: Path) -> None:
    env = {**os.environ, "BYLINE_DATA_DIR": str(tmp_path / "data")}
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "ingest", str(folder)],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped: ")]
    assert len(skipped) == len(HOSTILE), skipped
    for name, (_, why) in HOSTILE.items():
        assert named_once(skipped, name, why), (name, skipped)


def test_the_watched_folder_names_every_skipped_file(
    folder: Path, library: Library, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="byline.poller"):
        poll_round(library, Fetcher(), folder)
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == len(HOSTILE), skipped
    for name, (_, why) in HOSTILE.items():
        assert named_once(skipped, name, why), (name, skipped)
