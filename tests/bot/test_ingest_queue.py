"""The ingest queue end to end: ``byline ingest`` and chat's ``/ingest`` enqueue, a worker embeds.

Real servers throughout: Valkey (the queue and the replies), PostgreSQL (the articles) and an
in-memory Qdrant that every library of this process naming it shares, so that the worker's library
and the "bot" library stand for two processes of one cluster. The worker is a real Dramatiq worker
on threads in this process, started the way ``byline worker`` starts it (``start_worker``).
"""

from __future__ import annotations

import logging
import os
import queue
import shutil
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import redis

from bot.cli.ingest import ingest_command
from bot.cli.main import main
from bot.cli.worker import RunningWorker, start_worker
from bot.cli.worker import run as run_worker
from bot.commands.ingest import ingest_upload, register_ingest
from bot.jobs import ingest_queue
from bot.jobs.ingest import MAX_RETRIES, BadJob, should_retry
from bot.jobs.ingest_queue import IngestQueue
from bot.replies import TextReply
from bot.service import Asker, Service
from bot.settings import Settings
from bot.state.redis_client import redis_client
from bot.state.store import BotState, state_location
from retrieval.index.embedder import Embedder
from retrieval.library import IngestReport, Library
from retrieval.reading.loader import read_article_file
from retrieval.storage.store import Store
from tests.conftest import BBC, SEEDS, needs_bbc
from tests.fakes.feed_server import FeedServer, article_html
from tests.fakes.redis_server import redis_server, redis_url  # noqa: F401

YUKOS = BBC / "business" / "003.txt"  # "Yukos unit buyer faces loan claim"
DOLLAR = BBC / "business" / "002.txt"  # "Dollar gains on Greenspan speech"
ADMIN = Asker("terminal", "boss", is_admin=True, tenant="operator", is_operator=True)
# Dramatiq's keys for the queue's dead letters and its retries waiting (``ingest_queue.NAMESPACE``).
DEAD_LETTERS = "byline:ingest.XQ"
RETRIES_WAITING = "byline:ingest.DQ"


@pytest.fixture
def settings(tmp_path: Path, postgres_url: str, redis_url: str) -> Settings:  # noqa: F811
    """The cluster settings a worker and the enqueuers share; the test page server is fetchable."""
    return Settings(
        data_dir=tmp_path / "worker-data",
        seeds_dir=SEEDS,
        backend="cluster",
        database_url=postgres_url,
        redis_url=redis_url,
        qdrant_url=f":memory:{uuid.uuid4().hex}",
        fetch_allowlist="127.0.0.1",
    )


@pytest.fixture
def worker(settings: Settings, embedder: Embedder) -> Iterator[RunningWorker]:
    running = start_worker(settings, threads=1, embedder=embedder)
    yield running
    running.stop()


@pytest.fixture
def bot(settings: Settings, embedder: Embedder, tmp_path: Path) -> Iterator[Library]:
    """Another process's library on the same cluster: it only serves, and catches up."""
    library = Library.open(tmp_path / "bot-data", embedder, settings.storage())
    yield library
    library.close()


@needs_bbc
def test_byline_ingest_is_embedded_by_a_worker_and_the_bot_answers(
    settings: Settings,
    worker: RunningWorker,
    bot: Library,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="byline.ingest_queue")
    folder = tmp_path / "articles"
    folder.mkdir()
    shutil.copy(YUKOS, folder / "yukos.txt")
    shutil.copy(DOLLAR, folder / "dollar.txt")
    (folder / "broken.txt").write_bytes(b"\x00\x01" * 100)

    assert ingest_command(settings, [str(folder)]) == 0
    out, err = capsys.readouterr()
    assert "added: Yukos unit buyer faces loan claim" in out and "added: Dollar gains on Greenspan speech" in out
    assert "2 added, 1 skipped;" in out
    # Read where it was enqueued: the unreadable file's reason, as an in-process ingest gives it.
    assert f"skipped: {folder / 'broken.txt'}: this looks like a binary file" in err
    assert any("job 1 of 1 (2 articles): done" in record.getMessage() for record in caplog.records)

    # Stored in PostgreSQL and Qdrant, so another process of the cluster answers from it.
    assert bot.store.article_count() == 2
    assert bot.catch_up()
    counts = bot.store.counts()
    assert bot.dense.count() == counts["sentences"] > 0 and bot.sparse.count() == counts["passages"] > 0
    answer = bot.ask("How much did Rosneft pay for the Yugansk unit?")
    assert answer.answered and "Yukos unit buyer faces loan claim" in {c.title for c in answer.citations}

    assert ingest_command(settings, [str(folder / "yukos.txt"), str(folder / "dollar.txt")]) == 0
    assert "0 added, 2 already stored;" in capsys.readouterr().out


@needs_bbc
def test_a_bad_file_is_skipped_with_its_reason_and_a_bad_job_is_never_retried(
    settings: Settings,
    worker: RunningWorker,
    redis_url: str,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "articles"
    folder.mkdir()
    shutil.copy(YUKOS, folder / "a-good.txt")
    # A NUL byte past the first 8 KB that the loader looks at: the file is read, and the library
    # refuses the text (PostgreSQL could not store it) with the reason; the rest of the job lands.
    filler = "The board met again on Tuesday to discuss the figures. " * 200
    (folder / "b-bad.txt").write_text(f"Board meets again\n\n{filler}\n\nThe end\x00 of it.\n", encoding="utf-8")

    started = time.monotonic()
    assert ingest_command(settings, [str(folder)]) == 0
    out, err = capsys.readouterr()
    assert time.monotonic() - started < 5.0  # not after Dramatiq's first retry delay (5 s or more)
    assert "added: Yukos unit buyer faces loan claim" in out and "1 added, 1 skipped;" in out
    assert "NUL bytes" in err

    # A message the worker cannot read fails at once and goes to the dead letters, unretried.
    worker.queue.actor.send({"version": "no such format", "reply": "byline:test:nobody", "part": 0})
    client = redis.Redis.from_url(redis_url)
    deadline = time.monotonic() + 5.0
    while client.zcard(DEAD_LETTERS) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)  # the worker rejects the message just after reading it
    assert client.zcard(DEAD_LETTERS) == 1 and client.llen(RETRIES_WAITING) == 0
    client.close()


@needs_bbc
def test_without_a_worker_byline_ingest_says_so_and_the_job_waits_for_one(
    settings: Settings,
    embedder: Embedder,
    postgres_url: str,
    redis_url: str,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(ingest_queue, "ANSWER_WITHIN_S", 1.0)
    monkeypatch.chdir(tmp_path)
    for name, value in {
        "BYLINE_BACKEND": "cluster",
        "BYLINE_DATABASE_URL": postgres_url,
        "BYLINE_REDIS_URL": redis_url,
        "BYLINE_DATA_DIR": str(tmp_path / "cli-data"),
    }.items():
        monkeypatch.setenv(name, value)

    assert main(["ingest", str(YUKOS)]) == 1
    assert capsys.readouterr().err == (
        "byline: queued; no worker answered within 1 s: start `byline worker` "
        "(the ingest stays queued and runs when a worker takes it)\n"
    )

    running = start_worker(settings, embedder=embedder)
    store = Store(postgres_url)
    try:
        deadline = time.monotonic() + 30.0
        while store.article_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert store.article_count() == 1
    finally:
        store.close()
        running.stop()


@needs_bbc
def test_chat_ingest_hands_pages_and_uploads_to_a_worker_and_answers_at_once(
    settings: Settings, worker: RunningWorker, bot: Library, server: FeedServer
) -> None:
    service = Service(bot, BotState(state_location(bot.data_dir, settings.storage())))
    queue = IngestQueue(settings.redis_url)
    try:
        register_ingest(service, queue=queue)
        title, *paragraphs = [p.strip() for p in YUKOS.read_text(encoding="utf-8").split("\n\n") if p.strip()]
        url = server.route("/business/yukos", article_html(title, paragraphs))
        reply = service.run_command(f"/ingest {url}", ADMIN)
        assert isinstance(reply, TextReply) and not reply.error, reply
        assert f"Added “{title}”" in reply.text and "quotes found" in reply.text
        # Taken into the bot's indexes at once: no wait for its periodic catch-up.
        answer = bot.ask("How much did Rosneft pay for the Yugansk unit?")
        assert answer.answered and title in {c.title for c in answer.citations}

        upload = ingest_upload(service, "dollar.txt", DOLLAR.read_bytes(), ADMIN, queue=queue)
        assert upload.text.startswith("Added “Dollar gains on Greenspan speech”"), upload.text
        assert bot.store.article_count() == 2
    finally:
        queue.close()
        service.state.close()


@needs_bbc
def test_chat_ingest_without_a_worker_says_so(
    settings: Settings, bot: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest_queue, "ANSWER_WITHIN_S", 0.5)
    service = Service(bot, BotState(state_location(bot.data_dir, settings.storage())))
    queue = IngestQueue(settings.redis_url)
    try:
        reply = ingest_upload(service, "dollar.txt", DOLLAR.read_bytes(), ADMIN, queue=queue)
        assert reply.error and reply.text.startswith("Queued; no worker answered within 0.5 s: start `byline worker`")
    finally:
        queue.close()
        service.state.close()


def test_lost_connections_are_retried_and_other_failures_are_not(tmp_path: Path, postgres_url: str) -> None:
    from qdrant_client import QdrantClient
    from qdrant_client.http.exceptions import ResponseHandlingException

    with pytest.raises(psycopg.OperationalError) as no_database:
        psycopg.connect(f"postgresql://postgres@/byline?host={tmp_path}", connect_timeout=2)
    with pytest.raises(redis.ConnectionError) as no_redis:
        redis_client(f"unix://{tmp_path / 'no.sock'}").ping()  # the queue's own client
    with pytest.raises(ResponseHandlingException) as no_qdrant:
        QdrantClient(
            url="http://127.0.0.1:9", timeout=2, check_compatibility=False
        ).get_collections()  # the discard port: refused
    with psycopg.connect(postgres_url) as connection, pytest.raises(psycopg.DataError) as refused:
        connection.execute("SELECT %s", ("a\x00b",))

    for lost in (no_database.value, no_redis.value, no_qdrant.value):
        assert should_retry(0, lost) and should_retry(MAX_RETRIES - 1, lost)
        assert not should_retry(MAX_RETRIES, lost)  # then it fails for good, with its reason
    assert not should_retry(0, refused.value)
    assert not should_retry(0, BadJob("not an ingest job"))


@pytest.mark.parametrize(
    ("environment", "line"),
    [
        (
            {},
            "byline: the worker needs the cluster backend: set BYLINE_BACKEND=cluster (with BYLINE_DATABASE_URL and "
            "BYLINE_QDRANT_URL) and BYLINE_REDIS_URL\n",
        ),
        (
            {"BYLINE_BACKEND": "cluster", "BYLINE_DATABASE_URL": "postgresql:///byline"},
            "byline: the worker takes its jobs from Redis: set BYLINE_REDIS_URL (a redis:// URL)\n",
        ),
    ],
)
def test_byline_worker_without_the_cluster_settings_exits_2_saying_what_to_set(
    environment: dict[str, str],
    line: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("BYLINE_BACKEND", "BYLINE_DATABASE_URL", "BYLINE_REDIS_URL", "BYLINE_QDRANT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BYLINE_DATA_DIR", str(tmp_path / "data"))
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert main(["worker"]) == 2
    assert capsys.readouterr().err == line


@needs_bbc
def test_byline_worker_finishes_the_job_in_hand_on_sigterm(settings: Settings, embedder: Embedder) -> None:
    # ``byline worker``'s own loop in this (main) thread, and a real SIGTERM to this process
    # once the job has started: the worker must finish it, reply, and return 0.
    events: queue.Queue[str] = queue.Queue()
    recorder = _Recorder(events)
    logging.getLogger("byline").addHandler(recorder)
    enqueuer = IngestQueue(settings.redis_url)
    reports: list[IngestReport] = []

    def enqueue_then_terminate() -> None:
        ingesting = threading.Thread(target=lambda: reports.append(enqueuer.ingest([read_article_file(YUKOS)])))
        ingesting.start()
        _wait_for(events, "started (attempt 1", 30.0)
        os.kill(os.getpid(), signal.SIGTERM)  # even if it never started: run_worker must return
        ingesting.join(60.0)

    helper = threading.Thread(target=enqueue_then_terminate)
    helper.start()
    try:
        assert run_worker(settings, embedder=embedder) == 0
        helper.join(60.0)
    finally:
        logging.getLogger("byline").removeHandler(recorder)
        enqueuer.close()
    assert reports and reports[0].summary() == "1 added"
    assert (
        recorder.seen.index("Stopping (SIGTERM)")
        < recorder.seen.index(": done in ")
        < recorder.seen.index("Worker stopped.")
    )


class _Recorder(logging.Handler):
    """The worker's log lines, as they come, for a test to wait on."""

    def __init__(self, events: queue.Queue[str]) -> None:
        super().__init__(logging.INFO)
        self.events = events
        self.seen = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.seen += record.getMessage() + "\n"
        self.events.put(record.getMessage())


def _wait_for(events: queue.Queue[str], text: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if text in events.get(timeout=0.2):
                return True
        except queue.Empty:
            continue
    return False
