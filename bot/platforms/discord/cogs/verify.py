"""Discord's ``/verify`` slash command: a thin call into the service's ``/verify``.

The quote and the speaker are two options; they go to the same command line the other
platforms send (``/verify QUOTE speaker:NAME``), so Discord gets the same check, limits, scope
and replies. ``private`` shows the verdict to the asker alone.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.asking import Asker
from bot.platforms.discord.slash import slash
from bot.replies import Reply, VerifyReply
from bot.service import Service
from retrieval.features.quote_check import MAX_QUOTE_CHARS


class VerifyCog(commands.Cog, name="Verify"):
    """Is this quote real? Verbatim, altered, said by someone else, or not found."""

    def __init__(self, service: Service) -> None:
        self.service = service

    @app_commands.command(
        name="verify", description="Is this quote real? Verbatim, altered, said by someone else or not found"
    )
    @app_commands.describe(
        quote="The quote as you have it, e.g. We were the better team (an ellipsis … joins two pieces)",
        speaker="Who it is said to be by, e.g. Mourinho (default: whoever the article says)",
        private="Only you see the verdict (default: off)",
    )
    async def verify(
        self,
        interaction: discord.Interaction[Any],
        quote: app_commands.Range[str, 1, MAX_QUOTE_CHARS],
        speaker: app_commands.Range[str, 1, 200] | None = None,
        private: bool = False,
    ) -> None:
        line = " ".join(quote.split()) + (f" speaker:{' '.join(speaker.split())}" if speaker else "")

        def work(asker: Asker) -> Reply:
            reply = self.service.run_command(f"/verify {line}", asker)
            if private and isinstance(reply, VerifyReply):
                reply.private = True
            return reply

        await slash(interaction, "verify", work, defer=True, private=private)
