"""``/ingest`` and ``/remove``: what the library holds."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiohttp
import discord
from discord import app_commands
from discord.ext import commands

from bot.asking import Asker
from bot.commands.ingest import ingest_upload, upload_refusal
from bot.platforms.discord.slash import command_line, slash
from bot.replies import Reply, TextReply
from bot.service import Service

log = logging.getLogger("byline.discord")

# An attachment that takes longer than this to come from Discord's CDN is given up on.
DOWNLOAD_TIMEOUT = 60.0


class LibraryCog(commands.Cog, name="Library"):
    """Adding articles (a URL or an uploaded file) and removing them (operators only)."""

    def __init__(self, service: Service) -> None:
        self.service = service

    @app_commands.command(name="ingest", description="Add an article to Byline from a URL or an uploaded file")
    @app_commands.describe(url="The article's web address", file="An article file (text or HTML) instead of a URL")
    async def ingest(
        self, interaction: discord.Interaction[Any], url: str | None = None, file: discord.Attachment | None = None
    ) -> None:
        loop = asyncio.get_running_loop()
        service = self.service

        def work(asker: Asker) -> Reply:
            if file is None or url:
                return service.run_command(f"/ingest {url or ''}".strip(), asker)
            # An attachment's name and size are known before anything is downloaded.
            refusal = upload_refusal(asker, file.filename, file.size)
            if refusal is not None:
                return refusal
            downloaded = asyncio.run_coroutine_threadsafe(download_attachment(file), loop).result()
            if isinstance(downloaded, TextReply):
                return downloaded
            return ingest_upload(service, file.filename, downloaded, asker)

        await slash(interaction, "ingest", work, defer=True)

    @app_commands.command(
        name="remove", description="Remove articles by URL, key or id (Byline's operators only; logged)"
    )
    @app_commands.describe(articles="One or more article URLs, keys or ids, separated by spaces")
    async def remove(self, interaction: discord.Interaction[Any], articles: app_commands.Range[str, 1, 1000]) -> None:
        await slash(
            interaction,
            "remove",
            command_line(self.service, f"/remove {articles}"),
            defer=True,
            private=True,
        )


async def download_attachment(file: discord.Attachment) -> bytes | TextReply:
    """The attachment's bytes (through discord.py's session), or a reply saying why not."""
    name = file.filename
    try:
        return await asyncio.wait_for(file.read(), DOWNLOAD_TIMEOUT)
    except discord.NotFound:
        why = "Discord no longer has it (deleted?)"
    except (discord.HTTPException, aiohttp.ClientError, OSError) as error:
        why = f"downloading it from Discord failed ({type(error).__name__})"
    except TimeoutError:
        why = f"downloading it from Discord took over {DOWNLOAD_TIMEOUT:.0f} s"
    log.warning("Discord: attachment %s not downloaded: %s", name, why)
    return TextReply(f"{name}: could not add it: {why}. Attach it again.", private=True, error=True)
