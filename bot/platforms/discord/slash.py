"""Running one slash command: defer, work in a thread, reply, and never fail silently."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import discord

from bot.asking import Asker
from bot.platforms.discord.views import guarded, interaction_asker, send_reply
from bot.replies import AnswerReply, Reply
from bot.service import Service


@dataclass
class Ran:
    """What one slash command did: who asked and what it replied (both None when it failed and
    the user was told so), and the messages it sent."""

    asker: Asker | None = None
    reply: Reply | None = None
    sent: list[discord.Message] = field(default_factory=list)


async def slash(
    interaction: discord.Interaction[Any],
    name: str,
    work: Callable[[Asker], Reply],
    *,
    defer: bool,
    private: bool = False,
) -> Ran:
    """Run a slash command's ``work`` in a thread and send its reply.

    /ask, /search, /digest and /ingest always defer: retrieval is usually well under a second,
    but on a busy two-core host a cold query or an ingest can pass Discord's 3-second limit, and a
    defer costs one request and shows "Byline is thinking…", which is the typing indicator here.
    """
    ran = Ran()
    async with guarded(interaction, f"/{name}"):
        if defer:
            await interaction.response.defer(ephemeral=private, thinking=True)
        asker = interaction_asker(interaction)
        reply = await asyncio.to_thread(work, asker)
        if private and isinstance(reply, AnswerReply):
            reply.private = True
        ran.sent = await send_reply(interaction, reply, deferred_private=private)
        ran.asker, ran.reply = asker, reply
    return ran


def command_line(service: Service, line: str) -> Callable[[Asker], Reply]:
    """The work of a slash command that is one of the service's command lines (``/digest now``):
    the same command, limits, scope and replies as on Slack and the terminal."""
    return lambda asker: service.run_command(line, asker)
