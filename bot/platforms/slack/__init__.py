"""Slack as a platform: the bolt adapter over Socket Mode or HTTP (``BYLINE_SLACK_MODE``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from bot.delivery import DeliveryError
from bot.platforms.base import PlatformBase, register

if TYPE_CHECKING:
    from bot.platforms.slack.app import SlackAdapter
    from bot.replies import Reply
    from bot.service import Service
    from bot.settings import Settings

log = logging.getLogger("byline.slack")


@register
class SlackPlatform(PlatformBase):
    platform = "slack"
    label = "Slack"

    def __init__(self) -> None:
        super().__init__()
        self.adapter: SlackAdapter | None = None
        self._disconnect: Callable[[], None] = lambda: None

    def configured(self, settings: Settings) -> bool:
        return settings.slack_enabled

    def start(self, service: Service, settings: Settings, stop: threading.Event) -> None:
        # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
        # start-up: loaded when this runs, not whenever the CLI or the registry starts.
        from bot.platforms.slack.app import SlackAdapter, check_settings
        from bot.state.shared import shared_dedupe

        check_settings(settings)
        # Event ids shared by every worker when BYLINE_REDIS_URL is set: a retry that reaches
        # another worker is still answered once.
        seen_events = shared_dedupe(settings)
        adapter = SlackAdapter(service, settings, seen_events=seen_events)  # auth.test: a bad token is one line here
        try:
            if settings.slack_mode == "http":
                server = adapter.start_http(settings.http_host, settings.http_port)

                def close_http() -> None:
                    # Close the listening socket too: an open port that no one reads would take
                    # requests (a load balancer's) and leave them unanswered.
                    server.shutdown()
                    server.server_close()

                self._disconnect = close_http
            else:
                self._disconnect = adapter.start_socket_mode().close
        except BaseException:
            adapter.close()
            raise
        self.adapter = adapter

    def stop(self) -> None:
        if self.adapter is None:
            return
        self._disconnect()
        self.adapter.close()
        self.adapter = None
        log.info("Slack: stopped.")

    def post(self, channel_id: str, reply: Reply) -> None:
        if self.adapter is None:
            raise DeliveryError("Slack is not connected")
        self.adapter.poster.post(channel_id, reply)

    def render(self, reply: Reply) -> Sequence[object]:
        # start-up: loaded when this runs, not whenever the CLI or the registry starts.
        from bot.platforms.slack.render import render

        return render(reply)
