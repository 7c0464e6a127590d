"""Discord's ``/quotes``, ``/reactions`` and ``/alerts`` slash commands (issue 35).

Each is a thin call into the service's command (``bot/commands/quotes.py``, ``bot/jobs/alerts.py``)
through the adapter's ``slash`` runner, so Discord gets the same replies, limits, scope, tenant
and admin check (``interaction_asker``: Manage Channels in this server) as Slack and the
terminal. ``/quotes`` pages with its ``page`` argument, as ``/sources`` does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bot.replies import Reply
from bot.service import Asker, Service

if TYPE_CHECKING:
    Slash = Callable[..., Awaitable[None]]


def _line(name: str, **values: str | int | None) -> str:
    """``/quotes speaker:… topic:…`` from the options given (empty ones left out)."""
    parts = [f"/{name}"]
    parts += [f"{key}:{' '.join(str(value).split())}" for key, value in values.items() if value not in (None, "")]
    return " ".join(parts)


def register_quote_commands(tree: app_commands.CommandTree[Any], service: Service, slash: Slash) -> None:
    """Add ``/quotes``, ``/reactions`` and the ``/alerts`` group to the command tree."""

    def run(line: str) -> Callable[[Asker], Reply]:
        return lambda asker: service.run_command(line, asker)

    @tree.command(name="quotes", description="Everything a person said (on a topic), newest first, each quote cited")
    @app_commands.describe(
        speaker="The person, e.g. Mourinho or Tessa Jowell",
        topic="Only their quotes about this, e.g. referees (default: everything)",
        since="Only articles since then: 2005-01-31, 30d, yesterday",
        page="Page number (default 1)",
    )
    async def quotes(
        interaction: discord.Interaction[Any],
        speaker: app_commands.Range[str, 1, 200],
        topic: app_commands.Range[str, 1, 200] | None = None,
        since: app_commands.Range[str, 1, 50] | None = None,
        page: app_commands.Range[int, 1, 100000] = 1,
    ) -> None:
        line = _line("quotes", speaker=speaker, topic=topic, since=since, page=page if page > 1 else None)
        await slash(interaction, "quotes", run(line), defer=True)

    @tree.command(name="reactions", description="Who said what about a story: one cited quote per speaker")
    @app_commands.describe(topic="The story or topic, e.g. the Budget")
    async def reactions(interaction: discord.Interaction[Any], topic: app_commands.Range[str, 1, 200]) -> None:
        await slash(interaction, "reactions", run(_line("reactions", topic=topic)), defer=True)

    alerts = app_commands.Group(name="alerts", description="Post a person's new quotes in this channel")

    @alerts.command(name="add", description="Post this person's new quotes here (needs Manage Channels)")
    @app_commands.describe(speaker="The person, e.g. Mourinho", topic="Only quotes about this (default: all)")
    async def alerts_add(
        interaction: discord.Interaction[Any],
        speaker: app_commands.Range[str, 1, 200],
        topic: app_commands.Range[str, 1, 200] | None = None,
    ) -> None:
        line = _line("alerts add", speaker=speaker, topic=topic)
        await slash(interaction, "alerts", run(line), defer=True, private=True)

    @alerts.command(name="show", description="This channel's quote alerts and how many quotes each has posted")
    async def alerts_show(interaction: discord.Interaction[Any]) -> None:
        await slash(interaction, "alerts", run("/alerts show"), defer=False, private=True)

    @alerts.command(name="remove", description="Stop one of this channel's quote alerts (needs Manage Channels)")
    @app_commands.describe(alert="The alert's number, as /alerts show lists it")
    async def alerts_remove(interaction: discord.Interaction[Any], alert: app_commands.Range[int, 1, 10**9]) -> None:
        await slash(interaction, "alerts", run(f"/alerts remove {alert}"), defer=False, private=True)

    tree.add_command(alerts)
