"""Back-pressure: per-user and per-channel rate limits, and a bounded retrieval pool.

Retrieval is CPU-bound (the query embedding and the index search), so it runs in a small
worker pool sized to the machine; more workers would only make every answer slower. Work that
cannot start at once waits in a bounded queue and the asker is told their place in line; when
the queue is full, or someone asks faster than their bucket refills, they get a friendly notice
instead of silence.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class LimitSettings:
    """Rates are per minute; bursts are how many may come at once before the rate applies."""

    user_per_minute: float = 12.0
    user_burst: int = 5
    channel_per_minute: float = 60.0
    channel_burst: int = 20
    workers: int = max(1, min(4, os.cpu_count() or 2))
    queue_limit: int = 64

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> LimitSettings:
        env = dict(os.environ if env is None else env)
        defaults = cls()

        def number(name: str, default: float) -> float:
            raw = env.get(name, "").strip()
            if not raw:
                return default
            try:
                value = float(raw)
            except ValueError:
                raise ValueError(f"{name} must be a number, not {raw!r}") from None
            if value <= 0:
                raise ValueError(f"{name} must be greater than 0")
            return value

        return cls(
            user_per_minute=number("BYLINE_USER_RATE", defaults.user_per_minute),
            user_burst=int(number("BYLINE_USER_BURST", defaults.user_burst)),
            channel_per_minute=number("BYLINE_CHANNEL_RATE", defaults.channel_per_minute),
            channel_burst=int(number("BYLINE_CHANNEL_BURST", defaults.channel_burst)),
            workers=int(number("BYLINE_WORKERS", defaults.workers)),
            queue_limit=int(number("BYLINE_QUEUE_LIMIT", defaults.queue_limit)),
        )


class TokenBucket:
    """``capacity`` tokens, refilled at ``rate`` per second; each question takes one."""

    def __init__(self, capacity: float, rate: float, now: float) -> None:
        self.capacity = capacity
        self.rate = rate
        self.tokens = capacity
        self.updated = now

    def _refill(self, now: float) -> None:
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    def wait_time(self, now: float) -> float:
        """Seconds until a token is available (0 when one is available now)."""
        self._refill(now)
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate

    def take(self) -> None:
        self.tokens -= 1


class Limiter(Protocol):
    """Says whether a question may go ahead: ``RateLimiter`` in one process, or
    ``redis_limits.RedisRateLimiter`` with buckets shared by many workers."""

    def check(self, user_key: str, channel_key: str) -> float:
        """0 when the question may go ahead (and is counted), else seconds to wait."""
        ...


class RateLimiter:
    """Token buckets per user and per channel. Idle buckets are dropped so memory stays flat."""

    MAX_BUCKETS = 10_000

    def __init__(self, settings: LimitSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.clock = clock
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()
        self._lock = threading.Lock()

    def _bucket(self, key: str, capacity: float, per_minute: float, now: float) -> TokenBucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = TokenBucket(capacity, per_minute / 60.0, now)
            self._buckets[key] = bucket
            while len(self._buckets) > self.MAX_BUCKETS:
                self._buckets.popitem(last=False)
        self._buckets.move_to_end(key)
        return bucket

    def check(self, user_key: str, channel_key: str) -> float:
        """0 when the question may go ahead (and is counted), else seconds to wait."""
        with self._lock:
            now = self.clock()
            user = self._bucket(f"u:{user_key}", self.settings.user_burst, self.settings.user_per_minute, now)
            channel = self._bucket(
                f"c:{channel_key}", self.settings.channel_burst, self.settings.channel_per_minute, now
            )
            wait = max(user.wait_time(now), channel.wait_time(now) if channel_key else 0.0)
            if wait == 0:
                user.take()
                if channel_key:
                    channel.take()
            return wait


class QueueFull(Exception):
    """The retrieval queue is full; the asker should try again shortly."""


class RetrievalPool:
    """A fixed pool of retrieval workers behind a bounded queue that knows each job's place."""

    def __init__(self, workers: int, queue_limit: int) -> None:
        self.workers = workers
        self.queue_limit = queue_limit
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="byline-retrieval")
        self._lock = threading.Lock()
        self._outstanding = 0

    @property
    def outstanding(self) -> int:
        return self._outstanding

    def run(self, work: Callable[[], T], on_queued: Callable[[int], None] | None = None) -> T:
        """Run ``work`` in the pool and wait for it; ``on_queued(n)`` when n jobs are ahead."""
        with self._lock:
            if self._outstanding >= self.workers + self.queue_limit:
                raise QueueFull
            ahead = max(0, self._outstanding - self.workers + 1)
            self._outstanding += 1
        future: Future[T] = self._executor.submit(work)
        future.add_done_callback(self._done)
        if ahead and on_queued is not None:
            on_queued(ahead)
        return future.result()

    def _done(self, _: Future) -> None:
        with self._lock:
            self._outstanding -= 1

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def retry_phrase(seconds: float) -> str:
    return f"{max(1, math.ceil(seconds))} s"


def handler_threads(settings: LimitSettings, margin: int = 8) -> int:
    """Threads an adapter needs so that questions wait in the pool's queue, not in its executor.

    One per running job and queued place, plus a margin: a question beyond that reaches the pool
    and is refused at once ("very busy"), freeing its thread in milliseconds, instead of waiting
    unseen in an executor's unbounded queue. The threads mostly sleep on a future.
    """
    return settings.workers + settings.queue_limit + margin


def place_in_line(position: int) -> str:
    """The notice for a question that waits in the queue (``position`` is what ``on_queued`` got)."""
    return f"You're #{position} in line — Byline will answer as soon as it can."
