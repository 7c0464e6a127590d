"""Shared fixtures. The real model, FAISS and SQLite are used throughout; the model is loaded
once per test process and shared, since loading it is the slow part."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.service import Service
from retrieval.embedder import Embedder
from retrieval.library import Library
from tests.feed_server import FeedServer, running_server

PROJECT = Path(__file__).resolve().parent.parent
SEEDS = PROJECT / "seeds"
SHARED_DATA = PROJECT.parent / "shared" / "data"
BBC = SHARED_DATA / "bbc-news"
SEED_FILE = next(SEEDS.glob("*.txt"))


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture
def library(tmp_path: Path, embedder: Embedder) -> Iterator[Library]:
    """A fresh, empty library in a temporary data directory."""
    opened = Library.open(tmp_path / "data", embedder)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def seed_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """A data directory with the seed article ingested, built once; copy it before changing it."""
    directory = tmp_path_factory.mktemp("seed") / "data"
    built = Library.open(directory, embedder)
    built.ingest([SEEDS])
    built.close()
    return directory


@pytest.fixture
def seed_library(seed_data_dir: Path, tmp_path: Path, embedder: Embedder) -> Iterator[Library]:
    """A library over the seed article, in its own copy of the data directory."""
    copy = tmp_path / "seeded"
    shutil.copytree(seed_data_dir, copy)
    opened = Library.open(copy, embedder)
    yield opened
    opened.close()


@pytest.fixture
def seed_service(seed_library: Library) -> Iterator[Service]:
    """The platform-neutral service over the seed article (what adapters talk to)."""
    from bot.app import add_features
    from bot.limits import LimitSettings
    from bot.state import STATE_FILE, BotState

    # Generous limits: tests ask many questions quickly; tests of the limits build their own.
    limits = LimitSettings(user_burst=10_000, channel_burst=10_000)
    service = add_features(Service(seed_library, BotState(seed_library.data_dir / STATE_FILE), limits))
    yield service
    service.state.close()


@pytest.fixture
def server() -> Iterator[FeedServer]:
    """The local web server the feed and fetch tests serve pages and feeds from."""
    with running_server() as running:
        yield running
