"""The Discord adapter: the real discord.py client over real sockets against tests/fakes/discord_fake.py."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import discord
import pytest

from bot.delivery import DeliveryError
from bot.platforms.discord.app import BylineClient, DiscordStartError, configure_endpoints, invite_url, run, run_client
from bot.platforms.discord.render import (
    CONTENT_LIMIT,
    DESCRIPTION_LIMIT,
    EMBEDS_PER_MESSAGE,
    MESSAGE_EMBED_LIMIT,
    message_size,
    render,
)
from bot.replies import AnswerReply, DigestReply, TextReply
from bot.service import Service
from bot.settings import Settings
from bot.state.store import STATE_FILE, BotState
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from retrieval.models import Answer, AnswerSpan, Article, ArticleDraft, Citation, Digest, DigestStory
from tests.fakes.discord_fake import (
    APP_ID,
    BOT_ID,
    BOT_USER,
    CHANNEL_ID,
    DM_CHANNEL_ID,
    GOOD_TOKEN,
    GUILD_ID,
    HUMAN,
    OTHER_BOT,
    THREAD_ID,
    DiscordFake,
)
from tests.platform_helpers import ErrorLog

QUESTION = "what did Mourinho say about the referee?"


# The fake server's tenant (bot/tenancy.py): the rows of its questions carry it.
TENANT = f"discord:{GUILD_ID}"


@dataclass
class Bot:
    client: BylineClient
    stop: threading.Event
    thread: threading.Thread
    failures: list[BaseException] = field(default_factory=list)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(15)
        assert not self.thread.is_alive(), "the Discord client did not stop"


@pytest.fixture
def fake(discord_fake: DiscordFake) -> DiscordFake:
    """This module's name for the shared fake Discord (``conftest.discord_fake``)."""
    return discord_fake


def settings_for(fake: DiscordFake, data_dir: Path, **overrides: Any) -> Settings:
    base = Settings(
        data_dir=data_dir,
        seeds_dir=data_dir / "no-seeds",
        discord_token=GOOD_TOKEN,
        discord_guild_id=str(GUILD_ID),
        discord_api_url=fake.api_url,
        discord_gateway_url=fake.gateway_url,
    )
    return replace(base, **overrides)


def start_bot(fake: DiscordFake, service: Service, settings: Settings | None = None) -> Bot:
    settings = settings or settings_for(fake, service.library.data_dir)
    configure_endpoints(settings)
    client = BylineClient(service, settings, guild_ready_timeout=0.05)
    stop = threading.Event()
    bot = Bot(client, stop, threading.Thread(target=lambda: None))

    def serve() -> None:
        try:
            asyncio.run(run_client(client, settings.discord_token, stop))
        except BaseException as error:  # reported by the test that waits on the bot
            bot.failures.append(error)

    bot.thread = threading.Thread(target=serve, name="discord-client", daemon=True)
    bot.thread.start()
    fake.wait_for(lambda: client.is_ready() or bot.failures, 30, "the client to be ready")
    assert not bot.failures, bot.failures
    return bot


@pytest.fixture
def bot(fake: DiscordFake, seed_service: Service, errors: ErrorLog) -> Iterator[Bot]:
    running = start_bot(fake, seed_service)
    yield running
    running.close()


def bot_posts(fake: DiscordFake, start: int = 0, channel: int = CHANNEL_ID) -> list[Any]:
    return [r.body for r in fake.find("POST", f"/channels/{channel}/messages", start)]


def custom_ids(body: dict[str, Any]) -> list[str]:
    return [c["custom_id"] for row in body.get("components", []) for c in row["components"]]


def mention(fake: DiscordFake, text: str, **kwargs: Any) -> dict[str, Any]:
    message = fake.message_payload(f"<@{BOT_ID}> {text}", mentions=[BOT_USER], **kwargs)
    fake.dispatch("MESSAGE_CREATE", message)
    return message


def callback(fake: DiscordFake, interaction: dict[str, Any]) -> Any:
    return fake.wait_request("POST", f"/interactions/{interaction['id']}/")[0].body


def followups(fake: DiscordFake, interaction: dict[str, Any], count: int = 1) -> list[Any]:
    return [r.body for r in fake.wait_request("POST", f"/webhooks/{APP_ID}/{interaction['token']}", count=count)]


def text_of(body: dict[str, Any]) -> str:
    return (body.get("content") or "") + "".join(
        e.get("title", "") + e.get("description", "") for e in body.get("embeds", [])
    )


def assert_no_pings(fake: DiscordFake) -> None:
    """Every message the bot sent anywhere carried allowed_mentions that ping no one."""
    sent = [
        r
        for r in fake.requests
        if r.method in ("POST", "PATCH") and ("/messages" in r.path or "/webhooks/" in r.path or "/callback" in r.path)
    ]
    assert sent
    for request in sent:
        body = request.body or {}
        mentions = (
            (body.get("data") or {}).get("allowed_mentions")
            if "/callback" in request.path
            else body.get("allowed_mentions")
        )
        if "/callback" in request.path and body.get("type") == 5:
            continue  # a defer sends no message text
        assert mentions is not None and mentions["parse"] == [], (request.path, body)
        assert not mentions.get("replied_user"), request.path


# -- start-up ---------------------------------------------------------------------------------


def test_login_syncs_commands_to_the_guild_with_minimal_intents(fake: DiscordFake, bot: Bot) -> None:
    sync = fake.find("PUT", f"/applications/{APP_ID}/guilds/{GUILD_ID}/commands")
    assert len(sync) == 1
    commands = {c["name"]: c for c in sync[0].body}
    assert set(commands) == {
        "ask",
        "search",
        "sources",
        "help",
        "digest",
        "ingest",
        "remove",
        "autoreply",
        "gaps",
        "scope",
        "quotes",
        "reactions",
        "alerts",
        "verify",
    }
    for command in commands.values():
        assert command["description"]
        for option in command.get("options", []):
            assert option["description"], (command["name"], option["name"])
            for sub_option in option.get("options", []):
                assert sub_option["description"], (command["name"], option["name"], sub_option["name"])
    assert {o["name"] for o in commands["digest"]["options"]} == {"now", "since", "subscribe", "unsubscribe", "status"}
    assert {o["name"] for o in commands["ask"]["options"]} == {"question", "private"}
    intents = fake.identify_payloads[0]["intents"]
    assert intents == discord.Intents(guilds=True, guild_messages=True, dm_messages=True, message_content=True).value
    assert bot.client.user is not None and bot.client.user.id == BOT_ID


def test_global_sync_without_guild_id(fake: DiscordFake, seed_service: Service, errors: ErrorLog) -> None:
    running = start_bot(fake, seed_service, settings_for(fake, seed_service.library.data_dir, discord_guild_id=""))
    try:
        assert fake.find("PUT", f"/applications/{APP_ID}/commands")
        assert not fake.find("PUT", "/guilds/")
    finally:
        running.close()


def test_bad_token_is_one_line_naming_the_setting_never_the_value(
    fake: DiscordFake, seed_service: Service, errors: ErrorLog
) -> None:
    wrong = "wrong-token-that-must-never-be-printed"
    settings = settings_for(fake, seed_service.library.data_dir, discord_token=wrong)
    with pytest.raises(DiscordStartError) as raised:
        run(seed_service, settings, threading.Event())
    message = str(raised.value)
    assert "DISCORD_TOKEN" in message and wrong not in message and "\n" not in message


def test_every_command_family_is_synced_from_its_cog(fake: DiscordFake, bot: Bot) -> None:
    """The cogs (bot/platforms/discord/cogs/) give Discord the same commands as ever: the top-level
    commands, and the three groups with their subcommands, in one guild sync."""
    (synced,) = fake.find("PUT", f"/applications/{APP_ID}/guilds/{GUILD_ID}/commands")
    commands = {command["name"]: command for command in synced.body}
    assert set(commands) == {
        *("ask", "search", "sources", "help", "ingest", "remove", "autoreply", "gaps"),
        *("quotes", "reactions", "verify", "digest", "scope", "alerts"),
    }
    subcommands = {
        name: sorted(option["name"] for option in commands[name]["options"]) for name in ("digest", "scope", "alerts")
    }
    assert subcommands == {
        "digest": ["now", "since", "status", "subscribe", "unsubscribe"],
        "scope": ["add", "clear", "show"],
        "alerts": ["add", "remove", "show"],
    }
    ask_options = {option["name"]: option for option in commands["ask"]["options"]}
    assert ask_options["question"]["required"] and ask_options["question"]["max_length"] == 1000
    assert not ask_options["private"].get("required", False)


def test_invite_url_asks_for_exactly_the_scopes_and_permissions_used() -> None:
    url = invite_url(APP_ID)
    assert "scope=bot+applications.commands" in url
    assert "permissions=309237730304" in url  # 274877991936 + Create Public Threads (question channels)


# -- messages ---------------------------------------------------------------------------------


def test_mention_gets_a_cited_embed_with_buttons_and_typing(fake: DiscordFake, bot: Bot) -> None:
    question = mention(fake, QUESTION)
    fake.wait_request("POST", f"/channels/{CHANNEL_ID}/messages")
    assert fake.find("POST", f"/channels/{CHANNEL_ID}/typing")
    body = bot_posts(fake)[0]
    assert str(body["message_reference"]["message_id"]) == question["id"]
    embed = body["embeds"][0]
    assert embed["title"] == QUESTION
    assert "[1]" in embed["description"] and "**Sources**" in embed["description"]
    assert "Mourinho" in embed["description"]
    ids = custom_ids(body)
    assert any(i.startswith("byline:passages:") for i in ids)
    assert {i.split(":")[2] for i in ids if i.startswith("byline:vote:")} == {"up", "down"}
    assert_no_pings(fake)


def test_reply_follow_up_without_mention_uses_the_earlier_question(
    fake: DiscordFake, bot: Bot, seed_service: Service
) -> None:
    question = mention(fake, QUESTION)
    fake.wait_request("POST", f"/channels/{CHANNEL_ID}/messages")
    answer = fake.messages[max(fake.messages)]
    follow_up = fake.message_payload("and what did he say about luck?", reference=answer)
    fake.dispatch("MESSAGE_CREATE", follow_up)
    fake.wait_request("POST", f"/channels/{CHANNEL_ID}/messages", count=2)
    second = bot_posts(fake)[1]
    assert str(second["message_reference"]["message_id"]) == follow_up["id"]
    assert "luck" in text_of(second).lower()
    key = f"discord:{CHANNEL_ID}:{question['id']}"
    # Remembered in standalone form ("he" resolved), so the chain keeps its whole context.
    assert seed_service.state.history(key, TENANT) == [QUESTION, "what did Mourinho say about luck?"]
    # A third turn, replying to the second answer, stays in the same conversation.
    reply_to_second = fake.message_payload("who is the referee?", reference=fake.messages[max(fake.messages)])
    fake.dispatch("MESSAGE_CREATE", reply_to_second)
    fake.wait_request("POST", f"/channels/{CHANNEL_ID}/messages", count=3)
    assert seed_service.state.history(key, TENANT)[-1] == "who is the referee?"


def test_follow_up_in_byline_thread_needs_no_mention(fake: DiscordFake, bot: Bot, seed_service: Service) -> None:
    fake.dispatch("MESSAGE_CREATE", fake.message_payload(QUESTION, channel_id=THREAD_ID))
    fake.wait_request("POST", f"/channels/{THREAD_ID}/messages")
    fake.dispatch("MESSAGE_CREATE", fake.message_payload("and about luck?", channel_id=THREAD_ID))
    fake.wait_request("POST", f"/channels/{THREAD_ID}/messages", count=2)
    assert seed_service.state.history(f"discord:{THREAD_ID}:{THREAD_ID}", TENANT) == [
        QUESTION,
        "what did Mourinho say about luck?",
    ]


def test_plain_channel_chatter_is_ignored_and_bots_are_ignored(fake: DiscordFake, bot: Bot) -> None:
    fake.dispatch("MESSAGE_CREATE", fake.message_payload(QUESTION))  # no mention, no reply
    fake.dispatch(
        "MESSAGE_CREATE", fake.message_payload(f"<@{BOT_ID}> {QUESTION}", author=OTHER_BOT, mentions=[BOT_USER])
    )
    fake.dispatch(
        "MESSAGE_CREATE", fake.message_payload(f"<@{BOT_ID}> {QUESTION}", author=BOT_USER, mentions=[BOT_USER])
    )
    last = mention(fake, "who threw milk?")
    fake.wait_request("POST", f"/channels/{CHANNEL_ID}/messages")
    posts = bot_posts(fake)
    assert len(posts) == 1 and str(posts[0]["message_reference"]["message_id"]) == last["id"]


def test_direct_message_is_answered_without_mention(fake: DiscordFake, bot: Bot) -> None:
    fake.dispatch("MESSAGE_CREATE", fake.message_payload(QUESTION, channel_id=DM_CHANNEL_ID, guild=False))
    fake.wait_request("POST", f"/channels/{DM_CHANNEL_ID}/messages")
    body = bot_posts(fake, channel=DM_CHANNEL_ID)[0]
    assert "[1]" in body["embeds"][0]["description"]
    assert body["allowed_mentions"]["parse"] == []


def test_article_with_everyone_and_user_mentions_never_pings(
    fake: DiscordFake, bot: Bot, seed_service: Service
) -> None:
    text = (
        "Club statement on the stadium flood.\n\n"
        "“@everyone must stay away from the north stand and <@123456789012345678> will answer questions @here,” "
        "the groundskeeper Hollis Brandt said on Tuesday.\n\n"
        "The north stand will reopen next week <@&987654321098765432>."
    )
    seed_service.library.add_drafts(
        [
            ArticleDraft(
                key="test:ping",
                title="Flood closes the north stand @everyone",
                text=text,
                source="Test Gazette",
                published="2026-01-02",
            )
        ]
    )
    mention(fake, "what did the groundskeeper say about the north stand?")
    fake.wait_request("POST", f"/channels/{CHANNEL_ID}/messages")
    body = bot_posts(fake)[0]
    # Shown as written (Discord hides the escaping backslash) ...
    assert "\\<@123456789012345678\\>" in text_of(body) and "@\u200beveryone" in text_of(body)
    assert_no_pings(fake)  # ... but never a ping
    interaction = fake.command("search", [{"name": "query", "type": 3, "value": "north stand everyone"}])
    fake.dispatch("INTERACTION_CREATE", interaction)
    assert "north stand" in text_of(followups(fake, interaction)[0])
    assert_no_pings(fake)


# -- slash commands -------------------------------------------------------------------------


def test_ask_defers_then_follows_up_with_the_answer(fake: DiscordFake, bot: Bot, seed_service: Service) -> None:
    interaction = fake.command("ask", [{"name": "question", "type": 3, "value": QUESTION}])
    fake.dispatch("INTERACTION_CREATE", interaction)
    assert callback(fake, interaction) == {"type": 5}
    body = followups(fake, interaction)[0]
    assert not body.get("flags")
    assert "[1]" in body["embeds"][0]["description"]
    assert any(i.startswith("byline:passages:") for i in custom_ids(body))
    assert body["allowed_mentions"]["parse"] == []
    # A reply to the slash answer is a follow-up with the slash question as context.
    answer = fake.messages[max(fake.messages)]
    fake.dispatch("MESSAGE_CREATE", fake.message_payload("and about luck?", reference=answer))
    fake.wait_request("POST", f"/channels/{CHANNEL_ID}/messages")
    assert seed_service.state.history(f"discord:{CHANNEL_ID}:{answer['id']}", TENANT) == [
        QUESTION,
        "what did Mourinho say about luck?",
    ]


def test_private_ask_is_ephemeral_throughout(fake: DiscordFake, bot: Bot) -> None:
    options = [{"name": "question", "type": 3, "value": QUESTION}, {"name": "private", "type": 5, "value": True}]
    interaction = fake.command("ask", options)
    fake.dispatch("INTERACTION_CREATE", interaction)
    assert callback(fake, interaction) == {"type": 5, "data": {"flags": 64}}
    body = followups(fake, interaction)[0]
    assert body["flags"] & 64
    assert "[1]" in body["embeds"][0]["description"]


def test_search_sources_and_help(fake: DiscordFake, bot: Bot, seed_service: Service) -> None:
    search = fake.command("search", [{"name": "query", "type": 3, "value": "Ederson dressing room"}])
    fake.dispatch("INTERACTION_CREATE", search)
    assert callback(fake, search) == {"type": 5}
    assert "Top passages" in text_of(followups(fake, search)[0])

    help_ = fake.command("help")
    fake.dispatch("INTERACTION_CREATE", help_)
    body = callback(fake, help_)
    assert body["type"] == 4 and body["data"]["flags"] & 64 and "/ask" in body["data"]["content"]

    sources = fake.command("sources")
    fake.dispatch("INTERACTION_CREATE", sources)
    body = callback(fake, sources)
    assert body["type"] == 4 and "Mourinho" in text_of(body["data"])
    assert not body["data"].get("components")  # a single page has no paging buttons


def test_sources_pages_with_buttons(fake: DiscordFake, bot: Bot, seed_service: Service) -> None:
    drafts = [
        ArticleDraft(
            key=f"test:page{n}",
            title=f"Filler story number {n}",
            text=f"Filler paragraph {n} about rain.",
            source="Test Gazette",
        )
        for n in range(9)
    ]
    seed_service.library.add_drafts(drafts)
    sources = fake.command("sources")
    fake.dispatch("INTERACTION_CREATE", sources)
    first = callback(fake, sources)["data"]
    assert "Page 1 of 2" in first["embeds"][0]["footer"]["text"]
    assert custom_ids(first) == ["byline:sources:prev:1", "byline:sources:next:2"]
    click = fake.click("byline:sources:next:2", fake.messages[max(fake.messages)])
    fake.dispatch("INTERACTION_CREATE", click)
    updated = callback(fake, click)
    assert updated["type"] == 7
    assert "Page 2 of 2" in updated["data"]["embeds"][0]["footer"]["text"]
    assert custom_ids(updated["data"]) == ["byline:sources:prev:1", "byline:sources:next:2"]


def test_digest_and_ingest_commands_reach_the_service(fake: DiscordFake, bot: Bot) -> None:
    now = fake.command("digest", [{"name": "now", "type": 1, "options": []}])
    fake.dispatch("INTERACTION_CREATE", now)
    assert callback(fake, now)["type"] == 5
    reply = followups(fake, now)[0]
    assert text_of(reply)
    if reply.get("flags", 0) & 64:
        # A private reply after a public defer replaces the public "thinking…" message.
        assert fake.find("DELETE", f"/webhooks/{APP_ID}/{now['token']}/messages/@original")

    subscribe = fake.command(
        "digest",
        [{"name": "subscribe", "type": 1, "options": [{"name": "schedule", "type": 3, "value": "daily 09:00"}]}],
        permissions=1 << 4,
    )
    fake.dispatch("INTERACTION_CREATE", subscribe)
    assert callback(fake, subscribe) == {"type": 5, "data": {"flags": 64}}  # the answer stays private
    assert "09:00" in text_of(followups(fake, subscribe)[0])

    ingest = fake.command("ingest", [{"name": "url", "type": 3, "value": "http://127.0.0.1:9/nothing-here"}])
    fake.dispatch("INTERACTION_CREATE", ingest)
    assert callback(fake, ingest)["type"] == 5
    assert text_of(followups(fake, ingest)[0])
    assert_no_pings(fake)


def test_ingest_refuses_an_attachment_by_its_name_and_size_before_downloading(
    fake: DiscordFake, seed_service: Service
) -> None:
    # Adding articles is for Byline's operators (bot/tenancy.py): this member is one.
    operator = settings_for(fake, seed_service.library.data_dir, discord_admins=frozenset({str(HUMAN["id"])}))
    bot = start_bot(fake, seed_service, operator)

    def attached(filename: str, size: int) -> dict[str, Any]:
        attachment_id = str(fake.next_id())
        payload = fake.command("ingest", [{"name": "file", "type": 11, "value": attachment_id}], permissions=1 << 4)
        # Nothing listens at port 9: a download attempt would answer with a fetch error instead.
        url = f"http://127.0.0.1:9/attachments/{filename}"
        payload["data"]["resolved"] = {
            "attachments": {
                attachment_id: {"id": attachment_id, "filename": filename, "size": size, "url": url, "proxy_url": url}
            }
        }
        fake.dispatch("INTERACTION_CREATE", payload)
        assert callback(fake, payload)["type"] == 5
        return followups(fake, payload)[0]

    try:
        assert "50.0 MB is too big for one article" in text_of(attached("huge.txt", 50_000_000))
        assert "Byline reads" in text_of(attached("photo.png", 2_000))
        assert_no_pings(fake)
    finally:
        bot.close()


# -- buttons ----------------------------------------------------------------------------------


def ask_by_slash(fake: DiscordFake) -> tuple[dict[str, Any], dict[str, Any]]:
    interaction = fake.command("ask", [{"name": "question", "type": 3, "value": QUESTION}])
    fake.dispatch("INTERACTION_CREATE", interaction)
    body = followups(fake, interaction)[0]
    return body, fake.messages[max(fake.messages)]


def test_buttons_work_and_keep_working_after_a_restart(
    fake: DiscordFake, seed_service: Service, embedder: Embedder, errors: ErrorLog
) -> None:
    first = start_bot(fake, seed_service)
    try:
        body, message = ask_by_slash(fake)
        passages_id = next(i for i in custom_ids(body) if i.startswith("byline:passages:"))
        answer_id = passages_id.rsplit(":", 1)[1]
        click = fake.click(passages_id, message)
        fake.dispatch("INTERACTION_CREATE", click)
        shown = callback(fake, click)
        assert shown["type"] == 4 and shown["data"]["flags"] & 64
        assert "Mourinho" in text_of(shown["data"])
        vote = fake.click(f"byline:vote:up:{answer_id}", message)
        fake.dispatch("INTERACTION_CREATE", vote)
        assert callback(fake, vote)["data"]["flags"] & 64
        assert seed_service.state.votes(answer_id) == {HUMAN["id"]: 1}
    finally:
        first.close()

    # A new process: a new client instance and service over the same data directory.
    data_dir = seed_service.library.data_dir
    library = Library.open(data_dir, embedder)
    service = Service(library, BotState(data_dir / STATE_FILE))
    second = start_bot(fake, service)
    try:
        vote = fake.click(f"byline:vote:down:{answer_id}", message)
        fake.dispatch("INTERACTION_CREATE", vote)
        assert "Thanks" in callback(fake, vote)["data"]["content"]
        assert service.state.votes(answer_id) == {HUMAN["id"]: -1}  # changed, not added
        click = fake.click(passages_id, message)
        fake.dispatch("INTERACTION_CREATE", click)
        assert "Mourinho" in text_of(callback(fake, click)["data"])
        expired = fake.click(
            "byline:passages:0123456789abcdef", fake.button_message("byline:passages:0123456789abcdef")
        )
        fake.dispatch("INTERACTION_CREATE", expired)
        assert "expired" in callback(fake, expired)["data"]["content"]
    finally:
        second.close()
        service.state.close()
        library.close()


def test_handler_error_reaches_the_user_and_the_log(
    fake: DiscordFake, bot: Bot, seed_service: Service, errors: ErrorLog
) -> None:
    # A stored answer that cannot be read back (a damaged row) makes the passages button fail.
    with sqlite3.connect(seed_service.state.path) as connection:
        connection.execute(
            "INSERT INTO answers (id, platform, user_id, question, answer_json, created_at, tenant) "
            f"VALUES ('badbadbadbad0000', 'discord', '1', 'q', '{{}}', '2026-01-01', 'discord:{GUILD_ID}')"
        )
    click = fake.click("byline:passages:badbadbadbad0000", fake.button_message("byline:passages:badbadbadbad0000"))
    fake.dispatch("INTERACTION_CREATE", click)
    body = callback(fake, click)
    assert body["data"]["flags"] & 64 and "went wrong" in body["data"]["content"]
    fake.wait_for(lambda: errors.records, 10, "the error to be logged")
    assert errors.records[0].exc_info is not None
    errors.records.clear()  # expected here; any other error fails the test at teardown


# -- splitting and posting from other threads ----------------------------------------------


def big_answer(spans: int = 60, length: int = 400) -> Answer:
    citations = [
        Citation(n, 1, f"Headline {n}", "Outlet", "https://example.com/a", "2026-01-01", n) for n in range(1, 31)
    ]
    made = []
    for i in range(spans):
        words = " ".join(f"w{i}x{j}" for j in range(length // 6))
        made.append(
            AnswerSpan(
                words,
                "quote" if i % 2 else "sentence",
                "Speaker" if i % 2 else "",
                i % 30 + 1,
                1,
                i % 30 + 1,
                0,
                len(words),
            )
        )
    return Answer(QUESTION, True, made, citations)


def test_oversize_answer_is_split_within_limits_never_inside_a_span() -> None:
    # Long enough to need more than one message, short enough for the three a reply may use
    # (a longer one has its spans shortened: tests/hostile/test_hostile_render.py).
    answer = big_answer(spans=24)
    messages = render(AnswerReply(answer, "0123456789abcdef"))
    assert 1 < len(messages) <= 3
    for message in messages:
        assert len(message.content) <= CONTENT_LIMIT
        assert len(message.embeds) <= EMBEDS_PER_MESSAGE
        assert message_size(message) <= MESSAGE_EMBED_LIMIT
        for embed in message.embeds:
            assert len(embed.description or "") <= DESCRIPTION_LIMIT
            assert len(embed.fields) <= 25
    everything = [embed.description or "" for message in messages for embed in message.embeds]
    for span in answer.spans:
        assert sum(discord.utils.escape_markdown(span.text) in d for d in everything) == 1, "a span was cut or repeated"
    assert sum(d.count("`[") for d in everything) == len(answer.citations)  # every source line, whole


def test_one_huge_quote_is_cut_at_spaces_with_its_marker_whole() -> None:
    answer = big_answer(spans=1, length=30000)
    messages = render(AnswerReply(answer, "0123456789abcdef"))
    descriptions = [e.description or "" for m in messages for e in m.embeds]
    assert all(len(d) <= DESCRIPTION_LIMIT for d in descriptions)
    assert all(message_size(m) <= MESSAGE_EMBED_LIMIT for m in messages)
    assert sum("**[1]**" in d for d in descriptions) == 1


def test_digest_renders_stories_with_sources_and_an_empty_digest_says_so() -> None:
    answer = big_answer(spans=4, length=60)
    article = Article(1, "k", "Derby", "Outlet", "", "2026-01-01", "", "2026-01-01")
    story = DigestStory("Derby turns ugly", [article], answer.spans, 1)
    digest = Digest("c", "2026-01-01", "2026-01-02", 1, [story], answer.citations[:4], header="Daily digest", late=True)
    [message] = render(DigestReply(digest))
    description = message.embeds[0].description or ""
    assert message.embeds[0].title == "Daily digest"
    assert "**Derby turns ugly** [1]" in description and "**Sources**" in description and "late" in description
    empty = render(DigestReply(Digest("c", "2026-01-01", "2026-01-02", 0, [], [])))
    assert "Nothing new since 1 Jan 2026" in (empty[0].embeds[0].description or "")


def test_long_text_reply_is_split_into_messages() -> None:
    messages = render(TextReply("\n".join(f"line {n} " + "x" * 90 for n in range(100))))
    assert len(messages) > 1 and all(len(m.content) <= CONTENT_LIMIT for m in messages)


def test_poster_posts_split_answers_from_another_thread_and_reports_failures(fake: DiscordFake, bot: Bot) -> None:
    poster = bot.client.poster
    assert poster is not None and poster.platform == "discord"
    start = fake.mark()
    poster.post(str(CHANNEL_ID), AnswerReply(big_answer(), "0123456789abcdef"))
    posts = bot_posts(fake, start)
    assert len(posts) > 1
    for body in posts:
        assert body["allowed_mentions"]["parse"] == []
        assert (
            sum(
                len(e.get("description", "")) + len(e.get("title", "")) + len(e.get("footer", {}).get("text", ""))
                for e in body["embeds"]
            )
            <= MESSAGE_EMBED_LIMIT
        )
    assert custom_ids(posts[-1]) and not custom_ids(posts[0])  # buttons under the last part only
    fake.forbidden_channels.add(111)
    fake.missing_channels.add(222)
    with pytest.raises(DeliveryError, match="403"):
        poster.post("111", TextReply("hello"))
    with pytest.raises(DeliveryError, match="404"):
        poster.post("222", TextReply("hello"))
