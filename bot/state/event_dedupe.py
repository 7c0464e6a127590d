"""Which Slack events were already handled, so that a redelivery is not answered twice.

Slack redelivers an event it thinks was not received (no ack within 3 s, an HTTP error): up to
three times within about five minutes, each with the same ``event_id``. One ``byline serve``
remembers the ids it saw in memory (``RecentIds``); when many workers share one Slack app, a
redelivery can reach a worker other than the one answering, so they remember ids in Redis
(``redis_dedupe.RedisEventDedupe``, apart so that this module needs no Redis client) instead.
Both are an ``EventDedupe``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Protocol

# Event ids remembered to skip redeliveries: Slack retries within minutes, and even a busy
# workspace sends far fewer events than this in that time.
SEEN_EVENTS = 5_000
# How long Redis remembers an id: Slack's last retry comes about 5 minutes after the event, so an
# hour covers it many times over; at ~100 bytes a key, 30,000 events an hour (Slack's limit per
# workspace) take about 3 MB.
EVENT_TTL_S = 60 * 60
KEY_PREFIX = "byline:slack:event:"
# The signatures of accepted HTTP requests (commands, clicks), shared the same way.
SIGNATURE_PREFIX = "byline:slack:signature:"


class EventDedupe(Protocol):
    """Remembers event ids; ``first_time`` is True for exactly one caller per id."""

    # True when every worker shares the ids: then the ids alone decide what was answered.
    shared: bool

    def first_time(self, event_id: str) -> bool:
        """Whether ``event_id`` is new; remembers it either way."""
        ...

    def with_prefix(self, prefix: str) -> EventDedupe | None:
        """Another set of ids shared the same way (the HTTP guard's request signatures), or None
        when not shared (each process's own ledger already covers it)."""
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

    def with_prefix(self, prefix: str) -> EventDedupe | None:
        return None
