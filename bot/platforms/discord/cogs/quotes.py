"""Discord's ``/quotes``, ``/reactions`` and ``/alerts`` slash commands (issue 35).

Each is a thin call into the service's command (``bot/commands/quotes.py``, ``bot/jobs/alerts.py``)
through the adapter's ``slash`` runner, so Discord gets the same replies, limits, scope, tenant
and admin check (``interaction_asker``: Manage Channels in this server) as Slack and the
terminal. ``/quotes`` pages with its ``page`` argument, as ``/sources`` does.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.platforms.discord.slash import command_line, slash
from bot.service import Service


def _line(name: str, **values: str | int | None) -> str:
    """``/quotes speaker:… topic:…`` from the options given (empty ones left out)."""
    parts = [f"/{name}"]
    parts += [f"{key}:{' '.join(str(value).split())}" for key, value in values.items() if value not in (None, "")]
    return " ".join(parts)


class QuotesCog(commands.Cog, name="Quotes"):
    """A person's quotes, newest first, and one quote per speaker on a story."""

    def __init__(self, service: Service) -> None:
        self.service = service

    @app_commands.command(
        name="quotes", description="Everything a person said (on a topic), newest first, each quote cited"
    )
    @app_commands.describe(
        speaker="The person, e.g. Mourinho or Tessa Jowell",
        topic="Only their quotes about this, e.g. referees (default: everything)",
        since="Only articles since then: 2005-01-31, 30d, yesterday",
        page="Page number (default 1)",
    )
    async def quotes(
        self,
        interaction: discord.Interaction[Any],
        speaker: app_commands.Range[str, 1, 200],
        topic: app_commands.Range[str, 1, 200] | None = None,
        since: app_commands.Range[str, 1, 50] | None = None,
        page: app_commands.Range[int, 1, 100000] = 1,
    ) -> None:
        line = _line("quotes", speaker=speaker, topic=topic, since=since, page=page if page > 1 else None)
        await slash(interaction, "quotes", command_line(self.service, line), defer=True)

    @app_commands.command(name="reactions", description="Who said what about a story: one cited quote per speaker")
    @app_commands.describe(topic="The story or topic, e.g. the Budget")
    async def reactions(self, interaction: discord.Interaction[Any], topic: app_commands.Range[str, 1, 200]) -> None:
        await slash(interaction, "reactions", command_line(self.service, _line("reactions", topic=topic)), defer=True)


class AlertsCog(commands.GroupCog, group_name="alerts", group_description="Post a person's new quotes in this channel"):
    """A channel's quote alerts: add, show, remove (changing them needs Manage Channels)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        super().__init__()

    @app_commands.command(name="add", description="Post this person's new quotes here (needs Manage Channels)")
    @app_commands.describe(speaker="The person, e.g. Mourinho", topic="Only quotes about this (default: all)")
    async def add(
        self,
        interaction: discord.Interaction[Any],
        speaker: app_commands.Range[str, 1, 200],
        topic: app_commands.Range[str, 1, 200] | None = None,
    ) -> None:
        line = _line("alerts add", speaker=speaker, topic=topic)
        await slash(interaction, "alerts", command_line(self.service, line), defer=True, private=True)

    @app_commands.command(name="show", description="This channel's quote alerts and how many quotes each has posted")
    async def show(self, interaction: discord.Interaction[Any]) -> None:
        await slash(interaction, "alerts", command_line(self.service, "/alerts show"), defer=False, private=True)

    @app_commands.command(name="remove", description="Stop one of this channel's quote alerts (needs Manage Channels)")
    @app_commands.describe(alert="The alert's number, as /alerts show lists it")
    async def remove(self, interaction: discord.Interaction[Any], alert: app_commands.Range[int, 1, 10**9]) -> None:
        await slash(
            interaction, "alerts", command_line(self.service, f"/alerts remove {alert}"), defer=False, private=True
        )
