"""Hostile requests to the Slack HTTP endpoint (issue 16, attacks 3 and 4), against the real bolt app
served on 127.0.0.1: nothing is parsed before the signature is checked, bodies are capped before
they are read, refusals are short and logged sparingly, and a replayed signature is refused."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import logging
import select
import socket
import threading
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest

from bot.platforms.slack.http_guard import WINDOW_S, Refusal, RefusalLog, SignatureLedger, SlackHttpGuard
from tests.bot.test_slack import SECRET, Bolt, fake, no_handler_errors  # noqa: F401

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIEnvironment

PATH = "/slack/events"
MARKER = "BODY-MARKER-7f3a"
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"

# Bodies bolt cannot parse: today each gives a 500 and a traceback before the signature is looked at.
MALFORMED = {
    "json": (b'{"type": "event_callback", ' + MARKER.encode(), JSON),
    "json-list": (b"[1, 2, 3]", JSON),
    "json-wrong-types": (b'{"team": 5, "text": "' + MARKER.encode() + b'"}', JSON),
    "not-utf8": (b"{\xff\xfe" + MARKER.encode(), JSON),
    "form-payload": (b"payload=%7Bnot-json-" + MARKER.encode(), FORM),
    "form-payload-list": (b"payload=%5B1%5D", FORM),
}


def sign(body: bytes, ts: str, secret: str = SECRET) -> str:
    digest = hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return f"v0={digest}"


def signed(body: bytes, age: int = 0) -> dict[str, str]:
    ts = str(int(time.time()) - age)
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sign(body, ts)}


# Ways of not being Slack: headers for a body, given the body.
UNSIGNED = {
    "no-headers": lambda body: {},
    "wrong-secret": lambda body: (
        {"X-Slack-Request-Timestamp": str(int(time.time()))}
        | {"X-Slack-Signature": sign(body, str(int(time.time())), "not-the-secret")}
    ),
    "stale": lambda body: signed(body, age=6 * 60),
    "future": lambda body: signed(body, age=-6 * 60),
    "non-numeric-ts": lambda body: {"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": sign(body, "soon")},
    "float-ts": lambda body: {"X-Slack-Request-Timestamp": f"{time.time():.3f}", "X-Slack-Signature": "v0=00"},
    "garbage-signature": lambda body: (
        {"X-Slack-Request-Timestamp": str(int(time.time()))} | {"X-Slack-Signature": "v0=\u00e9\u00e9"}
    ),
}


def send(
    bolt: Bolt,  # noqa: F811
    body: bytes,
    headers: dict[str, str],
    content_type: str = JSON,
    length: str | None = None,
    send_bytes: int | None = None,
    timeout: float = 10.0,
) -> tuple[int, bytes]:
    """A POST to the adapter's endpoint (see ``send_to``)."""
    return send_to(bolt.server.server_port, body, headers, content_type, length, send_bytes, timeout)


def send_to(
    port: int,
    body: bytes,
    headers: dict[str, str],
    content_type: str = JSON,
    length: str | None = None,
    send_bytes: int | None = None,
    timeout: float = 10.0,
) -> tuple[int, bytes]:
    """A POST over a raw connection, so that tests can lie about the length or send only part of it."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.putrequest("POST", PATH)
        connection.putheader("Content-Type", content_type)
        if length is None:
            length = str(len(body))
        if length != "":
            connection.putheader("Content-Length", length)
        for name, value in headers.items():
            connection.putheader(name, value.encode("utf-8").decode("latin-1"))
        connection.endheaders()
        connection.send(body if send_bytes is None else body[:send_bytes])
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> LogView:
    caplog.set_level(logging.DEBUG)
    return LogView(caplog, capfd)


class LogView:
    """Everything logged (every logger, at DEBUG) and written to stderr (where wsgiref puts tracebacks)."""

    def __init__(self, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> None:
        self.caplog = caplog
        self.capfd = capfd
        self._err = ""

    def text(self) -> str:
        self._err += self.capfd.readouterr().err
        return self.caplog.text + self._err

    def refusals(self) -> list[str]:
        return [r.getMessage() for r in self.caplog.records if r.name.startswith("byline") and "refused" in r.msg]


def assert_quiet(logs: LogView) -> None:
    text = logs.text()
    assert "Traceback" not in text
    assert MARKER not in text, "a refused body reached the log"
    assert len(text) < 20_000, f"{len(text)} characters logged"


@pytest.mark.parametrize("how", sorted(UNSIGNED))
@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_unverified_malformed_requests_get_401_and_no_traceback(
    bolt: Bolt,  # noqa: F811
    logs: LogView,
    kind: str,
    how: str,
) -> None:
    body, content_type = MALFORMED[kind]
    status, reply = send(bolt, body, UNSIGNED[how](body), content_type)
    assert status == 401
    assert len(reply) < 200 and b"Traceback" not in reply
    assert_quiet(logs)


@pytest.mark.parametrize("how", ["non-numeric-ts", "float-ts"])
def test_well_formed_requests_with_a_bad_timestamp_get_401(bolt: Bolt, logs: LogView, how: str) -> None:  # noqa: F811
    body = json.dumps({"type": "event_callback", "event_id": "Ev1", "event": {"type": "app_mention"}}).encode()
    assert send(bolt, body, UNSIGNED[how](body))[0] == 401
    assert_quiet(logs)


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_signed_malformed_requests_get_400_not_500(bolt: Bolt, logs: LogView, kind: str) -> None:  # noqa: F811
    body, content_type = MALFORMED[kind]
    status, reply = send(bolt, body, signed(body), content_type)
    assert status == 400
    assert b"Traceback" not in reply and len(reply) < 200
    assert_quiet(logs)


def test_a_10_mb_body_is_refused_before_it_is_read(bolt: Bolt, logs: LogView) -> None:  # noqa: F811
    # The client declares 10 MB but sends only 64 KB and waits: a server that reads the body first
    # waits with it (and would hold all 10 MB in memory); one that checks the length answers at once.
    body = b"{" + MARKER.encode() + b"x" * (10 * 1024 * 1024)
    started = time.monotonic()
    status, reply = send(bolt, body, {}, send_bytes=64 * 1024, timeout=5)
    assert status == 413 and b"1 MB" in reply
    assert time.monotonic() - started < 5
    # Signed or not makes no difference: the length is checked first.
    assert send(bolt, body, signed(body), send_bytes=64 * 1024, timeout=5)[0] == 413
    assert_quiet(logs)
    # The server is unharmed: a normal signed event still goes through.
    event = {"type": "url_verification", "challenge": "still-up", "token": "x"}
    assert bolt.post(json.dumps(event), JSON)[1].find("still-up") >= 0


@pytest.mark.parametrize(("length", "status"), [("", 411), ("many", 400), ("-5", 400), ("1e3", 400)])
def test_a_missing_or_invalid_length_is_refused(bolt: Bolt, logs: LogView, length: str, status: int) -> None:  # noqa: F811
    body, _ = MALFORMED["json"]
    assert send(bolt, body, signed(body), length=length, timeout=5)[0] == status
    assert_quiet(logs)


def test_refusals_are_logged_once_per_second_per_address_without_the_body(bolt: Bolt, logs: LogView) -> None:  # noqa: F811
    body, _ = MALFORMED["json"]
    started = time.monotonic()
    for _ in range(30):
        assert send(bolt, body, {})[0] == 401
    elapsed = time.monotonic() - started
    refusals = logs.refusals()
    assert 1 <= len(refusals) <= 1 + int(elapsed), refusals
    assert "127.0.0.1" in refusals[0] and "401" in refusals[0]
    assert_quiet(logs)


def test_a_replayed_slash_command_is_answered_once(bolt: Bolt, logs: LogView) -> None:  # noqa: F811
    form = {
        "token": "legacy", "team_id": "T0001", "channel_id": "C1", "user_id": "U1", "command": "/sources",
        "text": "", "response_url": bolt.fake.response_url("replayed"), "trigger_id": "trig-replayed",
    }  # fmt: skip
    body = urlencode(form).encode()
    headers = signed(body)
    assert send(bolt, body, headers, FORM)[0] == 200
    # An attacker who captured the request sends it again, byte for byte, inside the 5 minutes.
    for _ in range(3):
        assert send(bolt, body, headers, FORM)[0] in {401, 409}
    bolt.response("replayed")
    # A later command's answer is in: a replay that got through would have been answered by now too.
    bolt.response(bolt.command("/sources", ""))
    assert len(bolt.fake.calls_to("response:replayed")) == 1
    assert_quiet(logs)


def test_an_unsigned_ssl_check_is_answered_and_runs_nothing(bolt: Bolt) -> None:  # noqa: F811
    # Slack's certificate check of a slash command URL; bolt answers it without a signature too.
    status, _ = send(bolt, b"ssl_check=1&token=legacy", {}, FORM)
    assert status == 200
    body = urlencode({"ssl_check": "1", "command": "/sources", "response_url": bolt.fake.response_url("x")})
    assert send(bolt, body.encode(), {}, FORM)[0] == 401


def test_a_trickled_body_is_dropped_at_the_deadline_and_never_reaches_the_app() -> None:
    # The guard alone in front of a recording app, with a 1 s deadline instead of the default 10 s.
    reached: list[bytes] = []

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> list[bytes]:
        reached.append(environ["wsgi.input"].read())
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    guard = SlackHttpGuard(app, SECRET, PATH, read_deadline=1.0)
    server = make_server("127.0.0.1", 0, guard, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        body = json.dumps({"type": "url_verification", "challenge": "slow", "token": "x"}).encode()
        with socket.create_connection(("127.0.0.1", server.server_port), timeout=10) as client:
            head = [f"POST {PATH} HTTP/1.1", "Host: x", f"Content-Type: {JSON}", f"Content-Length: {len(body)}"]
            head += [f"{name}: {value}" for name, value in signed(body).items()]
            client.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
            started, reply = time.monotonic(), b""
            for byte in body:  # one byte every 0.1 s, until the server answers: the whole body takes 7 s
                client.sendall(bytes([byte]))
                if select.select([client], [], [], 0.1)[0]:
                    reply = client.recv(4096)
                    break
        assert reply.startswith(b"HTTP/1.0 408") or reply.startswith(b"HTTP/1.1 408"), reply
        assert time.monotonic() - started < 4
        assert not reached
        # The same body sent at once is handed to the app, byte for byte.
        assert send_to(server.server_port, body, signed(body))[0] == 200 and reached == [body]
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass


def test_the_replay_memory_and_the_refusal_log_stay_bounded(caplog: pytest.LogCaptureFixture) -> None:
    ledger = SignatureLedger(size=100)
    now = 1_700_000_000.0
    for n in range(10_000):  # a flood of distinct, valid signatures: memory stays at the bound
        assert ledger.first_time(n.to_bytes(32, "big"), now + WINDOW_S, now)
    assert len(ledger) <= 100
    assert not ledger.first_time((9_999).to_bytes(32, "big"), now + WINDOW_S, now)  # the newest is remembered
    # Once its timestamp has left the window a signature is forgotten (it would be refused as stale anyway).
    assert ledger.first_time(b"later", now + 2 * WINDOW_S, now + WINDOW_S + 1) and len(ledger) == 1

    caplog.set_level(logging.WARNING, logger="byline.slack")
    log = RefusalLog(size=50)
    for n in range(5_000):  # 5,000 addresses in one second: 50 lines and one for the others
        log.refused(f"10.0.{n // 256}.{n % 256}", Refusal(401, "unsigned"), 100.0 + n / 10_000)
    lines = [r.getMessage() for r in caplog.records if "refused a request" in r.getMessage()]
    assert len(lines) == 51 and "other addresses" in lines[-1]
