"""A local fake of Slack for tests: the Web API and response URLs over HTTP, and a Socket Mode
websocket server, all on 127.0.0.1 with ports chosen by the OS.

It records every call so that tests can assert on what reached "Slack" (channel, thread,
blocks, ephemeral or public) and can make methods fail (bad tokens, missing channels, 429s).

For installs in many workspaces it plays Slack's side of OAuth v2: ``approve`` stands for a
person clicking "Allow" on Slack's authorize page (it returns the code Slack would send back),
``oauth.v2.access`` swaps that code, once, for a new bot token of that workspace, and
``auth.test`` answers for each such token with its own workspace; ``uninstall`` revokes them.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from websockets.sync.server import ServerConnection, serve

BOT_USER = "UBOT"
BOT_ID = "BBOT"
TEAM = "T0001"
CLIENT_ID = "1111111111.2222222222"
CLIENT_SECRET = "fake-client-secret-0123456789abcdef"


@dataclass
class FakeWorkspace:
    """A workspace Byline was installed in through the fake's OAuth, with its own bot token."""

    team_id: str
    team_name: str
    installer: str
    bot_token: str
    bot_user_id: str
    bot_id: str
    scopes: str


@dataclass
class Call:
    """One request that reached the fake: a Web API method or a response URL."""

    method: str
    params: dict[str, Any]
    token: str = ""
    status: int = 200
    at: float = field(default_factory=time.monotonic)  # when it reached the fake, for latencies

    def dump(self) -> str:
        return json.dumps(self.params, ensure_ascii=False)


@dataclass
class FakeSlack:
    """The fake Web API (``/api/METHOD``) and response URLs (``/response/NAME``)."""

    bad_tokens: set[str] = field(default_factory=lambda: {"xoxb-bad-token"})
    missing_channels: set[str] = field(default_factory=lambda: {"CGONE"})
    calls: list[Call] = field(default_factory=list)
    rate_limits: dict[str, int] = field(default_factory=dict)
    retry_after: str = "0"
    # Method (or "response:NAME") -> how many of its next calls answer 500 and are not done.
    server_errors: dict[str, int] = field(default_factory=dict)
    socket: FakeSocketMode | None = None
    # OAuth: codes issued by ``approve`` (each works once) and the workspaces installed by them.
    codes: dict[str, FakeWorkspace] = field(default_factory=dict)
    workspaces: dict[str, FakeWorkspace] = field(default_factory=dict)  # by bot token

    def __post_init__(self) -> None:
        self._changed = threading.Condition()
        self._ts = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                fake._handle(self)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    @property
    def api_url(self) -> str:
        return f"{self.base}/api/"

    def response_url(self, name: str) -> str:
        return f"{self.base}/response/{name}"

    def approve(self, team_id: str, team_name: str, installer: str = "UINSTALLER", scopes: str = "") -> str:
        """Someone allowed the install on Slack's authorize page: the code Slack redirects back with."""
        number = next(_WORKSPACE_NUMBERS)
        workspace = FakeWorkspace(
            team_id=team_id,
            team_name=team_name,
            installer=installer,
            bot_token=f"xoxb-{team_id}-{secrets.token_hex(12)}",
            bot_user_id=f"UBOT{number}",
            bot_id=f"BBOT{number}",
            scopes=scopes,
        )
        code = f"code-{secrets.token_hex(8)}"
        with self._changed:
            self.codes[code] = workspace
        return code

    def workspace(self, team_id: str) -> FakeWorkspace:
        """The (latest) installation in ``team_id``."""
        with self._changed:
            return [w for w in self.workspaces.values() if w.team_id == team_id][-1]

    def uninstall(self, team_id: str) -> None:
        """The app was removed from the workspace: its tokens stop working."""
        with self._changed:
            for token, workspace in list(self.workspaces.items()):
                if workspace.team_id == team_id:
                    self.bad_tokens.add(token)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self.socket:
            self.socket.close()

    # -- what tests look at --------------------------------------------------------------

    def calls_to(self, method: str) -> list[Call]:
        with self._changed:
            return [c for c in self.calls if c.method == method and c.status == 200]

    def wait_for(self, predicate: Callable[[list[Call]], bool], timeout: float = 30.0) -> list[Call]:
        """Waits (on a condition variable, not sleeps) until ``predicate(calls)`` holds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self.calls):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting; calls so far: {[c.method for c in self.calls]}")
                self._changed.wait(left)
            return list(self.calls)

    def wait_call(self, method: str, where: Callable[[Call], bool] = lambda c: True, timeout: float = 30.0) -> Call:
        """The first successful call to ``method`` matching ``where``, waiting for it."""
        found: list[Call] = []

        def done(calls: list[Call]) -> bool:
            found[:] = [c for c in calls if c.method == method and c.status == 200 and where(c)]
            return bool(found)

        self.wait_for(done, timeout)
        return found[0]

    # -- the server side -----------------------------------------------------------------

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length).decode() if length else ""
        if "json" in (request.headers.get("Content-Type") or ""):
            params = json.loads(raw or "{}")
        else:
            params = dict(parse_qsl(raw))
        token = (request.headers.get("Authorization") or "").removeprefix("Bearer ")
        path = request.path.split("?")[0]
        if path.startswith("/response/"):
            name = f"response:{path.rsplit('/', 1)[1]}"
            with self._changed:
                failing = self.server_errors.get(name, 0) > 0
                if failing:
                    self.server_errors[name] -= 1
            self._record(Call(name, params, token, status=500 if failing else 200))
            if failing:
                self._reply(request, 500, b"Internal Server Error", "text/plain")
                return
            self._reply(request, 200, b"ok", "text/plain")
            return
        method = path.removeprefix("/api/")
        with self._changed:
            limited = self.rate_limits.get(method, 0) > 0
            if limited:
                self.rate_limits[method] -= 1
            failing = not limited and self.server_errors.get(method, 0) > 0
            if failing:
                self.server_errors[method] -= 1
        if limited:
            self._record(Call(method, params, token, status=429))
            retry = {"Retry-After": self.retry_after}
            self._reply(request, 429, b'{"ok": false, "error": "ratelimited"}', headers=retry)
            return
        if failing:
            self._record(Call(method, params, token, status=500))
            self._reply(request, 500, b"Internal Server Error", "text/plain")
            return
        self._record(Call(method, params, token))
        body = self._answer(method, params, token)
        self._reply(request, 200, json.dumps(body).encode())

    def _record(self, call: Call) -> None:
        with self._changed:
            self.calls.append(call)
            self._changed.notify_all()

    def _answer(self, method: str, params: dict[str, Any], token: str) -> dict[str, Any]:
        if method == "oauth.v2.access":
            return self._oauth_access(params, token)
        if token in self.bad_tokens:
            return {"ok": False, "error": "invalid_auth"}
        if not token:
            return {"ok": False, "error": "not_authed"}
        installed = self.workspaces.get(token)
        if method == "auth.test" and installed is not None:
            return {
                "ok": True, "url": f"https://{installed.team_id.lower()}.fake.slack.com/", "team": installed.team_name,
                "user": "byline", "team_id": installed.team_id, "user_id": installed.bot_user_id,
                "bot_id": installed.bot_id,
            }  # fmt: skip
        if method == "auth.test":
            return {
                "ok": True, "url": "https://fake.slack.com/", "team": "Fake", "user": "byline",
                "team_id": TEAM, "user_id": BOT_USER, "bot_id": BOT_ID,
            }  # fmt: skip
        if method == "apps.connections.open":
            if self.socket is None:
                return {"ok": False, "error": "not_allowed_token_type"}
            return {"ok": True, "url": self.socket.url}
        channel = str(params.get("channel", ""))
        if channel in self.missing_channels:
            return {"ok": False, "error": "channel_not_found"}
        if method in {"chat.postMessage", "chat.update"}:
            with self._changed:
                self._ts += 1
                ts = f"1700000000.{self._ts:06d}"
            return {"ok": True, "channel": channel, "ts": ts, "message": {"text": params.get("text", ""), "ts": ts}}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": "1700000000.999999"}
        return {"ok": True}

    def _oauth_access(self, params: dict[str, Any], authorization: str) -> dict[str, Any]:
        """``oauth.v2.access``: the app's credentials (HTTP Basic, as slack_sdk sends them) and a code."""
        try:
            pair = base64.b64decode(authorization.removeprefix("Basic ")).decode()
        except (binascii.Error, UnicodeDecodeError):
            pair = ""
        if pair != f"{CLIENT_ID}:{CLIENT_SECRET}":
            return {"ok": False, "error": "invalid_client_id"}
        with self._changed:
            workspace = self.codes.pop(str(params.get("code", "")), None)
            if workspace is None:
                return {"ok": False, "error": "invalid_code"}
            self.workspaces[workspace.bot_token] = workspace
        return {
            "ok": True, "app_id": "A0001", "authed_user": {"id": workspace.installer}, "scope": workspace.scopes,
            "token_type": "bot", "access_token": workspace.bot_token, "bot_user_id": workspace.bot_user_id,
            "team": {"id": workspace.team_id, "name": workspace.team_name}, "enterprise": None,
            "is_enterprise_install": False,
        }  # fmt: skip

    @staticmethod
    def _reply(
        request: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        content_type: str = "application/json; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> None:
        request.send_response(status)
        request.send_header("Content-Type", content_type)
        request.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            request.send_header(name, value)
        request.end_headers()
        request.wfile.write(body)


_WORKSPACE_NUMBERS = itertools.count(1)


class FakeSocketMode:
    """A Socket Mode websocket server: says ``hello``, pushes envelopes, collects the acks."""

    def __init__(self) -> None:
        self.acks: list[dict[str, Any]] = []
        self.connections = 0
        # Envelope ids whose ack makes the fake drop the connection: the answer is then still
        # being prepared, and must arrive once while the client reconnects.
        self.drop_after_ack: set[str] = set()
        self.dropped_at: list[float] = []
        self.connected_at: list[float] = []
        self._changed = threading.Condition()
        self._connection: ServerConnection | None = None
        self.server = serve(self._serve, "127.0.0.1", 0)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.server.socket.getsockname()[1]}/link/?ticket=fake"

    def _serve(self, connection: ServerConnection) -> None:
        with self._changed:
            self._connection = connection
            self.connections += 1
            self.connected_at.append(time.monotonic())
            self._changed.notify_all()
        connection.send(json.dumps({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0001"}}))
        try:
            for message in connection:
                data = json.loads(message)
                with self._changed:
                    self.acks.append(data)
                    self._changed.notify_all()
                    drop = data.get("envelope_id") in self.drop_after_ack
                if drop:
                    self.dropped_at.append(time.monotonic())
                    connection.close()
                    return
        except Exception:  # noqa: BLE001 - a dropped client just ends this connection
            pass

    def wait_connected(self, timeout: float = 30.0, connections: int = 1) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: self.connections >= connections, timeout):
                raise AssertionError(f"the Socket Mode client never made connection #{connections}")

    def push(self, envelope: dict[str, Any]) -> None:
        assert self._connection is not None
        self._connection.send(json.dumps(envelope))

    def wait_ack(self, envelope_id: str, timeout: float = 30.0) -> dict[str, Any]:
        with self._changed:
            found = self._changed.wait_for(
                lambda: [a for a in self.acks if a.get("envelope_id") == envelope_id], timeout
            )
            if not found:
                raise AssertionError(f"no ack for {envelope_id}; acks: {self.acks}")
            return found[0]

    def close(self) -> None:
        self.server.shutdown()
