"""One leader among many workers: two real ``byline serve`` processes on the cluster backend.

Both workers share one real PostgreSQL (the bot state, the digest subscriptions and runs, the
leader lock) and post to one fake Slack. Only the leader runs digests: two workers started post
a due digest once; the leader frozen, then killed (SIGKILL, no goodbye), is replaced within 30 s, and the digest
that fell due while no one led is posted once, by the new leader. Each worker keeps its own
in-memory Qdrant (no Qdrant server can run here), rebuilt from the shared store at start, which
digests do not read.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.state.digests import DigestStore
from bot.state.leader import FileLeaderLock, Leadership
from bot.state.store import BotState
from tests.bot.test_ops import APP_TOKEN, SIGNING_SECRET, SLACK_TOKEN, _env, _free_port, _get, _serve, _stop, _wait
from tests.fakes.slack_fake import FakeSlack

HOURLY = "0 * * * *"
TAKEOVER_SECONDS = 30.0


def _posts_to(slack: FakeSlack, channel: str) -> int:
    return sum(1 for call in slack.calls_to("chat.postMessage") if f'"channel": "{channel}"' in call.dump())


def _health(port: int) -> dict[str, object]:
    status, body = _get(f"http://127.0.0.1:{port}/healthz")
    return json.loads(body) if status == 200 else {}


def _subscribe_overdue(database_url: str, channel: str) -> None:
    """A channel subscribed three hours ago to an hourly digest: one run is due (missed) now."""
    state = BotState(database_url)
    try:
        since = (datetime.now(UTC) - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        DigestStore(state).subscribe("slack", channel, HOURLY, "UTC", True, "U1", now=since)
    finally:
        state.close()


def _worker(
    tmp_path: Path, name: str, database_url: str, slack: FakeSlack
) -> tuple[subprocess.Popen[bytes], int, Path]:
    port = _free_port()
    log = tmp_path / f"{name}.log"
    env = _env(
        tmp_path / name,
        port,
        BYLINE_BACKEND="cluster",
        BYLINE_DATABASE_URL=database_url,
        BYLINE_QDRANT_URL=":memory:",
        BYLINE_LEADER_TRY_SECONDS="1",
        SLACK_BOT_TOKEN=SLACK_TOKEN,
        SLACK_APP_TOKEN=APP_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        BYLINE_SLACK_MODE="http",
        SLACK_API_URL=slack.api_url,
    )
    return _serve(env, tmp_path, log), port, log


def test_two_workers_post_a_digest_once_and_the_survivor_takes_over(tmp_path: Path, postgres_url: str) -> None:
    slack = FakeSlack()
    _subscribe_overdue(postgres_url, "C1")
    first, first_port, first_log = _worker(tmp_path, "one", postgres_url, slack)
    second = None
    try:
        _wait(lambda: _health(first_port).get("leader") is True, 120, "the first worker to lead")
        _wait(lambda: _posts_to(slack, "C1") == 1, 30, "the overdue digest")
        second, second_port, second_log = _worker(tmp_path, "two", postgres_url, slack)
        _wait(lambda: _health(second_port).get("status") == "ready", 120, "the second worker")
        time.sleep(3)  # several of the second worker's tries at the lock
        assert _health(second_port)["leader"] is False
        assert _posts_to(slack, "C1") == 1, "the second worker posted the digest again"

        # The leader hangs (SIGSTOP: it still holds the lock, but posts nothing), a digest falls due,
        # then the leader dies (SIGKILL, no goodbye). Subscribing only after the kill raced the
        # survivor: a first pass before the subscription was stored sleeps up to MAX_SLEEP (30 s).
        first.send_signal(signal.SIGSTOP)
        # In a thread: should the frozen leader hold the store's write lock, the kill frees it.
        subscriber = threading.Thread(target=_subscribe_overdue, args=(postgres_url, "C2"))
        subscriber.start()
        subscriber.join(10)
        first.send_signal(signal.SIGKILL)
        subscriber.join()
        first.wait(10)
        killed = time.monotonic()
        _wait(lambda: _health(second_port).get("leader") is True, TAKEOVER_SECONDS, "the survivor to take over")
        took = time.monotonic() - killed
        _wait(lambda: _posts_to(slack, "C2") == 1, 30, "the digest missed while no one led")
        time.sleep(2)
        assert (_posts_to(slack, "C1"), _posts_to(slack, "C2")) == (1, 1)
        assert took < TAKEOVER_SECONDS
        code, _ = _stop(second)
        assert code == 0, second_log.read_text()[-2000:]
        assert "Leader (pid" in second_log.read_text()
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()
        slack.close()
    assert "Leader (pid" in first_log.read_text()


def test_only_one_of_two_leaderships_on_one_data_directory_runs_the_jobs(tmp_path: Path) -> None:
    """The embedded backend: two serve processes on one data directory elect one leader too
    (flock on ``leader.lock``); the lock's holder stopping lets the other take over."""

    started: list[str] = []

    def jobs(name: str) -> object:
        def start(stop: threading.Event) -> list[threading.Thread]:
            started.append(name)
            return []

        return start

    stop_first, stop_second = threading.Event(), threading.Event()
    first = Leadership(FileLeaderLock(tmp_path / "leader.lock"), jobs("first"), try_every=0.05)  # type: ignore[arg-type]
    second = Leadership(FileLeaderLock(tmp_path / "leader.lock"), jobs("second"), try_every=0.05)  # type: ignore[arg-type]
    first_thread = first.start(stop_first)
    assert first.leading.wait(5)
    second_thread = second.start(stop_second)
    time.sleep(0.5)
    assert started == ["first"] and not second.leading.is_set()
    stop_first.set()
    first_thread.join(5)
    assert second.leading.wait(5)
    assert started == ["first", "second"]
    stop_second.set()
    second_thread.join(5)
