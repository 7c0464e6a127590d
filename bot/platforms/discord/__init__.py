"""Discord as a platform: the discord.py client, on an event loop in a thread of its own."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.delivery import DeliveryError
from bot.platforms.base import BackgroundRun, PlatformBase, register

if TYPE_CHECKING:
    from bot.platforms.discord.app import BylineClient
    from bot.replies import Reply
    from bot.service import Service
    from bot.settings import Settings

# A digest due at start-up waits this long for the gateway login instead of failing at once.
CONNECT_WAIT_SECONDS = 30.0


@register
class DiscordPlatform(PlatformBase):
    platform = "discord"
    label = "Discord"

    def __init__(self) -> None:
        super().__init__()
        self.client: BylineClient | None = None
        self._run: BackgroundRun | None = None

    def configured(self, settings: Settings) -> bool:
        return settings.discord_enabled

    def start(self, service: Service, settings: Settings, stop: threading.Event) -> None:
        # start-up: loaded when this runs, not whenever the CLI or the registry starts.
        from bot.platforms.discord.app import configure_endpoints, make_client, run_client

        # A bad shard pair (BYLINE_DISCORD_SHARD_IDS/_COUNT) is refused here, before any thread starts.
        client = make_client(service, settings)
        configure_endpoints(settings)
        self.client = client
        # run_client closes the client once ``stop`` is set; a bad token raises DiscordStartError.
        token = settings.discord_token
        self._run = BackgroundRun("byline-discord", lambda: asyncio.run(run_client(client, token, stop)))
        self._run.start(stop)

    def stop(self) -> None:
        if self._run is not None:
            run, self._run = self._run, None
            run.join()

    def post(self, channel_id: str, reply: Reply) -> None:
        deadline = time.monotonic() + CONNECT_WAIT_SECONDS
        while self.client is not None and self.client.poster is None and time.monotonic() < deadline:
            if self._run is None or self._run.thread is None or not self._run.thread.is_alive():
                break
            time.sleep(0.1)
        poster = self.client.poster if self.client is not None else None
        if poster is None:
            raise DeliveryError("Discord is not connected")
        poster.post(channel_id, reply)

    def render(self, reply: Reply) -> Sequence[object]:
        # start-up: loaded when this runs, not whenever the CLI or the registry starts.
        from bot.platforms.discord.render import render

        return render(reply)
