"""``/autoreply`` and ``/gaps``: a channel's admin commands."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

import discord
from discord import app_commands
from discord.ext import commands

from bot.asking import Asker
from bot.platforms.discord.slash import command_line, slash
from bot.replies import Reply
from bot.service import Service


class ChannelsCog(commands.Cog, name="Channels"):
    """Question channels (answer every question, no mention needed) and what went unanswered."""

    def __init__(self, service: Service) -> None:
        self.service = service

    @app_commands.command(
        name="autoreply", description="Answer every question posted in a channel or forum, no mention needed (admins)"
    )
    @app_commands.describe(mode="on, off, or status (default)", channel="A text or forum channel (default: this one)")
    async def autoreply(
        self,
        interaction: discord.Interaction[Any],
        mode: Literal["on", "off", "status"] = "status",
        channel: discord.TextChannel | discord.ForumChannel | None = None,
    ) -> None:
        def work(asker: Asker) -> Reply:
            # A forum has no message box to run a command in, so it is named instead.
            if channel is not None:
                asker = replace(asker, channel_id=str(channel.id))
            return self.service.run_command(f"/autoreply {mode}", asker)

        await slash(interaction, "autoreply", work, defer=False, private=True)

    @app_commands.command(name="gaps", description="What Byline couldn't answer (abstentions and 👎), grouped (admins)")
    @app_commands.describe(since="7d, 24h, yesterday or 2026-11-30 (default: 7d)")
    async def gaps(self, interaction: discord.Interaction[Any], since: app_commands.Range[str, 1, 100] = "7d") -> None:
        await slash(
            interaction,
            "gaps",
            command_line(self.service, f"/gaps {since}"),
            defer=True,
            private=True,
        )
