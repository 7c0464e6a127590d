"""The platform seam: a third platform is registered through the same door as Slack, Discord and
the terminal chat, and ``serve`` starts it, posts a due digest to it and stops it, knowing it
only through the registry. The fake is a real ``Platform``; serve, the scheduler and the digest
are Byline's own, over the seed library.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path

import pytest

from bot.health import Health
from bot.platforms import BackgroundRun, PlatformBase, configured, register, registered, unregister
from bot.replies import DigestReply, Reply
from bot.schedules import Schedule, utc_clock
from bot.serve import serve
from bot.service import Service
from bot.settings import Settings
from retrieval.errors import BylineError

CHANNEL = "room-1"


class FakeChat(PlatformBase):
    """A chat platform as a plugin would write it: it records what serve does with it."""

    platform = "fake-chat"
    label = "Fake chat"

    def __init__(self, fail_on_start: str = "", die_after: float | None = None) -> None:
        super().__init__()
        self.events: list[str] = []
        self.posts: list[tuple[str, Reply]] = []
        self.stop_event: threading.Event | None = None
        self.fail_on_start = fail_on_start
        self.die_after = die_after
        self.run: BackgroundRun | None = None

    def configured(self, settings: Settings) -> bool:
        return True

    def start(self, service: Service, settings: Settings, stop: threading.Event) -> None:
        if self.fail_on_start:
            raise BylineError(self.fail_on_start)
        self.events.append("start")
        self.stop_event = stop
        if self.die_after is not None:
            delay = self.die_after

            def loop() -> None:
                time.sleep(delay)
                raise BylineError("Fake chat: the connection was refused; check FAKE_CHAT_TOKEN.")

            self.run = BackgroundRun("fake-chat", loop)
            self.run.start(stop)

    def stop(self) -> None:
        self.events.append("stop")
        if self.run is not None:
            self.run.join()

    def post(self, channel_id: str, reply: Reply) -> None:
        self.events.append("post")
        self.posts.append((channel_id, reply))

    def render(self, reply: Reply) -> Sequence[object]:
        return [type(reply).__name__]


@pytest.fixture
def fake() -> Iterator[FakeChat]:
    made = FakeChat()
    register(lambda: made, name=made.platform)
    yield made
    unregister(made.platform)


def _settings(tmp_path: Path) -> Settings:
    # No Slack or Discord token: only the fake is configured. Port 0: any free port for /healthz.
    return Settings(data_dir=tmp_path / "unused", seeds_dir=tmp_path / "unused-seeds", http_port=0)


def _serve_in_thread(service: Service, settings: Settings) -> tuple[threading.Thread, dict[str, object]]:
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["code"] = serve(service, settings, Health())
        except BaseException as error:  # noqa: BLE001 - the test reads it
            outcome["error"] = error

    thread = threading.Thread(target=run, name="serve-under-test", daemon=True)
    thread.start()
    return thread, outcome


def _wait(predicate, what: str, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_the_built_in_platforms_are_registered_like_plugins() -> None:
    platforms = registered()
    assert {"slack", "discord", "terminal"} <= set(platforms)
    for name, factory in platforms.items():
        made = factory()
        assert made.platform == name and made.label


def test_the_terminal_is_only_a_fallback(fake: FakeChat, tmp_path: Path) -> None:
    chosen = configured(_settings(tmp_path))
    assert [platform.platform for platform in chosen] == ["fake-chat"]


def test_serve_starts_a_registered_platform_posts_a_due_digest_to_it_and_stops_it(
    seed_service: Service, fake: FakeChat, tmp_path: Path
) -> None:
    scheduler = seed_service.scheduler
    assert scheduler is not None
    # Subscribed two hours ago to an hourly digest: one is due as soon as serve starts.
    two_hours_ago = utc_clock() - timedelta(hours=2)
    scheduler.clock = lambda: two_hours_ago
    scheduler.subscribe(fake.platform, CHANNEL, Schedule("0 * * * *", "UTC"), always=True, user_id="u1")
    scheduler.clock = utc_clock

    thread, outcome = _serve_in_thread(seed_service, _settings(tmp_path))
    _wait(lambda: fake.posts, "the due digest to be posted to the fake platform")
    channel, reply = fake.posts[0]
    assert channel == CHANNEL and isinstance(reply, DigestReply)
    assert scheduler.posters[fake.platform] is fake
    assert fake.events[0] == "start" and "stop" not in fake.events

    assert fake.stop_event is not None
    fake.stop_event.set()  # what SIGTERM does
    thread.join(30)
    assert not thread.is_alive() and outcome == {"code": 0}, outcome
    assert fake.events[-1] == "stop" and fake.events.count("stop") == 1


def test_a_platform_that_cannot_start_stops_serve_with_its_one_line(
    seed_service: Service, fake: FakeChat, tmp_path: Path
) -> None:
    fake.fail_on_start = "FAKE_CHAT_TOKEN is not set: set it to the bot's token (see .env.example)"
    thread, outcome = _serve_in_thread(seed_service, _settings(tmp_path))
    thread.join(30)
    assert not thread.is_alive()
    error = outcome.get("error")
    assert isinstance(error, BylineError) and "FAKE_CHAT_TOKEN" in str(error), outcome


def test_a_platform_that_dies_while_running_ends_serve_with_its_error(
    seed_service: Service, fake: FakeChat, tmp_path: Path
) -> None:
    fake.die_after = 0.5
    thread, outcome = _serve_in_thread(seed_service, _settings(tmp_path))
    thread.join(30)
    assert not thread.is_alive(), "serve must end when a platform dies, not look healthy and answer nobody"
    error = outcome.get("error")
    assert isinstance(error, BylineError) and "connection was refused" in str(error), outcome
    assert fake.events == ["start", "stop"]
