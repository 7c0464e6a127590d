"""How the scheduler (digests, feed notices) posts to a channel without knowing the platform."""

from __future__ import annotations

from typing import Protocol

from bot.replies import Reply


class DeliveryError(Exception):
    """A post failed for a reason worth reporting (deleted channel, lost permission)."""


class Poster(Protocol):
    """Implemented by each adapter: post a reply to one of its channels (raises DeliveryError)."""

    platform: str

    def post(self, channel_id: str, reply: Reply) -> None: ...
