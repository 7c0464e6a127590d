"""``/ask``, ``/search``, ``/sources`` and ``/help``: asking Byline."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.platforms.discord.slash import slash
from bot.platforms.discord.views import interaction_queue_notice
from bot.replies import AnswerReply
from bot.service import Service


class AskingCog(commands.Cog, name="Asking"):
    """Questions, searches and the list of sources.

    ``remember`` ties a sent answer's message to its question, so that a reply to the answer is
    read as a follow-up with that question as its context (``BylineClient.remember_conversation``)."""

    def __init__(self, service: Service, remember: Callable[[int, str], None]) -> None:
        self.service = service
        self.remember = remember

    @app_commands.command(name="ask", description="Answer a question with verbatim, cited quotes from the articles")
    @app_commands.describe(
        question="What you want to know, e.g. what did Mourinho say about the referee?",
        private="Only you see the answer (default: off)",
    )
    async def ask(
        self,
        interaction: discord.Interaction[Any],
        question: app_commands.Range[str, 1, 1000],
        private: bool = False,
    ) -> None:
        queued = interaction_queue_notice(interaction)
        ran = await slash(
            interaction,
            "ask",
            lambda asker: self.service.ask(question, asker, queued, private=private),
            defer=True,
            private=private,
        )
        # A private answer is ephemeral: nobody can reply to it, and its question must not
        # become the context of a public follow-up.
        if private or ran.asker is None or not isinstance(ran.reply, AnswerReply):
            return
        for message in ran.sent:
            key = f"discord:{interaction.channel_id}:{message.id}"
            self.remember(message.id, key)
            await asyncio.to_thread(self.service.state.remember, key, question, ran.asker.tenant)

    @app_commands.command(name="search", description="The article passages that best match a query")
    @app_commands.describe(query="Words to look for, e.g. Kompany injury")
    async def search(self, interaction: discord.Interaction[Any], query: app_commands.Range[str, 1, 500]) -> None:
        await slash(interaction, "search", lambda asker: self.service.search(query, asker), defer=True)

    @app_commands.command(name="sources", description="The articles Byline knows, newest first")
    @app_commands.describe(page="Page number (default 1)")
    async def sources(
        self, interaction: discord.Interaction[Any], page: app_commands.Range[int, 1, 100000] = 1
    ) -> None:
        await slash(interaction, "sources", lambda asker: self.service.sources_page(page, asker), defer=False)

    @app_commands.command(name="help", description="What Byline can do and how to ask")
    async def help_(self, interaction: discord.Interaction[Any]) -> None:
        await slash(interaction, "help", lambda asker: self.service.help(), defer=False)
