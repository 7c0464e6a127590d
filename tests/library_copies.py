"""A library ingested once per test module, and a fresh copy of it per test: the quote-check,
quote-command and alert tests all work on their own small articles this way."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from bot.app import add_features
from bot.limits import LimitSettings
from bot.service import Service
from bot.state.store import BotState, state_location
from retrieval.backend import Backend
from retrieval.index.embedder import Embedder
from retrieval.library import Library


def ingested_data_dir(root: Path, embedder: Embedder, write_articles: Callable[[Path], list[Path]]) -> Path:
    """A data dir under ``root`` holding the article files ``write_articles`` writes into a folder."""
    library = Library.open(root / "data", embedder)
    try:
        library.ingest(write_articles(root / "articles"))
    finally:
        library.close()
    return root / "data"


def copied_data_dir(source: Path, tmp_path: Path) -> Path:
    """A copy of ``source`` that one test may change freely."""
    copy = tmp_path / "data"
    shutil.copytree(source, copy)
    return copy


def service_on_copy(source: Path, tmp_path: Path, embedder: Embedder) -> Service:
    """A service with every feature over a copy of ``source``; rate limits out of the way."""
    copy = copied_data_dir(source, tmp_path)
    limits = LimitSettings(user_burst=10_000, channel_burst=10_000)
    return add_features(Service(Library.open(copy, embedder), BotState(state_location(copy, Backend())), limits))
