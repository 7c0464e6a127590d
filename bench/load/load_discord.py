"""Load test: the real discord.py client over a real gateway websocket and REST, against the fake.

    .venv/bin/python bench/load/load_discord.py [--questions 200] [--users 50] [--seconds 10] [--rounds 2]

Mentions (MESSAGE_CREATE) are matched to replies by ``message_reference``; ``/ask`` interactions
by their token (followups go to ``/webhooks/{app}/{token}``; a place-in-line notice edits the
deferred original). The fake asks for a heartbeat every second, so a gateway that stalls behind
retrieval would show as a gap; IDENTIFY and RESUME are counted to prove there was no reconnect.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from anywhere

from bench.load.load_common import (  # noqa: E402
    IN_LINE,
    Delivery,
    LoadReport,
    Question,
    classify,
    fire,
    load_main,
    plan,
    report,
    rss_mb,
    settle,
    wait_until,
)
from bot.platforms.discord.app import BylineClient, configure_endpoints, run_client  # noqa: E402
from bot.service import Service  # noqa: E402
from bot.settings import Settings  # noqa: E402
from tests.fakes.discord_fake import (  # noqa: E402
    APP_ID,
    BOT_USER,
    CHANNEL_ID,
    GOOD_TOKEN,
    GUILD_ID,
    DiscordFake,
    restored_endpoints,
)

HEARTBEAT_MS = 1000
CHANNELS_PER_ROUND = 10


def channels(tag: str) -> list[int]:
    """The guild's text channels in round ``tag``: new each round, so their buckets start full."""
    return [CHANNEL_ID + CHANNELS_PER_ROUND * int(tag) + n for n in range(CHANNELS_PER_ROUND)]


@contextmanager
def connected(service: Service, fake: DiscordFake) -> Iterator[BylineClient]:
    """The Byline client logged in to the fake, running in its own thread and event loop."""
    settings = Settings(
        data_dir=Path("unused"),
        seeds_dir=Path("unused"),
        discord_token=GOOD_TOKEN,
        discord_guild_id=str(GUILD_ID),
        discord_api_url=fake.api_url,
        discord_gateway_url=fake.gateway_url,
    )
    with restored_endpoints():
        configure_endpoints(settings)
        client = BylineClient(service, settings, guild_ready_timeout=0.05)
        stop = threading.Event()
        failures: list[BaseException] = []

        def serve() -> None:
            try:
                asyncio.run(run_client(client, GOOD_TOKEN, stop))
            except BaseException as error:  # noqa: BLE001 - reported to the caller below
                failures.append(error)

        thread = threading.Thread(target=serve, name="load-discord-client", daemon=True)
        thread.start()
        try:
            wait_until(lambda: client.is_ready() or bool(failures), 30, "the Discord client to be ready")
            if failures:
                raise RuntimeError(f"the Discord client failed to start: {failures[0]!r}")
            yield client
        finally:
            stop.set()
            thread.join(15)


def user(question: Question, tag: str) -> dict[str, Any]:
    return {
        "id": str(910_000_000_000_000_000 + int(tag) * 1000 + question.user),
        "username": f"reader{question.user}",
        "discriminator": "0",
        "global_name": f"Reader {question.user}",
        "avatar": None,
    }


def send(fake: DiscordFake, question: Question, tag: str, keys: dict[str, int]) -> None:
    """Dispatch the question; ``keys`` maps its message id or interaction token to its index."""
    channel = channels(tag)[question.channel % CHANNELS_PER_ROUND]
    if question.slash:
        payload = fake.command(
            "ask", [{"name": "question", "type": 3, "value": question.text}], user=user(question, tag)
        )
        payload["channel_id"], payload["channel"] = str(channel), fake.channel_payload(channel)
        keys[payload["token"]] = question.index
        fake.dispatch("INTERACTION_CREATE", payload)
    else:
        content = f"<@{BOT_USER['id']}> {question.text}"
        payload = fake.message_payload(content, author=user(question, tag), channel_id=channel, mentions=[BOT_USER])
        keys[payload["id"]] = question.index
        fake.dispatch("MESSAGE_CREATE", payload)


def text_of(body: dict[str, Any]) -> str:
    embeds = body.get("embeds") or []
    return (body.get("content") or "") + "".join(e.get("title", "") + e.get("description", "") for e in embeds)


def deliveries(fake: DiscordFake, keys: dict[str, int]) -> dict[int, Delivery]:
    """Every message that reached the fake for each question, classified."""
    found: dict[int, Delivery] = {}
    webhooks = f"/webhooks/{APP_ID}/"
    for request in list(fake.requests):
        body = request.body if isinstance(request.body, dict) else {}
        if request.status != 200:
            continue
        if request.method == "POST" and request.path.startswith("/channels/") and request.path.endswith("/messages"):
            index = keys.get(str((body.get("message_reference") or {}).get("message_id", "")))
            kind = classify(text_of(body))
        elif request.path.startswith(webhooks) and request.method in {"POST", "PATCH"}:
            index = keys.get(request.path.removeprefix(webhooks).split("/")[0])
            # A PATCH of the deferred original is the place-in-line notice; followups are finals.
            kind = IN_LINE if request.method == "PATCH" else classify(text_of(body))
        else:
            continue
        if index is not None:
            found.setdefault(index, Delivery()).messages.append((kind, request.at))
    return found


def heartbeat_figures(fake: DiscordFake, since: float) -> dict[str, object]:
    beats = [t for t in fake.heartbeats if t >= since]
    gaps = [b - a for a, b in zip(beats, beats[1:], strict=False)]
    return {
        "heartbeats during the run": len(beats),
        "longest heartbeat gap": f"{max(gaps, default=0.0):.2f} s (interval {HEARTBEAT_MS / 1000:g} s)",
        "IDENTIFY / RESUME": f"{fake.identifies} / {fake.resumes}",
    }


def run_round(
    service: Service, questions: int, users: int, seconds: float, tag: str = "0", timeout: float = 180.0
) -> LoadReport:
    """One load round on a fresh fake and client; ``tag`` keeps users apart between rounds."""
    asked = plan(questions, users, seconds, channels=CHANNELS_PER_ROUND)
    rss_before = rss_mb()
    fake = DiscordFake(heartbeat_interval_ms=HEARTBEAT_MS, channels=channels(tag)).start()
    keys: dict[str, int] = {}
    try:
        with connected(service, fake):
            # The first heartbeat comes after a random fraction of the interval: wait for it.
            wait_until(lambda: bool(fake.heartbeats), 10, "the first heartbeat")
            start = fake.heartbeats[-1]
            sent = fire(asked, lambda q: send(fake, q, tag, keys), senders=4)
            wait_until(
                lambda: len([d for d in deliveries(fake, keys).values() if d.finals]) == len(asked),
                timeout,
                "a final reply to every question",
            )
            settle(service)
            found = deliveries(fake, keys)
            extra = heartbeat_figures(fake, start)
            extra["platform errors seen"] = len([r for r in fake.requests if r.status != 200])
    finally:
        fake.stop()
    return report("Discord", asked, users, seconds, sent, found, rss_before, extra)


def main() -> None:
    load_main(__doc__.split("\n\n")[0], run_round)


if __name__ == "__main__":
    main()
