"""Slack event dedupe and rate limits shared by many workers through Redis (a real Valkey server on
a Unix socket, ``tests/fakes/redis_server.py``).

The contract tests run over both implementations, in-process and Redis; then two workers (one of
them a separate Python process) share state through Redis; then two real bolt apps over one seed
service are sent the same event and answer it once.
"""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.limits import Limiter, LimitSettings, RateLimiter
from bot.platforms.slack.app import SlackAdapter
from bot.service import Service
from bot.settings import Settings
from bot.state.event_dedupe import EventDedupe, RecentIds
from bot.state.redis_client import RETRY_AFTER_S, Outage, redis_client
from bot.state.redis_dedupe import RedisEventDedupe
from bot.state.redis_limits import RedisRateLimiter
from bot.state.shared import SharedStateUnavailable, connect, shared_dedupe, shared_limiter
from tests.fakes import redis_server as redis_fixtures
from tests.fakes.slack_fake import BOT_USER, Call, FakeSlack
from tests.platform_helpers import Bolt, failing_on_logged_errors, settings_for, stop_bolt

# The Redis fixtures, by name, for pytest to find here (assigned: a parameter of that name would
# otherwise shadow an import).
redis_server, redis_url = redis_fixtures.redis_server, redis_fixtures.redis_url

PROJECT = Path(__file__).resolve().parent.parent.parent
# Nothing listens on port 1 of 127.0.0.1: connecting is refused at once.
DOWN_URL = "redis://:hunter2-secret@127.0.0.1:1/0"

MakeLimiter = Callable[[LimitSettings, Callable[[], float]], Limiter]


class Clock:
    """Seconds that move only when a test says so."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(autouse=True)
def redis_never_failed(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """The Redis classes fall back to in-process state on a Redis error, which would pass these
    contract tests too: a test that did not mean to lose Redis fails if one fell back."""
    caplog.set_level(logging.INFO, logger="byline.redis")
    yield
    warnings = [r.getMessage() for r in caplog.records if r.name == "byline.redis" and r.levelno >= logging.WARNING]
    assert not warnings, warnings


@pytest.fixture(params=["in-process", "redis"])
def dedupe(request: pytest.FixtureRequest) -> EventDedupe:
    if request.param == "in-process":
        return RecentIds()
    return RedisEventDedupe(connect(request.getfixturevalue("redis_url")))


@pytest.fixture(params=["in-process", "redis"])
def make_limiter(request: pytest.FixtureRequest) -> MakeLimiter:
    if request.param == "in-process":
        return RateLimiter
    client = connect(request.getfixturevalue("redis_url"))
    return lambda settings, clock: RedisRateLimiter(client, settings, clock)


# -- dedupe: the contract -------------------------------------------------------------------


def test_an_event_is_new_once(dedupe: EventDedupe) -> None:
    assert dedupe.first_time("Ev0001")
    assert not dedupe.first_time("Ev0001")
    assert not dedupe.first_time("Ev0001"), "still seen on the third delivery"
    assert dedupe.first_time("Ev0002")


def test_threads_racing_on_one_event_get_exactly_one_yes(dedupe: EventDedupe) -> None:
    threads, ids = 16, [f"EvRACE{n}" for n in range(20)]
    start = threading.Barrier(threads)
    answers: list[list[tuple[str, bool]]] = [[] for _ in range(threads)]

    def race(mine: list[tuple[str, bool]]) -> None:
        start.wait()
        mine.extend((event_id, dedupe.first_time(event_id)) for event_id in ids)

    running = [threading.Thread(target=race, args=(answers[n],)) for n in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join(30)
    yes = [event_id for mine in answers for event_id, new in mine if new]
    assert sum(len(mine) for mine in answers) == threads * len(ids)
    assert sorted(yes) == sorted(ids), "each id is new to exactly one thread"


def test_redis_remembers_an_event_for_an_hour_under_its_own_key(redis_url: str) -> None:
    client = connect(redis_url)
    assert RedisEventDedupe(client).first_time("Ev0001")
    ttl = client.ttl("byline:slack:event:Ev0001")
    assert 3_590 <= ttl <= 3_600, "long past Slack's last retry (about 5 minutes)"


# -- rate limits: the contract --------------------------------------------------------------


def test_a_burst_is_allowed_then_refused_with_the_wait(make_limiter: MakeLimiter) -> None:
    clock = Clock()
    limiter = make_limiter(LimitSettings(user_per_minute=12, user_burst=2), clock)
    assert limiter.check("u", "c") == 0 and limiter.check("u", "c") == 0
    assert limiter.check("u", "c") == pytest.approx(5.0), "12 a minute: one token every 5 s"
    clock.advance(1)
    assert limiter.check("u", "c") == pytest.approx(4.0), "a refused question takes no token"
    assert limiter.check("other", "c") == 0, "another user is not held up"


def test_a_bucket_refills_as_time_passes(make_limiter: MakeLimiter) -> None:
    clock = Clock()
    limiter = make_limiter(LimitSettings(user_per_minute=12, user_burst=2), clock)
    assert [limiter.check("u", "c") for _ in range(2)] == [0, 0]
    clock.advance(5)
    assert limiter.check("u", "c") == 0, "one token back after 5 s"
    assert limiter.check("u", "c") == pytest.approx(5.0)
    clock.advance(3_600)
    assert [limiter.check("u", "c") for _ in range(3)][:2] == [0, 0], "refilled to the burst, no further"
    assert limiter.check("u", "c") > 0


def test_the_channel_bucket_holds_every_user_in_it(make_limiter: MakeLimiter) -> None:
    clock = Clock()
    limiter = make_limiter(LimitSettings(user_burst=1, channel_per_minute=6, channel_burst=2), clock)
    assert limiter.check("u1", "c") == 0
    assert limiter.check("u1", "c") == pytest.approx(5.0), "u1's own bucket is empty (12 a minute)"
    assert limiter.check("u2", "c") == 0, "u1's refused question took no token from the channel"
    assert limiter.check("u3", "c") == pytest.approx(10.0), "the channel is empty (6 a minute)"
    assert limiter.check("u3", "other") == 0, "the same user elsewhere is not held up"


def test_the_user_bucket_follows_the_user_across_channels(make_limiter: MakeLimiter) -> None:
    clock = Clock()
    limiter = make_limiter(LimitSettings(user_per_minute=6, user_burst=2), clock)
    assert limiter.check("u", "c1") == 0 and limiter.check("u", "c2") == 0
    assert limiter.check("u", "c3") == pytest.approx(10.0)
    assert limiter.check("u", "") == pytest.approx(10.0), "no channel: only the user's bucket"
    assert limiter.check("v", "") == 0


def test_redis_gives_the_same_waits_as_the_in_process_limiter(redis_url: str) -> None:
    """A random stream of questions through both, on one stepped clock: the same answer every time."""
    settings = LimitSettings(user_per_minute=12, user_burst=3, channel_per_minute=20, channel_burst=4)
    clock = Clock(12_345.678)
    here, shared = RateLimiter(settings, clock), RedisRateLimiter(connect(redis_url), settings, clock)
    pick = random.Random(14)
    for _ in range(400):
        clock.advance(pick.choice([0.0, 0.0, 0.01, 0.37, 1.0, 2.5, 7.0]))
        user, channel = pick.choice(["u1", "u2", "u3"]), pick.choice(["c1", "c2", ""])
        assert shared.check(user, channel) == here.check(user, channel), (user, channel, clock.now)


def test_redis_buckets_expire_once_they_would_be_full(redis_url: str) -> None:
    client = connect(redis_url)
    limiter = RedisRateLimiter(client, LimitSettings(user_per_minute=60, user_burst=10), Clock())
    limiter.check("u", "c")
    # One token short of 10 at 1 a second: full again in 1 s, plus the minute's margin.
    assert 60_000 < client.pttl("byline:limit:u:u") <= 61_000
    assert client.hgetall("byline:limit:u:u").keys() == {b"tokens", b"updated"}


# -- two workers, one Redis -----------------------------------------------------------------

_WORKER = """
import json, sys
from bot.state.redis_dedupe import RedisEventDedupe
from bot.limits import LimitSettings
from bot.state.redis_limits import RedisRateLimiter
from bot.state.shared import connect
client = connect(sys.argv[1])
dedupe, limiter = RedisEventDedupe(client), RedisRateLimiter(client, LimitSettings(user_per_minute=0.6, user_burst=3))
print(json.dumps({
    "EvSEEN": dedupe.first_time("EvSEEN"), "EvNEW": dedupe.first_time("EvNEW"),
    "waits": [limiter.check("slack:U1", "slack:C1") for _ in range(2)],
}))
"""


def other_worker(url: str) -> dict[str, object]:
    """What a second worker, in its own process, was told."""
    env = os.environ | {"PYTHONPATH": str(PROJECT)}
    done = subprocess.run(
        [sys.executable, "-c", _WORKER, url], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_workers_in_two_processes_share_events_and_bursts(redis_url: str) -> None:
    # The server's clock, as in production; 0.6 a minute refills one token in 100 s, far longer
    # than this test takes, so the waits below do not depend on how fast the other process starts.
    dedupe = RedisEventDedupe(connect(redis_url))
    limiter = RedisRateLimiter(connect(redis_url), LimitSettings(user_per_minute=0.6, user_burst=3))
    assert dedupe.first_time("EvSEEN")
    assert limiter.check("slack:U1", "slack:C1") == 0 and limiter.check("slack:U1", "slack:C1") == 0
    seen = other_worker(redis_url)
    assert seen["EvSEEN"] is False, "an event this worker took is a redelivery to the other"
    assert seen["EvNEW"] is True
    assert not dedupe.first_time("EvNEW"), "and the other way round"
    waits = seen["waits"]
    assert isinstance(waits, list) and waits[0] == 0, "one token of the burst of 3 was left"
    assert 90 < waits[1] <= 100, "the burst is shared: the other worker is refused the fourth"
    assert 90 < limiter.check("slack:U1", "slack:C1") <= 100


def test_two_clients_in_one_process_race_on_one_token(redis_url: str) -> None:
    limiters = [
        RedisRateLimiter(connect(redis_url), LimitSettings(user_per_minute=0.6, user_burst=5)) for _ in range(8)
    ]
    start = threading.Barrier(len(limiters))
    waits: list[float] = []

    def ask(limiter: RedisRateLimiter) -> None:
        start.wait()
        waits.extend(limiter.check("slack:U1", "") for _ in range(3))

    threads = [threading.Thread(target=ask, args=(limiter,)) for limiter in limiters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(waits) == 24 and waits.count(0) == 5, "8 workers asking 3 times each share one burst of 5"


# -- setup and outages ----------------------------------------------------------------------


def test_without_a_redis_url_the_state_is_in_process(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, seeds_dir=tmp_path)
    assert isinstance(shared_dedupe(settings), RecentIds)
    assert isinstance(shared_limiter(settings), RateLimiter)


def test_with_a_redis_url_the_state_is_in_redis(tmp_path: Path, redis_url: str) -> None:
    settings = Settings(data_dir=tmp_path, seeds_dir=tmp_path, redis_url=redis_url)
    first, second = shared_dedupe(settings), shared_dedupe(settings)
    assert isinstance(first, RedisEventDedupe) and isinstance(shared_limiter(settings), RedisRateLimiter)
    assert first.first_time("Ev1") and not second.first_time("Ev1")


def test_an_unreachable_redis_at_start_is_one_clear_error_without_the_password(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, seeds_dir=tmp_path, redis_url=DOWN_URL)
    for make in (shared_dedupe, shared_limiter):
        with pytest.raises(SharedStateUnavailable) as raised:
            make(settings)
        message = str(raised.value)
        assert "redis://127.0.0.1:1/0" in message and "BYLINE_REDIS_URL" in message
        assert "hunter2" not in message and "\n" not in message


def test_a_redis_that_goes_down_falls_back_to_this_worker(caplog: pytest.LogCaptureFixture) -> None:
    client = redis_client(DOWN_URL)  # as if it had answered at start and then gone away
    dedupe = RedisEventDedupe(client)
    limiter = RedisRateLimiter(client, LimitSettings(user_burst=1), Clock())
    started = time.monotonic()
    assert dedupe.first_time("Ev1") and not dedupe.first_time("Ev1") and dedupe.first_time("Ev2")
    assert limiter.check("u", "c") == 0 and limiter.check("u", "c") == pytest.approx(5.0)
    assert time.monotonic() - started < 2, "a down Redis is not waited on for every event"
    warnings = [r for r in caplog.records if r.name == "byline.redis" and r.levelno == logging.WARNING]
    assert [r.getMessage().split(" failed")[0] for r in warnings] == [
        "Redis: Slack event dedupe",
        "Redis: rate limiting",
    ], "one line per outage, not one per request"
    assert all("hunter2" not in r.getMessage() and "ConnectionError" in r.getMessage() for r in warnings)
    caplog.clear()  # expected here; redis_never_failed checks the other tests


def test_an_outage_retries_redis_after_a_pause_and_says_when_it_is_back(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    outage = Outage("Slack event dedupe", clock)
    assert not outage.skip()
    outage.failed(ConnectionError("refused"))
    assert outage.skip()
    clock.advance(RETRY_AFTER_S)
    assert not outage.skip(), "tried again after the pause"
    outage.failed(ConnectionError("refused"))
    clock.advance(1)
    outage.succeeded()
    assert not outage.skip()
    lines = [r.getMessage() for r in caplog.records if r.name == "byline.redis"]
    assert len(lines) == 2 and "shared again (down for 6 s)" in lines[1]
    caplog.clear()


# -- two real bolt apps, one Redis ----------------------------------------------------------


def mention_body(event_id: str, channel: str, ts: str) -> str:
    event = {
        "type": "app_mention", "user": "U1", "text": f"<@{BOT_USER}> what did Mourinho say?", "ts": ts,
        "channel": channel, "event_ts": ts,
    }  # fmt: skip
    return json.dumps({
        "token": "legacy", "team_id": "T0001", "api_app_id": "A0001", "type": "event_callback",
        "event_id": event_id, "event_time": int(time.time()), "event": event,
    })  # fmt: skip


RETRY = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_error"}


@pytest.mark.parametrize(
    ("memory", "retry_headers", "answers"),
    [
        ("redis", RETRY, 1),
        ("redis", {}, 1),
        # Without Redis each worker remembers only its own events: the redelivery is answered again.
        ("in-process", RETRY, 2),
    ],
    ids=["redis-retry", "redis-no-header", "in-process-retry"],
)
def test_two_bolt_apps_answer_a_redelivered_event_once(
    memory: str,
    retry_headers: dict[str, str],
    answers: int,
    seed_service: Service,
    slack: FakeSlack,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    request: pytest.FixtureRequest,
) -> None:
    def worker() -> Bolt:
        seen: EventDedupe = RecentIds()
        if memory == "redis":
            seen = RedisEventDedupe(connect(request.getfixturevalue("redis_url")))
        return Bolt(SlackAdapter(seed_service, settings_for(slack, tmp_path), seen_events=seen), slack)

    with failing_on_logged_errors(caplog, ("slack_bolt", "byline")):
        first, second = worker(), worker()
        try:
            body = mention_body("EvSHARED1", "CDUP", "1700000020.000100")
            assert first.post(body, "application/json")[0] == 200
            slack.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CDUP")
            # Slack signs each redelivery anew (a later timestamp): the same signature twice is a replay.
            assert second.post(body, "application/json", age=-1, headers=retry_headers)[0] == 200
            # A later event through the same worker: answered after it handled (or skipped) the redelivery.
            assert second.post(mention_body("EvLATER1", "CLATER", "1700000020.000200"), "application/json")[0] == 200
            slack.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CLATER")
            if answers == 2:
                slack.wait_for(lambda calls: len(posts(slack, "CDUP")) == 2)
            assert len(posts(slack, "CDUP")) == answers
        finally:
            stop_bolt(first)
            stop_bolt(second)


def posts(fake: FakeSlack, channel: str) -> list[Call]:
    return [c for c in fake.calls_to("chat.postMessage") if c.params["channel"] == channel]


def test_a_signed_request_replayed_to_another_worker_is_refused_there_too(redis_url: str) -> None:  # noqa: F811
    """Commands and button clicks carry no event id: each worker's guard shares the signatures it
    accepted through Redis, so a captured request replayed to another worker gets the 409 too."""
    import io

    from bot.platforms.slack.http_guard import SlackHttpGuard
    from bot.state.event_dedupe import SIGNATURE_PREFIX
    from tests.hostile.test_hostile_slack import FORM, PATH, SECRET, signed

    reached: list[bytes] = []

    def app(environ: dict[str, object], start_response: Callable[..., object]) -> list[bytes]:
        reached.append(environ["wsgi.input"].read())  # type: ignore[attr-defined]
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b""]

    def guard() -> SlackHttpGuard:
        shared = RedisEventDedupe(connect(redis_url)).with_prefix(SIGNATURE_PREFIX)
        return SlackHttpGuard(app, SECRET, PATH, shared_signatures=shared)  # type: ignore[arg-type]

    def send(to: SlackHttpGuard, body: bytes, headers: dict[str, str]) -> str:
        environ = {
            "PATH_INFO": PATH, "REQUEST_METHOD": "POST", "CONTENT_TYPE": FORM, "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body), "REMOTE_ADDR": "127.0.0.1",
        } | {"HTTP_" + name.upper().replace("-", "_"): value for name, value in headers.items()}  # fmt: skip
        statuses: list[str] = []
        to(environ, lambda status, _headers: statuses.append(status))  # type: ignore[arg-type]
        return statuses[0]

    first, second = guard(), guard()
    body = b"command=%2Fsources&text=&user_id=U1&channel_id=C1&response_url=http%3A%2F%2F127.0.0.1%2Fr"
    headers = signed(body)
    assert send(first, body, headers).startswith("200")
    assert send(second, body, headers).startswith("409")
    assert reached == [body]
    # A fresh signature of the same command (Slack's own next request) passes on either worker.
    time.sleep(1.1)
    assert send(second, body, signed(body)).startswith("200")
