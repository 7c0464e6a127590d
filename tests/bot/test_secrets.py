"""Secrets never reach logs or messages; `.env` never overrides the real environment; a missing
or malformed token gives one actionable line."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from bot.settings import Settings, load_environment
from tests.conftest import PROJECT
from tests.fakes.discord_fake import GOOD_TOKEN, DiscordFake
from tests.fakes.slack_fake import FakeSlack

SLACK_TOKEN = "xoxb-1234567890-SECRETSLACKTOKEN"
SIGNING_SECRET = "signing-SECRET-0123456789abcdef"
APP_TOKEN = "xapp-1-SECRETAPPTOKEN"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _signed_mention(port: int, text: str) -> int:
    body = json.dumps({
        "token": "legacy", "team_id": "T0001", "api_app_id": "A0001", "type": "event_callback",
        "event_id": "EvSECRET1", "event_time": int(time.time()),
        "event": {"type": "app_mention", "user": "U1", "text": f"<@UBYLINE> {text}", "ts": "1700000001.000100",
                  "channel": "CGONE", "event_ts": "1700000001.000100"},
    })  # fmt: skip
    ts = str(int(time.time()))
    digest = hmac.new(SIGNING_SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/slack/events", data=body.encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


def _wait(predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_no_token_in_any_log_through_start_errors_and_shutdown(seed_data_dir: Path, tmp_path: Path) -> None:
    """`byline serve` with both platforms, DEBUG logging, a failing post, then Ctrl-C."""
    data_dir = tmp_path / "data"
    shutil.copytree(seed_data_dir, data_dir)
    slack = FakeSlack()
    discord_fake = DiscordFake().start()
    port = _free_port()
    env = {
        **os.environ,
        "BYLINE_DATA_DIR": str(data_dir),
        "BYLINE_LOG_LEVEL": "DEBUG",
        "SLACK_BOT_TOKEN": SLACK_TOKEN,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "BYLINE_SLACK_MODE": "http",
        "BYLINE_HTTP_PORT": str(port),
        "SLACK_API_URL": slack.api_url,
        "DISCORD_TOKEN": GOOD_TOKEN,
        "DISCORD_API_URL": discord_fake.api_url,
        "DISCORD_GATEWAY_URL": discord_fake.gateway_url,
        "BYLINE_FEED_INTERVAL": "3600",
    }
    log_file = tmp_path / "serve.log"
    with open(log_file, "w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "bot.cli.main", "serve"],
            cwd=tmp_path,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait(
            lambda: slack.calls_to("auth.test") and discord_fake.find("GET", "/users/@me"),
            120,
            "both adapters to log in",
        )
        _wait(lambda: _port_open(port), 60, "the Slack HTTP listener")
        assert _signed_mention(port, "what did Mourinho say about the referee?") == 200
        # CGONE is a deleted channel: the reply fails and the failure is logged.
        _wait(lambda: "channel_not_found" in log_file.read_text(), 60, "the failed post to be logged")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
        slack.close()
        discord_fake.stop()
    logs = log_file.read_text()
    assert "DEBUG" in logs and "channel_not_found" in logs, logs[-3000:]
    for secret in (SLACK_TOKEN, APP_TOKEN, SIGNING_SECRET, GOOD_TOKEN):
        assert secret not in logs
        assert secret not in json.dumps([c.params for c in slack.calls])


def _port_open(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_dotenv_never_overrides_the_real_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".env").write_text("BYLINE_LOG_LEVEL=DEBUG\nBYLINE_TIMEZONE=Europe/Paris\n")
    monkeypatch.setenv("BYLINE_LOG_LEVEL", "ERROR")
    monkeypatch.delenv("BYLINE_TIMEZONE", raising=False)
    load_environment(tmp_path / ".env")
    settings = Settings.from_env()
    assert settings.log_level == "ERROR" and settings.timezone == "Europe/Paris"
    monkeypatch.delenv("BYLINE_TIMEZONE")


@pytest.mark.parametrize(
    ("env", "setting"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-bad-token", "BYLINE_SLACK_MODE": "socket"}, "SLACK_APP_TOKEN"),
        ({"SLACK_BOT_TOKEN": "xoxb-bad-token", "BYLINE_SLACK_MODE": "http"}, "SLACK_SIGNING_SECRET"),
        ({"SLACK_BOT_TOKEN": "xoxb-bad-token", "BYLINE_SLACK_MODE": "carrier-pigeon"}, "BYLINE_SLACK_MODE"),
        ({"BYLINE_HTTP_PORT": "eighty"}, "BYLINE_HTTP_PORT"),
    ],
)
def test_misconfiguration_is_one_actionable_line(
    env: dict[str, str], setting: str, seed_data_dir: Path, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    shutil.copytree(seed_data_dir, data_dir)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "DISCORD_"))}
    full_env |= {"BYLINE_DATA_DIR": str(data_dir), **env}
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "serve"],
        cwd=PROJECT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip() and " INFO " not in line]
    assert len(lines) == 1 and setting in lines[0], result.stderr
    assert "Traceback" not in result.stderr and "xoxb-bad-token" not in result.stderr
