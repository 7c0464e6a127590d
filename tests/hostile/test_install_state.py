"""Issue 32, probe 10: the install pages are open to anyone, so what they cost is bounded. One
address opening /slack/install over and over is refused with 429 past the per-minute cap (and
stores no state for those), and the table of pending OAuth states never grows past its cap."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.platforms.slack.http_guard import PAGES_PER_MINUTE
from bot.service import Service
from bot.state import slack_installations
from bot.state.slack_installations import OAuthStates
from bot.state.store import STATE_FILE, BotState
from tests.bot.test_slack_oauth import Served, oauth_settings
from tests.fakes.slack_fake import FakeSlack


@pytest.fixture
def served(seed_service: Service, slack: FakeSlack, tmp_path: Path) -> Iterator[Served]:
    app = Served(seed_service, slack, oauth_settings(slack, tmp_path))
    yield app
    app.close()


def open_install(port: int, source: str = "127.0.0.1") -> tuple[int, str]:
    """GET /slack/install from ``source`` (any 127.x address is this machine): status, Retry-After."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        connection.request("GET", "/slack/install")
        response = connection.getresponse()
        response.read()
        return response.status, response.headers.get("Retry-After", "")
    finally:
        connection.close()


def pending_states(service: Service) -> int:
    return int(service.state._connect().execute("SELECT COUNT(*) FROM slack_oauth_states").fetchone()[0])


def test_one_address_opening_the_install_page_is_refused_past_the_cap(
    served: Served, seed_service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    answers = [open_install(served.port) for _ in range(PAGES_PER_MINUTE + 10)]
    assert [status for status, _ in answers[:PAGES_PER_MINUTE]] == [302] * PAGES_PER_MINUTE
    assert answers[PAGES_PER_MINUTE:] == [(429, "60")] * 10
    assert pending_states(seed_service) == PAGES_PER_MINUTE  # a refused page stores nothing
    # Another address is not held up by the first one's flood.
    assert open_install(served.port, "127.0.0.2")[0] == 302
    # The refusals are logged, not one line each: the log stays short.
    refusals = [r for r in caplog.records if "too many install page requests" in r.getMessage()]
    assert 1 <= len(refusals) <= 10


def test_pending_states_never_pass_their_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cap = 40
    monkeypatch.setattr(slack_installations, "MAX_PENDING_STATES", cap)
    state = BotState(tmp_path / STATE_FILE)
    try:
        states = OAuthStates(state)
        issued = []
        for number in range(cap * 2 + 5):
            issued.append(states.issue())
            (count,) = state._connect().execute("SELECT COUNT(*) FROM slack_oauth_states").fetchone()
            assert count <= cap, (number, count)
        assert count == cap
        # Past the cap the oldest go (that person starts again); the newest still work, once.
        assert states.consume(issued[-1]) and not states.consume(issued[-1])
        assert not states.consume(issued[0])
    finally:
        state.close()
