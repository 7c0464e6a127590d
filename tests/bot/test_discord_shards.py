"""Discord split by shard across processes: each process answers only its own shards' guilds.

Two ``byline serve`` Discord platforms (``DiscordPlatform.start``, the code serve runs, each on a
loop in a thread of its own, as two processes would be) connect to the one shard-aware fake
Discord with BYLINE_DISCORD_SHARD_COUNT=2 and BYLINE_DISCORD_SHARD_IDS 0 and 1.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from bot.platforms.discord import DiscordPlatform
from bot.platforms.discord.app import BylineClient, ShardedBylineClient
from bot.platforms.discord.shards import ShardSettingsError
from bot.service import Service
from bot.settings import Settings
from tests.fakes.discord_fake import APP_ID, BOT_ID, BOT_USER, CHANNEL_ID, GOOD_TOKEN, GUILD_ID, DiscordFake
from tests.platform_helpers import ErrorLog

QUESTION = "what did Mourinho say about the referee?"
# Discord puts a guild on shard (guild_id >> 22) % count: GUILD_ID is on shard 1 of 2, this one on 0.
OTHER_GUILD_ID = GUILD_ID + (1 << 22)
OTHER_CHANNEL_ID = OTHER_GUILD_ID + 100
assert DiscordFake.shard_of(GUILD_ID, 2) == 1 and DiscordFake.shard_of(OTHER_GUILD_ID, 2) == 0


@dataclass
class Process:
    """One serve process's Discord platform, and the event that stops it."""

    platform: DiscordPlatform
    stop: threading.Event

    @property
    def client(self) -> BylineClient:
        assert self.platform.client is not None
        return self.platform.client

    def close(self) -> None:
        self.stop.set()
        self.platform.stop()  # re-raises a failure of the client's loop


@pytest.fixture
def fake(discord_fake: DiscordFake) -> DiscordFake:
    """The fake Discord with a second guild, so that each of two shards has one."""
    discord_fake.other_guilds[OTHER_GUILD_ID] = [OTHER_CHANNEL_ID]
    return discord_fake


def settings(fake: DiscordFake, data_dir: Path, shard_ids: tuple[int, ...], count: int | None) -> Settings:
    return Settings(
        data_dir=data_dir,
        seeds_dir=data_dir / "no-seeds",
        discord_token=GOOD_TOKEN,
        discord_guild_id=str(GUILD_ID),
        discord_api_url=fake.api_url,
        discord_gateway_url=fake.gateway_url,
        discord_shard_ids=shard_ids,
        discord_shard_count=count,
    )


def start(service: Service, chosen: Settings) -> Process:
    process = Process(DiscordPlatform(), threading.Event())
    process.platform.start(service, chosen, process.stop)
    return process


def wait_ready(fake: DiscordFake, *processes: Process) -> None:
    for process in processes:

        def ready(process: Process = process) -> bool:
            return process.client.is_ready() or process.stop.is_set()

        fake.wait_for(ready, 30, "the client to be ready")
        assert not process.stop.is_set(), "the Discord client stopped during start-up"


@pytest.fixture
def two_processes(fake: DiscordFake, seed_service: Service, errors: ErrorLog) -> Iterator[tuple[Process, Process]]:
    data_dir = seed_service.library.data_dir
    started = [start(seed_service, settings(fake, data_dir, (shard,), 2)) for shard in (0, 1)]
    try:
        wait_ready(fake, *started)
        yield started[0], started[1]
    finally:
        for process in started:
            process.close()


def ask(fake: DiscordFake, channel_id: int) -> dict[str, Any]:
    message = fake.message_payload(f"<@{BOT_ID}> {QUESTION}", mentions=[BOT_USER], channel_id=channel_id)
    fake.dispatch("MESSAGE_CREATE", message)
    return message


def answers_to(fake: DiscordFake, question: dict[str, Any]) -> list[dict[str, Any]]:
    """Byline's messages that reply to ``question`` (an answer's first message replies to it)."""
    return [
        m
        for m in list(fake.messages.values())
        if str((m.get("message_reference") or {}).get("message_id")) == question["id"]
    ]


def delivered_to(fake: DiscordFake, event: str, payload: dict[str, Any]) -> list[tuple[int, int]]:
    return [shard for kind, ident, shard in fake.deliveries if kind == event and ident == payload["id"]]


def test_each_process_answers_only_its_own_shards_guilds(
    fake: DiscordFake, two_processes: tuple[Process, Process]
) -> None:
    first, second = two_processes
    assert isinstance(first.client, ShardedBylineClient) and isinstance(second.client, ShardedBylineClient)
    assert sorted(p["shard"] for p in fake.identify_payloads) == [[0, 2], [1, 2]]
    # Each process holds only its shard's guild, as Discord sends GUILD_CREATE per shard.
    assert [g.id for g in first.client.guilds] == [OTHER_GUILD_ID]
    assert [g.id for g in second.client.guilds] == [GUILD_ID]

    on_shard_0, on_shard_1 = ask(fake, OTHER_CHANNEL_ID), ask(fake, CHANNEL_ID)
    fake.wait_for(lambda: answers_to(fake, on_shard_0) and answers_to(fake, on_shard_1), 30, "both answers")
    for question, shard, owner, other, channel in (
        (on_shard_0, 0, first, second, OTHER_CHANNEL_ID),
        (on_shard_1, 1, second, first, CHANNEL_ID),
    ):
        assert delivered_to(fake, "MESSAGE_CREATE", question) == [(shard, 2)]
        answers = answers_to(fake, question)
        assert len(answers) == 1, answers
        assert len(fake.find("POST", f"/channels/{channel}/messages")) == 1
        assert "Mourinho" in answers[0]["embeds"][0]["description"]
        assert answers[0]["guild_id"] == str(fake.guild_of(channel))
        # The process that posted the answer remembers it as a conversation (just after the post
        # returns, so it is waited for); the other never saw it.
        answer_id, remembered = int(answers[0]["id"]), owner.client.conversations
        fake.wait_for(lambda: answer_id in remembered, 10, "the answer remembered")  # noqa: B023 - waited for here
        assert int(answers[0]["id"]) not in other.client.conversations

    # A slash command in shard 0's guild reaches (and is answered by) shard 0's process alone.
    command = fake.command("help", channel_id=OTHER_CHANNEL_ID)
    fake.dispatch("INTERACTION_CREATE", command)
    fake.wait_request("POST", f"/interactions/{command['id']}/")
    assert delivered_to(fake, "INTERACTION_CREATE", command) == [(0, 2)]
    assert len(fake.find("POST", f"/interactions/{command['id']}/")) == 1


def test_slash_commands_are_synced_once_by_the_shard_0_process(
    fake: DiscordFake, two_processes: tuple[Process, Process]
) -> None:
    first, second = two_processes
    assert first.client.syncs_commands and not second.client.syncs_commands
    assert len(fake.find("PUT", f"/applications/{APP_ID}/")) == 1


def test_the_count_alone_runs_every_shard_in_this_process(
    fake: DiscordFake, seed_service: Service, errors: ErrorLog
) -> None:
    process = start(seed_service, settings(fake, seed_service.library.data_dir, (), 2))
    try:
        wait_ready(fake, process)
        assert sorted(p["shard"] for p in fake.identify_payloads) == [[0, 2], [1, 2]]
        assert sorted(g.id for g in process.client.guilds) == sorted([GUILD_ID, OTHER_GUILD_ID])
        questions = [ask(fake, OTHER_CHANNEL_ID), ask(fake, CHANNEL_ID)]
        fake.wait_for(lambda: all(answers_to(fake, q) for q in questions), 30, "both answers")
        assert [len(answers_to(fake, q)) for q in questions] == [1, 1]
        assert len(fake.find("PUT", f"/applications/{APP_ID}/")) == 1
    finally:
        process.close()


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        (
            {"BYLINE_DISCORD_SHARD_IDS": "0,1"},
            "BYLINE_DISCORD_SHARD_IDS is 0,1 but BYLINE_DISCORD_SHARD_COUNT is not set: set it to the total",
        ),
        (
            {"BYLINE_DISCORD_SHARD_IDS": "1,2", "BYLINE_DISCORD_SHARD_COUNT": "2"},
            "BYLINE_DISCORD_SHARD_IDS has shard 2, but BYLINE_DISCORD_SHARD_COUNT=2 numbers shards 0 to 1",
        ),
        (
            {"BYLINE_DISCORD_SHARD_IDS": "1,1", "BYLINE_DISCORD_SHARD_COUNT": "4"},
            "BYLINE_DISCORD_SHARD_IDS lists shard 1 more than once",
        ),
    ],
)
def test_a_bad_shard_pair_is_one_line_at_start_and_connects_nothing(
    fake: DiscordFake, seed_service: Service, environ: dict[str, str], expected: str
) -> None:
    environ = {"BYLINE_DATA_DIR": str(seed_service.library.data_dir), "DISCORD_TOKEN": GOOD_TOKEN, **environ}
    chosen = replace(Settings.from_env(environ), discord_api_url=fake.api_url, discord_gateway_url=fake.gateway_url)
    platform, stop = DiscordPlatform(), threading.Event()
    with pytest.raises(ShardSettingsError) as raised:
        platform.start(seed_service, chosen, stop)
    message = str(raised.value)
    assert message.startswith(expected), message
    assert "\n" not in message and GOOD_TOKEN not in message
    assert platform.client is None and not stop.is_set()
    assert fake.requests == [] and fake.identifies == 0
