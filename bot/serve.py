"""``byline serve``: run every platform adapter configured in the environment.

Each adapter module exposes ``run(service, settings, stop) -> None`` that blocks until ``stop``
is set (or the adapter fails). With both platforms configured, Slack runs in a thread and
Discord in the main thread. Beside them run the feed poller (feeds and the watched folder) and
the digest scheduler. With no platform token set, serve falls back to the terminal chat over
the seed articles, with the poller and scheduler still running behind it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

from retrieval.library import Library

from .config import Settings
from .feed_poller import PollerSettings, start_background
from .service import Service
from .terminal import chat

log = logging.getLogger("byline.serve")

AdapterRun = Callable[[Service, Settings, threading.Event], None]

# How often serve looks for articles another process (a CLI ``byline ingest``) stored in the
# same data directory: one cheap query each time, so well inside the feed interval.
CATCH_UP_SECONDS = 30.0


def _adapters(settings: Settings) -> list[tuple[str, AdapterRun]]:
    adapters: list[tuple[str, AdapterRun]] = []
    if settings.slack_enabled:
        from .slack_app import run as run_slack

        adapters.append(("Slack", run_slack))
    if settings.discord_enabled:
        from .discord_app import run as run_discord

        adapters.append(("Discord", run_discord))
    return adapters


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


def _background(service: Service, stop: threading.Event) -> list[threading.Thread]:
    threads = [start_background(service, os.environ, stop)]
    every = min(CATCH_UP_SECONDS, PollerSettings.from_env(os.environ).interval)
    threads.append(start_catch_up(service.library, every, stop))
    if service.scheduler is not None:
        threads.append(service.scheduler.start(stop))
    return threads


def serve(service: Service, settings: Settings) -> int:
    adapters = _adapters(settings)
    stop = threading.Event()
    threads: list[threading.Thread] = []
    # Loading the model takes seconds (mostly imports): do it now, not on the first question.
    warm_up = threading.Thread(target=service.library.warm_up, name="byline-warm-up", daemon=True)
    warm_up.start()
    try:
        threads += _background(service, stop)
        if not adapters:
            log.info("No SLACK_BOT_TOKEN or DISCORD_TOKEN set: starting the terminal chat.")
            chat(service)
            return 0
        for name, run in adapters[:-1]:
            thread = threading.Thread(target=run, args=(service, settings, stop), name=f"byline-{name}", daemon=True)
            thread.start()
            threads.append(thread)
        adapters[-1][1](service, settings, stop)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
        # Exiting while torch is still loading aborts the process ("terminate called without an
        # active exception"), so a start that fails early (a missing setting) waits for it.
        warm_up.join()
    return 0
