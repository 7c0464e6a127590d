"""``byline serve``: run every chat platform configured in the environment.

The platforms come from the registry in ``bot.platforms`` (Slack, Discord, the terminal chat and
any plugin), each started, handed to the digest scheduler as a poster, and stopped the same way;
serve knows none of them by name. Beside them run the feed poller (feeds and the watched folder),
the digest scheduler, the retention job and ``/healthz`` + ``/metrics`` on ``BYLINE_HTTP_PORT``. A
platform that fails while running stops the whole service (exit 1 with its one-line error), so a
supervisor restarts it instead of leaving a bot that looks up but answers nobody.

With no platform token set, serve opens the terminal chat over the seed articles when it has a
terminal, and otherwise (a container, a systemd unit) runs headless: feeds, digests, health and
metrics, until stopped.

SIGTERM (what ``docker stop`` and systemd send) stops taking new work, lets questions already
in the retrieval pool finish and be posted, and exits 0 within ``STOP_SECONDS``.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import NoReturn

from bot.commands.ingest import register_ingest
from bot.health import HEALTH, Health
from bot.jobs.feed_poller import start_background
from bot.jobs.gaps_digest import add_gaps_digest
from bot.jobs.ingest_queue import queue_for
from bot.platforms import Platform, configured
from bot.service import Service
from bot.settings import Settings
from bot.state.gaps import GapStore
from bot.state.leader import Leadership, leader_lock
from retrieval.errors import BylineError
from retrieval.library import Library

log = logging.getLogger("byline.serve")

# How often serve looks for articles another process (a CLI ``byline ingest``) stored in the
# same data directory: one cheap query each time, so well inside the feed interval.
CATCH_UP_SECONDS = 30.0
# From SIGTERM to exit. docker stop and systemd wait 10 s before SIGKILL; a second is left for
# the interpreter to exit.
STOP_SECONDS = 9.0
RETENTION_EVERY_SECONDS = 24 * 3600.0


class _Stopped(Exception):
    """Raised in the main thread by SIGTERM while it waits for a chat line (nothing is in flight)."""


def _start_platforms(
    service: Service, settings: Settings, platforms: list[Platform], stop: threading.Event, started: list[Platform]
) -> None:
    """Start each background platform (appending it to ``started``) and hand every platform to the
    digest scheduler, before the scheduler's first pass: a digest missed while Byline was down
    finds its platform there."""
    for platform in platforms:
        if not platform.foreground:
            platform.start(service, settings, stop)
            started.append(platform)
    if service.scheduler is not None:
        for platform in platforms:
            service.scheduler.add_poster(platform)


def _stop_platforms(started: list[Platform]) -> BaseException | None:
    """Stop every started platform, newest first; the first failure one reports is returned."""
    failure: BaseException | None = None
    for platform in reversed(started):
        try:
            platform.stop()
        except BaseException as error:  # noqa: BLE001 - every platform is stopped before it is raised
            failure = failure or error
    return failure


def _exit_now(failure: BaseException | None) -> NoReturn:
    """Exit at once (torch is still loading: a normal exit would abort), with the failure's line."""
    code = 0
    if isinstance(failure, KeyboardInterrupt):
        code = 130
    elif failure is not None:
        print(f"byline: {failure}", file=sys.stderr)
        code = 1
    logging.shutdown()
    sys.stdout.flush()
    os._exit(code)


def start_catch_up(library: Library, every: float, stop: threading.Event) -> threading.Thread:
    """Keep the indexes level with the store while serving: a CLI ingest or replace on the same
    data directory is answered within ``every`` seconds, without a restart."""

    def loop() -> None:
        while not stop.wait(every):
            try:
                library.catch_up()
            except Exception:  # a busy or vanished disk this round: try again next time
                log.exception("Could not bring the search indexes up to date with the store.")

    thread = threading.Thread(target=loop, name="byline-index-catch-up", daemon=True)
    thread.start()
    return thread


def start_retention(service: Service, days: int, stop: threading.Event) -> threading.Thread:
    """Prune stored questions and user ids older than ``days`` now, then once a day."""

    def loop() -> None:
        while True:
            try:
                removed = service.state.prune(days)
                if removed:
                    log.info(
                        "Retention: forgot %d stored questions, answers and votes older than %d days.", removed, days
                    )
            except Exception:  # a locked database today: try again tomorrow
                log.exception("Pruning stored questions failed.")
            if stop.wait(RETENTION_EVERY_SECONDS):
                return

    thread = threading.Thread(target=loop, name="byline-retention", daemon=True)
    thread.start()
    return thread


def _background(service: Service, settings: Settings, stop: threading.Event, health: Health) -> list[threading.Thread]:
    threads = [start_catch_up(service.library, min(CATCH_UP_SECONDS, settings.feed_interval), stop)]
    # Feeds, digests and retention act on a clock: only the leader of the workers runs them.
    lock = leader_lock(service.library.data_dir, service.state.engine)
    leadership = Leadership(
        lock, lambda jobs_stop: _singleton_jobs(service, settings, jobs_stop, health), settings.leader_try_seconds
    )
    threads.append(leadership.start(stop))
    return threads


def _singleton_jobs(
    service: Service, settings: Settings, stop: threading.Event, health: Health
) -> list[threading.Thread]:
    """The jobs that must run in one process of all the workers (``leader.py``)."""
    health.leader = True
    threads = [_lowers_flag_when_set(stop, health), start_background(service.library, settings, stop)]
    if settings.retention_days > 0:
        threads.append(start_retention(service, settings.retention_days, stop))
    if service.scheduler is not None:
        threads.append(service.scheduler.start(stop))
    return threads


def _lowers_flag_when_set(stop: threading.Event, health: Health) -> threading.Thread:
    """/healthz says ``leader: false`` again as soon as this worker stops leading."""

    def wait() -> None:
        stop.wait()
        health.leader = False

    thread = threading.Thread(target=wait, name="byline-leader-flag", daemon=True)
    thread.start()
    return thread


def _start_health(health: Health, settings: Settings, required: bool) -> Callable[[], None]:
    """Serve /healthz and /metrics; in Slack's HTTP mode the Slack server mounts them instead.

    A port that is taken stops a service start (``required``); the interactive terminal chat on
    a developer's machine only warns, since nothing probes it there."""
    if settings.slack_enabled and settings.slack_mode == "http":
        return lambda: None
    try:
        server = health.serve(settings.http_host, settings.http_port)
    except OSError as error:
        message = (
            f"BYLINE_HTTP_PORT {settings.http_port} on {settings.http_host}: cannot listen for /healthz and "
            f"/metrics ({error.strerror or error}); choose a free port."
        )
        if required:
            raise BylineError(message) from None
        log.warning("%s The chat goes on without them.", message)
        return lambda: None

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return stop


@contextmanager
def _sigterm_stops(stop: threading.Event, health: Health, state: dict[str, bool]) -> Iterator[None]:
    """SIGTERM sets ``stop``; in the chat, waiting for a line, it also ends the wait."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(_signum: int, _frame: FrameType | None) -> None:
        if not stop.is_set():
            log.info("SIGTERM: taking no new work, finishing what is in flight, then exiting.")
        health.stopping = True
        stop.set()
        if state.get("reading"):
            raise _Stopped

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _drain(service: Service, deadline: float) -> None:
    """Wait for questions already in the retrieval pool to finish (their replies are posted by
    the adapters' own threads), up to ``deadline``."""
    while service.pool.outstanding and time.monotonic() < deadline:
        time.sleep(0.05)
    if service.pool.outstanding:
        log.warning("Stopping with %d questions still being answered.", service.pool.outstanding)


def serve(service: Service, settings: Settings, health: Health = HEALTH) -> int:
    platforms = configured(settings)
    foreground = next((platform for platform in platforms if platform.foreground), None)
    stop = threading.Event()
    threads: list[threading.Thread] = []
    started: list[Platform] = []
    failure: BaseException | None = None
    state = foreground.reading if foreground is not None else {"reading": False}
    # The cluster backend with a Redis: /ingest and uploads go to `byline worker` through the queue.
    service.ingest_queue = queue_for(settings)
    register_ingest(service, settings.fetcher(), service.ingest_queue)
    if settings.redis_url:
        # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
        from bot.state.shared import shared_limiter

        # Buckets shared by every worker: a user's burst is theirs, not theirs per worker.
        service.rate_limiter = shared_limiter(settings)
    if service.scheduler is not None and settings.gaps_digest_channel:
        embed = service.library.embedder.encode
        gaps = GapStore(service.state)
        add_gaps_digest(service.scheduler, gaps, embed, settings.gaps_digest_channel, settings.gaps_digest_schedule)
    health.library_open = True
    health.watch_queue(service)
    health.instrument(service)

    def warm() -> None:
        service.library.warm_up()
        health.model_warm = True
        log.info("Model warm: ready (/healthz answers 200).")

    # Loading the model takes seconds (mostly imports): do it now, not on the first question.
    warm_up = threading.Thread(target=warm, name="byline-warm-up", daemon=True)
    stop_health: Callable[[], None] = lambda: None  # noqa: E731
    with _sigterm_stops(stop, health, state):
        try:
            stop_health = _start_health(health, settings, required=foreground is None)
            warm_up.start()
            _start_platforms(service, settings, platforms, stop, started)
            threads += _background(service, settings, stop, health)
            if foreground is not None:
                started.append(foreground)
                foreground.start(service, settings, stop)
            else:
                if not platforms:
                    log.info(
                        "No SLACK_BOT_TOKEN or DISCORD_TOKEN set and no terminal: running feeds, digests and "
                        "/healthz until stopped (`byline chat` chats from a pipe)."
                    )
                while not stop.wait(1.0):
                    pass
        except _Stopped:
            pass
        except BaseException as error:  # raised again below, once everything has stopped
            failure = error
        finally:
            health.stopping = True
            deadline = time.monotonic() + STOP_SECONDS
            stop.set()
            failure = failure or _stop_platforms(started)
            for thread in threads:
                thread.join(timeout=max(0.0, deadline - time.monotonic() - 1.0))
            _drain(service, deadline - 0.5)
            stop_health()
            # Exiting while torch is still loading aborts the process ("terminate called without an
            # active exception"), so wait for it, but never past the deadline.
            if warm_up.ident is not None:
                warm_up.join(timeout=max(0.0, deadline - time.monotonic()))
                if warm_up.is_alive():
                    log.info("Stopped while the model was still loading.")
                    _exit_now(failure)
    if failure is not None:
        raise failure
    return 0
