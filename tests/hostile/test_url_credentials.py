"""Issue 32, probe 12: credentials inside SLACK_API_URL or BYLINE_QDRANT_URL (a proxy's
``https://user:password@host/``) never appear in a log line or an error message: not in
Byline's own lines, not in slack_sdk's retry lines (which print the URL they called), not in
the error that says the Qdrant server cannot be reached."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackClientError

from bot.logs import RedactSecrets, configure_logging
from bot.settings import Settings
from retrieval.index.qdrant import QdrantIndex, QdrantUnavailable

PASSWORD = "hunter2"
PROXY = f"https://user:{PASSWORD}@proxy.example/api/"


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on: every connection to it is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def byline_logging() -> Iterator[None]:
    """The root logger as pytest had it, put back after a test sets up Byline's own."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.parametrize(
    "message, args",
    [
        ("Slack API at %s", (PROXY,)),
        (f"Could not reach {PROXY} (timed out)", ()),
        ("proxies %s and %s", ("postgresql://byline:" + PASSWORD + "@db:5432/x", "redis://:" + PASSWORD + "@r:6379")),
    ],
)
def test_credentials_in_any_url_of_a_log_record_are_redacted(message: str, args: tuple[str, ...]) -> None:
    record = logging.LogRecord("byline", logging.WARNING, __file__, 1, message, args, None)
    assert RedactSecrets([]).filter(record)  # no configured secret: the URL rule alone
    shown = record.getMessage()
    assert PASSWORD not in shown and "***@" in shown, shown


def test_a_traceback_with_a_url_password_is_redacted(byline_logging: None, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO", [], "text")
    try:
        raise ConnectionError(f"cannot connect to {PROXY}")
    except ConnectionError:
        logging.getLogger("byline.test").exception("The Slack call failed.")
    err = capsys.readouterr().err
    assert "The Slack call failed." in err and "Traceback" in err
    assert PASSWORD not in err and "https://***@proxy.example" in err, err


def test_slack_sdk_retry_lines_never_show_the_password_in_slack_api_url(
    tmp_path: Path, byline_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    api_url = f"http://user:{PASSWORD}@127.0.0.1:{closed_port()}/api/"
    settings = Settings(data_dir=tmp_path, seeds_dir=tmp_path, slack_api_url=api_url)
    configure_logging("DEBUG", settings.secrets(), "text")  # as `byline serve` does, at its most verbose
    capsys.readouterr()
    client = WebClient(token="xoxb-test-token", base_url=api_url, timeout=2)
    with pytest.raises((SlackClientError, OSError)):
        client.auth_test()
    err = capsys.readouterr().err
    assert "A retry handler found" in err, err  # slack_sdk's own line, which prints the URL...
    assert PASSWORD not in err, err  # ...without the password
    assert "***" in err


def test_an_unreachable_qdrant_url_is_named_without_its_password() -> None:
    url = f"http://user:{PASSWORD}@127.0.0.1:{closed_port()}"
    with pytest.raises(QdrantUnavailable) as raised:
        QdrantIndex.open(url=url, timeout=2)
    message = str(raised.value)
    assert "BYLINE_QDRANT_URL" in message and "127.0.0.1" in message, message
    assert PASSWORD not in message, message
