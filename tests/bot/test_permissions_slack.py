"""Admin-only commands (/ingest, digest subscriptions) are refused for non-admins, through the
real Slack adapter, and allowed for admins."""

from __future__ import annotations

import json

import pytest

from tests.bot.test_slack import Bolt, fake, no_handler_errors  # noqa: F401

ADMIN_ONLY = [
    ("/ingest", "https://example.org/news/1"),
    ("/digest", "subscribe daily 09:00"),
    ("/digest", "unsubscribe"),
]
REFUSED = ("Only Byline's operators", "admins can")


@pytest.mark.parametrize(("command", "text"), ADMIN_ONLY)
def test_slack_refuses_admin_commands_for_non_admins(bolt: Bolt, command: str, text: str) -> None:  # noqa: F811
    reply = bolt.response(bolt.command(command, text, user="U1"))
    assert reply["response_type"] == "ephemeral"
    assert any(phrase in reply["text"] for phrase in REFUSED), reply["text"]


def test_slack_admin_may_subscribe_and_unsubscribe(bolt: Bolt) -> None:  # noqa: F811
    scheduler = bolt.adapter.service.scheduler
    assert scheduler is not None
    subscribed = bolt.response(bolt.command("/digest", "subscribe daily 09:00 Europe/London", user="UADMIN"))
    assert "daily" in subscribed["text"].lower() or "09:00" in subscribed["text"]
    assert scheduler.store.subscription("slack", "C1") is not None
    bolt.response(bolt.command("/digest", "unsubscribe", user="UADMIN"))
    assert scheduler.store.subscription("slack", "C1") is None


@pytest.mark.parametrize("text", ["now", "since 2h", "since yesterday", "status"])
def test_slack_anyone_may_read_digests(bolt: Bolt, text: str) -> None:
    reply = bolt.response(bolt.command("/digest", text, user="U1"))
    assert not any(phrase in reply["text"] for phrase in REFUSED)
    assert "Traceback" not in json.dumps(reply)


def test_slack_bad_schedule_gets_an_example(bolt: Bolt) -> None:
    reply = bolt.response(bolt.command("/digest", "subscribe daily 09:00 Mars/Olympus", user="UADMIN"))
    assert "Europe/London" in reply["text"], reply["text"]
