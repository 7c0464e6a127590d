"""Digest schedules and the scheduler loop, with a controllable clock and recording Posters."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.commands.digest import parse_since, register_digest
from bot.jobs.digest_schedule import DigestScheduler
from bot.replies import DigestReply, TextReply
from bot.schedules import Schedule, ScheduleError, parse_schedule
from bot.service import Asker, Service
from bot.state.digests import EMPTY, FAILED, SENDING, SENT, DigestStore
from bot.state.store import STATE_FILE, BotState
from retrieval.features.digest import added_at_text
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from tests.digest_fixtures import BRIDGE_1, FOOTBALL, PHONE, RecordingPoster, ingest, set_added_at

LONDON = ZoneInfo("Europe/London")
UTC_Z = UTC


def at(text: str) -> datetime:
    """'2026-03-28 09:00' in UTC."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


# -- schedules ----------------------------------------------------------------------------


def test_parse_schedules() -> None:
    assert parse_schedule("daily 09:00 Europe/London") == Schedule("0 9 * * *", "Europe/London")
    assert parse_schedule("weekly Monday 07:30", "America/New_York") == Schedule("30 7 * * mon", "America/New_York")
    assert parse_schedule("0 9 * * 1-5 Europe/Paris") == Schedule("0 9 * * 1-5", "Europe/Paris")
    assert parse_schedule("daily 9:05").describe() == "daily at 09:05 (UTC)"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("daily 09:00 Mars/Olympus", "Unknown timezone `Mars/Olympus`. Use an IANA name such as `Europe/London`"),
        ("61 9 * * *", "is not a valid cron expression"),
        ("daily 25:00", "use 24-hour HH:MM, e.g. `daily 09:00 Europe/London`"),
        ("weekly 09:00", "Weekly needs a day, e.g. `weekly mon 09:00 Europe/London`"),
        ("sometimes", "Try `daily 09:00 Europe/London`"),
    ],
)
def test_bad_schedules_explain_with_an_example(text: str, says: str) -> None:
    with pytest.raises(ScheduleError, match=None) as caught:
        parse_schedule(text)
    assert says in str(caught.value)


def test_daily_0900_london_across_both_dst_changes() -> None:
    schedule = parse_schedule("daily 09:00 Europe/London")
    # Spring forward: Sunday 29 March 2026. 09:00 GMT on Saturday, 09:00 BST (08:00 UTC) on Sunday.
    assert schedule.next_after(at("2026-03-27 09:30")) == at("2026-03-28 09:00")
    assert schedule.next_after(at("2026-03-28 09:00")) == at("2026-03-29 08:00")
    # Fall back: Sunday 25 October 2026.
    assert schedule.next_after(at("2026-10-24 07:59")) == at("2026-10-24 08:00")
    assert schedule.next_after(at("2026-10-24 08:00")) == at("2026-10-25 09:00")


def test_times_in_the_dst_gap_and_overlap_fire_once() -> None:
    gap = parse_schedule("30 1 * * * Europe/London")  # 01:30 does not exist on 29 March 2026
    assert gap.next_after(at("2026-03-28 23:00")) == at("2026-03-29 01:30")  # i.e. 02:30 BST
    overlap = parse_schedule("30 1 * * * Europe/London")  # 01:30 happens twice on 25 October 2026
    first = overlap.next_after(at("2026-10-24 23:00"))
    assert first == at("2026-10-25 00:30")  # the first 01:30 (BST)
    assert overlap.next_after(first) == at("2026-10-26 01:30")  # not again an hour later


def test_parse_since() -> None:
    now = at("2026-12-02 10:00")  # Wednesday
    assert parse_since("2h", now, UTC) == at("2026-12-02 08:00")
    assert parse_since("30 min", now, UTC) == at("2026-12-02 09:30")
    assert parse_since("yesterday", now, LONDON) == at("2026-12-01 00:00")
    assert parse_since("2026-11-30", now, UTC) == at("2026-11-30 00:00")
    assert parse_since("monday", now, UTC) == at("2026-11-30 00:00")
    assert parse_since("11:00", now, UTC) == at("2026-12-01 11:00")  # later today: yesterday's
    with pytest.raises(ScheduleError, match="since 2h"):
        parse_since("whenever", now, UTC)


# -- the scheduler ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """Three articles, built once: copy before changing anything."""
    directory = tmp_path_factory.mktemp("sched") / "data"
    library = Library.open(directory, embedder)
    ingest(library, [BRIDGE_1, FOOTBALL, PHONE], {})
    library.close()
    return directory


class World:
    """A library, the bot state file, posters and a clock; ``restart`` reopens the state file."""

    def __init__(self, directory: Path, embedder: Embedder, now: datetime) -> None:
        self.library = Library.open(directory, embedder)
        self.ids = {a.key: a.id for a in self.library.store.list_articles(limit=10)}
        # Ingested "now" by the real clock: move them out of every window until a test places them.
        set_added_at(self.library, {i: "2000-01-01T00:00:00.000000Z" for i in self.ids.values()})
        self.clock = Clock(now)
        self.slack = RecordingPoster("slack")
        self.discord = RecordingPoster("discord")
        self.state = BotState(directory / STATE_FILE)
        self.scheduler = self._scheduler()

    def _scheduler(self) -> DigestScheduler:
        return DigestScheduler(
            self.library, DigestStore(self.state), {"slack": self.slack, "discord": self.discord}, self.clock
        )

    def restart(self) -> None:
        self.state.close()
        self.state = BotState(self.library.data_dir / STATE_FILE)
        self.scheduler = self._scheduler()

    def added(self, key: str, moment: datetime) -> None:
        set_added_at(self.library, {self.ids[key]: added_at_text(moment)})

    def subscribe(self, platform: str, channel: str, text: str, always: bool = False) -> None:
        self.scheduler.subscribe(platform, channel, parse_schedule(text), always, "U1")

    def close(self) -> None:
        self.state.close()
        self.library.close()


@pytest.fixture
def make_world(data_dir: Path, tmp_path: Path, embedder: Embedder) -> Iterator:
    import shutil

    worlds: list[World] = []

    def make(now: datetime) -> World:
        copy = tmp_path / f"world{len(worlds)}"
        shutil.copytree(data_dir, copy)
        worlds.append(World(copy, embedder, now))
        return worlds[-1]

    yield make
    for world in worlds:
        world.close()


def digests(poster: RecordingPoster, channel: str) -> list[DigestReply]:
    found = poster.to(channel)
    assert all(isinstance(reply, DigestReply) for reply in found)
    return found  # type: ignore[return-value]


def test_two_channels_in_different_timezones_across_dst(make_world) -> None:
    world = make_world(at("2026-03-27 13:30"))  # after both channels' Friday runs
    world.subscribe("slack", "C1", "daily 09:00 Europe/London")
    world.subscribe("discord", "D1", "daily 09:00 America/New_York", always=True)
    world.added(BRIDGE_1.key, at("2026-03-28 08:30"))
    world.added(FOOTBALL.key, at("2026-03-29 07:30"))
    world.added(PHONE.key, at("2026-03-20 07:30"))  # long before: never in a window

    def tick(moment: str) -> list[tuple[str, str, str]]:
        world.clock.now = at(moment)
        return [(o.platform, o.channel_id, o.status) for o in world.scheduler.run_due()]

    assert tick("2026-03-28 08:59") == []
    assert tick("2026-03-28 09:00") == [("slack", "C1", SENT)]
    assert tick("2026-03-28 09:01") == []  # never twice
    # New York is on EDT (UTC-4) since 8 March: 09:00 there is 13:00 UTC.
    assert tick("2026-03-28 13:00") == [("discord", "D1", SENT)]
    # London springs forward overnight: Sunday's 09:00 is 08:00 UTC.
    assert tick("2026-03-29 07:59") == []
    assert tick("2026-03-29 08:00") == [("slack", "C1", SENT)]
    assert tick("2026-03-29 13:00") == [("discord", "D1", SENT)]
    assert tick("2026-03-30 08:00") == [("slack", "C1", EMPTY)]  # nothing new: nothing posted

    slack = digests(world.slack, "C1")
    assert len(slack) == 2
    first, second = (reply.digest for reply in slack)
    assert [a.id for s in first.stories for a in s.articles] == [world.ids[BRIDGE_1.key]]
    assert [a.id for s in second.stories for a in s.articles] == [world.ids[FOOTBALL.key]]
    assert first.header.startswith("since Fri 27 Mar, 09:00 — 1 article — #C1")  # London time
    assert second.header.startswith("since Sat 28 Mar, 09:00 — 1 article")  # windows chain exactly
    assert not first.late
    # The 13:00 UTC window started at 09:00 New York time the day before (Friday 13:00 UTC).
    discord = digests(world.discord, "D1")[0]
    assert discord.digest.header.startswith("since Fri 27 Mar, 09:00 — 1 article — #D1")


def test_restart_mid_window_sends_nothing_until_due(make_world) -> None:
    world = make_world(at("2026-10-23 12:00"))
    world.subscribe("slack", "C1", "daily 09:00 Europe/London")
    world.added(BRIDGE_1.key, at("2026-10-24 07:00"))
    world.clock.now = at("2026-10-24 08:00")  # 09:00 BST
    assert [o.status for o in world.scheduler.run_due()] == [SENT]
    world.added(FOOTBALL.key, at("2026-10-24 20:00"))
    world.clock.now = at("2026-10-25 03:00")
    world.restart()  # mid-window, across the clocks going back
    assert world.scheduler.run_due() == []
    world.clock.now = at("2026-10-25 08:59")  # 08:59 GMT
    assert world.scheduler.run_due() == []
    world.clock.now = at("2026-10-25 09:00")  # 09:00 GMT
    assert [o.status for o in world.scheduler.run_due()] == [SENT]
    world.restart()
    assert world.scheduler.run_due() == []
    replies = digests(world.slack, "C1")
    assert len(replies) == 2 and not any(r.digest.late for r in replies)
    assert [a.id for s in replies[1].digest.stories for a in s.articles] == [world.ids[FOOTBALL.key]]


def test_missed_run_is_sent_once_at_start_and_says_late(make_world) -> None:
    world = make_world(at("2026-12-01 08:00"))
    world.subscribe("slack", "C1", "daily 09:00 Europe/London")
    world.clock.now = at("2026-12-01 09:00")
    assert [o.status for o in world.scheduler.run_due()] == [EMPTY]
    world.added(BRIDGE_1.key, at("2026-12-01 12:00"))
    world.added(FOOTBALL.key, at("2026-12-03 12:00"))
    # Byline is down from the 1st until the 4th at 11:30: runs on the 2nd, 3rd and 4th are missed.
    world.clock.now = at("2026-12-04 11:30")
    world.restart()
    outcomes = world.scheduler.run_due()
    assert [(o.status, o.late, o.due_at) for o in outcomes] == [(SENT, True, at("2026-12-04 09:00"))]
    assert world.scheduler.run_due() == []
    world.restart()
    assert world.scheduler.run_due() == []
    (reply,) = digests(world.slack, "C1")
    assert reply.digest.late and "Late:" in reply.digest.text
    # One late digest covers everything since the last one: nothing is lost.
    assert {a.id for s in reply.digest.stories for a in s.articles} == {
        world.ids[BRIDGE_1.key],
        world.ids[FOOTBALL.key],
    }
    world.clock.now = at("2026-12-05 09:00")
    assert [o.status for o in world.scheduler.run_due()] == [EMPTY]


def test_crash_while_posting_is_never_resent(make_world) -> None:
    world = make_world(at("2026-12-01 08:00"))
    world.subscribe("slack", "C1", "daily 09:00 UTC")
    world.added(BRIDGE_1.key, at("2026-12-01 08:30"))

    class Crash(BaseException):
        """The process dies mid-post (nothing below the scheduler catches this)."""

    class CrashingPoster(RecordingPoster):
        def post(self, channel_id: str, reply: object) -> None:
            raise Crash

    world.scheduler.posters["slack"] = CrashingPoster("slack")
    world.clock.now = at("2026-12-01 09:00")
    with pytest.raises(Crash):
        world.scheduler.run_due()
    world.restart()
    assert world.scheduler.run_due() == []
    assert world.slack.posts == []
    runs = world.scheduler.store.runs("slack", "C1")
    assert [r.status for r in runs] == [SENDING]


def test_one_failing_channel_never_stops_the_others(make_world) -> None:
    world = make_world(at("2026-12-01 08:00"))
    for channel in ("C1", "C2"):
        world.subscribe("slack", channel, "daily 09:00 UTC")
    world.subscribe("discord", "D1", "daily 09:00 UTC")
    world.subscribe("teams", "T1", "daily 09:00 UTC")  # no poster for this platform
    world.added(BRIDGE_1.key, at("2026-12-01 08:30"))
    world.slack.failing.add("C1")
    world.clock.now = at("2026-12-01 09:00")
    statuses = {(o.platform, o.channel_id): o.status for o in world.scheduler.run_due()}
    assert statuses == {
        ("slack", "C1"): FAILED,
        ("slack", "C2"): SENT,
        ("discord", "D1"): SENT,
        ("teams", "T1"): FAILED,
    }
    assert len(digests(world.slack, "C2")) == 1 and len(digests(world.discord, "D1")) == 1

    service = Service(world.library, world.state)
    register_digest(service, world.scheduler)
    status = service.run_command("/digest status", Asker("slack", "U1", "C1"))
    assert isinstance(status, TextReply)
    assert "FAILED: channel C1 was deleted" in status.text and "Next run: Wed 2 Dec, 09:00" in status.text
    # The failed window is covered by the next digest, once the channel works again.
    world.slack.failing.clear()
    world.clock.now = at("2026-12-02 09:00")
    world.scheduler.run_due()
    (reply,) = digests(world.slack, "C1")
    assert [a.id for s in reply.digest.stories for a in s.articles] == [world.ids[BRIDGE_1.key]]


def test_empty_digest_posted_only_when_asked(make_world) -> None:
    world = make_world(at("2026-12-01 08:00"))
    world.subscribe("slack", "QUIET", "daily 09:00 UTC")
    world.subscribe("slack", "LOUD", "daily 09:00 UTC", always=True)
    world.clock.now = at("2026-12-01 09:00")
    world.scheduler.run_due()
    assert world.slack.to("QUIET") == []
    (loud,) = digests(world.slack, "LOUD")
    assert loud.digest.text == "Nothing new since Mon 30 Nov, 09:00 — #LOUD"


def test_commands_and_permissions(make_world) -> None:
    world = make_world(at("2026-12-01 10:00"))
    world.added(BRIDGE_1.key, at("2026-12-01 09:30"))
    world.added(FOOTBALL.key, at("2026-11-29 09:30"))
    service = Service(world.library, world.state)
    register_digest(service, world.scheduler)
    member = Asker("discord", "U2", "D1", is_admin=False)
    admin = Asker("discord", "U1", "D1", is_admin=True)

    refused = service.run_command("/digest subscribe daily 09:00 Europe/London", member)
    assert isinstance(refused, TextReply) and refused.error and "Manage Channels" in refused.text
    assert service.run_command("/digest unsubscribe", member).error  # type: ignore[union-attr]
    assert world.scheduler.store.subscription("discord", "D1") is None

    bad = service.run_command("/digest subscribe daily 09:00 Europe/Lundon", admin)
    assert isinstance(bad, TextReply) and bad.error and "Europe/London" in bad.text
    ok = service.run_command("/digest subscribe daily 09:00 Europe/London --always", admin)
    assert isinstance(ok, TextReply) and not ok.error
    assert "daily at 09:00 (Europe/London)" in ok.text and "Next: Wed 2 Dec, 09:00" in ok.text
    assert world.scheduler.store.subscription("discord", "D1").always  # type: ignore[union-attr]

    now = service.run_command("/digest now", member)  # anyone: the last 24 hours at first
    assert isinstance(now, DigestReply)
    assert [a.id for s in now.digest.stories for a in s.articles] == [world.ids[BRIDGE_1.key]]
    again = service.run_command("/digest", member)  # continues from the last digest
    assert isinstance(again, DigestReply) and again.digest.stories == []
    since = service.run_command("/digest since 2026-11-29", member)
    assert isinstance(since, DigestReply) and since.digest.article_count == 2
    assert service.run_command("/digest since soon-ish", member).error  # type: ignore[union-attr]

    status = service.run_command("/digest status", member)
    assert isinstance(status, TextReply) and "Scheduled: daily at 09:00 (Europe/London)" in status.text
    assert "Last digest (on demand)" in status.text
    gone = service.run_command("/digest unsubscribe", admin)
    assert isinstance(gone, TextReply) and "Unsubscribed" in gone.text
    assert world.scheduler.store.subscription("discord", "D1") is None


def test_loop_posts_and_stops(make_world) -> None:
    world = make_world(at("2026-12-01 08:00"))
    world.subscribe("slack", "C1", "daily 09:00 UTC", always=True)
    world.clock.now = at("2026-12-01 09:00")  # due as soon as the loop starts
    stop = threading.Event()
    thread = world.scheduler.start(stop)
    deadline = datetime.now(UTC) + timedelta(seconds=20)
    while not world.slack.posts and datetime.now(UTC) < deadline:
        stop.wait(0.05)
    stop.set()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert len(world.slack.posts) == 1
