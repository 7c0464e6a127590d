"""The state that many ``byline serve`` workers must share to act as one bot: which Slack events
were handled, and how fast each user and channel may ask.

With ``BYLINE_REDIS_URL`` set, both live in that Redis (``RedisEventDedupe``, ``RedisRateLimiter``);
without it, in this process (``RecentIds``, ``RateLimiter``), as one worker needs. A Redis that is
unreachable when a worker starts stops it with ``SharedStateUnavailable``: starting up alone would
quietly double what users may ask and answer redeliveries twice. Once running, a worker rides out
an outage on its in-process state (see each class). The Redis client is imported only when a URL
is set: it comes with the ``cluster`` extra, and one worker needs none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.limits import Limiter, RateLimiter
from bot.settings import Settings
from bot.state.event_dedupe import EventDedupe, RecentIds
from retrieval.errors import BylineError

if TYPE_CHECKING:
    import redis


class SharedStateUnavailable(BylineError):
    """BYLINE_REDIS_URL is set, but no Redis answers there."""


def connect(url: str) -> redis.Redis:
    """A client for ``url`` that has answered a PING; ``SharedStateUnavailable`` otherwise."""
    try:
        # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
        import redis

        from bot.state.redis_client import describe, redis_client
    except ImportError:
        raise SharedStateUnavailable(
            "BYLINE_REDIS_URL needs the redis client, which is not installed: run `pip install -e '.[cluster]'`."
        ) from None
    client = redis_client(url)
    try:
        client.ping()
    except redis.RedisError as error:
        client.close()
        raise SharedStateUnavailable(
            f"Cannot reach Redis at {describe(url)} ({type(error).__name__}): start it, or fix BYLINE_REDIS_URL "
            "(unset it to run one worker without Redis)."
        ) from None
    return client


def shared_dedupe(settings: Settings) -> EventDedupe:
    """Slack event ids seen: in Redis when ``settings.redis_url`` is set, else in this process."""
    if not settings.redis_url:
        return RecentIds()
    # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
    from bot.state.redis_dedupe import RedisEventDedupe

    return RedisEventDedupe(connect(settings.redis_url))


def shared_limiter(settings: Settings) -> Limiter:
    """Rate-limit buckets: in Redis when ``settings.redis_url`` is set, else in this process."""
    if not settings.redis_url:
        return RateLimiter(settings.limits)
    # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
    from bot.state.redis_limits import RedisRateLimiter

    return RedisRateLimiter(connect(settings.redis_url), settings.limits)
