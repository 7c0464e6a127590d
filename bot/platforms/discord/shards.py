"""Which Discord shards this process runs, read from the settings once and checked at start.

A big bot is split across processes by shard: Discord sends each guild's events to the one
gateway connection whose shard id is ``(guild_id >> 22) % shard_count``, so every process names
the total (BYLINE_DISCORD_SHARD_COUNT) and the shards it runs (BYLINE_DISCORD_SHARD_IDS). A
wrong pair would silently leave guilds unanswered, so it is refused before anything connects.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.settings import Settings
from retrieval.errors import BylineError


class ShardSettingsError(BylineError):
    """BYLINE_DISCORD_SHARD_IDS / BYLINE_DISCORD_SHARD_COUNT do not make a shard plan."""


@dataclass(frozen=True)
class ShardPlan:
    """This process runs shards ``ids`` of ``count`` shards in all."""

    count: int
    ids: tuple[int, ...]

    @property
    def syncs_commands(self) -> bool:
        """Whether this process registers the slash commands.

        The command list is one per application, not per shard: N processes syncing it would be
        N identical PUTs, each counted against the same rate limit. Exactly one process in any
        complete deployment runs shard 0 (it is also the shard Discord sends DMs to), so that
        one syncs. Registered commands stay on Discord, so the other shards receive them even
        while the shard-0 process restarts.
        """
        return 0 in self.ids


def shard_plan(settings: Settings) -> ShardPlan | None:
    """The shard plan, or None to run unsharded (neither variable set); ``ShardSettingsError``
    (one line naming the variables and what to do) for a combination Discord would not serve."""
    ids, count = settings.discord_shard_ids, settings.discord_shard_count
    if count is None:
        if ids:
            raise ShardSettingsError(
                f"BYLINE_DISCORD_SHARD_IDS is {_listed(ids)} but BYLINE_DISCORD_SHARD_COUNT is not set: set it to "
                "the total number of shards across all processes (e.g. 2), or unset BYLINE_DISCORD_SHARD_IDS "
                "to run unsharded."
            )
        return None
    if count < 1:
        raise ShardSettingsError(f"BYLINE_DISCORD_SHARD_COUNT is {count}: set it to a whole number of at least 1.")
    too_big = [shard for shard in ids if shard >= count]
    if too_big:
        raise ShardSettingsError(
            f"BYLINE_DISCORD_SHARD_IDS has shard {too_big[0]}, but BYLINE_DISCORD_SHARD_COUNT={count} numbers "
            f"shards 0 to {count - 1}: list ids below the count, or raise BYLINE_DISCORD_SHARD_COUNT."
        )
    repeated = sorted({shard for shard in ids if ids.count(shard) > 1})
    if repeated:
        raise ShardSettingsError(
            f"BYLINE_DISCORD_SHARD_IDS lists shard {repeated[0]} more than once: list each shard once."
        )
    # The count alone: every shard in this one process (one gateway connection each).
    return ShardPlan(count, ids or tuple(range(count)))


def _listed(ids: tuple[int, ...]) -> str:
    return ",".join(str(shard) for shard in ids)
