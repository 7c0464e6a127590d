"""Issue 32, probe 6: bolt reads `?error=` on /slack/oauth_redirect before it checks the OAuth
state, so anyone can put text in it. A newline (a forged log line), an ESC (terminal control)
or 30 KB must not reach the log as sent; the browser still gets the refusal page."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.service import Service
from tests.bot.test_slack_oauth import Served, oauth_settings
from tests.fakes.slack_fake import FakeSlack

FORGED = "2026-12-05 12:00:00,000 ERROR byline: operator password reset by U0ADMIN"
ERRORS = {
    "newline": f"access_denied\n{FORGED}",
    "carriage return": f"access_denied\r\n{FORGED}",
    "escape": "access_denied\x1b[2J\x1b]0;owned\x07",
    "30 KB": "x" * 30_000,
}


@pytest.fixture
def served(seed_service: Service, slack: FakeSlack, tmp_path: Path) -> Iterator[Served]:
    app = Served(seed_service, slack, oauth_settings(slack, tmp_path))
    yield app
    app.close()


def test_a_hostile_error_parameter_never_reaches_the_log_as_sent(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)  # what `byline serve` logs unless BYLINE_LOG_LEVEL=DEBUG
    _, cookie = served.start_install()
    for name, error in ERRORS.items():
        caplog.clear()
        # A burst, as a flooder would send (4 each, under the 20 install pages a minute one address
        # may open): the log grows by a few short lines only.
        for _ in range(4):
            status, page = served.come_back({"error": error, "state": "x"}, cookie)
            assert status in {200, 400, 401} and "Byline was not installed" in page and "Start again" in page
        logged = caplog.text
        lines = [record.getMessage() for record in caplog.records]
        assert any("install was refused" in line for line in lines), (name, lines)
        assert FORGED not in logged and not any("\n" in line or "\r" in line for line in lines), (name, lines)
        assert "\x1b" not in logged and "\x07" not in logged, name
        assert len(logged) < 4 * 1_000, (name, len(logged))


def test_slacks_own_error_code_is_still_named(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    _, cookie = served.start_install()
    status, page = served.come_back({"error": "access_denied", "state": "x"}, cookie)
    assert "cancelled" in page
    assert "install was refused (access_denied)" in caplog.text
