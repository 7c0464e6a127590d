"""Question channels: `/byline autoreply on|off` (Slack) and `/autoreply` (Discord) mark a channel
(or a Discord forum); every question posted there is answered in a thread without a mention, and
anything else gets no reply at all. Through the real bolt app and the real discord.py client."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bot.commands.autoreply import is_question
from bot.service import Service
from bot.state.store import BotState
from tests.bot.test_discord import callback, start_bot, text_of
from tests.bot.test_slack import message, posts
from tests.fakes.discord_fake import (
    BOT_ID,
    BOT_USER,
    CHANNEL_ID,
    GUILD_ID,
    HUMAN,
    OTHER_BOT,
    TIMESTAMP,
    DiscordFake,
    restored_endpoints,
)
from tests.fakes.slack_fake import BOT_USER as SLACK_BOT
from tests.platform_helpers import Bolt, ErrorLog, checked_bolt

# The tenants of the fakes' workspace and server (bot/tenancy.py).
SLACK_TENANT = "slack:T0001"
DISCORD_TENANT = f"discord:{GUILD_ID}"

QUESTION = "what did Mourinho say about the referee?"
# Chatter in a question channel: short, no question mark, no leading question word, or all three.
NOT_QUESTIONS = [
    "thanks all",
    "Who won?",
    "Great match last night everyone",
    "ok",
    "",
    "Guardiola, Kompany and Ederson.",
]
MOD = 1024 | 2048 | 16  # View, Send, Manage Channels: an admin on Discord


def test_what_counts_as_a_question() -> None:
    for text in (
        QUESTION,
        "Mourinho said what about the referee?",
        "tell me about the Ederson row",
        "Who won the derby",
    ):
        assert is_question(text), text
    for text in NOT_QUESTIONS:
        assert not is_question(text), text
    assert is_question("¿Qué dijo Mourinho del árbitro?") and is_question("What’s Guardiola said since")


# -- Slack -----------------------------------------------------------------------------------


@pytest.fixture
def slack(seed_service: Service, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[Bolt]:
    with checked_bolt(seed_service, tmp_path, caplog) as served:
        yield served


def test_slack_admin_marks_a_question_channel_and_questions_are_answered_in_a_thread(slack: Bolt) -> None:
    fake, state = slack.fake, slack.adapter.service.state
    denied = slack.response(slack.command("/byline", "autoreply on", user="U1", channel="CQ"))
    assert denied["response_type"] == "ephemeral" and "admins can" in denied["text"]
    # Not a question channel: a question without a mention is left alone. (Asked in another
    # channel than the one marked below: bolt handles an event after acknowledging it, so a
    # question sent to CQ just before it is marked could be handled just after, and answered.)
    slack.event(message(QUESTION, "1700000100.000100", channel="CX"))
    on = slack.response(slack.command("/byline", "autoreply on", user="UADMIN", channel="CQ"))
    assert on["response_type"] == "ephemeral" and "now a question channel" in on["text"]
    assert state.is_autoreply("slack", "CQ", SLACK_TENANT)
    status = slack.response(slack.command("/byline", "autoreply", user="UADMIN", channel="CQ"))
    assert "This is a question channel" in status["text"]

    slack.event(message(QUESTION, "1700000100.000200", channel="CQ"))
    answer = fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CQ")
    assert answer.params["thread_ts"] == "1700000100.000200" and "[1]" in answer.dump()
    # A reply in that thread is a follow-up, as in any thread Byline answers in.
    slack.event(
        message("and what did Guardiola say?", "1700000100.000300", channel="CQ", thread_ts="1700000100.000200")
    )
    fake.wait_for(lambda calls: len(posts(fake, "CQ")) == 2)
    assert posts(fake, "CQ")[1].params["thread_ts"] == "1700000100.000200"
    assert posts(fake, "CX") == []


def test_slack_question_channel_stays_quiet_for_chatter_bots_edits_and_mentions(slack: Bolt) -> None:
    fake = slack.fake
    slack.adapter.service.state.set_autoreply("slack", "CQ", True, "slack:UADMIN", SLACK_TENANT)
    for n, text in enumerate(NOT_QUESTIONS):
        slack.event(message(text, f"1700000200.00010{n}", channel="CQ"))
    slack.event(message(QUESTION, "1700000200.000200", channel="CQ", bot_id="BOTHER"))
    slack.event(message(QUESTION, "1700000200.000300", channel="CQ", user=SLACK_BOT))
    slack.event(message(QUESTION, "1700000200.000400", channel="CQ", subtype="me_message"))
    # A mention in a question channel is answered once, by app_mention, not twice.
    text = f"<@{SLACK_BOT}> {QUESTION}"
    slack.event(message(text, "1700000200.000500", channel="CQ"))
    slack.event(
        {
            "type": "app_mention",
            "user": "U1",
            "text": text,
            "ts": "1700000200.000500",
            "channel": "CQ",
            "event_ts": "1700000200.000500",
        }
    )
    fake.wait_for(lambda calls: len(posts(fake, "CQ")) == 1)
    # Once a later question in another question channel is answered, the earlier events are done.
    slack.adapter.service.state.set_autoreply("slack", "CLAST", True, "slack:UADMIN", SLACK_TENANT)
    slack.event(message(QUESTION, "1700000200.000600", channel="CLAST"))
    fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CLAST")
    assert len(posts(fake, "CQ")) == 1 and posts(fake, "CQ")[0].params["thread_ts"] == "1700000200.000500"
    # No noise: no reactions, no ephemeral notices in the question channel.
    noise = [c for c in fake.calls if c.method != "chat.postMessage" and c.params.get("channel") == "CQ"]
    assert noise == []


def test_slack_question_channel_survives_a_restart_and_can_be_turned_off(
    slack: Bolt, seed_service: Service, tmp_path: Path
) -> None:
    slack.response(slack.command("/byline", "autoreply on", user="UADMIN", channel="CQ"))
    reopened = BotState(seed_service.state.location)  # what a restarted process reads
    try:
        assert reopened.is_autoreply("slack", "CQ", SLACK_TENANT) and not reopened.is_autoreply(
            "slack", "COTHER", SLACK_TENANT
        )
    finally:
        reopened.close()
    off = slack.response(slack.command("/byline", "autoreply off", user="UADMIN", channel="CQ"))
    assert "no longer a question channel" in off["text"]
    slack.event(message(QUESTION, "1700000300.000100", channel="CQ"))
    dm = slack.response(slack.command("/byline", "autoreply on", user="UADMIN", channel="D123"))
    assert "in a Slack or Discord channel" in dm["text"]
    slack.adapter.service.state.set_autoreply("slack", "CLAST", True, "slack:UADMIN", SLACK_TENANT)
    slack.event(message(QUESTION, "1700000300.000200", channel="CLAST"))
    slack.fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CLAST")
    assert posts(slack.fake, "CQ") == []


# -- Discord ---------------------------------------------------------------------------------

FORUM_ID = 900000000000000700
POST_ID = 900000000000000800


class ForumFake(DiscordFake):
    """The fake Discord with a forum channel in the guild and threads started from messages."""

    def guild_payload(self) -> dict[str, Any]:
        guild = super().guild_payload()
        forum = {**self.channel_payload(FORUM_ID), "type": 15, "name": "questions", "available_tags": []}
        guild["channels"].append(forum)
        return guild

    def forum_post(self, post_id: int, title: str) -> dict[str, Any]:
        metadata = {"archived": False, "auto_archive_duration": 1440, "archive_timestamp": TIMESTAMP, "locked": False}
        return {
            **self.channel_payload(post_id),
            "type": 11,
            "name": title,
            "parent_id": str(FORUM_ID),
            "owner_id": HUMAN["id"],
            "thread_metadata": metadata,
            "message_count": 0,
            "member_count": 1,
            "rate_limit_per_user": 0,
            "flags": 0,
        }

    async def _route(self, method: str, path: str, body: Any) -> web.StreamResponse:
        parts = path.strip("/").split("/")
        if method == "POST" and len(parts) == 5 and parts[0] == "channels" and parts[4] == "threads":
            # POST /channels/{channel}/messages/{message}/threads: a public thread with the message's id.
            thread = {**self.forum_post(int(parts[3]), body["name"]), "parent_id": parts[1], "owner_id": str(BOT_ID)}
            return self._json(thread)
        return await super()._route(method, path, body)


@pytest.fixture
def forum_fake() -> Iterator[ForumFake]:
    started = ForumFake()
    started.start()
    try:
        with restored_endpoints():
            yield started
    finally:
        started.stop()


def autoreply(fake: ForumFake, mode: str, channel: int | None = None, permissions: int = MOD) -> str:
    options: list[dict[str, Any]] = [{"name": "mode", "type": 3, "value": mode}]
    payload = fake.command("autoreply", options, permissions=permissions)
    if channel is not None:
        options.append({"name": "channel", "type": 7, "value": str(channel)})
        resolved = {**fake.channel_payload(channel), "type": 15, "permissions": str(MOD)}
        payload["data"]["resolved"] = {"channels": {str(channel): resolved}}
    fake.dispatch("INTERACTION_CREATE", payload)
    reply = callback(fake, payload)
    assert reply["data"]["flags"] & 64, reply
    return str(reply["data"]["content"])


def test_discord_question_channel_answers_in_a_new_thread_and_ignores_chatter(
    forum_fake: ForumFake, seed_service: Service, errors: ErrorLog
) -> None:
    fake = forum_fake
    bot = start_bot(fake, seed_service)
    try:
        assert "admins can" in autoreply(fake, "on", permissions=1024 | 2048)
        assert "now a question channel" in autoreply(fake, "on")
        assert seed_service.state.is_autoreply("discord", str(CHANNEL_ID), DISCORD_TENANT)
        mark = fake.mark()
        for text in NOT_QUESTIONS[:-2]:
            fake.dispatch("MESSAGE_CREATE", fake.message_payload(text))
        fake.dispatch("MESSAGE_CREATE", fake.message_payload(QUESTION, author=OTHER_BOT))
        question = fake.message_payload(QUESTION)
        fake.dispatch("MESSAGE_CREATE", question)
        started = fake.wait_request("POST", f"/channels/{CHANNEL_ID}/messages/{question['id']}/threads", mark)[0]
        assert started.body["name"] == QUESTION
        answer = fake.wait_request("POST", f"/channels/{question['id']}/messages", mark)[0].body
        assert "[1]" in text_of(answer) and answer["allowed_mentions"]["parse"] == []
        # Only the one question started a thread or got a message; the chatter and the bot got nothing.
        assert len(fake.find("POST", "/threads", mark)) == 1
        assert [r for r in fake.find("POST", "/messages", mark) if r.path == f"/channels/{CHANNEL_ID}/messages"] == []
        # The thread is the conversation: its history holds the question for follow-ups there.
        assert seed_service.state.history(f"discord:{question['id']}:{question['id']}", DISCORD_TENANT) == [QUESTION]
        assert "no longer a question channel" in autoreply(fake, "off")
        mark = fake.mark()
        fake.dispatch("MESSAGE_CREATE", fake.message_payload(QUESTION))
        mention = fake.message_payload(f"<@{BOT_ID}> {QUESTION}", mentions=[BOT_USER])
        fake.dispatch("MESSAGE_CREATE", mention)  # a mention still works, and comes after
        fake.wait_request("POST", f"/channels/{CHANNEL_ID}/messages", mark)
        assert fake.find("POST", "/threads", mark) == []
    finally:
        bot.close()


def test_discord_falls_back_to_a_reply_when_it_may_not_start_a_thread(
    forum_fake: ForumFake, seed_service: Service
) -> None:
    fake = forum_fake
    seed_service.state.set_autoreply("discord", str(CHANNEL_ID), True, "discord:mod", DISCORD_TENANT)
    bot = start_bot(fake, seed_service)
    try:
        fake.fail_next.append(("/threads", 403))
        question = fake.message_payload(QUESTION)
        fake.dispatch("MESSAGE_CREATE", question)
        path = f"/channels/{CHANNEL_ID}/messages"
        reply = fake.wait_for(lambda: [r.body for r in fake.find("POST", path) if r.path == path], what="the answer")[0]
        assert fake.count("POST", "/threads", status=403) == 1
        assert str(reply["message_reference"]["message_id"]) == question["id"] and "[1]" in text_of(reply)
    finally:
        bot.close()


def test_discord_forum_marked_by_name_answers_each_new_post(
    forum_fake: ForumFake, seed_service: Service, errors: ErrorLog
) -> None:
    fake = forum_fake
    bot = start_bot(fake, seed_service)
    try:

        def post(post_id: int, title: str, body: str, author: dict[str, Any] = HUMAN) -> None:
            fake.dispatch("THREAD_CREATE", {**fake.forum_post(post_id, title), "newly_created": True})
            starter = fake.message_payload(body, channel_id=post_id, author=author)
            starter["id"] = str(post_id)  # a forum post's first message has the post's id
            fake.dispatch("MESSAGE_CREATE", starter)

        # Not marked yet: a new post is left alone.
        post(POST_ID, QUESTION, "Asking for the match report.")
        # The bot reads the mark in a worker thread; on a loaded machine that read could come after
        # the mark below is set, and the unmarked post would then be answered. Let it finish first.
        time.sleep(1.0)
        assert "now a question channel" in autoreply(fake, "on", channel=FORUM_ID)
        assert seed_service.state.is_autoreply("discord", str(FORUM_ID), DISCORD_TENANT)
        mark = fake.mark()
        post(POST_ID + 1, "Derby thoughts", "Great match last night everyone")  # not a question
        post(POST_ID + 2, QUESTION, "Asking for the match report.", author=OTHER_BOT)  # a bot's post
        post(POST_ID + 3, QUESTION, "Asking for the match report.")  # the title is the question
        answer = fake.wait_request("POST", f"/channels/{POST_ID + 3}/messages", mark)[0].body
        assert "[1]" in text_of(answer) and str(answer["message_reference"]["message_id"]) == str(POST_ID + 3)
        assert answer["allowed_mentions"]["parse"] == []
        post(POST_ID + 4, "Referee", QUESTION)  # the body is the question
        fake.wait_request("POST", f"/channels/{POST_ID + 4}/messages", mark)
        sent = [r.path for r in fake.find("POST", "/messages", mark)]
        assert sent == [f"/channels/{POST_ID + 3}/messages", f"/channels/{POST_ID + 4}/messages"]
        assert fake.find("POST", "/threads", mark) == []  # a forum post is already a thread
        assert not fake.find("POST", f"/channels/{POST_ID}/messages")
    finally:
        bot.close()


def test_discord_autoreply_command_is_registered(forum_fake: ForumFake, seed_service: Service) -> None:
    bot = start_bot(forum_fake, seed_service)
    try:
        sync = forum_fake.find("PUT", f"/guilds/{GUILD_ID}/commands")[0].body
        commands = {c["name"]: c for c in sync}
        options = {o["name"]: o for o in commands["autoreply"]["options"]}
        assert [c["value"] for c in options["mode"]["choices"]] == ["on", "off", "status"]
        assert {0, 15} <= set(options["channel"]["channel_types"])  # text and forum (news, media too)
        assert "gaps" in commands
    finally:
        bot.close()


def test_discord_status_reads_the_stored_mark(forum_fake: ForumFake, seed_service: Service) -> None:
    seed_service.state.set_autoreply("discord", str(CHANNEL_ID), True, "discord:mod", DISCORD_TENANT)
    bot = start_bot(forum_fake, seed_service)
    try:
        assert "This is a question channel" in autoreply(forum_fake, "status")
        assert "not a question channel" in autoreply(forum_fake, "status", channel=FORUM_ID)
    finally:
        bot.close()


def test_discord_question_channel_tells_a_queued_asker_their_place_in_the_thread(
    forum_fake: ForumFake, seed_service: Service
) -> None:
    """With every retrieval worker busy, the "#1 in line" notice goes into the new thread, beside
    the answer to come, not into the question channel."""
    fake = forum_fake
    seed_service.state.set_autoreply("discord", str(CHANNEL_ID), True, "discord:mod", DISCORD_TENANT)
    bot = start_bot(fake, seed_service)
    pool = seed_service.pool
    gate = threading.Event()
    busy = [threading.Thread(target=pool.run, args=(lambda: gate.wait(30),)) for _ in range(pool.workers)]
    try:
        for worker in busy:
            worker.start()
        deadline = time.monotonic() + 10
        while pool.outstanding < pool.workers and time.monotonic() < deadline:
            time.sleep(0.01)
        assert pool.outstanding == pool.workers, "the retrieval workers never all got busy"
        mark = fake.mark()
        question = fake.message_payload(QUESTION)
        fake.dispatch("MESSAGE_CREATE", question)
        in_thread = f"/channels/{question['id']}/messages"
        notice = fake.wait_request("POST", in_thread, mark)[0].body
        assert "#1 in line" in text_of(notice) and notice["allowed_mentions"]["parse"] == []
        gate.set()
        answer = fake.wait_for(lambda: [r.body for r in fake.find("POST", in_thread, mark)][1:], what="the answer")[0]
        assert "[1]" in text_of(answer)
        assert [r for r in fake.find("POST", "/messages", mark) if r.path == f"/channels/{CHANNEL_ID}/messages"] == []
    finally:
        gate.set()
        for worker in busy:
            worker.join(5)
        bot.close()


# The same tests over the embedded library and the cluster backend (PostgreSQL + Qdrant).
pytestmark = pytest.mark.backends("embedded", "cluster")
