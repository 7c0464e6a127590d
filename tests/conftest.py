"""Shared fixtures. The real model, FAISS and SQLite are used throughout; the model is loaded
once per test process and shared, since loading it is the slow part."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# Before anything imports it: its asserts (a signed request answered 200) report as a test's do.
pytest.register_assert_rewrite("tests.platform_helpers")

from bot.service import Service  # noqa: E402
from retrieval.backend import Backend  # noqa: E402
from retrieval.index.embedder import Embedder  # noqa: E402
from retrieval.library import Library  # noqa: E402
from tests.fakes.feed_server import FeedServer, running_server  # noqa: E402
from tests.fakes.postgres_server import postgres_server, postgres_url  # noqa: E402, F401

if TYPE_CHECKING:
    from tests.fakes.discord_fake import DiscordFake
    from tests.fakes.slack_fake import FakeSlack
    from tests.platform_helpers import Bolt, ErrorLog

PROJECT = Path(__file__).resolve().parent.parent
SEEDS = PROJECT / "seeds"
SHARED_DATA = PROJECT.parent / "shared" / "data"
BBC = SHARED_DATA / "bbc-news"
# For tests written about particular BBC articles: a user's machine has no ../shared/data, and
# there they are skipped with this reason rather than failing.
NO_BBC = f"needs the BBC articles at {BBC} (../shared/data), which a user's machine does not have"
needs_bbc = pytest.mark.skipif(not BBC.is_dir(), reason=NO_BBC)
SEED_FILE = next(SEEDS.glob("*.txt"))


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return Embedder()


@contextmanager
def bbc_library(directory: Path, embedder: Embedder, names: list[str]) -> Iterator[Library]:
    """A library of the named BBC articles ("business/260"), each stored as its own article."""
    paths = [BBC / f"{name}.txt" for name in names]
    if not all(path.is_file() for path in paths):
        pytest.skip(NO_BBC)
    library = Library.open(directory / "data", embedder)
    try:
        report = library.ingest(paths)
        assert len(report.article_ids) == len(names)
        yield library
    finally:
        library.close()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # A module (or test) marked ``@pytest.mark.backends("embedded", "cluster")`` runs its library
    # tests over each backend named; every other test runs over the embedded one.
    if "library_backend" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("backends")
        metafunc.parametrize("library_backend", list(marker.args) if marker else ["embedded"], indirect=True)


@pytest.fixture
def library_backend(request: pytest.FixtureRequest) -> Backend:
    """Where the test's library lives: the data directory (``embedded``), or a fresh PostgreSQL
    database of the test server and an in-memory Qdrant (``cluster``)."""
    if request.param == "embedded":
        return Backend()
    assert request.param == "cluster", request.param
    database_url = request.getfixturevalue("postgres_url")
    return Backend("cluster", database_url=database_url, qdrant_location=":memory:")


@pytest.fixture
def library(tmp_path: Path, embedder: Embedder, library_backend: Backend) -> Iterator[Library]:
    """A fresh, empty library in a temporary data directory (or on the cluster backend)."""
    opened = Library.open(tmp_path / "data", embedder, library_backend)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def seed_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """A data directory with the seed article ingested, built once; copy it before changing it."""
    directory = tmp_path_factory.mktemp("seed") / "data"
    built = Library.open(directory, embedder, Backend())
    built.ingest([SEEDS])
    built.close()
    return directory


@pytest.fixture
def seed_library(
    seed_data_dir: Path, tmp_path: Path, embedder: Embedder, library_backend: Backend
) -> Iterator[Library]:
    """A library over the seed article, in its own copy of the data directory; on the cluster
    backend, the seed ingested into the test's own database."""
    copy = tmp_path / "seeded"
    if library_backend.is_cluster:
        opened = Library.open(copy, embedder, library_backend)
        opened.ingest([SEEDS])
    else:
        shutil.copytree(seed_data_dir, copy)
        opened = Library.open(copy, embedder, library_backend)
    yield opened
    opened.close()


@pytest.fixture
def seed_service(seed_library: Library, library_backend: Backend) -> Iterator[Service]:
    """The platform-neutral service over the seed article (what adapters talk to)."""
    from bot.app import add_features
    from bot.limits import LimitSettings
    from bot.state.store import BotState, state_location

    # Generous limits: tests ask many questions quickly; tests of the limits build their own.
    limits = LimitSettings(user_burst=10_000, channel_burst=10_000)
    state = BotState(state_location(seed_library.data_dir, library_backend))
    service = add_features(Service(seed_library, state, limits))
    yield service
    service.state.close()


@pytest.fixture
def server() -> Iterator[FeedServer]:
    """The local web server the feed and fetch tests serve pages and feeds from."""
    with running_server() as running:
        yield running


@pytest.fixture
def cli_data_dir(seed_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the seed data directory that ``byline`` commands run against: BYLINE_DATA_DIR
    names it, and the working directory is a temporary one."""
    copy = tmp_path / "data"
    shutil.copytree(seed_data_dir, copy)
    monkeypatch.setenv("BYLINE_DATA_DIR", str(copy))
    monkeypatch.chdir(tmp_path)
    return copy


# -- the fake platforms (imported here, not at the top, so tests that use neither skip loading them)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    """The fake Slack Web API on 127.0.0.1."""
    from tests.platform_helpers import running_slack

    with running_slack() as fake:
        yield fake


@pytest.fixture
def bolt(seed_service: Service, slack: FakeSlack, tmp_path: Path) -> Iterator[Bolt]:
    """The real bolt app over the seed article, served over HTTP and talking to ``slack``."""
    from tests.platform_helpers import served_bolt

    with served_bolt(seed_service, slack, tmp_path) as served:
        yield served


@pytest.fixture
def discord_fake() -> Iterator[DiscordFake]:
    """The fake Discord (REST and gateway) on 127.0.0.1, with discord.py pointed at it."""
    from tests.fakes.discord_fake import running_fake

    with running_fake() as fake:
        yield fake


@pytest.fixture
def errors() -> Iterator[ErrorLog]:
    """Fails the test at teardown if Byline's Discord adapter or discord.py logged an error."""
    from tests.platform_helpers import ErrorLog

    handler = ErrorLog()
    loggers = [logging.getLogger("byline.discord"), logging.getLogger("discord")]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler
    for logger in loggers:
        logger.removeHandler(handler)
    assert not handler.records, [r.getMessage() for r in handler.records]
