"""Which Slack events were already handled, so that a redelivery is not answered twice.

Slack redelivers an event it thinks was not received (no ack within 3 s, an HTTP error): up to
three times within about five minutes, each with the same ``event_id``. One ``byline serve``
remembers the ids it saw in memory (``RecentIds``); when many workers share one Slack app, a
redelivery can reach a worker other than the one answering, so they remember ids in Redis
(``RedisEventDedupe``) instead. Both are an ``EventDedupe``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Protocol

import redis

from .redis_client import Outage

# Event ids remembered to skip redeliveries: Slack retries within minutes, and even a busy
# workspace sends far fewer events than this in that time.
SEEN_EVENTS = 5_000
# How long Redis remembers an id: Slack's last retry comes about 5 minutes after the event, so an
# hour covers it many times over; at ~100 bytes a key, 30,000 events an hour (Slack's limit per
# workspace) take about 3 MB.
EVENT_TTL_S = 60 * 60
KEY_PREFIX = "byline:slack:event:"


class EventDedupe(Protocol):
    """Remembers event ids; ``first_time`` is True for exactly one caller per id."""

    # True when every worker shares the ids: then the ids alone decide what was answered.
    shared: bool

    def first_time(self, event_id: str) -> bool:
        """Whether ``event_id`` is new; remembers it either way."""
        ...


class RecentIds:
    """The last ``size`` ids seen, safe across threads (one process's memory)."""

    shared = False

    def __init__(self, size: int = SEEN_EVENTS) -> None:
        self.size = size
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def first_time(self, event_id: str) -> bool:
        """Whether ``event_id`` is new; remembers it either way."""
        with self._lock:
            if event_id in self._ids:
                self._ids.move_to_end(event_id)
                return False
            self._ids[event_id] = None
            if len(self._ids) > self.size:
                self._ids.popitem(last=False)
            return True


class RedisEventDedupe:
    """Event ids shared by every worker through Redis: ``SET byline:slack:event:<id> 1 NX EX 3600``.

    ``SET … NX`` is atomic on the server, so of any number of workers (and threads) handed the same
    id, exactly one is told it is new. While Redis cannot be reached, a warning is logged (once per
    outage, naming only the error's type) and this worker falls back to its own ``RecentIds``:
    it still answers, and still skips the redeliveries that reach it, but a redelivery that
    reaches another worker during the outage may be answered a second time. Redis is tried
    again a few seconds after each failure (``redis_client.RETRY_AFTER_S``).
    """

    shared = True

    def __init__(self, client: redis.Redis, ttl_s: int = EVENT_TTL_S, prefix: str = KEY_PREFIX) -> None:
        self.client = client
        self.ttl_s = ttl_s
        self.prefix = prefix
        self.local = RecentIds()
        self.outage = Outage("Slack event dedupe")

    def first_time(self, event_id: str) -> bool:
        """Whether ``event_id`` is new to every worker; remembers it either way."""
        if self.outage.skip():
            return self.local.first_time(event_id)
        try:
            created = self.client.set(self.prefix + event_id, b"1", nx=True, ex=self.ttl_s)
        except redis.RedisError as error:
            self.outage.failed(error)
            return self.local.first_time(event_id)
        self.outage.succeeded()
        # Also noted here, so that this worker still knows its own ids if Redis goes down later.
        self.local.first_time(event_id)
        return bool(created)
