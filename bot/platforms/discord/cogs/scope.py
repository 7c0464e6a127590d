"""``/scope add|show|clear``: which sources answer in this channel."""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.platforms.discord.slash import command_line, slash
from bot.service import Service


class ScopeCog(commands.GroupCog, group_name="scope", group_description="Which sources answer in this channel"):
    """Each subcommand is the service's ``/scope`` with its arguments, answered privately."""

    def __init__(self, service: Service) -> None:
        self.service = service
        super().__init__()

    async def _scope(self, interaction: discord.Interaction[Any], args: str) -> None:
        line = f"/scope {args}"
        await slash(interaction, "scope", command_line(self.service, line), defer=False, private=True)

    @app_commands.command(name="add", description="Answer here only from these sources (needs Manage Channels)")
    @app_commands.describe(entries="feed:URL, outlet:NAME, tag:NAME or since:30d; several: outlet:BBC Sport since:30d")
    async def add(self, interaction: discord.Interaction[Any], entries: app_commands.Range[str, 1, 1000]) -> None:
        await self._scope(interaction, f"add {entries}")

    @app_commands.command(name="show", description="What this channel follows, and how many articles that is")
    async def show(self, interaction: discord.Interaction[Any]) -> None:
        await self._scope(interaction, "show")

    @app_commands.command(name="clear", description="Answer here from every source again (needs Manage Channels)")
    async def clear(self, interaction: discord.Interaction[Any]) -> None:
        await self._scope(interaction, "clear")
