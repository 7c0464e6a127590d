"""Discord's slash commands: one cog per command family, each a thin call into the service.

A family with subcommands (``/digest``, ``/scope``, ``/alerts``) is a ``GroupCog``: the cog is
the command group. The others are plain cogs whose commands sit at the top level. Every command
runs through ``bot.platforms.discord.slash.slash``, so each gets the same deferral, worker
thread, error reply and mention-free sending. ``BylineClient.setup_hook`` adds them before it
syncs the command tree.
"""

from __future__ import annotations

from collections.abc import Callable

from discord.ext import commands

from bot.platforms.discord.cogs.asking import AskingCog
from bot.platforms.discord.cogs.channels import ChannelsCog
from bot.platforms.discord.cogs.digest import DigestCog
from bot.platforms.discord.cogs.library import LibraryCog
from bot.platforms.discord.cogs.quotes import AlertsCog, QuotesCog
from bot.platforms.discord.cogs.scope import ScopeCog
from bot.platforms.discord.cogs.verify import VerifyCog
from bot.service import Service


def cogs_for(service: Service, remember: Callable[[int, str], None]) -> list[commands.Cog]:
    """Every command family's cog, over the service; ``remember`` keeps an answer's question as
    the context of replies to it (``BylineClient.remember_conversation``)."""
    return [
        AskingCog(service, remember),
        LibraryCog(service),
        ChannelsCog(service),
        DigestCog(service),
        ScopeCog(service),
        QuotesCog(service),
        AlertsCog(service),
        VerifyCog(service),
    ]
