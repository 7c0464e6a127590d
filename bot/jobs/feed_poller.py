"""Background polling while ``byline serve`` runs: feeds and a watched folder, every interval.

The interval (``BYLINE_FEED_INTERVAL`` seconds, default 900) gets up to 10% jitter, so many
Byline instances do not hit the same feeds at the same second. Each round polls every feed
and ingests the files in ``BYLINE_WATCH_DIR`` (idempotent: unchanged files are skipped).
"""

from __future__ import annotations

import logging
import random
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bot.health import HEALTH
from retrieval.ingest.feeds import poll_feeds
from retrieval.ingest.fetch import Fetcher
from retrieval.ingest.web import INGEST_LOCK
from retrieval.library import Library
from retrieval.reading.loader import skip_message

if TYPE_CHECKING:
    from bot.settings import Settings

log = logging.getLogger("byline.poller")

DEFAULT_INTERVAL = 900.0
JITTER = 0.1


@dataclass(frozen=True)
class PollerSettings:
    interval: float
    watch_dir: Path | None

    @classmethod
    def from_settings(cls, settings: Settings) -> PollerSettings:
        """From the validated settings (``BYLINE_FEED_INTERVAL``, ``BYLINE_WATCH_DIR``)."""
        return cls(settings.feed_interval, settings.watch_dir)


def poll_round(library: Library, fetcher: Fetcher, watch_dir: Path | None) -> None:
    """Poll every feed, then the watched folder; errors are logged, never raised."""
    for result in poll_feeds(library, fetcher):
        if result.error:
            HEALTH.feed_errors.inc()
            log.warning("Feed %s", skip_message(result.feed.url, result.error))
        elif result.added or result.updated:
            HEALTH.ingested.labels(source="feed", outcome="added").inc(result.added)
            HEALTH.ingested.labels(source="feed", outcome="updated").inc(result.updated)
            log.info("Feed %s: %d added, %d updated.", result.feed.url, result.added, result.updated)
    if watch_dir is not None and watch_dir.is_dir():
        try:
            with INGEST_LOCK:
                report = library.ingest([watch_dir])
            for outcome, entries in (("added", report.added), ("updated", report.replaced), ("skipped", report.failed)):
                HEALTH.ingested.labels(source="watch", outcome=outcome).inc(len(entries))
            if report.added or report.replaced or report.failed:
                log.info("Watched folder %s: %s.", watch_dir, report.summary())
            for path, reason in report.failed:
                log.warning("Watched folder: skipped %s", skip_message(path, reason))
        except Exception:  # the poller must outlive one bad round
            log.exception("Ingesting the watched folder %s failed.", watch_dir)


def start_background(library: Library, config: Settings, stop_event: threading.Event) -> threading.Thread:
    """Start the polling thread; it runs a round at once, then every interval, until stopped."""
    settings = PollerSettings.from_settings(config)
    fetcher = config.fetcher()

    def loop() -> None:
        while not stop_event.is_set():
            try:
                poll_round(library, fetcher, settings.watch_dir)
            except Exception:
                log.exception("A polling round failed.")
            wait = settings.interval * (1 + random.uniform(-JITTER, JITTER))
            stop_event.wait(wait)

    thread = threading.Thread(target=loop, name="byline-feeds", daemon=True)
    thread.start()
    return thread
