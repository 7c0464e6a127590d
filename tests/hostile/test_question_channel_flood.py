"""Issue 32, probe 9: a Discord question channel flooded by one user, and posts by a webhook.
The rate limit is spent before any public side effect, so a question over it opens no thread
and gets no notice in the channel; a webhook's post is never answered. Through the real
discord.py client against the fake (which starts a thread for ``POST …/threads``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from bot.app import add_features
from bot.limits import LimitSettings
from bot.service import Service
from bot.state.store import BotState, state_location
from retrieval.backend import Backend
from retrieval.library import Library
from tests.bot.test_autoreply import ForumFake
from tests.bot.test_discord import start_bot, text_of
from tests.fakes.discord_fake import CHANNEL_ID, GUILD_ID, restored_endpoints

TENANT = f"discord:{GUILD_ID}"
QUESTION = "what did Mourinho say about the referee?"
BURST = 3
FLOOD = 15
READER = {"id": "900000000000000401", "username": "reader2", "discriminator": "0", "global_name": "R2", "avatar": None}
HOOK_ID = "900000000000000450"
# A webhook's post: its author is the webhook (no "bot" flag on Discord's payload), no member.
HOOK = {"id": HOOK_ID, "username": "Announcements", "discriminator": "0000", "avatar": None}


@pytest.fixture
def fake() -> Iterator[ForumFake]:
    started = ForumFake()
    started.start()
    try:
        with restored_endpoints():
            yield started
    finally:
        started.stop()


@pytest.fixture
def limited(seed_library: Library) -> Iterator[Service]:
    """The service over the seed article with a small burst per user (and room per channel),
    its fake's channel marked as a question channel."""
    limits = LimitSettings(user_burst=BURST, user_per_minute=0.5, channel_burst=100, channel_per_minute=600)
    state = BotState(state_location(seed_library.data_dir, Backend()))
    service = add_features(Service(seed_library, state, limits))
    service.state.set_autoreply("discord", str(CHANNEL_ID), True, "discord:mod", TENANT)
    yield service
    service.state.close()


def answered(fake: ForumFake, start: int) -> dict[str, dict[str, Any]]:
    """{channel id: the body} of every cited answer Byline posted since ``start``."""
    posts = fake.find("POST", "/messages", start)
    return {r.path.split("/")[2]: r.body for r in posts if "[1]" in text_of(r.body)}


def settled(fake: ForumFake, sentinel: dict[str, Any], start: int) -> None:
    """Waits until a later question (another user's) is answered, then a little more, so that
    every message dispatched before it has been handled (or left alone)."""
    fake.wait_for(lambda: sentinel["id"] in answered(fake, start), what="the later question's answer")
    time.sleep(1.0)


def test_a_flood_opens_no_more_threads_than_it_gets_answers(fake: ForumFake, limited: Service) -> None:
    bot = start_bot(fake, limited)
    try:
        mark = fake.mark()
        flood = [fake.message_payload(f"{QUESTION} ({n})") for n in range(FLOOD)]
        for message in flood:
            fake.dispatch("MESSAGE_CREATE", message)
        fake.wait_for(lambda: len(answered(fake, mark)) >= BURST, what="the first answers")
        sentinel = fake.message_payload(QUESTION, author=READER)
        fake.dispatch("MESSAGE_CREATE", sentinel)
        settled(fake, sentinel, mark)
        threads = fake.find("POST", "/threads", mark)
        answers = answered(fake, mark)
        flood_ids = {m["id"] for m in flood}
        assert len([a for a in answers if a in flood_ids]) == BURST, answers.keys()
        assert len(threads) <= len(answers), (len(threads), len(answers))
        # Every thread holds an answer, and no question over the limit got anything in the channel
        # (no "you're asking fast"; a "you're #1 in line" for an admitted one is fine).
        assert {t.path.split("/")[4] for t in threads} <= set(answers)
        in_channel = f"/channels/{CHANNEL_ID}/messages"
        notices = [r.body for r in fake.find("POST", in_channel, mark) if r.path == in_channel]
        assert all(str(n["message_reference"]["message_id"]) in answers for n in notices), notices
        assert not any("asking fast" in text_of(n) for n in notices), notices
    finally:
        bot.close()


def test_a_webhook_post_is_never_answered(fake: ForumFake, limited: Service) -> None:
    bot = start_bot(fake, limited)
    try:
        mark = fake.mark()
        hooked = fake.message_payload(QUESTION, author=HOOK, guild=False)
        hooked |= {"guild_id": str(GUILD_ID), "webhook_id": HOOK_ID}
        fake.dispatch("MESSAGE_CREATE", hooked)
        sentinel = fake.message_payload(QUESTION, author=READER)
        fake.dispatch("MESSAGE_CREATE", sentinel)
        settled(fake, sentinel, mark)
        assert hooked["id"] not in answered(fake, mark)
        assert [r.path for r in fake.find("POST", hooked["id"], mark)] == []
        assert len(fake.find("POST", "/threads", mark)) == 1  # the sentinel's only
    finally:
        bot.close()
