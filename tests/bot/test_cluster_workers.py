"""Two ``byline serve`` workers on the cluster backend, in Slack's HTTP mode behind a round-robin
load balancer: any worker may get any request, and Slack's redeliveries of an event reach the other
worker, yet every question is answered exactly once.

Everything is real and on 127.0.0.1: PostgreSQL (``tests/fakes/postgres_server.py``) holds both workers'
articles and bot state, one in-memory Qdrant (``":memory:NAME"``) stands for the Qdrant server they
share, Valkey (``tests/fakes/redis_server.py``) holds the event ids and rate-limit buckets, each worker
serves bolt over signed HTTP on its own port, ``tests/fakes/round_robin_proxy.py`` plays nginx in front of
them, and ``tests/fakes/slack_fake.py`` is the Slack Web API that records what was posted. Each worker
posts with its own bot token, so the fake's record says which worker answered.

The last test is a request lost in a worker that stopped reading its port: Slack's retry, marked
``http_timeout``, reaches the other worker, which answers it, since among workers that share event
ids the ids decide, not the header (a worker that stops also closes its port now: ``SlackPlatform.stop``).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from wsgiref.simple_server import WSGIServer

import pytest

from bot.app import add_features
from bot.platforms.slack.app import EVENTS_PATH, SlackAdapter
from bot.service import Service
from bot.settings import Settings
from bot.state.shared import shared_dedupe, shared_limiter
from bot.state.store import BotState, state_location
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from tests.conftest import SEEDS
from tests.fakes import redis_server as redis_fixtures
from tests.fakes.round_robin_proxy import Attempt, RoundRobinProxy, Upstream, running_proxy
from tests.fakes.slack_fake import BOT_USER, Call, FakeSlack
from tests.platform_helpers import SECRET, failing_on_logged_errors, settings_for

# The Redis fixtures, by name, for pytest to find here.
redis_server, redis_url = redis_fixtures.redis_server, redis_fixtures.redis_url

EVENTS = 12
QUESTION = "what did Mourinho say about the referee?"
SEED_TITLE = "Mourinho in dressing-room bust-up"
ANSWER_WAIT_S = 45.0
# After the last answer: long enough for a duplicate already under way to reach the fake.
LATE_DUPLICATE_WAIT_S = 1.5
# How long an answer that never comes is waited for (one question takes well under a second here).
LOST_ANSWER_WAIT_S = 5.0
_QDRANT_NAMES = itertools.count(1)

# How Slack redelivers an event it thinks was lost: the same body (the same event_id), signed anew.
TIMEOUT_RETRY = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
ERROR_RETRY = {"X-Slack-Retry-Num": "2", "X-Slack-Retry-Reason": "http_error"}
NO_HEADER: dict[str, str] = {}  # a new delivery of the same event without retry headers


@dataclass
class Worker:
    """One ``byline serve`` process's Slack side: its service, its bolt app and its HTTP server."""

    name: str
    token: str
    service: Service
    adapter: SlackAdapter
    server: WSGIServer
    serving: bool = True

    @property
    def upstream(self) -> Upstream:
        return Upstream(self.name, "127.0.0.1", self.server.server_port)

    def stop_http(self) -> None:
        """What the load balancer sees of a stopped process: nothing listens on its port any more.
        Answers already under way go on, as ``serve`` drains them before it exits."""
        if self.serving:
            self.serving = False
            self.server.shutdown()
            self.server.server_close()

    def idle(self) -> bool:
        return self.service.pool.outstanding == 0

    def close(self) -> None:
        self.stop_http()
        self.adapter.close()
        self.service.close()


def start_worker(settings: Settings, embedder: Embedder) -> Worker:
    """A worker built as ``byline serve`` builds one in Slack's HTTP mode: the library and state on
    the settings' backend, the shared limiter on the service, the shared dedupe on the adapter."""
    backend = settings.storage()
    library = Library.open(settings.data_dir, embedder, backend)
    state = BotState(state_location(settings.data_dir, backend))
    service = add_features(Service(library, state, settings.limits), settings.timezone, settings.fetcher())
    service.rate_limiter = shared_limiter(settings)
    try:
        adapter = SlackAdapter(service, settings, seen_events=shared_dedupe(settings))
    except BaseException:
        service.close()
        raise
    # Port 0: the OS picks a free one (serve passes BYLINE_HTTP_PORT here).
    server = adapter.start_http(settings.http_host, 0)
    return Worker(settings.data_dir.name, settings.slack_bot_token, service, adapter, server)


@dataclass
class Cluster:
    workers: list[Worker]
    proxy: RoundRobinProxy
    slack: FakeSlack


@pytest.fixture
def cluster(
    tmp_path: Path, embedder: Embedder, postgres_url: str, redis_url: str, slack: FakeSlack
) -> Iterator[Cluster]:
    qdrant = f":memory:cluster-workers-{os.getpid()}-{next(_QDRANT_NAMES)}"
    workers: list[Worker] = []
    try:
        for name in ("worker-1", "worker-2"):
            settings = settings_for(
                slack,
                tmp_path,
                data_dir=tmp_path / name,
                slack_bot_token=f"xoxb-{name}",
                backend="cluster",
                database_url=postgres_url,
                redis_url=redis_url,
                qdrant_url=qdrant,
            )
            workers.append(start_worker(settings, embedder))
        # The seed article ingested once, through one worker; the other finds it in the store.
        report = workers[0].service.library.ingest([SEEDS])
        assert len(report.article_ids) == 1, report.summary()
        assert workers[1].service.library.catch_up(), "worker-2 saw the store move on"
        with running_proxy([w.upstream for w in workers]) as proxy:
            yield Cluster(workers, proxy, slack)
    finally:
        for worker in workers:
            worker.close()


# -- Slack's side -----------------------------------------------------------------------------


def event_id(n: int) -> str:
    return f"EvCLUSTER{n:02d}"


def channel(n: int) -> str:
    return f"CW{n:02d}"


def mention_body(n: int) -> bytes:
    """The app_mention of question ``n``: its own user and channel, so no rate limit is shared."""
    ts = f"1700000100.{n:06d}"
    event = {
        "type": "app_mention", "user": f"UASK{n:02d}", "text": f"<@{BOT_USER}> {QUESTION}", "ts": ts,
        "channel": channel(n), "event_ts": ts,
    }  # fmt: skip
    return json.dumps({
        "token": "legacy", "team_id": "T0001", "api_app_id": "A0001", "type": "event_callback",
        "event_id": event_id(n), "event_time": int(time.time()), "event": event,
    }).encode()  # fmt: skip


def deliver(proxy: RoundRobinProxy, body: bytes, headers: dict[str, str], age: int = 0) -> int:
    """POSTs ``body`` through the proxy as Slack does: signed now (minus ``age`` seconds)."""
    ts = str(int(time.time()) - age)
    digest = hmac.new(SECRET.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    signed = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}
    request = urllib.request.Request(proxy.url + EVENTS_PATH, data=body, headers=signed | headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def deliver_round(proxy: RoundRobinProxy, order: list[int], headers: dict[str, str], age: int) -> None:
    """One delivery of each event in ``order``, one after another (the proxy's turns follow them)."""
    for n in order:
        assert deliver(proxy, mention_body(n), headers, age) == 200, (n, headers)


def swapped(order: list[int]) -> list[int]:
    """1, 0, 3, 2 ...: sent after an even number of requests, each event reaches the worker that
    did not get it last time (the proxy alternates 1, 2, 1, 2)."""
    return [order[i ^ 1] for i in range(len(order))]


# -- what reached Slack and the workers -------------------------------------------------------


def answers(slack: FakeSlack) -> dict[int, list[Call]]:
    """The public answers posted, by question, in the thread of the question."""
    found: dict[int, list[Call]] = {}
    for n in range(EVENTS):
        found[n] = [
            c
            for c in slack.calls_to("chat.postMessage")
            if c.params.get("channel") == channel(n) and c.params.get("thread_ts") == f"1700000100.{n:06d}"
        ]
    return found


def all_answered_once(cluster: Cluster) -> dict[int, list[Call]]:
    """Waits for an answer to every question and for both workers to go quiet, then a little longer
    to catch a duplicate still on its way; asserts one answer each, citing the seed article."""

    def every_question_answered(_: list[Call]) -> bool:
        return all(answers(cluster.slack).values())

    cluster.slack.wait_for(every_question_answered, timeout=ANSWER_WAIT_S)
    wait_until(lambda: all(w.idle() for w in cluster.workers), ANSWER_WAIT_S)
    time.sleep(LATE_DUPLICATE_WAIT_S)
    posted = answers(cluster.slack)
    counts = {event_id(n): len(calls) for n, calls in posted.items()}
    assert all(count == 1 for count in counts.values()), f"answers per event: {counts}"
    for n, (call,) in posted.items():
        assert SEED_TITLE in call.dump(), f"the answer to {event_id(n)} cites the seed article: {call.dump()[:300]}"
    return posted


def wait_until(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def answered_by(cluster: Cluster, posted: dict[int, list[Call]]) -> dict[str, int]:
    """How many answers each worker posted (each posts with its own token)."""
    names = {w.token: w.name for w in cluster.workers}
    tally = {w.name: 0 for w in cluster.workers}
    for (call,) in posted.values():
        tally[names[call.token]] += 1
    return tally


def deliveries(attempts: list[Attempt]) -> dict[str, list[Attempt]]:
    """The attempts that a worker answered (HTTP 200), by event id, in the order they were made."""
    found: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        if attempt.status == 200:
            found.setdefault(json.loads(attempt.body)["event_id"], []).append(attempt)
    return found


def skipped_redeliveries(caplog: pytest.LogCaptureFixture) -> int:
    return sum(1 for r in caplog.records if r.getMessage().startswith("Slack: skipped a redelivered event"))


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Fails the test on an error logged by bolt or Byline, and on a Redis fallback: a worker that
    lost Redis would remember only its own events, which this test must not pass by."""
    with failing_on_logged_errors(caplog, ("slack_bolt", "byline")):
        caplog.set_level(logging.INFO, logger="byline")
        yield caplog
    fallbacks = [r.getMessage() for r in caplog.records if r.name == "byline.redis" and r.levelno >= logging.WARNING]
    assert not fallbacks, fallbacks


# -- the tests --------------------------------------------------------------------------------


def test_retries_sent_to_the_other_worker_are_not_answered_again(
    cluster: Cluster, logs: pytest.LogCaptureFixture
) -> None:
    events = list(range(EVENTS))
    # Each delivery is signed a second later than the one before, so no signature repeats.
    deliver_round(cluster.proxy, events, NO_HEADER, age=3)
    for headers, age in ((TIMEOUT_RETRY, 2), (ERROR_RETRY, 1), (NO_HEADER, 0)):
        deliver_round(cluster.proxy, swapped(events), headers, age)

    posted = all_answered_once(cluster)
    tally = answered_by(cluster, posted)
    assert all(tally.values()), f"both workers answered some: {tally}"
    # The proxy's own log: every redelivery reached the other worker than the original did.
    by_event = deliveries(cluster.proxy.attempts)
    assert sorted(by_event) == sorted(event_id(n) for n in events)
    for name, attempts in by_event.items():
        first, *later = attempts
        assert len(later) == 3 and all(a.upstream != first.upstream for a in later), (name, attempts)
        assert [a.headers.get("X-Slack-Retry-Reason") for a in later] == ["http_timeout", "http_error", None]
    assert not [a for a in cluster.proxy.attempts if a.status != 200], "no delivery failed or was refused"
    assert skipped_redeliveries(logs) == 3 * EVENTS


def test_a_worker_stopped_mid_run_leaves_every_question_answered_once(
    cluster: Cluster, logs: pytest.LogCaptureFixture
) -> None:
    first_half, second_half = list(range(EVENTS // 2)), list(range(EVENTS // 2, EVENTS))
    deliver_round(cluster.proxy, first_half, NO_HEADER, age=2)
    stopped = cluster.workers[1]
    # Stopped while it may still be answering its share of the first half (1, 3, 5).
    stopped.stop_http()
    deliver_round(cluster.proxy, second_half, NO_HEADER, age=2)
    events = list(range(EVENTS))
    deliver_round(cluster.proxy, swapped(events), ERROR_RETRY, age=1)
    deliver_round(cluster.proxy, events, NO_HEADER, age=0)

    posted = all_answered_once(cluster)
    tally = answered_by(cluster, posted)
    assert tally[stopped.name] >= 1, f"the stopped worker finished answering what it had taken: {tally}"
    # Every turn of the stopped worker after it stopped was refused and passed on to the other.
    attempts = cluster.proxy.attempts
    refused = [a for a in attempts if a.status is None]
    turns_after_stop = (len(second_half) + 2 * EVENTS) // 2
    assert len(refused) == turns_after_stop, refused
    for failed in refused:
        assert failed.upstream == stopped.name and not failed.sent, failed
        (passed_on,) = [a for a in attempts if a.request == failed.request and a is not failed]
        assert (passed_on.upstream, passed_on.status) == (cluster.workers[0].name, 200)
    by_event = deliveries(attempts)
    assert all(len(by_event[event_id(n)]) == 3 for n in events), by_event
    assert skipped_redeliveries(logs) == 2 * EVENTS


def test_a_retry_of_an_event_lost_in_a_stopping_worker_is_answered(
    cluster: Cluster, logs: pytest.LogCaptureFixture
) -> None:
    # A worker whose server no longer reads its port while the port is still open (a hung
    # process, or the moment between shutdown and close): the kernel still accepts connections.
    # A POST sent there is lost: the proxy times out after sending it and, like nginx for a
    # POST, does not send it again (a 504).
    stopping = cluster.workers[1]
    stopping.server.shutdown()
    stopping.serving = False
    try:
        with running_proxy([w.upstream for w in cluster.workers], read_timeout=1.0) as proxy:
            assert deliver(proxy, mention_body(0), NO_HEADER, age=1) == 200
            assert deliver(proxy, mention_body(1), NO_HEADER, age=1) == 504
            # Slack got no ack within 3 s: it redelivers, marked http_timeout; the proxy's next turn
            # is the live worker.
            assert deliver(proxy, mention_body(1), TIMEOUT_RETRY, age=0) == 200
            assert [a.upstream for a in proxy.attempts] == ["worker-1", "worker-2", "worker-1"]
            # Event 0 is answered at once; event 1 by the live worker, from its retry.
            deadline = time.monotonic() + LOST_ANSWER_WAIT_S
            while not all(list(answers(cluster.slack).values())[:2]) and time.monotonic() < deadline:
                time.sleep(0.05)
            wait_until(lambda: all(w.idle() for w in cluster.workers), ANSWER_WAIT_S)
            time.sleep(LATE_DUPLICATE_WAIT_S)
            counts = {event_id(n): len(calls) for n, calls in answers(cluster.slack).items() if n < 2}
    finally:
        stopping.server.server_close()  # what the process's exit does, once drained
    assert counts == {event_id(0): 1, event_id(1): 1}, f"answers per event: {counts}"
