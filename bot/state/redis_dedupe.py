"""Slack event ids shared by every worker through Redis (see ``event_dedupe``)."""

from __future__ import annotations

import redis

from bot.state.event_dedupe import EVENT_TTL_S, KEY_PREFIX, RecentIds
from bot.state.redis_client import Outage


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

    def with_prefix(self, prefix: str) -> RedisEventDedupe:
        """Another set of ids on the same Redis (the HTTP guard's request signatures)."""
        return RedisEventDedupe(self.client, self.ttl_s, prefix)

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
