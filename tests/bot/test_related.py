"""Related questions under an answer: through the real bolt app (signed HTTP to the fake Slack), the
real discord.py client (against the fake Discord), the terminal chat and ``byline ask --json``.

A follow-up is only offered when asking it was checked: the harbour fixture has a candidate that
Byline refuses, which must never appear, beside candidates that it answers, which must."""

from __future__ import annotations

import io
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from bot.app import add_features
from bot.cli.main import main
from bot.limits import LimitSettings
from bot.platforms.slack.render import ACTION_SHARE
from bot.platforms.terminal.chat import chat
from bot.replies import AnswerReply
from bot.service import Asker, Service
from bot.state.store import STATE_FILE, BotState
from retrieval.features import related
from retrieval.features.related import candidates, who_question
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from tests.bot.test_discord import bot_posts, callback, custom_ids, followups, mention, start_bot
from tests.bot.test_slack import mention as slack_mention
from tests.fakes.discord_fake import USER_ID, DiscordFake
from tests.fakes.slack_fake import FakeSlack
from tests.platform_helpers import Bolt, ErrorLog, failing_on_logged_errors, serve_bolt, stop_bolt

QUESTION = "what did Mourinho say about the referee?"
GUARDIOLA = "What did Pep Guardiola say?"
UNANSWERABLE = "Who won the Champions League in 2005?"

HARBOUR = """---
title: Harbour bridge opens after ten-year wait
source: The Test Gazette
url: https://example.org/harbour-bridge
published: 2024-03-01
---
Okonkwo was sacked from Okonkwo Marine last year.

"We have waited a decade for this bridge, and today the whole town can cross it," Ellen Dufresne said at the ceremony.

Mayor Ellen Dufresne opened the harbour bridge at Port Avery on Tuesday.

Harbourmaster Tomas Lindqvist was cheered by the crowd when he cut the ribbon at noon.

Nadia Petrova thanked @everyone on the quay.

"The tides here wait for nobody, so the bridge had to be built to last a century," Tomas Lindqvist said.

The bridge cost 40 million pounds and carries two lanes of traffic and a cycle path.
"""
HARBOUR_QUESTION = "What did Ellen Dufresne say?"
# Built from the article by the fact template, and refused when asked (its names are all in it).
REFUSED = "Who was sacked from Okonkwo Marine last year?"
# A speaker candidate and a fact candidate that Byline answers.
ANSWERED = ["What did Tomas Lindqvist say?", "Who opened the harbour bridge at Port Avery on Tuesday?"]


@pytest.fixture(autouse=True)
def no_handler_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    with failing_on_logged_errors(caplog, ("slack_bolt", "byline")):
        yield


@pytest.fixture(scope="module")
def harbour_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    folder = tmp_path_factory.mktemp("harbour")
    (folder / "articles").mkdir()
    (folder / "articles" / "harbour.md").write_text(HARBOUR, encoding="utf-8")
    built = Library.open(folder / "data", embedder)
    built.ingest([folder / "articles"])
    built.close()
    return folder / "data"


@pytest.fixture
def harbour_service(harbour_data_dir: Path, tmp_path: Path, embedder: Embedder) -> Iterator[Service]:
    copy = tmp_path / "harbour"
    shutil.copytree(harbour_data_dir, copy)
    library = Library.open(copy, embedder)
    limits = LimitSettings(user_burst=10_000, channel_burst=10_000)
    service = add_features(Service(library, BotState(copy / STATE_FILE), limits))
    yield service
    service.pool.shutdown()
    service.state.close()
    library.close()


# -- Slack -----------------------------------------------------------------------------------


def related_buttons(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = [b for b in blocks if b["type"] == "actions" and b.get("block_id", "").startswith("byline_related_")]
    return found[0]["elements"] if found else []


def click_related(bolt: Bolt, button: dict[str, Any], user: str, container: dict[str, Any], **payload: Any) -> str:
    """A click as Slack sends it: the message's ts and thread in ``container`` (and ``message``)."""
    name = f"related{time.monotonic_ns()}"
    body = {
        "type": "block_actions", "user": {"id": user}, "team": {"id": "T0001"}, "api_app_id": "A0001",
        "channel": {"id": "C1"}, "trigger_id": "trig", "response_url": bolt.fake.response_url(name),
        "container": {"type": "message", "channel_id": "C1", **container},
        "actions": [{"type": "button", "action_id": button["action_id"], "block_id": "b",
                     "value": button["value"], "action_ts": "1"}],
        **payload,
    }  # fmt: skip
    status, _ = bolt.post(urlencode({"payload": json.dumps(body)}), "application/x-www-form-urlencoded")
    assert status == 200
    return name


def test_slack_answer_offers_related_buttons_and_a_click_answers_in_the_thread(bolt: Bolt) -> None:
    fake, question_ts = bolt.fake, "1700000002.000100"
    bolt.event(slack_mention(QUESTION, question_ts))
    answer = fake.wait_call("chat.postMessage")
    buttons = related_buttons(answer.params["blocks"])
    labels = [b["text"]["text"] for b in buttons]
    assert GUARDIOLA in labels and 1 <= len(labels) <= 3
    assert all(b["text"]["type"] == "plain_text" for b in buttons)
    assert QUESTION.casefold() not in {label.casefold() for label in labels}
    # Under the answer's own buttons, labelled.
    block_ids = [b.get("block_id", "") for b in answer.params["blocks"] if b["type"] == "actions"]
    assert block_ids[0].startswith("byline_answer_") and block_ids[1].startswith("byline_related_")

    guardiola = buttons[labels.index(GUARDIOLA)]
    answer_ts = "1700000000.000001"
    message = {"type": "message", "ts": answer_ts, "thread_ts": question_ts}
    click_related(bolt, guardiola, "U2", {"message_ts": answer_ts, "thread_ts": question_ts}, message=message)
    posted = fake.wait_call("chat.postMessage", lambda c: "Kompany is injured" in json.dumps(c.params))
    assert posted.params["channel"] == "C1" and posted.params["thread_ts"] == question_ts
    blocks = posted.params["blocks"]
    assert blocks[0]["elements"][0]["text"] == f"Asked by <@U2>: “{GUARDIOLA}”"
    text = json.dumps(blocks, ensure_ascii=False)
    assert "Pep Guardiola said:" in text and "[1]" in text and "¶21" in text
    # Its own follow-ups, and none repeating what was just asked.
    assert GUARDIOLA not in [b["text"]["text"] for b in related_buttons(blocks)]
    # The thread goes on from the follow-up: a reply there builds on Guardiola, not the referee.
    history = bolt.adapter.service.state.history(f"slack:C1:{question_ts}", "slack:T0001")
    assert history[-1].casefold() == GUARDIOLA.casefold()


def test_slack_related_click_under_a_private_answer_stays_private(bolt: Bolt) -> None:
    private = bolt.response(bolt.command("/ask", f"private {QUESTION}", user="U1"))
    assert private["response_type"] == "ephemeral"
    guardiola = next(b for b in related_buttons(private["blocks"]) if b["text"]["text"] == GUARDIOLA)
    name = click_related(bolt, guardiola, "U1", {"message_ts": "1700000000.000009", "is_ephemeral": True})
    reply = bolt.response(name)
    assert reply["response_type"] == "ephemeral"
    text = json.dumps(reply["blocks"], ensure_ascii=False)
    assert "Kompany is injured" in text and "[1]" in text
    # Still the asker's alone, so it can be shared like any private answer.
    main_buttons = next(b for b in reply["blocks"] if b.get("block_id", "").startswith("byline_answer_"))
    assert main_buttons["elements"][0]["action_id"] == ACTION_SHARE
    assert not [c for c in bolt.fake.calls if c.method == "chat.postMessage"]

    expired = bolt.response(
        click_related(bolt, {"action_id": "byline_related_0", "value": "0123456789abcdef:0"}, "U1", {})
    )
    assert expired["response_type"] == "ephemeral" and "expired" in expired["text"]


def test_a_candidate_byline_refuses_is_never_offered(
    harbour_service: Service, slack: FakeSlack, tmp_path: Path
) -> None:
    library = harbour_service.library
    # The fixture does what it is for: for Ellen Dufresne's answer the refused candidate is the
    # first fact built, and Byline really refuses it; for Tomas Lindqvist's, an answered fact
    # comes first.
    assert list(candidates(library, library.ask(HARBOUR_QUESTION)))[:2] == [ANSWERED[0], REFUSED]
    assert list(candidates(library, library.ask(ANSWERED[0])))[:2] == [HARBOUR_QUESTION, ANSWERED[1]]
    assert not library.ask(REFUSED).answered
    assert all(library.ask(question).answered for question in ANSWERED)

    bolt = serve_bolt(harbour_service, slack, tmp_path)
    try:
        bolt.event(slack_mention(HARBOUR_QUESTION, "1700000003.000100"))
        answer = slack.wait_call("chat.postMessage")
        assert [b["text"]["text"] for b in related_buttons(answer.params["blocks"])] == [ANSWERED[0]]
        assert REFUSED not in json.dumps(answer.params)
        # It was asked, not skipped: its refusal is what the check remembered.
        remembered = {question: found.usable for (_, _, question), found in related._cache[library].items()}
        assert remembered[REFUSED] is False

        bolt.event(slack_mention(ANSWERED[0], "1700000003.000200"))
        other = slack.wait_call("chat.postMessage", lambda c: c.params.get("thread_ts") == "1700000003.000200")
        assert [b["text"]["text"] for b in related_buttons(other.params["blocks"])] == [HARBOUR_QUESTION, ANSWERED[1]]
    finally:
        stop_bolt(bolt)


def test_a_refused_answer_offers_no_related_questions(bolt: Bolt) -> None:
    fake = bolt.fake
    bolt.event(slack_mention(QUESTION, "1700000004.000100"))
    answered = fake.wait_call("chat.postMessage")
    assert related_buttons(answered.params["blocks"])
    bolt.event(slack_mention(UNANSWERABLE, "1700000005.000100"))
    refused = fake.wait_call("chat.postMessage", lambda c: c.params.get("thread_ts") == "1700000005.000100")
    assert "Closest passages" in json.dumps(refused.params["blocks"])
    assert not related_buttons(refused.params["blocks"])
    assert "Related questions" not in json.dumps(refused.params["blocks"])


def test_a_mention_in_the_article_never_reaches_a_related_question(harbour_service: Service) -> None:
    library = harbour_service.library
    mentioning = "Nadia Petrova thanked @everyone on the quay."
    assert who_question(mentioning) == "Who thanked @everyone on the quay?"  # built, then dropped
    for question in [HARBOUR_QUESTION, "How much did the bridge cost?"]:
        found = list(candidates(library, library.ask(question)))
        assert found and not any(c for c in found if "@" in c or "<" in c or ">" in c)
        reply = harbour_service.ask(question, Asker("terminal", "local"))
        assert isinstance(reply, AnswerReply) and reply.answer.related
        assert not any("@" in c for c in reply.answer.related)


# -- byline ask --json -------------------------------------------------------------------------


def test_ask_json_lists_the_related_questions(cli_data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--json", QUESTION]) == 0
    answered = json.loads(capsys.readouterr().out)
    assert GUARDIOLA in answered["related"] and len(answered["related"]) <= 3
    assert main(["ask", "--json", UNANSWERABLE]) == 0
    assert json.loads(capsys.readouterr().out)["related"] == []


# -- the terminal ------------------------------------------------------------------------------


def test_terminal_chat_lists_related_questions_and_takes_a_number(seed_service: Service) -> None:
    out = io.StringIO()
    chat(seed_service, io.StringIO(f"{QUESTION}\n1\n9\n"), out, warm=False)
    printed = out.getvalue()
    related = next(line for line in printed.splitlines() if line.startswith("Related: "))
    assert related.startswith(f"Related: 1) {GUARDIOLA} 2) ")
    after = printed.split(related, 1)[1]
    assert f"(Asking: {GUARDIOLA})" in after
    assert "Pep Guardiola said:" in after and "Kompany is injured" in after and "¶21" in after
    assert "There is no related question 9: type 1 to " in after


# -- Discord -----------------------------------------------------------------------------------


def related_ids(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (c["custom_id"], c["label"])
        for row in body.get("components", [])
        for c in row["components"]
        if c["custom_id"].startswith("byline:related:")
    ]


def test_discord_answer_offers_related_buttons_and_a_click_answers_in_the_channel(
    discord_fake: DiscordFake, seed_service: Service, errors: ErrorLog
) -> None:
    fake = discord_fake
    bot = start_bot(fake, seed_service)
    try:
        mention(fake, QUESTION)
        fake.wait_for(lambda: bot_posts(fake), 30, "the answer")
        answer = bot_posts(fake)[-1]
        related = related_ids(answer)
        assert GUARDIOLA in [label for _, label in related] and len(related) <= 3
        # A row of their own, under Show passages and the votes.
        rows = answer["components"]
        assert any(i.startswith("byline:passages:") for i in custom_ids({"components": rows[:1]}))
        assert all(c["custom_id"].startswith("byline:related:") for c in rows[1]["components"])

        custom_id = next(i for i, label in related if label == GUARDIOLA)
        message = fake.messages[max(fake.messages)]
        click = fake.click(custom_id, message)
        fake.dispatch("INTERACTION_CREATE", click)
        assert callback(fake, click)["type"] == 5  # deferred: "Byline is thinking…"
        body = followups(fake, click)[0]
        assert not body.get("flags", 0) & 64
        assert body["content"] == f"Asked by <@{USER_ID}>"
        assert body["allowed_mentions"]["parse"] == [] and not body["allowed_mentions"].get("users")
        embeds = json.dumps(body["embeds"], ensure_ascii=False)
        assert body["embeds"][0]["title"] == GUARDIOLA
        assert "Kompany is injured" in embeds and "[1]" in embeds and "¶21" in embeds
        assert GUARDIOLA not in [label for _, label in related_ids(body)]
    finally:
        bot.close()


def test_discord_related_click_under_a_private_answer_stays_private(
    discord_fake: DiscordFake, seed_service: Service, errors: ErrorLog
) -> None:
    fake = discord_fake
    bot = start_bot(fake, seed_service)
    try:
        options = [{"name": "question", "type": 3, "value": QUESTION}, {"name": "private", "type": 5, "value": True}]
        ask = fake.command("ask", options)
        fake.dispatch("INTERACTION_CREATE", ask)
        private = followups(fake, ask)[0]
        assert private["flags"] & 64
        custom_id = next(i for i, label in related_ids(private) if label == GUARDIOLA)
        click = fake.click(custom_id, fake.messages[max(fake.messages)])
        fake.dispatch("INTERACTION_CREATE", click)
        assert callback(fake, click)["data"]["flags"] & 64
        body = followups(fake, click)[0]
        assert body["flags"] & 64 and "Kompany is injured" in json.dumps(body["embeds"])
        assert custom_ids(body)[0].startswith("byline:share:")

        unknown = "byline:related:0:0123456789abcdef"
        expired = fake.click(unknown, fake.button_message(unknown))
        fake.dispatch("INTERACTION_CREATE", expired)
        notice = followups(fake, expired)[0]
        assert notice["flags"] & 64 and "expired" in notice["content"]
    finally:
        bot.close()


# The same tests over the embedded library and the cluster backend (PostgreSQL + Qdrant).
pytestmark = pytest.mark.backends("embedded", "cluster")
