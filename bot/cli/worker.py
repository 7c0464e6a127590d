"""``byline worker``: take ingest jobs off the queue and embed them, until SIGTERM or Ctrl-C.

Embedding is the slow part of ingest, so a newsroom on the cluster backend runs as many workers
as it has machines to spare; ``byline ingest`` and the bots only enqueue (``ingest_queue``). A
worker opens its library once and runs Dramatiq worker threads in this process: one by default,
since embedding is CPU-bound and already uses every core (more threads help only while jobs wait
on web pages). On SIGTERM or Ctrl-C it finishes the job in hand and stops; a second Ctrl-C stops
at once, and the job it abandons is run again by another worker (ingest is idempotent).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING

from bot.logs import configure_logging
from bot.settings import Settings
from bot.state.redis_client import describe
from retrieval.library import Library

if TYPE_CHECKING:
    import dramatiq

    from bot.jobs.ingest_queue import IngestQueue
    from retrieval.index.embedder import Embedder

log = logging.getLogger("byline.worker")


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    worker = commands.add_parser("worker", help="embed the ingest jobs queued in Redis (cluster backend)")
    worker.add_argument(
        "--threads",
        type=_threads,
        default=1,
        help="jobs run at once in this process (default: 1; embedding is CPU-bound)",
    )


def _threads(text: str) -> int:
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"{text[:20]!r} is not a number of threads from 1 to 64")
    return int(text)


def missing_setting(settings: Settings) -> str:
    """Why these settings cannot run a worker, as one line saying what to set ("" when they can)."""
    if settings.backend != "cluster":
        return (
            "the worker needs the cluster backend: set BYLINE_BACKEND=cluster (with BYLINE_DATABASE_URL and "
            "BYLINE_QDRANT_URL) and BYLINE_REDIS_URL"
        )
    if not settings.redis_url:
        return "the worker takes its jobs from Redis: set BYLINE_REDIS_URL (a redis:// URL)"
    return ""


@dataclass
class RunningWorker:
    """A started worker: its library, its queue and the Dramatiq worker threads."""

    library: Library
    queue: IngestQueue
    worker: dramatiq.Worker

    def stop(self) -> None:
        """Let the threads finish the jobs in hand, then close the queue and the library."""
        try:
            self.worker.stop()
        finally:
            self.queue.close()
            self.library.close()


def start_worker(settings: Settings, threads: int = 1, embedder: Embedder | None = None) -> RunningWorker:
    """Open the library (once, for every job) and start taking jobs; the settings must pass
    ``missing_setting``."""
    # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
    from bot.jobs.ingest_queue import WORKER_NAME, IngestQueue, JobRunner

    library = Library.open(settings.data_dir, embedder, settings.storage())
    try:
        for message in library.messages:
            log.warning(message)
        queue = IngestQueue(settings.redis_url)
        worker = queue.work(JobRunner(library, settings.fetcher()), threads)
    except BaseException:
        library.close()
        raise
    log.info(
        "Worker %s: %d thread%s taking ingest jobs from Redis at %s.",
        WORKER_NAME,
        threads,
        "" if threads == 1 else "s",
        describe(settings.redis_url),
    )
    return RunningWorker(library, queue, worker)


def run(settings: Settings, threads: int = 1, embedder: Embedder | None = None) -> int:
    missing = missing_setting(settings)
    if missing:
        print(f"byline: {missing}", file=sys.stderr)
        return 2
    # The CLI logs warnings only; a worker's log of jobs is its output.
    configure_logging(settings.log_level, settings.secrets(), settings.log_format)
    stop = threading.Event()

    def on_signal(number: int, _frame: FrameType | None) -> None:
        log.info("Stopping (%s): finishing the job in hand; Ctrl-C again to stop at once.", signal.Signals(number).name)
        stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)  # the second Ctrl-C interrupts

    previous = {number: signal.signal(number, on_signal) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        running = start_worker(settings, threads, embedder)
        try:
            while not stop.wait(1.0):
                pass
        finally:
            running.stop()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    log.info("Worker stopped.")
    return 0
