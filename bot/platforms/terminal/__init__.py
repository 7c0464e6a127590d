"""The terminal chat as a platform: ``serve``'s fallback when no chat platform is configured
and stdin is a terminal. It runs on the main thread, where SIGTERM can end a wait for a line."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.platforms.base import PlatformBase, register

if TYPE_CHECKING:
    from bot.replies import Reply
    from bot.service import Service
    from bot.settings import Settings

log = logging.getLogger("byline.serve")


@register
class TerminalPlatform(PlatformBase):
    platform = "terminal"
    label = "terminal chat"
    fallback = True
    foreground = True

    def configured(self, settings: Settings) -> bool:
        return sys.stdin.isatty()

    def start(self, service: Service, settings: Settings, stop: threading.Event) -> None:
        # start-up: loaded when this runs, not whenever the CLI or the registry starts.
        from bot.platforms.terminal.chat import chat

        log.info("No SLACK_BOT_TOKEN or DISCORD_TOKEN set: starting the terminal chat.")
        # serve warms the model itself, in the background, as for every platform.
        chat(service, warm=False, reading=self.reading)

    def post(self, channel_id: str, reply: Reply) -> None:
        # A digest subscribed from the chat (`/digest daily 09:00`) is printed between questions.
        for text in self.render(reply):
            print(f"\n{text}\n", file=sys.stdout, flush=True)

    def render(self, reply: Reply) -> Sequence[object]:
        # start-up: loaded when this runs, not whenever the CLI or the registry starts.
        from bot.platforms.terminal.chat import render

        return [render(reply)]
