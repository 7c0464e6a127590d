"""``/digest now|since|subscribe|unsubscribe|status``: the channel's news digests."""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.platforms.discord.slash import command_line, slash
from bot.service import Service


class DigestCog(commands.GroupCog, group_name="digest", group_description="News digests for this channel"):
    """Each subcommand is the service's ``/digest`` with its arguments; the schedule's own
    subcommands answer privately (they change or show the channel's settings)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        super().__init__()

    async def _digest(self, interaction: discord.Interaction[Any], args: str, private: bool) -> None:
        line = f"/digest {args}".strip()
        await slash(interaction, "digest", command_line(self.service, line), defer=True, private=private)

    @app_commands.command(name="now", description="A digest of what is new since this channel's last digest")
    async def now(self, interaction: discord.Interaction[Any]) -> None:
        await self._digest(interaction, "now", False)

    @app_commands.command(name="since", description="A digest of the articles added since a time")
    @app_commands.describe(when="yesterday, 2h, 3d or a date like 2026-11-30")
    async def since(self, interaction: discord.Interaction[Any], when: app_commands.Range[str, 1, 100]) -> None:
        await self._digest(interaction, f"since {when}", False)

    @app_commands.command(name="subscribe", description="Post digests here on a schedule (needs Manage Channels)")
    @app_commands.describe(schedule="daily 09:00 [Europe/London], weekly mon 09:00, or a cron expression")
    async def subscribe(self, interaction: discord.Interaction[Any], schedule: app_commands.Range[str, 1, 200]) -> None:
        await self._digest(interaction, f"subscribe {schedule}", True)

    @app_commands.command(
        name="unsubscribe", description="Stop this channel's scheduled digests (needs Manage Channels)"
    )
    async def unsubscribe(self, interaction: discord.Interaction[Any]) -> None:
        await self._digest(interaction, "unsubscribe", True)

    @app_commands.command(
        name="status", description="This channel's digest schedule: next run, last run, what it covers"
    )
    async def status(self, interaction: discord.Interaction[Any]) -> None:
        await self._digest(interaction, "status", True)
