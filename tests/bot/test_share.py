"""Private answers and "Share with channel": through the real bolt app (signed requests to the
fake Slack) and the real discord.py client (against the fake Discord), including after a restart."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.platforms.slack.render import ACTION_PASSAGES, ACTION_SHARE, ACTION_VOTE_UP
from bot.service import Service
from bot.state.store import STATE_FILE, BotState
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from tests.bot.test_discord import callback, custom_ids, followups, start_bot
from tests.fakes.discord_fake import HUMAN, USER_ID, DiscordFake
from tests.fakes.slack_fake import FakeSlack
from tests.platform_helpers import ErrorLog, failing_on_logged_errors, serve_bolt, stop_bolt

QUESTION = "what did Mourinho say about the referee?"
UNANSWERABLE = "Who won the Champions League in 2005?"
OTHER_HUMAN = {**HUMAN, "id": str(USER_ID + 1), "username": "someone-else"}


def fresh_service(data_dir: Path, embedder: Embedder) -> Service:
    """A second process's service over the same data directory (the state file included)."""
    return Service(Library.open(data_dir, embedder), BotState(data_dir / STATE_FILE))


# -- Slack -----------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def no_handler_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    with failing_on_logged_errors(caplog, ("slack_bolt", "byline")):
        yield


def actions(params: dict[str, Any]) -> list[dict[str, Any]]:
    return next(b for b in params["blocks"] if b["type"] == "actions")["elements"]


def without_buttons(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for b in blocks if b["type"] != "actions"]


def test_slack_private_answer_has_a_share_button_that_posts_it_publicly_attributed(
    seed_service: Service, slack: FakeSlack, tmp_path: Path
) -> None:
    bolt = serve_bolt(seed_service, slack, tmp_path)
    try:
        private = bolt.response(bolt.command("/ask", f"private {QUESTION}", user="U1"))
        assert private["response_type"] == "ephemeral"
        buttons = actions(private)
        assert [b["action_id"] for b in buttons][0] == ACTION_SHARE and buttons[0]["text"][
            "text"
        ] == "Share with channel"
        answer_id = buttons[0]["value"]
        # A public answer needs no share button.
        public = bolt.response(bolt.command("/ask", QUESTION, user="U1"))
        assert ACTION_SHARE not in [b["action_id"] for b in actions(public)]

        shared = bolt.response(bolt.click(ACTION_SHARE, answer_id, user="U1"))
        assert shared["response_type"] == "in_channel" and shared["replace_original"] is False
        attribution, *rest = shared["blocks"]
        assert attribution == {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": "Asked by <@U1>", "verbatim": True}],
        }
        # The same answer: the same sections and the same citations, word for word.
        assert without_buttons(rest) == without_buttons(private["blocks"])
        assert "[1]" in json.dumps(rest) and "¶" in json.dumps(rest, ensure_ascii=False)
        # Its buttons are the public ones (passages, votes), keyed by the same answer id.
        assert [(b["action_id"], b["value"]) for b in actions(shared)] == [
            (ACTION_PASSAGES, answer_id),
            (ACTION_VOTE_UP, answer_id),
            ("byline_vote_down", answer_id),
        ]

        again = bolt.response(bolt.click(ACTION_SHARE, answer_id, user="U1"))
        assert again["response_type"] == "ephemeral" and "already shared" in again["text"]
        other = bolt.response(bolt.click(ACTION_SHARE, answer_id, user="U2"))
        assert other["response_type"] == "ephemeral" and "Only the person who asked" in other["text"]
        expired = bolt.response(bolt.click(ACTION_SHARE, "0123456789abcdef", user="U1"))
        assert expired["response_type"] == "ephemeral" and "expired" in expired["text"]
        assert "Ask again" in expired["text"]
        in_channel = [
            c for c in slack.calls if c.method.startswith("response:") and c.params.get("response_type") == "in_channel"
        ]
        assert len(in_channel) == 2  # the public /ask and the one share, never a second
    finally:
        stop_bolt(bolt)


def test_slack_share_works_after_a_restart_and_keeps_an_abstentions_closest_passages(
    seed_service: Service, slack: FakeSlack, tmp_path: Path, embedder: Embedder
) -> None:
    first = serve_bolt(seed_service, slack, tmp_path)
    try:
        private = first.response(first.command("/ask", f"private {UNANSWERABLE}", user="U5"))
        answer_id = actions(private)[0]["value"]
    finally:
        stop_bolt(first)
    service = fresh_service(seed_service.library.data_dir, embedder)
    second = serve_bolt(service, slack, tmp_path)
    try:
        shared = second.response(second.click(ACTION_SHARE, answer_id, user="U5"))
        assert shared["response_type"] == "in_channel"
        assert shared["blocks"][0]["elements"][0]["text"] == "Asked by <@U5>"
        assert without_buttons(shared["blocks"][1:]) == without_buttons(private["blocks"])
        assert "Closest passages" in json.dumps(shared["blocks"], ensure_ascii=False)
    finally:
        stop_bolt(second)
        service.pool.shutdown()
        service.state.close()
        service.library.close()


# -- Discord ---------------------------------------------------------------------------------


def private_ask(fake: DiscordFake, question: str = QUESTION) -> tuple[dict[str, Any], dict[str, Any]]:
    options = [{"name": "question", "type": 3, "value": question}, {"name": "private", "type": 5, "value": True}]
    interaction = fake.command("ask", options)
    fake.dispatch("INTERACTION_CREATE", interaction)
    body = followups(fake, interaction)[0]
    return body, fake.messages[max(fake.messages)]


def share(fake: DiscordFake, custom_id: str, message: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    click = fake.click(custom_id, message, **kwargs)
    fake.dispatch("INTERACTION_CREATE", click)
    reply: dict[str, Any] = callback(fake, click)
    return reply


def test_discord_private_answer_shares_publicly_attributed_without_a_ping(
    discord_fake: DiscordFake, seed_service: Service, errors: ErrorLog
) -> None:
    fake = discord_fake
    bot = start_bot(fake, seed_service)
    try:
        body, message = private_ask(fake)
        assert body["flags"] & 64
        ids = custom_ids(body)
        assert ids[0].startswith("byline:share:")
        answer_id = ids[0].rsplit(":", 1)[1]

        shared = share(fake, ids[0], message)
        assert shared["type"] == 4 and not (shared["data"].get("flags", 0) & 64)
        data = shared["data"]
        assert data["content"] == f"Asked by <@{USER_ID}>"
        # Shown as a mention, pinging no one: not the asker, not anyone named in the article.
        assert data["allowed_mentions"]["parse"] == [] and not data["allowed_mentions"].get("users")
        assert data["embeds"] == body["embeds"]  # the same answer, the same citations
        assert [i for i in custom_ids(data) if not i.startswith("byline:related:")] == [
            f"byline:passages:{answer_id}",
            f"byline:vote:up:{answer_id}",
            f"byline:vote:down:{answer_id}",
        ]

        again = share(fake, ids[0], message)
        assert again["data"]["flags"] & 64 and "already shared" in again["data"]["content"]
        other = share(fake, ids[0], message, user=OTHER_HUMAN)
        assert other["data"]["flags"] & 64 and "Only the person who asked" in other["data"]["content"]
        unknown = "byline:share:0123456789abcdef"
        expired = share(fake, unknown, fake.button_message(unknown))
        assert expired["data"]["flags"] & 64 and "expired" in expired["data"]["content"]
    finally:
        bot.close()


def test_discord_share_button_works_after_a_restart(
    discord_fake: DiscordFake, seed_service: Service, embedder: Embedder, errors: ErrorLog
) -> None:
    fake = discord_fake
    first = start_bot(fake, seed_service)
    try:
        body, message = private_ask(fake, UNANSWERABLE)
        share_id = custom_ids(body)[0]
    finally:
        first.close()
    service = fresh_service(seed_service.library.data_dir, embedder)
    second = start_bot(fake, service)
    try:
        shared = share(fake, share_id, message)
        assert shared["data"]["content"] == f"Asked by <@{USER_ID}>"
        assert shared["data"]["embeds"] == body["embeds"]
        assert "Closest passages" in json.dumps(shared["data"]["embeds"], ensure_ascii=False)
    finally:
        second.close()
        service.pool.shutdown()
        service.state.close()
        service.library.close()
