"""Every documented setting, given a bad value, stops the real ``byline`` command at once with one
line that names it: before the model loads, with no traceback and never echoing a secret."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bot.settings import Settings, SettingsError
from tests.conftest import PROJECT

# (variable, a bad value). Every variable of .env.example must be here (checked below).
BAD_VALUES: list[tuple[str, str]] = [
    ("BYLINE_DATA_DIR", "/etc/passwd/data"),  # under a file: can never be created
    ("BYLINE_SEEDS_DIR", "/nonexistent/seeds"),
    ("BYLINE_LOG_LEVEL", "verbose"),
    ("BYLINE_LOG_FORMAT", "xml"),
    ("BYLINE_RETENTION_DAYS", "-1"),
    ("SLACK_BOT_TOKEN", "xoxb-bad token"),
    ("BYLINE_SLACK_MODE", "carrier-pigeon"),
    ("SLACK_APP_TOKEN", "xapp-bad token"),
    ("SLACK_SIGNING_SECRET", "bad secret"),
    ("BYLINE_HTTP_HOST", "not a host!"),
    ("BYLINE_HTTP_PORT", "99999"),
    ("SLACK_API_URL", "ftp://slack.example/api/"),
    ("BYLINE_SLACK_ADMINS", "U123,<@U456>"),
    ("SLACK_CLIENT_ID", "my-app"),
    ("SLACK_CLIENT_SECRET", "bad secret"),
    ("SLACK_REDIRECT_URI", "https://example.com/callback"),
    ("BYLINE_TOKEN_KEY", "not-a-fernet-key"),
    ("DISCORD_TOKEN", "bad token"),
    ("DISCORD_GUILD_ID", "my-server"),
    ("DISCORD_API_URL", "discord.com/api"),
    ("DISCORD_GATEWAY_URL", "gopher://gateway"),
    ("BYLINE_DISCORD_ADMINS", "@admin"),
    ("BYLINE_TENANT_ADMINS", "T123=U1"),
    ("BYLINE_FETCH_ALLOWLIST", "300.1.1.1/99"),
    ("BYLINE_FETCH_TIMEOUT", "abc"),
    ("BYLINE_FETCH_DEADLINE", "0"),
    ("BYLINE_FEED_INTERVAL", "abc"),
    ("BYLINE_WATCH_DIR", "/nonexistent"),
    ("BYLINE_TIMEZONE", "Mars/Base"),
    ("BYLINE_USER_RATE", "-3"),
    ("BYLINE_READER", "sometimes"),
    ("BYLINE_USER_BURST", "many"),
    ("BYLINE_CHANNEL_RATE", "inf"),
    ("BYLINE_CHANNEL_BURST", "2.5"),
    ("BYLINE_WORKERS", "0.5"),
    ("BYLINE_QUEUE_LIMIT", "0"),
    ("BYLINE_BACKEND", "mongodb"),
    ("BYLINE_DATABASE_URL", "mysql://db/byline"),
    ("BYLINE_QDRANT_URL", "qdrant.local:6333"),
    ("BYLINE_REDIS_URL", "localhost:6379"),
    ("BYLINE_DISCORD_SHARD_IDS", "0,one"),
    ("BYLINE_DISCORD_SHARD_COUNT", "0"),
    ("BYLINE_LEADER_TRY_SECONDS", "-5"),
]
SECRETS = {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_CLIENT_SECRET", "BYLINE_TOKEN_KEY"}
SECRETS |= {"DISCORD_TOKEN"}
# Well under the model's load time (several seconds): the check happens before anything slow.
FAST_SECONDS = 30.0


def _documented() -> list[str]:
    text = (PROJECT / ".env.example").read_text()
    return re.findall(r"^([A-Z][A-Z0-9_]*)=", text, flags=re.MULTILINE)


def _clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BYLINE_", "SLACK_", "DISCORD_"))}
    return env | {"BYLINE_DATA_DIR": str(tmp_path / "data")}


def _run(args: list[str], env: dict[str, str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli.main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return result, time.monotonic() - started


def test_every_documented_setting_is_driven_with_a_bad_value() -> None:
    assert sorted(_documented()) == sorted(name for name, _ in BAD_VALUES)


def test_a_bad_value_of_any_setting_is_one_line_naming_it(tmp_path: Path) -> None:
    """``byline ask`` on a fresh data dir would ingest the seeds and load the model; a bad setting
    must stop it first. All variables run concurrently, each in its own process."""
    base = _clean_env(tmp_path)
    # An empty working directory, so no .env file is read.
    cwd = tmp_path / "cwd"
    cwd.mkdir()

    def attempt(case: tuple[str, str]) -> str | None:
        variable, value = case
        env = base | {variable: value}
        if variable in {"SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"}:
            env["SLACK_BOT_TOKEN"] = "xoxb-good-token"
        result, seconds = _run(["ask", "what did Mourinho say about the referee?"], env, cwd)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        problems = []
        if result.returncode == 0:
            problems.append("exit code 0")
        if len(lines) != 1 or variable not in lines[0]:
            problems.append(f"not one line naming it: {result.stderr[-500:]!r}")
        if "Traceback" in result.stderr:
            problems.append("a traceback")
        if variable in SECRETS and value in result.stderr + result.stdout:
            problems.append("the secret was echoed")
        if seconds > FAST_SECONDS:
            problems.append(f"took {seconds:.1f} s")
        return f"{variable}={value!r}: {'; '.join(problems)}" if problems else None

    with ThreadPoolExecutor(max_workers=4) as pool:
        failures = [f for f in pool.map(attempt, BAD_VALUES) if f]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-good-token"}, "SLACK_APP_TOKEN"),
        ({"SLACK_BOT_TOKEN": "xoxb-good-token", "BYLINE_SLACK_MODE": "http"}, "SLACK_SIGNING_SECRET"),
    ],
)
def test_a_slack_token_without_its_transport_is_reported_before_the_model_loads(
    env: dict[str, str], variable: str, tmp_path: Path
) -> None:
    result, seconds = _run(["serve"], _clean_env(tmp_path) | env, tmp_path)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0 and len(lines) == 1 and variable in lines[0], result.stderr
    assert "Traceback" not in result.stderr and "xoxb-good-token" not in result.stderr
    assert seconds < FAST_SECONDS
    assert not (tmp_path / "data").exists()  # nothing was opened, let alone ingested


def test_good_values_are_read_as_before(tmp_path: Path) -> None:
    watch = tmp_path / "watch"
    watch.mkdir()
    settings = Settings.from_env(
        {
            "BYLINE_DATA_DIR": str(tmp_path / "data"),
            "BYLINE_LOG_LEVEL": "debug",
            "BYLINE_LOG_FORMAT": "JSON",
            "BYLINE_SLACK_MODE": "HTTP",
            "BYLINE_HTTP_PORT": "8080",
            "BYLINE_FETCH_ALLOWLIST": "intranet.example.com, 10.20.0.0/16,127.0.0.1",
            "BYLINE_FETCH_TIMEOUT": "2.5",
            "BYLINE_FEED_INTERVAL": "60",
            "BYLINE_WATCH_DIR": str(watch),
            "BYLINE_TIMEZONE": "Europe/London",
            "BYLINE_WORKERS": "3",
            "BYLINE_USER_RATE": "6",
            "BYLINE_SLACK_ADMINS": "U1, U2",
            "BYLINE_RETENTION_DAYS": "0",
            "BYLINE_QUEUE_LIMIT": "",  # an empty line in .env means the default
        }
    )
    assert settings.log_level == "DEBUG" and settings.log_format == "json" and settings.slack_mode == "http"
    assert settings.http_port == 8080 and settings.feed_interval == 60.0 and settings.watch_dir == watch
    assert settings.limits.workers == 3 and settings.limits.user_per_minute == 6.0 and settings.limits.queue_limit == 64
    assert settings.slack_admins == frozenset({"U1", "U2"}) and settings.retention_days == 0
    fetcher = settings.fetcher()
    assert fetcher.timeout == 2.5 and "intranet.example.com" in fetcher.allowlist.hosts
    assert Settings.from_env({}).retention_days == 90


def test_the_message_names_the_variable_and_what_is_allowed() -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({"BYLINE_TIMEZONE": "Mars/Base"})
    assert str(raised.value) == (
        "BYLINE_TIMEZONE must be an IANA timezone name such as Europe/London or UTC, not 'Mars/Base' (see .env.example)"
    )
