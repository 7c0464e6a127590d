"""Rate limits shared by many ``byline serve`` workers: the token buckets of ``limits.RateLimiter``,
kept in Redis so that a user asking through two workers is held to one allowance, not two.

The numbers and the rules are ``RateLimiter``'s, exactly: each bucket holds ``burst`` tokens and
refills at ``per_minute / 60`` a second; a question waits for the larger of its user's and its
channel's wait; only a question that goes ahead takes a token, from both buckets; a question with
no channel has only its user's bucket. One Lua script reads, refills and takes under Redis's
single-threaded execution, so two workers checking the same user at once cannot both spend its
last token.

Each bucket is a hash (``tokens``, ``updated``) that expires once it would have refilled: a bucket
that is gone reads as full, which is what it would be, so memory stays flat like ``RateLimiter``'s
dropped idle buckets. The script touches two keys, so this needs one Redis (or a primary with
replicas), not Redis Cluster.
"""

from __future__ import annotations

from collections.abc import Callable

import redis

from bot.limits import LimitSettings, RateLimiter
from bot.state.redis_client import Outage

KEY_PREFIX = "byline:limit:"
# Kept past the moment a bucket is full again, for workers whose clocks differ a little.
EXPIRY_MARGIN_MS = 60_000

# KEYS: the user's bucket, then the channel's (absent for a question with no channel).
# ARGV: now in seconds ("" = the server's clock), the expiry margin in ms, then each key's capacity
# and refill rate per second. Returns the wait in seconds as a string: a Lua number would come
# back truncated to an integer. Numbers are stored with 17 digits so that they read back exactly.
_CHECK = """
local now
if ARGV[1] == "" then
  local time = redis.call("TIME")
  now = tonumber(time[1]) + tonumber(time[2]) / 1000000
else
  now = tonumber(ARGV[1])
end
local margin = tonumber(ARGV[2])
local levels, wait = {}, 0
for i, key in ipairs(KEYS) do
  local capacity, rate = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  local state = redis.call("HMGET", key, "tokens", "updated")
  local level = capacity
  if state[1] and state[2] then
    -- max(0, ...): a clock a little behind the last writer's never drains a bucket.
    level = math.min(capacity, tonumber(state[1]) + math.max(0, now - tonumber(state[2])) * rate)
  end
  levels[i] = level
  if level < 1 then
    wait = math.max(wait, (1 - level) / rate)
  end
end
-- Stored whether or not a token is taken, as RateLimiter does: refilling in the same steps keeps
-- the floating-point sums, and so the waits, equal to the last bit.
for i, key in ipairs(KEYS) do
  local capacity, rate = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  local level = levels[i]
  if wait == 0 then
    level = level - 1
  end
  redis.call("HSET", key, "tokens", string.format("%.17g", level), "updated", string.format("%.17g", now))
  redis.call("PEXPIRE", key, math.ceil((capacity - level) / rate * 1000) + margin)
end
return string.format("%.17g", wait)
"""


class RedisRateLimiter:
    """``RateLimiter``'s per-user and per-channel token buckets, shared through Redis.

    ``clock`` is the time in seconds every worker must agree on; by default it is the Redis server's
    own (``TIME`` inside the script), so the workers' clocks never matter. Tests pass one to step
    time; a passed clock should not run slower than real time, or buckets expire early (as full).

    While Redis cannot be reached, a warning is logged (once per outage, naming only the error's
    type) and this worker checks its own in-process ``RateLimiter``: questions are still answered
    and still limited, but each worker then allows the full rate on its own. Redis is tried again
    a few seconds after each failure (``redis_client.RETRY_AFTER_S``).
    """

    def __init__(
        self,
        client: redis.Redis,
        settings: LimitSettings,
        clock: Callable[[], float] | None = None,
        prefix: str = KEY_PREFIX,
    ) -> None:
        self.client = client
        self.settings = settings
        self.clock = clock
        self.prefix = prefix
        self._script = client.register_script(_CHECK)
        self.local = RateLimiter(settings, clock) if clock is not None else RateLimiter(settings)
        self.outage = Outage("rate limiting")

    def check(self, user_key: str, channel_key: str) -> float:
        """0 when the question may go ahead (and is counted), else seconds to wait."""
        if self.outage.skip():
            return self.local.check(user_key, channel_key)
        limits = self.settings
        keys = [f"{self.prefix}u:{user_key}"]
        args: list[str | float | int] = [
            repr(self.clock()) if self.clock is not None else "",
            EXPIRY_MARGIN_MS,
            limits.user_burst,
            repr(limits.user_per_minute / 60.0),
        ]
        if channel_key:
            keys.append(f"{self.prefix}c:{channel_key}")
            args += [limits.channel_burst, repr(limits.channel_per_minute / 60.0)]
        try:
            wait = self._script(keys=keys, args=args)
        except redis.RedisError as error:
            self.outage.failed(error)
            return self.local.check(user_key, channel_key)
        self.outage.succeeded()
        return float(wait)
