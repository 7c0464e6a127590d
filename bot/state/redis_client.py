"""The Redis connection that many ``byline serve`` workers share state through, and what a worker
does while that Redis is down.

The state kept there (Slack event ids seen, rate-limit buckets) guards answering; it is not worth
not answering for. So the client fails fast (short timeouts, one retry, where redis-py's default
would retry ten times with backoff), and ``Outage`` lets a caller fall back to its in-process state
for a while after a failure instead of paying a timeout on every request until Redis is back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # the client comes with the cluster extra; ``describe`` and ``Outage`` need none
    import redis

log = logging.getLogger("byline.redis")

CONNECT_TIMEOUT_S = 0.5
COMMAND_TIMEOUT_S = 1.0
# After a failure, Redis is tried again only this long after: at most one slow call per interval.
RETRY_AFTER_S = 5.0


def redis_client(url: str) -> redis.Redis:
    """A thread-safe client (a connection pool) for ``url``: ``redis://``, ``rediss://`` or ``unix://``."""
    # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return redis.Redis.from_url(
        url,
        socket_connect_timeout=CONNECT_TIMEOUT_S,
        socket_timeout=COMMAND_TIMEOUT_S,
        retry=Retry(NoBackoff(), 1),
        health_check_interval=30,
    )


def describe(url: str) -> str:
    """Where ``url`` points, without its user name or password: safe for a log line or an error."""
    try:
        parts = urlsplit(url)
        if parts.scheme == "unix":
            return f"unix://{parts.path}"
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"
    except ValueError:
        return "the BYLINE_REDIS_URL"


class Outage:
    """Whether a Redis that failed lately should be skipped, with one log line per outage.

    ``what`` names the state in the log lines ("Slack event dedupe"); only an error's type is logged,
    since a redis-py message can carry the address and a URL can carry a password.
    """

    def __init__(self, what: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.what = what
        self.clock = clock
        self._down_since: float | None = None
        self._retry_at = 0.0
        self._lock = threading.Lock()

    def skip(self) -> bool:
        """True while Redis failed less than ``RETRY_AFTER_S`` ago: use the in-process state."""
        with self._lock:
            return self._down_since is not None and self.clock() < self._retry_at

    def failed(self, error: Exception) -> None:
        with self._lock:
            now = self.clock()
            first = self._down_since is None
            if first:
                self._down_since = now
            self._retry_at = now + RETRY_AFTER_S
        if first:
            log.warning(
                "Redis: %s failed (%s); this worker uses its own in-process state until Redis answers again.",
                self.what,
                type(error).__name__,
            )

    def succeeded(self) -> None:
        with self._lock:
            down_since, self._down_since = self._down_since, None
        if down_since is not None:
            log.info("Redis: %s is shared again (down for %.0f s).", self.what, self.clock() - down_since)
