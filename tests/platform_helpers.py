"""Plumbing that the Slack and Discord end-to-end tests share: the bolt app served over HTTP and
signed requests to it, the settings that point it at the fake Slack, and the checks that turn an
error which is only logged (in a worker thread, a reconnect loop) into a failed test.

The fixtures built on these live in ``conftest.py``; this module holds plain functions and classes
so that a test module can also use them directly (a second bolt app after a restart, say)."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from bot.platforms.slack.app import SlackAdapter
from bot.service import Service
from bot.settings import Settings
from tests.fakes.slack_fake import FakeSlack
from tests.logcheck import logged_errors

SECRET = "test-signing-secret"
TOKEN = "xoxb-test-token"


class ErrorLog(logging.Handler):
    """Collects ERROR records from the adapter and discord.py: a handler error fails the test."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def failing_on_logged_errors(caplog: pytest.LogCaptureFixture, loggers: tuple[str, ...]) -> Iterator[None]:
    """A listener that fails is only logged by bolt (in a worker thread): make it fail the test."""
    caplog.set_level(logging.WARNING)
    yield
    failures = logged_errors(caplog, loggers)
    assert not failures, failures


@contextmanager
def running_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    try:
        yield fake
    finally:
        fake.close()


def slack_http_settings(fake: FakeSlack, tmp_path: Path, **fields: Any) -> Settings:
    """What every HTTP-mode app under test shares: the fake's API, the signing secret, no data."""
    return Settings(
        data_dir=tmp_path / "unused",
        seeds_dir=tmp_path / "unused-seeds",
        slack_signing_secret=SECRET,
        slack_mode="http",
        slack_api_url=fake.api_url,
        **fields,
    )


def settings_for(fake: FakeSlack, tmp_path: Path, **changes: Any) -> Settings:
    """A single-workspace app: one bot token, and UADMIN as its Byline admin."""
    base = slack_http_settings(
        fake,
        tmp_path,
        slack_bot_token=TOKEN,
        slack_app_token="xapp-test-token",
        slack_admins=frozenset({"UADMIN"}),
    )
    return replace(base, **changes)


class Bolt:
    """The adapter served over HTTP on 127.0.0.1, and a way to send it signed requests."""

    def __init__(self, adapter: SlackAdapter, fake: FakeSlack) -> None:
        self.adapter = adapter
        self.fake = fake
        self.server = adapter.start_http("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.server_port}/slack/events"
        self._n = 0

    def post(
        self,
        body: str,
        content_type: str,
        secret: str | None = SECRET,
        age: int = 0,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, str]:
        headers = {"Content-Type": content_type} | (headers or {})
        if secret is not None:
            ts = str(int(time.time()) - age)
            digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
            headers |= {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}
        request = urllib.request.Request(self.url, data=body.encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def event(self, event: dict[str, Any], **kwargs: Any) -> tuple[int, str]:
        self._n += 1
        body = {
            "token": "legacy", "team_id": "T0001", "api_app_id": "A0001", "type": "event_callback",
            "event_id": f"Ev{self._n:04d}", "event_time": int(time.time()), "event": event,
        }  # fmt: skip
        return self.post(json.dumps(body), "application/json", **kwargs)

    def command(self, command: str, text: str, user: str = "U1", channel: str = "C1") -> str:
        """Sends a slash command; returns the name of its response URL on the fake."""
        self._n += 1
        name = f"cmd{self._n}"
        form = {
            "token": "legacy", "team_id": "T0001", "channel_id": channel, "user_id": user, "command": command,
            "text": text, "response_url": self.fake.response_url(name), "trigger_id": f"trig{self._n}",
        }  # fmt: skip
        status, _ = self.post(urlencode(form), "application/x-www-form-urlencoded")
        assert status == 200
        return name

    def click(self, action_id: str, value: str, user: str = "U1") -> str:
        self._n += 1
        name = f"click{self._n}"
        payload = {
            "type": "block_actions", "user": {"id": user}, "team": {"id": "T0001"}, "api_app_id": "A0001",
            "channel": {"id": "C1"}, "trigger_id": f"trig{self._n}", "response_url": self.fake.response_url(name),
            "container": {"type": "message", "message_ts": "1700000000.000001", "channel_id": "C1"},
            "actions": [{"type": "button", "action_id": action_id, "block_id": "b", "value": value, "action_ts": "1"}],
        }  # fmt: skip
        status, _ = self.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
        assert status == 200
        return name

    def response(self, name: str) -> dict[str, Any]:
        return self.fake.wait_call(f"response:{name}").params


def serve_bolt(service: Service, slack: FakeSlack, tmp_path: Path) -> Bolt:
    return Bolt(SlackAdapter(service, settings_for(slack, tmp_path)), slack)


def stop_bolt(bolt: Bolt) -> None:
    bolt.server.shutdown()
    bolt.server.server_close()
    bolt.adapter.close()


@contextmanager
def served_bolt(service: Service, slack: FakeSlack, tmp_path: Path) -> Iterator[Bolt]:
    bolt = serve_bolt(service, slack, tmp_path)
    try:
        yield bolt
    finally:
        stop_bolt(bolt)


@contextmanager
def checked_bolt(service: Service, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[Bolt]:
    """A bolt app over its own fake Slack, for a module without an autouse log check: an error
    logged by bolt or Byline while it served fails the test once both are shut down."""
    with (
        failing_on_logged_errors(caplog, ("slack_bolt", "byline")),
        running_slack() as fake,
        served_bolt(service, fake, tmp_path) as bolt,
    ):
        yield bolt
