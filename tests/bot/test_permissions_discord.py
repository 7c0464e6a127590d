"""Admin-only commands (/ingest, digest subscriptions) are refused for non-admins, through the
real Discord adapter, and allowed for admins."""

from __future__ import annotations

from typing import Any

import pytest

from tests.bot.test_discord import bot, callback, fake, followups, text_of  # noqa: F401
from tests.fakes.discord_fake import DiscordFake

REFUSED = ("Only Byline's operators", "admins can")


def _discord_command(
    fake: DiscordFake, name: str, sub: str | None, value: str | None, permissions: int
) -> dict[str, Any]:
    if name == "ingest":
        options = [{"name": "url", "type": 3, "value": value}]
    else:
        inner = [{"name": "schedule", "type": 3, "value": value}] if value else []
        options = [{"name": sub, "type": 1, "options": inner}]
    return fake.command(name, options, permissions=permissions)


DISCORD_ADMIN_ONLY = [
    ("ingest", None, "https://example.org/news/1"),
    ("digest", "subscribe", "daily 09:00"),
    ("digest", "unsubscribe", None),
]
VIEW_AND_SEND = 1024 | 2048
MANAGE_CHANNELS = 1 << 4


@pytest.mark.parametrize(("name", "sub", "value"), DISCORD_ADMIN_ONLY)
def test_discord_refuses_admin_commands_for_members_without_manage_channels(
    fake: DiscordFake,
    bot: Any,
    name: str,
    sub: str | None,
    value: str | None,  # noqa: F811
) -> None:
    interaction = _discord_command(fake, name, sub, value, VIEW_AND_SEND)
    fake.dispatch("INTERACTION_CREATE", interaction)
    callback(fake, interaction)
    reply = followups(fake, interaction)[0]
    assert any(phrase in text_of(reply) for phrase in REFUSED), text_of(reply)
    assert reply.get("flags", 0) & 64, "the refusal is shown only to the member"


def test_discord_member_with_manage_channels_may_subscribe(fake: DiscordFake, bot: Any) -> None:  # noqa: F811
    interaction = _discord_command(fake, "digest", "subscribe", "daily 09:00", VIEW_AND_SEND | MANAGE_CHANNELS)
    fake.dispatch("INTERACTION_CREATE", interaction)
    callback(fake, interaction)
    reply = followups(fake, interaction)[0]
    assert not any(phrase in text_of(reply) for phrase in REFUSED)
    assert bot.client.service.scheduler.store.subscription("discord", str(fake.channel_payload()["id"])) is not None


@pytest.mark.parametrize(
    "options",
    [
        [{"name": "now", "type": 1, "options": []}],
        [{"name": "since", "type": 1, "options": [{"name": "when", "type": 3, "value": "2h"}]}],
        [{"name": "status", "type": 1, "options": []}],
    ],
)
def test_discord_anyone_may_read_digests(fake: DiscordFake, bot: Any, options: list[dict[str, Any]]) -> None:
    interaction = fake.command("digest", options, permissions=VIEW_AND_SEND)
    fake.dispatch("INTERACTION_CREATE", interaction)
    callback(fake, interaction)
    reply = followups(fake, interaction)[0]
    assert text_of(reply) and not any(phrase in text_of(reply) for phrase in REFUSED)
