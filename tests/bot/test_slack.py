"""The Slack adapter, end to end: the real slack-bolt app over real HTTP and websockets on
127.0.0.1, talking to the fake Slack in ``slack_fake``; plus the Block Kit limits."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.delivery import DeliveryError
from bot.limits import LimitSettings
from bot.platforms.slack.app import SlackAdapter, SlackPoster, SlackSetupError, check_settings, make_client, run
from bot.platforms.slack.render import BLOCK_LIMIT, SECTION_LIMIT, escape, render
from bot.replies import AnswerReply, DigestReply, TextReply
from bot.service import Command, Service
from bot.state.store import BotState
from retrieval.library import Library
from retrieval.models import Answer, AnswerSpan, Article, ArticleDraft, Citation, Digest, DigestStory
from tests.fakes.slack_fake import BOT_USER, Call, FakeSlack, FakeSocketMode
from tests.platform_helpers import SECRET, Bolt, failing_on_logged_errors, settings_for

QUESTION = "what did Mourinho say?"


@pytest.fixture(autouse=True)
def no_handler_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    with failing_on_logged_errors(caplog, ("slack_bolt", "byline")):
        yield


@pytest.fixture
def fake(slack: FakeSlack) -> FakeSlack:
    """This module's name for the shared fake Slack (``conftest.slack``), which ``bolt`` talks to."""
    return slack


def mention(text: str, ts: str, channel: str = "C1", user: str = "U1", **extra: Any) -> dict[str, Any]:
    return {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    } | extra


def message(text: str, ts: str, channel: str = "C1", user: str = "U1", **extra: Any) -> dict[str, Any]:
    event = {"type": "message", "user": user, "text": text, "ts": ts, "channel": channel, "event_ts": ts}
    return event | {"channel_type": "channel"} | extra


def posts(fake: FakeSlack, channel: str) -> list[Call]:
    return [c for c in fake.calls_to("chat.postMessage") if c.params["channel"] == channel]


def block_types(call: Call) -> list[str]:
    return [block["type"] for block in call.params["blocks"]]


def without_related(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks but the related questions, which go under the answer's buttons (test_related.py)."""
    return [block for block in blocks if not block.get("block_id", "").startswith("byline_related")]


def all_text(params: dict[str, Any]) -> str:
    return json.dumps(params, ensure_ascii=False)


# -- request verification ------------------------------------------------------------------


def test_unsigned_wrongly_signed_and_stale_requests_get_401_and_run_nothing(bolt: Bolt) -> None:
    bad = mention(QUESTION, "1700000001.000100", channel="CBAD")
    assert bolt.event(bad, secret=None)[0] == 401
    assert bolt.event(bad, secret="not-the-secret")[0] == 401
    assert bolt.event(bad, age=6 * 60)[0] == 401
    # A good request after the bad ones: once its reply is in, the bad ones would have been too.
    assert bolt.event(mention(QUESTION, "1700000001.000200", channel="CGOOD"))[0] == 200
    bolt.fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CGOOD")
    assert not [c for c in bolt.fake.calls if "CBAD" in all_text(c.params)]


def test_url_verification_answers_the_challenge(bolt: Bolt) -> None:
    status, body = bolt.post(
        json.dumps({"type": "url_verification", "challenge": "abc123", "token": "x"}), "application/json"
    )
    assert status == 200 and "abc123" in body


# -- mentions, threads, DMs ----------------------------------------------------------------


def test_mention_is_answered_in_a_thread_and_follow_ups_need_no_mention(bolt: Bolt) -> None:
    fake, question_ts = bolt.fake, "1700000002.000100"
    assert bolt.event(mention(QUESTION, question_ts)) == (200, "")
    first = fake.wait_call("chat.postMessage")
    assert first.params["channel"] == "C1" and first.params["thread_ts"] == question_ts
    assert "link_names" not in first.params and "link_names" not in first.token
    assert [b["type"] for b in without_related(first.params["blocks"])][-2:] == ["context", "actions"]
    sources = without_related(first.params["blocks"])[-2]["elements"][0]["text"]
    assert sources.startswith("[1] ") and "¶" in sources
    body = [b["text"]["text"] for b in first.params["blocks"] if b["type"] == "section"]
    assert body and "[1]" in body[0]
    buttons = [e["action_id"] for e in without_related(first.params["blocks"])[-1]["elements"]]
    assert buttons == ["byline_passages", "byline_vote_up", "byline_vote_down"]

    # A follow-up in the thread, without a mention, is answered in the thread with its context.
    bolt.event(message("and what did Guardiola say?", "1700000002.000300", thread_ts=question_ts))
    fake.wait_for(lambda calls: len(posts(fake, "C1")) >= 2)
    second = posts(fake, "C1")[1]
    assert second.params["thread_ts"] == question_ts
    history = bolt.adapter.service.state.history(f"slack:C1:{question_ts}", "slack:T0001")
    # Remembered in standalone form, so a follow-up to the follow-up keeps the whole context.
    assert history == [QUESTION, "what did Guardiola say?"]
    assert "Guardiola" in json.dumps(second.params["blocks"])

    # Not answered: a thread Byline is not in, its own and other bots' messages, edits, joins.
    bolt.event(message(QUESTION, "1700000002.000400", thread_ts="1699999999.000001"))
    bolt.event(message(QUESTION, "1700000002.000500", user=BOT_USER, thread_ts=question_ts))
    bolt.event(message(QUESTION, "1700000002.000600", bot_id="BOTHER", thread_ts=question_ts))
    bolt.event(message(QUESTION, "1700000002.000700", subtype="channel_join", thread_ts=question_ts))
    bolt.event(
        {
            "type": "message",
            "subtype": "message_changed",
            "channel": "C1",
            "ts": "1700000002.000800",
            "message": {"text": "edited", "user": "U1", "ts": "1700000002.000100"},
            "channel_type": "channel",
        }
    )
    bolt.event(
        {
            "type": "message",
            "subtype": "message_deleted",
            "channel": "C1",
            "ts": "1700000002.000900",
            "deleted_ts": "1700000002.000100",
            "channel_type": "channel",
        }
    )
    # A mention in the thread is answered once (by app_mention), not twice.
    bolt.event(message(f"<@{BOT_USER}> who won?", "1700000002.001000", thread_ts=question_ts))
    bolt.event(mention("who won?", "1700000002.001000", thread_ts=question_ts))
    fake.wait_for(lambda calls: len(posts(fake, "C1")) >= 3)
    bolt.event(mention("who won the derby?", "1700000002.001100", channel="CLAST"))
    fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CLAST")
    assert len(posts(fake, "C1")) == 3


def test_a_redelivered_event_is_not_answered_twice(bolt: Bolt) -> None:
    retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
    assert bolt.event(mention(QUESTION, "1700000008.000100", channel="CRETRY"), headers=retry)[0] == 200
    bolt.event(mention(QUESTION, "1700000008.000200", channel="CAFTER"))
    bolt.fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CAFTER")
    assert not posts(bolt.fake, "CRETRY")


def test_asking_too_fast_gets_an_ephemeral_notice_in_the_thread(
    seed_library: Library, fake: FakeSlack, tmp_path: Path
) -> None:
    service = Service(seed_library, BotState(tmp_path / "strict.sqlite3"), LimitSettings(user_burst=2))
    adapter = SlackAdapter(service, settings_for(fake, tmp_path))
    served = Bolt(adapter, fake)
    try:
        for i in range(3):
            served.event(mention(QUESTION, f"1700000010.00010{i}", channel="CFAST", user="U9"))
        notice = fake.wait_call("chat.postEphemeral")
        assert notice.params["user"] == "U9" and notice.params["channel"] == "CFAST"
        assert notice.params["thread_ts"].startswith("1700000010.") and "fast" in notice.params["text"]
        fake.wait_for(lambda calls: len(posts(fake, "CFAST")) == 2)
    finally:
        served.server.shutdown()
        adapter.close()
        service.pool.shutdown()
        service.state.close()


def test_run_serves_http_mode_until_stopped(seed_service: Service, fake: FakeSlack, tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    stop = threading.Event()
    thread = threading.Thread(
        target=run, args=(seed_service, settings_for(fake, tmp_path, http_host="127.0.0.1", http_port=port), stop)
    )
    thread.start()
    try:
        body = json.dumps({"type": "url_verification", "challenge": "up", "token": "x"}).encode()
        deadline = time.monotonic() + 30
        while True:  # poll until the server is listening
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{port}/slack/events", data=body, method="POST")
                ts = str(int(time.time()))
                digest = hmac.new(SECRET.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
                request.add_header("Content-Type", "application/json")
                request.add_header("X-Slack-Request-Timestamp", ts)
                request.add_header("X-Slack-Signature", f"v0={digest}")
                with urllib.request.urlopen(request, timeout=5) as response:
                    assert "up" in response.read().decode()
                break
            except urllib.error.URLError:
                assert time.monotonic() < deadline, "the HTTP server never came up"
                time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=20)
    assert not thread.is_alive()


def test_direct_message_is_answered_in_the_dm(bolt: Bolt) -> None:
    bolt.event(message(QUESTION, "1700000003.000100", channel="D1", channel_type="im"))
    reply = bolt.fake.wait_call("chat.postMessage")
    assert reply.params["channel"] == "D1" and not reply.params.get("thread_ts")
    assert "[1]" in all_text(reply.params["blocks"])


def test_slow_answer_shows_eyes_until_the_answer_is_posted(
    seed_service: Service, fake: FakeSlack, tmp_path: Path
) -> None:
    adapter = SlackAdapter(seed_service, settings_for(fake, tmp_path), working_after=0.0)
    served = Bolt(adapter, fake)
    try:
        served.event(mention(QUESTION, "1700000004.000100"))
        fake.wait_call("reactions.remove")
        methods = [
            c.method for c in fake.calls if c.method in {"reactions.add", "chat.postMessage", "reactions.remove"}
        ]
        assert methods == ["reactions.add", "chat.postMessage", "reactions.remove"]
        assert fake.calls_to("reactions.add")[0].params == {
            "channel": "C1",
            "timestamp": "1700000004.000100",
            "name": "eyes",
        }
    finally:
        served.server.shutdown()
        adapter.close()


# -- safety --------------------------------------------------------------------------------

CRAFTED = (
    "Attention <!channel> and <!here>: the striker <@U123> said the club would sign him & pay "
    '"whatever <!everyone> wants". The transfer of the striker to the club was confirmed on Monday.\n\n'
    'The manager <@U123> confirmed the striker transfer to the press, saying "<!channel> it is done".'
)


def test_article_text_never_becomes_a_mention(bolt: Bolt) -> None:
    library = bolt.adapter.service.library
    library.add_drafts(
        [
            ArticleDraft(
                key="crafted",
                title="Striker <!here> transfer",
                text=CRAFTED,
                source="The <@U123> Times",
                url="https://example.com/a?x=1&y=<2>",
                published="2026-11-30",
            )
        ]
    )
    bolt.event(mention("what about the striker transfer to the club?", "1700000005.000100"))
    bolt.fake.wait_call("chat.postMessage")
    names = [
        bolt.command("/search", "striker transfer club"),
        bolt.command("/sources", ""),
        bolt.command("/ask", "striker transfer"),
    ]
    for name in names:
        bolt.response(name)
    sent = [c for c in bolt.fake.calls if c.method == "chat.postMessage" or c.method.startswith("response:")]
    dumped = "".join(all_text(c.params) for c in sent)
    assert "The transfer of the striker to the club was confirmed on Monday." in dumped
    assert "&lt;!channel&gt;" in dumped and "&lt;!here&gt;" in dumped and "&lt;@U123&gt;" in dumped
    assert "<https://example.com/a?x=1&amp;y=%3C2%3E|Striker &lt;!here&gt; transfer>" in dumped
    for live in ("<!channel>", "<!here>", "<!everyone>", "<@U123>", "<2>"):
        assert live not in dumped
    assert all("link_names" not in c.params for c in sent)


def test_escape_and_links_cannot_break_out() -> None:
    assert escape("a & <b> <!here>") == "a &amp; &lt;b&gt; &lt;!here&gt;"


# -- slash commands and buttons ------------------------------------------------------------


def test_each_slash_command(bolt: Bolt) -> None:
    ask = bolt.response(bolt.command("/ask", QUESTION))
    assert ask["response_type"] == "in_channel" and "[1]" in all_text(ask["blocks"])
    private = bolt.response(bolt.command("/ask", f"private {QUESTION}"))
    assert private["response_type"] == "ephemeral" and "[1]" in all_text(private["blocks"])
    empty = bolt.response(bolt.command("/ask", ""))
    assert empty["response_type"] == "ephemeral" and "Usage" in empty["text"]
    search = bolt.response(bolt.command("/search", "Ederson dressing room"))
    assert (
        search["response_type"] == "in_channel"
        and "Top passages" in search["text"]
        and "¶" in all_text(search["blocks"])
    )
    assert "Usage" in bolt.response(bolt.command("/search", ""))["text"]
    sources = bolt.response(bolt.command("/sources", ""))
    assert "Mourinho in dressing-room bust-up" in all_text(sources["blocks"])
    assert "Usage" in bolt.response(bolt.command("/sources", "zero"))["text"]
    help_reply = bolt.response(bolt.command("/byline", "help"))
    assert help_reply["response_type"] == "ephemeral" and "/search" in help_reply["text"]
    assert bolt.response(bolt.command("/byline", ""))["text"] == help_reply["text"]
    assert "Unknown command" in bolt.response(bolt.command("/byline", "frobnicate"))["text"]
    assert "Top passages" in bolt.response(bolt.command("/byline", "search Ederson"))["text"]
    # /digest and /ingest are routed to the service by name (usage or "unknown" until registered).
    for command in ("/digest", "/ingest"):
        assert bolt.response(bolt.command(command, ""))["text"]


def test_acks_never_wait_for_work_even_when_every_worker_is_busy(
    seed_service: Service, fake: FakeSlack, tmp_path: Path
) -> None:
    # A command registered through the service's public extension point that blocks until
    # released, on an adapter with a single worker: later requests must still be acked at once.
    release, started = threading.Event(), threading.Event()

    def slow(args: str, asker: Any) -> TextReply:
        started.set()
        release.wait(30)
        return TextReply("slow done")

    seed_service.register(Command("slow", "/slow", "blocks until released", slow))
    adapter = SlackAdapter(seed_service, settings_for(fake, tmp_path), workers=1)
    served = Bolt(adapter, fake)
    try:
        slow_name = served.command("/byline", "slow")  # returns once bolt has acked with HTTP 200
        assert started.wait(30)
        queued = served.command("/sources", "")  # acked (HTTP 200) while the only worker is busy
        assert served.event(mention(QUESTION, "1700000006.000100")) == (200, "")
        assert not fake.calls_to(f"response:{slow_name}") and not fake.calls_to(f"response:{queued}")
        release.set()
        assert served.response(slow_name)["text"] == "slow done"
        assert "Mourinho" in all_text(served.response(queued))
        fake.wait_call("chat.postMessage", lambda c: c.params.get("thread_ts") == "1700000006.000100")
    finally:
        release.set()
        served.server.shutdown()
        adapter.close()


def test_admins_come_from_byline_slack_admins(bolt: Bolt) -> None:
    bolt.adapter.service.register(
        Command("secret", "/secret", "admins only", lambda a, s: TextReply(f"hi {s.user_id}"), admin_only=True)
    )
    assert "admins can" in bolt.response(bolt.command("/byline", "secret", user="U1"))["text"]
    assert bolt.response(bolt.command("/byline", "secret", user="UADMIN"))["text"] == "hi UADMIN"


def test_show_passages_and_a_changeable_vote(bolt: Bolt) -> None:
    ask = bolt.response(bolt.command("/ask", QUESTION))
    actions = without_related(ask["blocks"])[-1]
    answer_id = actions["elements"][0]["value"]
    shown = bolt.response(bolt.click("byline_passages", answer_id))
    assert shown["response_type"] == "ephemeral" and shown["replace_original"] is False
    assert "¶" in all_text(shown["blocks"]) and "Mourinho" in all_text(shown["blocks"])
    assert "Thanks" in bolt.response(bolt.click("byline_vote_up", answer_id))["text"]
    assert bolt.adapter.service.state.votes(answer_id) == {"U1": 1}
    assert bolt.response(bolt.click("byline_vote_down", answer_id))["response_type"] == "ephemeral"
    assert bolt.adapter.service.state.votes(answer_id) == {"U1": -1}
    assert "expired" in bolt.response(bolt.click("byline_passages", "no-such-answer"))["text"]


# -- limits, posting, platform errors ------------------------------------------------------


def _long_answer(spans: int, length: int) -> Answer:
    citation = Citation(1, 1, "Headline", "Outlet", "https://example.com/x", "2017-12-11", 3)
    words = ("word " * (length // 5)).strip()
    made = [
        AnswerSpan(f"{words} number{i}", "quote" if i % 2 else "sentence", "Jose Mourinho", 1, 1, 3, 0, 1)
        for i in range(spans)
    ]
    return Answer("q", True, made, [citation], text="plain fallback")


def test_oversize_answer_splits_between_spans_across_sections_and_messages() -> None:
    messages = render(AnswerReply(_long_answer(400, 600), "abc"))
    assert len(messages) >= 2
    seen = []
    for sent in messages:
        assert len(sent.blocks) <= BLOCK_LIMIT
        for block in sent.blocks:
            if block["type"] == "section":
                text = block["text"]["text"]
                assert len(text) <= SECTION_LIMIT
                seen += [line for line in text.split("\n") if "number" in line]
    # Every span arrived whole, in order, with its citation marker.
    assert [int(line.split("number")[1].split("”")[0].split(" ")[0]) for line in seen] == list(range(400))
    assert all(line.endswith("[1]") for line in seen)
    assert messages[-1].blocks[-1]["type"] == "actions" and messages[-1].blocks[-2]["type"] == "context"
    # One quote longer than a section is cut between words; the marker stays whole at its end.
    huge = render(AnswerReply(_long_answer(1, 7000), "abc"))[0]
    sections = [b["text"]["text"] for b in huge.blocks if b["type"] == "section"]
    assert len(sections) >= 3 and all(len(s) <= SECTION_LIMIT for s in sections)
    assert sections[-1].endswith("number0 [1]")


def test_poster_splits_retries_429_and_reports_missing_channels(fake: FakeSlack, tmp_path: Path) -> None:
    poster = SlackPoster(make_client(settings_for(fake, tmp_path)))
    assert poster.platform == "slack"
    fake.rate_limits["chat.postMessage"] = 1
    poster.post("CNEWS", AnswerReply(_long_answer(400, 600), "abc"))
    sent = [c for c in fake.calls if c.method == "chat.postMessage"]
    assert sent[0].status == 429 and all(c.status == 200 for c in sent[1:])
    assert len(sent) - 1 == len(render(AnswerReply(_long_answer(400, 600), "abc")))
    with pytest.raises(DeliveryError, match="CGONE.*channel_not_found"):
        poster.post("CGONE", AnswerReply(_long_answer(1, 100), "abc"))


def test_a_reply_to_a_lost_channel_is_logged_clearly(bolt: Bolt, caplog: pytest.LogCaptureFixture) -> None:
    bolt.event(mention(QUESTION, "1700000007.000100", channel="CGONE"))
    bolt.fake.wait_for(lambda calls: any(c.method == "chat.postMessage" and "CGONE" in c.dump() for c in calls))
    bolt.event(mention(QUESTION, "1700000007.000200", channel="CNEXT"))  # still answering afterwards
    bolt.fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CNEXT")
    warnings = [r.getMessage() for r in caplog.records if r.name == "byline.slack" and r.levelno == logging.WARNING]
    assert any("CGONE" in w and "channel_not_found" in w for w in warnings)


def test_digest_renders_escaped_with_citations() -> None:
    article = Article(1, "k", "Derby <!here>", "Outlet", "https://e.com/1", "2017-12-11", "", "2017-12-11")
    citation = Citation(1, 1, "Derby <!here>", "Outlet", "https://e.com/1", "2017-12-11", 2)
    span = AnswerSpan("It was <!channel> chaos", "quote", "Jose Mourinho", 1, 1, 2, 0, 20)
    story = DigestStory("Derby <!here> row", [article], [span], 1)
    digest = Digest("C1", "2017-12-10", "2017-12-11", 1, [story], [citation], header="Daily digest")
    blocks = render(DigestReply(digest))[0].blocks
    dumped = json.dumps(blocks)
    assert "Daily digest" in dumped and "It was &lt;!channel&gt; chaos" in dumped and "<!" not in dumped
    assert blocks[-1]["elements"][0]["text"].startswith("[1] <https://e.com/1|")
    empty = render(DigestReply(Digest("C1", "2017-12-10", "2017-12-11", 0, [], [])))[0]
    assert "Nothing new" in json.dumps(empty.blocks)


# -- start-up and Socket Mode --------------------------------------------------------------


def test_bad_token_and_missing_settings_give_one_line_naming_the_setting(
    seed_service: Service, fake: FakeSlack, tmp_path: Path
) -> None:
    with pytest.raises(SlackSetupError) as raised:
        run(seed_service, settings_for(fake, tmp_path, slack_bot_token="xoxb-bad-token"), threading.Event())
    text = str(raised.value)
    assert "SLACK_BOT_TOKEN" in text and "xoxb-bad-token" not in text and "\n" not in text
    with pytest.raises(SlackSetupError, match="SLACK_APP_TOKEN"):
        check_settings(settings_for(fake, tmp_path, slack_mode="socket", slack_app_token=""))
    with pytest.raises(SlackSetupError, match="SLACK_SIGNING_SECRET"):
        check_settings(settings_for(fake, tmp_path, slack_signing_secret=""))
    with pytest.raises(SlackSetupError, match="SLACK_APP_TOKEN") as raised:
        # The fake has no Socket Mode server here, so apps.connections.open refuses the token.
        run(seed_service, settings_for(fake, tmp_path, slack_mode="socket"), threading.Event())
    assert "xapp-test-token" not in str(raised.value)
    with pytest.raises(SlackSetupError, match="SLACK_API_URL"):
        SlackAdapter(seed_service, settings_for(fake, tmp_path, slack_api_url="http://127.0.0.1:9/api/"))


def test_socket_mode_acks_envelopes_and_answers(seed_service: Service, fake: FakeSlack, tmp_path: Path) -> None:
    fake.socket = FakeSocketMode()
    stop = threading.Event()
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            run(seed_service, settings_for(fake, tmp_path, slack_mode="socket", slack_signing_secret=""), stop)
        except BaseException as error:  # noqa: BLE001 - reported by the test below
            errors.append(error)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        fake.socket.wait_connected()
        assert fake.calls_to("apps.connections.open")[0].token == "xapp-test-token"
        event = {
            "type": "event_callback",
            "team_id": "T0001",
            "api_app_id": "A0001",
            "event_id": "EvS1",
            "event_time": int(time.time()),
            "event": mention(QUESTION, "1700000009.000100"),
        }
        fake.socket.push(
            {"envelope_id": "env-1", "type": "events_api", "accepts_response_payload": False, "payload": event}
        )
        fake.socket.wait_ack("env-1")
        reply = fake.wait_call("chat.postMessage")
        assert reply.params["thread_ts"] == "1700000009.000100" and "[1]" in all_text(reply.params["blocks"])
        # A redelivery (the ack was lost, say) comes in a new envelope with the same event_id.
        redelivery = {"envelope_id": "env-1b", "type": "events_api", "accepts_response_payload": False}
        fake.socket.push(redelivery | {"payload": event, "retry_attempt": 1, "retry_reason": "timeout"})
        fake.socket.wait_ack("env-1b")
        later = event | {"event_id": "EvS2", "event": mention(QUESTION, "1700000009.000200", channel="C2")}
        fake.socket.push({"envelope_id": "env-1c", "type": "events_api", "payload": later})
        fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "C2")
        assert len(posts(fake, "C1")) == 1
        command = {
            "token": "x",
            "team_id": "T0001",
            "channel_id": "C1",
            "user_id": "U1",
            "command": "/sources",
            "text": "",
            "response_url": fake.response_url("sock"),
            "trigger_id": "t",
        }
        fake.socket.push(
            {"envelope_id": "env-2", "type": "slash_commands", "accepts_response_payload": True, "payload": command}
        )
        fake.socket.wait_ack("env-2")
        assert "Mourinho" in all_text(fake.wait_call("response:sock").params)
        answer_id = without_related(reply.params["blocks"])[-1]["elements"][0]["value"]
        click = {
            "type": "block_actions",
            "user": {"id": "U1"},
            "team": {"id": "T0001"},
            "api_app_id": "A0001",
            "channel": {"id": "C1"},
            "trigger_id": "t2",
            "response_url": fake.response_url("sockclick"),
            "actions": [{"type": "button", "action_id": "byline_vote_up", "block_id": "b", "value": answer_id}],
        }
        fake.socket.push({"envelope_id": "env-3", "type": "interactive", "payload": click})
        fake.socket.wait_ack("env-3")
        assert fake.wait_call("response:sockclick").params["response_type"] == "ephemeral"
        assert seed_service.state.votes(answer_id) == {"U1": 1}
    finally:
        stop.set()
        thread.join(timeout=20)
    assert not thread.is_alive() and not errors
