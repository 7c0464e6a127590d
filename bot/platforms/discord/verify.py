"""Discord's ``/verify`` slash command: a thin call into the service's ``/verify``.

The quote and the speaker are two options; they go to the same command line the other
platforms send (``/verify QUOTE speaker:NAME``), so Discord gets the same check, limits, scope
and replies. ``private`` shows the verdict to the asker alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bot.replies import Reply, VerifyReply
from bot.service import Asker, Service
from retrieval.features.quote_check import MAX_QUOTE_CHARS

if TYPE_CHECKING:
    Slash = Callable[..., Awaitable[None]]


def register_verify_command(tree: app_commands.CommandTree[Any], service: Service, slash: Slash) -> None:
    """Add ``/verify`` to the command tree."""

    @tree.command(name="verify", description="Is this quote real? Verbatim, altered, said by someone else or not found")
    @app_commands.describe(
        quote="The quote as you have it, e.g. We were the better team (an ellipsis … joins two pieces)",
        speaker="Who it is said to be by, e.g. Mourinho (default: whoever the article says)",
        private="Only you see the verdict (default: off)",
    )
    async def verify(
        interaction: discord.Interaction[Any],
        quote: app_commands.Range[str, 1, MAX_QUOTE_CHARS],
        speaker: app_commands.Range[str, 1, 200] | None = None,
        private: bool = False,
    ) -> None:
        line = " ".join(quote.split()) + (f" speaker:{' '.join(speaker.split())}" if speaker else "")

        def work(asker: Asker) -> Reply:
            reply = service.run_command(f"/verify {line}", asker)
            if private and isinstance(reply, VerifyReply):
                reply.private = True
            return reply

        await slash(interaction, "verify", work, defer=True, private=private)
