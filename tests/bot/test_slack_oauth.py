"""Byline installed in many Slack workspaces: bolt's OAuth v2 flow end to end, through the real
bolt app served over HTTP on 127.0.0.1, against the fake Slack (``oauth.v2.access``, and
``auth.test`` per token), with the installations sealed in Byline's state file."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from cryptography.fernet import Fernet

from bot.delivery import DeliveryError
from bot.platforms.slack.app import SlackAdapter
from bot.platforms.slack.oauth import manifest_scopes
from bot.replies import TextReply
from bot.service import Service
from bot.settings import Settings, SettingsError
from bot.state.slack_installations import OAuthStates
from bot.state.store import STATE_FILE, BotState
from bot.token_crypto import TokenKeyError
from tests.fakes.slack_fake import CLIENT_ID, CLIENT_SECRET, Call, FakeSlack
from tests.platform_helpers import SECRET, failing_on_logged_errors, slack_http_settings

KEY = Fernet.generate_key().decode()
QUESTION = "what did Mourinho say?"


@pytest.fixture(autouse=True)
def no_handler_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    with failing_on_logged_errors(caplog, ("slack_bolt", "slack_sdk", "byline")):
        yield


@pytest.fixture
def fake(slack: FakeSlack) -> FakeSlack:
    """This module's name for the shared fake Slack (``conftest.slack``)."""
    return slack


def oauth_settings(fake: FakeSlack, tmp_path: Path, **changes: Any) -> Settings:
    base = slack_http_settings(
        fake, tmp_path, slack_client_id=CLIENT_ID, slack_client_secret=CLIENT_SECRET, token_key=KEY
    )
    return replace(base, **changes)


class Served:
    """The adapter over HTTP on 127.0.0.1: a browser's GETs, and Slack's signed POSTs."""

    def __init__(self, service: Service, fake: FakeSlack, settings: Settings, workers: int | None = None) -> None:
        self.fake = fake
        self.adapter = SlackAdapter(service, settings, working_after=0.0, workers=workers)
        self.server = self.adapter.start_http("127.0.0.1", 0)
        self.port = self.server.server_port
        self._n = 0

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.adapter.close()

    def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, http.client.HTTPMessage, str]:
        """One request, redirects not followed (the Location is what a browser would open next)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request(method, path, body=body or None, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.headers, response.read().decode()
        finally:
            connection.close()

    # -- the browser ---------------------------------------------------------------------

    def start_install(self) -> tuple[str, str]:
        """Opens /slack/install: (the authorize URL it redirects to, the state cookie it set)."""
        status, headers, _ = self.request("GET", "/slack/install")
        assert status == 302, status
        cookie = SimpleCookie(headers["Set-Cookie"])
        return headers["Location"], f"slack-app-oauth-state={cookie['slack-app-oauth-state'].value}"

    def come_back(self, query: dict[str, str], cookie: str | None) -> tuple[int, str]:
        """Slack sends the browser back to /slack/oauth_redirect."""
        headers = {"Cookie": cookie} if cookie else {}
        status, _, body = self.request("GET", "/slack/oauth_redirect?" + urlencode(query), headers=headers)
        return status, body

    def install(self, team_id: str, team_name: str) -> tuple[int, str]:
        """The whole flow: /slack/install, "Allow" on Slack's page, back to the redirect URL."""
        location, cookie = self.start_install()
        state = parse_qs(urlsplit(location).query)["state"][0]
        return self.come_back({"code": self.fake.approve(team_id, team_name), "state": state}, cookie)

    # -- Slack ---------------------------------------------------------------------------

    def post(self, body: str, content_type: str) -> tuple[int, str]:
        ts = str(int(time.time()))
        digest = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": f"v0={digest}",
        }
        status, _, text = self.request("POST", "/slack/events", body.encode(), headers)
        return status, text

    def event(self, team_id: str, event: dict[str, Any]) -> tuple[int, str]:
        self._n += 1
        body = {
            "token": "legacy", "team_id": team_id, "api_app_id": "A0001", "type": "event_callback",
            "event_id": f"Ev{team_id}{self._n:04d}", "event_time": int(time.time()), "event": event,
        }  # fmt: skip
        return self.post(json.dumps(body), "application/json")

    def mention(self, team_id: str, channel: str, ts: str, text: str = QUESTION) -> tuple[int, str]:
        bot = self.fake.workspace(team_id).bot_user_id if self._installed(team_id) else "UBOT"
        event = {
            "type": "app_mention", "user": "U1", "text": f"<@{bot}> {text}", "ts": ts, "channel": channel,
            "event_ts": ts,
        }  # fmt: skip
        return self.event(team_id, event)

    def command(self, team_id: str, channel: str, text: str) -> tuple[int, str]:
        self._n += 1
        form = {
            "token": "legacy", "team_id": team_id, "channel_id": channel, "user_id": "U1", "command": "/search",
            "text": text, "response_url": self.fake.response_url(f"cmd{self._n}"), "trigger_id": f"trig{self._n}",
        }  # fmt: skip
        return self.post(urlencode(form), "application/x-www-form-urlencoded")

    def _installed(self, team_id: str) -> bool:
        return any(w.team_id == team_id for w in self.fake.workspaces.values())


@pytest.fixture
def served(seed_service: Service, fake: FakeSlack, tmp_path: Path) -> Iterator[Served]:
    app = Served(seed_service, fake, oauth_settings(fake, tmp_path))
    yield app
    app.close()


def answers_in(fake: FakeSlack, channel: str) -> list[Call]:
    return [c for c in fake.calls_to("chat.postMessage") if c.params["channel"] == channel]


def state_file_bytes(service: Service) -> bytes:
    """The state database as it is on disk, with its write-ahead log (where new rows land first)."""
    path = service.state.path
    return b"".join(p.read_bytes() for p in sorted(path.parent.glob(path.name + "*")))


def stored(service: Service) -> list[tuple[Any, ...]]:
    """Every stored installation row, sealed values included."""
    return service.state._connect().execute("SELECT * FROM slack_installations ORDER BY team_id").fetchall()


def installed_rows(service: Service) -> int:
    return int(service.state._connect().execute("SELECT COUNT(*) FROM slack_installations").fetchone()[0])


# -- the install ---------------------------------------------------------------------------


def test_install_sends_the_browser_to_slack_with_a_state_and_the_manifests_scopes(served: Served) -> None:
    location, cookie = served.start_install()
    url = urlsplit(location)
    query = parse_qs(url.query)
    assert f"{url.scheme}://{url.netloc}{url.path}" == "https://slack.com/oauth/v2/authorize"
    assert query["client_id"] == [CLIENT_ID]
    assert query["scope"][0].split(",") == manifest_scopes() and "chat:write" in query["scope"][0]
    state = query["state"][0]
    assert len(state) >= 24 and cookie == f"slack-app-oauth-state={state}"
    # A second visit is a new install attempt, with its own state.
    assert parse_qs(urlsplit(served.start_install()[0]).query)["state"][0] != state


def test_the_redirect_stores_the_installation_sealed_and_says_so(served: Served, seed_service: Service) -> None:
    status, page = served.install("TAAA", "Acme <News>")
    assert status == 200, page
    assert "Byline is installed in Acme &lt;News&gt;" in page  # the workspace's name, escaped
    bot = served.adapter.oauth.installations.find_bot(enterprise_id=None, team_id="TAAA")  # type: ignore[union-attr]
    workspace = served.fake.workspace("TAAA")
    assert bot is not None and bot.bot_token == workspace.bot_token and bot.bot_user_id == workspace.bot_user_id
    on_disk = state_file_bytes(seed_service)
    assert b"TAAA" in on_disk  # the row is there, found by its team id...
    assert workspace.bot_token.encode() not in on_disk  # ...and its token only sealed
    assert b"xoxb-" not in on_disk and CLIENT_SECRET.encode() not in on_disk and KEY.encode() not in on_disk


def test_a_bad_replayed_or_foreign_state_is_refused_with_a_clear_page(served: Served, seed_service: Service) -> None:
    # A state this server never issued.
    location, cookie = served.start_install()
    code = served.fake.approve("TAAA", "Acme")
    status, page = served.come_back({"code": code, "state": "made-up"}, "slack-app-oauth-state=made-up")
    assert status == 401 and "expired or was already used" in page and "Start again" in page
    # Without the cookie /slack/install set: another browser (or someone else's link).
    state = parse_qs(urlsplit(location).query)["state"][0]
    status, page = served.come_back({"code": code, "state": state}, None)
    assert status == 400 and "another browser" in page
    assert not served.fake.calls_to("oauth.v2.access")  # the code was never even tried
    # The real one works once; sent again (a replay), it is refused and nothing changes.
    status, page = served.come_back({"code": code, "state": state}, cookie)
    assert status == 200 and "installed in Acme" in page
    status, page = served.come_back({"code": code, "state": state}, cookie)
    assert status == 401 and "already used" in page
    assert len(served.fake.calls_to("oauth.v2.access")) == 1 and installed_rows(seed_service) == 1
    # Cancelled on Slack's page.
    _, cookie = served.start_install()
    status, page = served.come_back({"error": "access_denied", "state": "x"}, cookie)
    assert "cancelled" in page and installed_rows(seed_service) == 1


def test_a_code_slack_refuses_installs_nothing(served: Served, seed_service: Service) -> None:
    location, cookie = served.start_install()
    state = parse_qs(urlsplit(location).query)["state"][0]
    status, page = served.come_back({"code": "code-never-issued", "state": state}, cookie)
    assert status == 401 and "did not accept the install code" in page
    assert installed_rows(seed_service) == 0


def test_a_state_works_once_and_only_before_it_expires(tmp_path: Path) -> None:
    state = BotState(tmp_path / STATE_FILE)
    try:
        expired = OAuthStates(state, expiration_seconds=-1)
        assert not expired.consume(expired.issue())
        states = OAuthStates(state)
        issued = states.issue()
        assert states.consume(issued) and not states.consume(issued) and not states.consume("")
    finally:
        state.close()


# -- answering each workspace with its own token --------------------------------------------


def test_each_workspace_is_answered_with_its_own_token(served: Served, fake: FakeSlack) -> None:
    assert served.install("TAAA", "Acme")[0] == 200
    assert served.install("TBBB", "Bravo")[0] == 200
    a, b = fake.workspace("TAAA"), fake.workspace("TBBB")
    assert served.mention("TAAA", "CAAA", "1700000001.000100")[0] == 200
    assert served.mention("TBBB", "CBBB", "1700000001.000200")[0] == 200
    answer_a = fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CAAA")
    answer_b = fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CBBB")
    assert answer_a.token == a.bot_token and answer_b.token == b.bot_token
    assert answer_a.params["thread_ts"] == "1700000001.000100" and "Mourinho" in answer_a.dump()
    # The 👀 (added from a timer's thread) and every other call of each request: its own token.
    for call in fake.calls:
        channel = str(call.params.get("channel", ""))
        if channel in {"CAAA", "CBBB"}:
            assert call.token == (a.bot_token if channel == "CAAA" else b.bot_token), call.method
    assert [c.token for c in fake.calls_to("reactions.add")] != []
    # bolt's authorize checked each token with auth.test, answered per workspace by the fake.
    assert {c.token for c in fake.calls_to("auth.test")} >= {a.bot_token, b.bot_token}


def test_each_workspace_has_its_own_bot_user(
    seed_service: Service, fake: FakeSlack, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A thread message that mentions Byline's user *in that workspace* is left to app_mention
    (Slack sends both), so on_message does not answer it a second time."""
    # One work thread: once the follow-up is answered, the message before it was handled.
    served = Served(seed_service, fake, oauth_settings(fake, tmp_path), workers=1)
    request.addfinalizer(served.close)
    served.install("TAAA", "Acme")
    served.install("TBBB", "Bravo")
    bot_b = fake.workspace("TBBB").bot_user_id
    served.mention("TBBB", "CBBB", "1700000001.000300")
    fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CBBB")

    def in_thread(text: str, ts: str) -> dict[str, Any]:
        return {
            "type": "message", "channel_type": "channel", "user": "U2", "text": text, "ts": ts,
            "thread_ts": "1700000001.000300", "channel": "CBBB", "event_ts": ts,
        }  # fmt: skip

    served.event("TBBB", in_thread(f"<@{bot_b}> and what did Kompany say?", "1700000001.000301"))
    served.mention("TBBB", "CBAR", "1700000001.000400")  # after it on the one work thread
    fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CBAR")
    assert len(answers_in(fake, "CBBB")) == 1


def test_a_digest_outside_any_request_posts_with_the_channels_workspace_token(served: Served, fake: FakeSlack) -> None:
    served.install("TAAA", "Acme")
    served.install("TBBB", "Bravo")
    served.mention("TBBB", "CBBB", "1700000002.000100")
    fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CBBB")
    served.adapter.poster.post("CBBB", TextReply("Your digest"))
    digest = fake.wait_call("chat.postMessage", lambda c: "Your digest" in c.dump())
    assert digest.token == fake.workspace("TBBB").bot_token
    with pytest.raises(DeliveryError, match="CNEVER.*no workspace Byline is installed in"):
        served.adapter.poster.post("CNEVER", TextReply("Your digest"))


# -- uninstall and revoked tokens -----------------------------------------------------------


def test_uninstall_deletes_the_installation_and_the_workspace_is_not_answered_again(
    served: Served, fake: FakeSlack, seed_service: Service
) -> None:
    served.install("TAAA", "Acme")
    served.install("TBBB", "Bravo")
    assert installed_rows(seed_service) == 2
    fake.uninstall("TAAA")
    assert served.event("TAAA", {"type": "app_uninstalled", "event_ts": "1700000003.000000"})[0] == 200
    deadline = time.monotonic() + 10
    while installed_rows(seed_service) != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    installations = served.adapter.oauth.installations  # type: ignore[union-attr]
    assert installations.find_bot(enterprise_id=None, team_id="TAAA") is None
    assert installations.find_bot(enterprise_id=None, team_id="TBBB") is not None
    # A late event from the uninstalled workspace is acknowledged, and nothing is posted for it;
    # the answer to the other workspace, asked after it, shows it would have been by then.
    assert served.mention("TAAA", "CAAA", "1700000003.000100")[0] == 200
    status, text = served.command("TAAA", "CAAA", "Kompany")
    assert status == 200 and "not installed in this workspace" in text
    served.mention("TBBB", "CBBB", "1700000003.000200")
    fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CBBB")
    assert not answers_in(fake, "CAAA") and not [c for c in fake.calls if "CAAA" in c.dump()]


def test_a_revoked_bot_token_is_forgotten(served: Served, fake: FakeSlack, seed_service: Service) -> None:
    served.install("TAAA", "Acme")
    bot_user = fake.workspace("TAAA").bot_user_id
    revoked = {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": [bot_user]}, "event_ts": "1700000004.0"}
    assert served.event("TAAA", revoked)[0] == 200
    deadline = time.monotonic() + 10
    while installed_rows(seed_service) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert installed_rows(seed_service) == 0


# -- restarts and keys ----------------------------------------------------------------------


def restarted(seed_service: Service, fake: FakeSlack, settings: Settings) -> tuple[Service, Served]:
    """A new process over the same data directory: a fresh state connection, service and adapter."""
    service = Service(seed_service.library, BotState(seed_service.library.data_dir / STATE_FILE), seed_service.limits)
    try:
        return service, Served(service, fake, settings)
    except BaseException:
        service.state.close()
        raise


def test_installations_survive_a_restart(seed_service: Service, fake: FakeSlack, tmp_path: Path) -> None:
    settings = oauth_settings(fake, tmp_path)
    first = Served(seed_service, fake, settings)
    first.install("TAAA", "Acme")
    first.close()
    service, second = restarted(seed_service, fake, settings)
    try:
        second.mention("TAAA", "CAAA", "1700000005.000100")
        answer = fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CAAA")
        assert answer.token == fake.workspace("TAAA").bot_token
    finally:
        second.close()
        service.state.close()


def test_a_wrong_key_stops_the_start_with_one_clear_line_and_loses_nothing(
    seed_service: Service, fake: FakeSlack, tmp_path: Path
) -> None:
    settings = oauth_settings(fake, tmp_path)
    first = Served(seed_service, fake, settings)
    first.install("TAAA", "Acme")
    first.close()
    before = stored(seed_service)
    other_key = Fernet.generate_key().decode()
    with pytest.raises(TokenKeyError) as refused:
        restarted(seed_service, fake, replace(settings, token_key=other_key))
    message = str(refused.value)
    assert "BYLINE_TOKEN_KEY does not open the Slack tokens" in message and "Nothing was changed" in message
    assert "\n" not in message and other_key not in message and KEY not in message
    assert stored(seed_service) == before and len(before) == 1
    # A new key first, the old one after it: the stored tokens still open, and new ones are
    # sealed with the new key.
    service, rotated = restarted(seed_service, fake, replace(settings, token_key=f"{other_key},{KEY}"))
    try:
        rotated.install("TBBB", "Bravo")
        rotated.mention("TAAA", "CAAA", "1700000006.000100")
        answer = fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CAAA")
        assert answer.token == fake.workspace("TAAA").bot_token
    finally:
        rotated.close()
        service.state.close()
    with pytest.raises(TokenKeyError):
        restarted(seed_service, fake, settings)  # TBBB was sealed with the new key only


# -- what is served, and what is checked ----------------------------------------------------


def test_only_the_install_pages_skip_the_signature_check(served: Served, fake: FakeSlack) -> None:
    assert served.request("POST", "/slack/install", b"x=1", {"Content-Type": "text/plain"})[0] == 405
    assert served.request("GET", "/slack/install", b"x=1", {"Content-Type": "text/plain"})[0] == 400
    assert served.request("GET", "/slack/events")[0] == 405
    assert served.request("GET", "/slack/installx")[0] == 404
    assert served.request("GET", "/slack/install/../events")[0] == 404
    unsigned = json.dumps({"type": "event_callback", "team_id": "TAAA", "event": {"type": "app_uninstalled"}})
    status, _, _ = served.request("POST", "/slack/events", unsigned.encode(), {"Content-Type": "application/json"})
    assert status == 401


def test_with_one_token_there_are_no_install_pages(
    seed_service: Service, fake: FakeSlack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = oauth_settings(fake, tmp_path, slack_client_id="", slack_client_secret="", token_key="")
    single = Served(seed_service, fake, replace(settings, slack_bot_token="xoxb-test-token"))
    try:
        assert single.request("GET", "/slack/install")[0] == 404
        assert single.request("GET", "/slack/oauth_redirect?code=x&state=y")[0] == 404
        single.mention("T0001", "C1", "1700000007.000100")
        assert fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "C1").token == "xoxb-test-token"
        # Nothing to delete, but the operator is told why Slack will refuse the token from now on.
        assert single.event("T0001", {"type": "app_uninstalled", "event_ts": "1700000007.2"})[0] == 200
        deadline = time.monotonic() + 10
        while "uninstalled from the workspace" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "SLACK_BOT_TOKEN no longer works" in caplog.text
    finally:
        single.close()


def test_no_token_or_secret_reaches_the_logs_even_at_debug(
    served: Served, fake: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    served.install("TAAA", "Acme")
    served.mention("TAAA", "CAAA", "1700000008.000100")
    fake.wait_call("chat.postMessage", lambda c: c.params["channel"] == "CAAA")
    served.event("TAAA", {"type": "app_uninstalled", "event_ts": "1700000008.2"})
    token = fake.workspace("TAAA").bot_token
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert "oauth.v2.access" in logged or "installed in workspace Acme" in logged  # the flow was logged...
    for secret in (token, CLIENT_SECRET, KEY):
        assert secret not in logged  # ...and never a token, the client secret or the key


# -- settings ---------------------------------------------------------------------------------


def test_oauth_settings_are_checked_before_anything_starts(tmp_path: Path) -> None:
    base = {
        "BYLINE_DATA_DIR": str(tmp_path / "data"),
        "SLACK_CLIENT_ID": CLIENT_ID,
        "SLACK_CLIENT_SECRET": CLIENT_SECRET,
        "SLACK_SIGNING_SECRET": SECRET,
        "BYLINE_SLACK_MODE": "http",
    }
    with pytest.raises(SettingsError, match=r"^BYLINE_TOKEN_KEY is not set: .*Fernet.generate_key"):
        Settings.from_env(base)
    with pytest.raises(SettingsError, match=r"^BYLINE_TOKEN_KEY must be .*Fernet keys") as bad:
        Settings.from_env(base | {"BYLINE_TOKEN_KEY": "not-a-real-key-but-secret"})
    assert "not-a-real-key-but-secret" not in str(bad.value)
    with pytest.raises(SettingsError, match=r"^SLACK_CLIENT_ID needs BYLINE_SLACK_MODE=http"):
        Settings.from_env(base | {"BYLINE_TOKEN_KEY": KEY, "BYLINE_SLACK_MODE": "socket"})
    with pytest.raises(SettingsError, match=r"SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set"):
        Settings.from_env(base | {"BYLINE_TOKEN_KEY": KEY, "SLACK_BOT_TOKEN": "xoxb-1"})
    with pytest.raises(SettingsError, match=r"^SLACK_CLIENT_SECRET is not set"):
        Settings.from_env({k: v for k, v in base.items() if k != "SLACK_CLIENT_SECRET"} | {"BYLINE_TOKEN_KEY": KEY})
    settings = Settings.from_env(base | {"BYLINE_TOKEN_KEY": f"{KEY}, {Fernet.generate_key().decode()}"})
    assert settings.slack_enabled and settings.slack_oauth
    assert CLIENT_SECRET in settings.secrets() and KEY in settings.secrets()
    assert CLIENT_SECRET not in repr(settings) and KEY not in repr(settings)
