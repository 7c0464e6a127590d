"""Platform faults: the fake Slack and Discord answer 429 with Retry-After, answer 500, and drop the
websocket while an answer is being prepared. Byline retries or reconnects, and every answer is
delivered exactly once. Real libraries over real sockets on 127.0.0.1; nothing of Byline mocked."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.platforms.slack.app import run
from bot.service import Service
from tests.bot.test_discord import Bot, start_bot
from tests.bot.test_discord import mention as discord_mention
from tests.bot.test_slack import QUESTION, mention
from tests.fakes.discord_fake import APP_ID, CHANNEL_ID, DiscordFake
from tests.fakes.slack_fake import FakeSlack, FakeSocketMode
from tests.platform_helpers import Bolt, ErrorLog, failing_on_logged_errors, settings_for


@pytest.fixture(autouse=True)
def no_handler_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """A failure that is only logged (worker threads, reconnect loops) fails the test."""
    with failing_on_logged_errors(caplog, ("slack", "byline", "discord")):
        yield


# -- Slack ---------------------------------------------------------------------------------


def thread_posts(fake: FakeSlack, thread_ts: str) -> list[Any]:
    return [c for c in fake.calls if c.method == "chat.postMessage" and c.params.get("thread_ts") == thread_ts]


def test_slack_answer_waits_out_a_429_and_retries_a_500_then_posts_once(bolt: Bolt, slack: FakeSlack) -> None:
    slack.rate_limits["chat.postMessage"] = 1
    slack.retry_after = "1"
    slack.server_errors["chat.postMessage"] = 1
    assert bolt.event(mention(QUESTION, "1700000100.000100"))[0] == 200
    slack.wait_call("chat.postMessage", lambda c: c.params.get("thread_ts") == "1700000100.000100")
    # Another question, answered after the faulty one, shows that no late retry is still coming.
    assert bolt.event(mention(QUESTION, "1700000100.000200"))[0] == 200
    slack.wait_call("chat.postMessage", lambda c: c.params.get("thread_ts") == "1700000100.000200")
    attempts = thread_posts(slack, "1700000100.000100")
    assert [c.status for c in attempts] == [429, 500, 200]
    assert attempts[1].at - attempts[0].at >= 0.95, "Retry-After: 1 was not waited out"
    assert len(thread_posts(slack, "1700000100.000200")) == 1


def test_slack_slash_reply_is_retried_after_a_500_from_the_response_url(bolt: Bolt, slack: FakeSlack) -> None:
    name = f"cmd{bolt._n + 1}"  # the response URL Bolt.command gives the next command
    slack.server_errors[f"response:{name}"] = 1
    assert bolt.command("/ask", QUESTION) == name
    slack.wait_call(f"response:{name}")
    assert bolt.command("/ask", QUESTION)  # once a later command is answered, no retry is pending
    slack.wait_for(lambda calls: len([c for c in calls if c.method.startswith("response:")]) >= 3)
    attempts = [c for c in slack.calls if c.method == f"response:{name}"]
    assert [c.status for c in attempts] == [500, 200]
    assert "[1]" in attempts[1].dump()


def test_slack_socket_mode_drop_mid_answer_delivers_once_and_reconnects(
    seed_service: Service, slack: FakeSlack, tmp_path: Path
) -> None:
    slack.socket = socket = FakeSocketMode()
    socket.drop_after_ack = {"env-1"}
    stop = threading.Event()
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            run(seed_service, settings_for(slack, tmp_path, slack_mode="socket", slack_signing_secret=""), stop)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    def envelope(envelope_id: str, ts: str) -> dict[str, Any]:
        event = {"type": "event_callback", "team_id": "T0001", "api_app_id": "A0001", "event_id": envelope_id}
        payload = event | {"event_time": int(time.time()), "event": mention(QUESTION, ts)}
        return {"envelope_id": envelope_id, "type": "events_api", "accepts_response_payload": False, "payload": payload}

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        socket.wait_connected()
        socket.push(envelope("env-1", "1700000200.000100"))
        # The fake closes the socket as the ack arrives: the answer is still being prepared.
        first = slack.wait_call("chat.postMessage", lambda c: c.params.get("thread_ts") == "1700000200.000100")
        assert socket.dropped_at and socket.dropped_at[0] < first.at
        socket.wait_connected(connections=2)
        # slack_sdk's own monitor would take ping_interval (10 s); Byline reconnects at once.
        assert socket.connected_at[1] - socket.dropped_at[0] < 5.0
        socket.push(envelope("env-2", "1700000200.000200"))
        socket.wait_ack("env-2")
        slack.wait_call("chat.postMessage", lambda c: c.params.get("thread_ts") == "1700000200.000200")
        assert len(slack.calls_to("apps.connections.open")) == 2
        assert len(thread_posts(slack, "1700000200.000100")) == 1
        assert len(thread_posts(slack, "1700000200.000200")) == 1
    finally:
        stop.set()
        thread.join(timeout=20)
    assert not thread.is_alive() and not errors


# -- Discord -------------------------------------------------------------------------------


@pytest.fixture
def bot(discord_fake: DiscordFake, seed_service: Service) -> Iterator[Bot]:
    errors = ErrorLog()
    logging.getLogger("discord").addHandler(errors)
    logging.getLogger("byline.discord").addHandler(errors)
    running = start_bot(discord_fake, seed_service)
    yield running
    running.close()
    logging.getLogger("discord").removeHandler(errors)
    logging.getLogger("byline.discord").removeHandler(errors)
    assert not errors.records, [r.getMessage() for r in errors.records]


def replies_to(fake: DiscordFake, message_id: str) -> list[Any]:
    return [
        r
        for r in fake.find("POST", f"/channels/{CHANNEL_ID}/messages")
        if str(((r.body or {}).get("message_reference") or {}).get("message_id")) == message_id
    ]


def test_discord_answer_retries_a_500_and_waits_out_a_429_then_posts_once(discord_fake: DiscordFake, bot: Bot) -> None:
    answers = f"POST /channels/{CHANNEL_ID}/messages"
    discord_fake.fail_next = [(answers, 500), (answers, 429)]
    question = discord_mention(discord_fake, QUESTION)
    discord_fake.wait_for(lambda: any(r.status == 200 for r in replies_to(discord_fake, question["id"])), 30, "answer")
    # A second question after the faulty one: once it is answered, no late retry of the first is due.
    later = discord_mention(discord_fake, QUESTION)
    discord_fake.wait_for(lambda: replies_to(discord_fake, later["id"]), 30, "the second answer")
    attempts = replies_to(discord_fake, question["id"])
    assert [r.status for r in attempts] == [500, 429, 200]
    assert attempts[2].at - attempts[1].at >= 0.15, "retry_after 0.2 s was not waited out"
    assert len(replies_to(discord_fake, later["id"])) == 1


def test_discord_slash_followup_waits_out_a_429_and_is_sent_once(discord_fake: DiscordFake, bot: Bot) -> None:
    discord_fake.fail_next = [("POST /webhooks/", 429)]
    interaction = discord_fake.command("ask", [{"name": "question", "type": 3, "value": QUESTION}])
    followups = f"/webhooks/{APP_ID}/{interaction['token']}"
    discord_fake.dispatch("INTERACTION_CREATE", interaction)
    discord_fake.wait_for(lambda: discord_fake.count("POST", followups) == 1, 30, "the followup")
    assert discord_fake.count("POST", followups, status=429) == 1
    assert discord_fake.count("POST", f"/interactions/{interaction['id']}/") == 1


def test_discord_gateway_drop_mid_answer_resumes_and_delivers_once(discord_fake: DiscordFake, bot: Bot) -> None:
    # Typing starts when the answer starts being prepared: the fake drops the gateway right then.
    discord_fake.drop_gateway_on = [f"POST /channels/{CHANNEL_ID}/typing"]
    question = discord_mention(discord_fake, QUESTION)
    discord_fake.wait_for(lambda: replies_to(discord_fake, question["id"]), 30, "the answer")
    discord_fake.wait_for(lambda: discord_fake.resumes == 1, 30, "a RESUME")
    assert discord_fake.identifies == 1, "the client started a new session instead of resuming"
    # The resumed session still receives events: a question after the drop is answered too.
    after = discord_mention(discord_fake, QUESTION)
    discord_fake.wait_for(lambda: replies_to(discord_fake, after["id"]), 30, "an answer after the resume")
    assert len(replies_to(discord_fake, question["id"])) == 1
    assert len(replies_to(discord_fake, after["id"])) == 1


def test_discord_gateway_drop_while_a_slash_answer_is_prepared_delivers_once(
    discord_fake: DiscordFake, bot: Bot
) -> None:
    interaction = discord_fake.command("ask", [{"name": "question", "type": 3, "value": QUESTION}])
    discord_fake.drop_gateway_on = [f"POST /interactions/{interaction['id']}/"]
    followups = f"/webhooks/{APP_ID}/{interaction['token']}"
    discord_fake.dispatch("INTERACTION_CREATE", interaction)
    discord_fake.wait_for(lambda: discord_fake.count("POST", followups), 30, "the followup")
    discord_fake.wait_for(lambda: discord_fake.resumes == 1, 30, "a RESUME")
    later = discord_mention(discord_fake, QUESTION)
    discord_fake.wait_for(lambda: replies_to(discord_fake, later["id"]), 30, "an answer after the resume")
    assert discord_fake.count("POST", followups) == 1
    assert discord_fake.identifies == 1
