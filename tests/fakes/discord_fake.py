"""A small fake of Discord's REST API and gateway, for the real discord.py client over real sockets.

It runs an aiohttp server on 127.0.0.1 (a free port) in its own thread and event loop. REST calls
are recorded (method, path, JSON body) for tests to assert on; the gateway says HELLO, ACKs
heartbeats, answers IDENTIFY with READY and GUILD_CREATE, and lets a test push any dispatch event
(MESSAGE_CREATE, INTERACTION_CREATE). Responses are JSON with the exact Content-Type
``application/json``, since discord.py parses nothing else.

The gateway is shard-aware, as Discord's is: a connection that identifies with ``shard: [id,
count]`` gets READY for that shard, GUILD_CREATE only for its guilds (``(guild_id >> 22) % count ==
id``), and only its guilds' events; DMs go to shard 0. A connection without ``shard`` is shard 0 of
1 and gets everything, so an unsharded client sees the fake as before.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

APP_ID = 900000000000000001
BOT_ID = APP_ID
GUILD_ID = 900000000000000100
CHANNEL_ID = 900000000000000200
DM_CHANNEL_ID = 900000000000000300
USER_ID = 900000000000000400
THREAD_ID = 900000000000000600
OTHER_BOT_ID = 900000000000000500
GOOD_TOKEN = "fake.discord-token.for-tests"
TIMESTAMP = "2026-01-01T00:00:00.000000+00:00"

BOT_USER = {
    "id": str(BOT_ID),
    "username": "Byline",
    "discriminator": "0",
    "global_name": "Byline",
    "avatar": None,
    "bot": True,
}
HUMAN = {"id": str(USER_ID), "username": "reader", "discriminator": "0", "global_name": "Reader", "avatar": None}
OTHER_BOT = {"id": str(OTHER_BOT_ID), "username": "other", "discriminator": "0", "avatar": None, "bot": True}


@dataclass
class Recorded:
    """One REST request as it reached the fake."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    status: int = 200
    at: float = field(default_factory=time.monotonic)  # when it reached the fake, for latencies


@dataclass
class DiscordFake:
    """The fake platform. ``start()`` binds it; ``api_url`` / ``gateway_url`` point clients at it."""

    token: str = GOOD_TOKEN
    forbidden_channels: set[int] = field(default_factory=set)
    missing_channels: set[int] = field(default_factory=set)
    requests: list[Recorded] = field(default_factory=list)
    messages: dict[int, dict[str, Any]] = field(default_factory=dict)
    identifies: int = 0
    identify_payloads: list[dict[str, Any]] = field(default_factory=list)
    resumes: int = 0
    heartbeats: list[float] = field(default_factory=list)  # monotonic times of op 1 frames
    heartbeat_interval_ms: int = 41250
    # Guild text channels: the first is CHANNEL_ID; load tests add more.
    channels: list[int] = field(default_factory=lambda: [CHANNEL_ID])
    # Guilds besides GUILD_ID, each with its text channels (shard tests put guilds on every shard).
    other_guilds: dict[int, list[int]] = field(default_factory=dict)
    # Each dispatch as delivered: (event, the payload's "id", (shard id, shard count) of the socket).
    deliveries: list[tuple[str, str, tuple[int, int]]] = field(default_factory=list)
    # Faults, each used once: (fragment of "METHOD /path", HTTP status) answered instead of the
    # route (429 comes with Retry-After), and fragments whose request drops every gateway socket.
    fail_next: list[tuple[str, int]] = field(default_factory=list)
    drop_gateway_on: list[str] = field(default_factory=list)
    # Files "uploaded" to the fake CDN: path under /attachments/ -> bytes (see ``attachment``).
    files: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1_200_000_000_000_000_000)
        self._lock = threading.Lock()
        self._sockets: list[web.WebSocketResponse] = []
        # (shard id, shard count) of each identified socket, and of each session for a RESUME.
        self._shards: dict[web.WebSocketResponse, tuple[int, int]] = {}
        self._session_shards: dict[str, tuple[int, int]] = {}
        self._seq = itertools.count(1)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="discord-fake", daemon=True)
        self.port = 0

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> DiscordFake:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)
        return self

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        app.router.add_get("/attachments/{tail:.*}", self._cdn)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    def next_id(self) -> int:
        return next(self._ids)

    # -- guilds and shards -------------------------------------------------------------

    def guild_ids(self) -> list[int]:
        return [GUILD_ID, *self.other_guilds]

    def guild_of(self, channel_id: int) -> int:
        """The guild a channel is in (GUILD_ID for any channel not in another guild)."""
        return next((g for g, channels in self.other_guilds.items() if channel_id in channels), GUILD_ID)

    @staticmethod
    def shard_of(guild_id: int, shard_count: int) -> int:
        """Discord's rule for which shard receives a guild's events."""
        return (guild_id >> 22) % shard_count

    def _receives(self, socket: web.WebSocketResponse, data: dict[str, Any]) -> bool:
        shard, count = self._shards.get(socket, (0, 1))
        guild = data.get("guild_id")
        # Events outside any guild (DMs) go to shard 0 only.
        return shard == (self.shard_of(int(guild), count) if guild else 0)

    # -- what tests use ----------------------------------------------------------------

    def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a gateway dispatch event to every connected client whose shard owns its guild."""
        asyncio.run_coroutine_threadsafe(self._dispatch(event, data), self.loop).result(5)

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
        """Poll until ``predicate()`` is truthy (other tests share the CPUs: never a fixed sleep)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = predicate()
            if result:
                return result
            time.sleep(0.02)
        raise AssertionError(
            f"timed out after {timeout}s waiting for {what}; requests: {[(r.method, r.path) for r in self.requests]}"
        )

    def find(self, method: str, fragment: str, start: int = 0) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests[start:] if r.method == method and fragment in r.path]

    def wait_request(
        self, method: str, fragment: str, start: int = 0, count: int = 1, timeout: float = 30.0
    ) -> list[Recorded]:
        return self.wait_for(
            lambda: (found := self.find(method, fragment, start)) and len(found) >= count and found,
            timeout,
            f"{method} {fragment}",
        )

    def mark(self) -> int:
        """Where the request log stands now, for ``find(..., start=mark)``."""
        with self._lock:
            return len(self.requests)

    # -- payloads ----------------------------------------------------------------------

    def channel_payload(self, channel_id: int = CHANNEL_ID) -> dict[str, Any]:
        return {
            "id": str(channel_id),
            "type": 0,
            "guild_id": str(self.guild_of(channel_id)),
            "name": "news",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
        }

    def thread_payload(self) -> dict[str, Any]:
        """A public thread Byline started under the test channel."""
        metadata = {"archived": False, "auto_archive_duration": 1440, "archive_timestamp": TIMESTAMP, "locked": False}
        return {
            **self.channel_payload(THREAD_ID),
            "type": 11,
            "name": "Byline thread",
            "parent_id": str(CHANNEL_ID),
            "owner_id": str(BOT_ID),
            "thread_metadata": metadata,
            "message_count": 1,
            "member_count": 2,
            "rate_limit_per_user": 0,
            "flags": 0,
        }

    def guild_payload(self) -> dict[str, Any]:
        """GUILD_ID's GUILD_CREATE: its channels and Byline's thread."""
        return self._guild(
            GUILD_ID, "Newsroom", [self.channel_payload(c) for c in self.channels], [self.thread_payload()]
        )

    def other_guild_payload(self, guild_id: int) -> dict[str, Any]:
        channels = [{**self.channel_payload(c), "name": f"news-{i}"} for i, c in enumerate(self.other_guilds[guild_id])]
        return self._guild(guild_id, f"Guild {guild_id}", channels, [])

    def _guild(
        self, guild_id: int, name: str, channels: list[dict[str, Any]], threads: list[dict[str, Any]]
    ) -> dict[str, Any]:
        everyone = {
            "id": str(guild_id),
            "name": "@everyone",
            "permissions": str(1024 | 2048 | 65536),
            "position": 0,
            "color": 0,
            "hoist": False,
            "managed": False,
            "mentionable": False,
            "flags": 0,
        }
        moderators = {**everyone, "id": str(guild_id + 1), "name": "mods", "permissions": str(1 << 4), "position": 1}
        return {
            "id": str(guild_id),
            "name": name,
            "icon": None,
            "owner_id": str(guild_id + 99),
            "roles": [everyone, moderators],
            "channels": channels,
            "threads": threads,
            "members": [],
            "member_count": 3,
            "large": False,
            "unavailable": False,
            "features": [],
            "emojis": [],
            "stickers": [],
            "voice_states": [],
            "presences": [],
            "joined_at": TIMESTAMP,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "premium_tier": 0,
            "preferred_locale": "en-US",
            "system_channel_flags": 0,
        }

    def member_payload(self, user: dict[str, Any] | None = None, roles: list[int] | None = None) -> dict[str, Any]:
        return {
            "user": user or HUMAN,
            "roles": [str(r) for r in roles or []],
            "joined_at": TIMESTAMP,
            "deaf": False,
            "mute": False,
            "flags": 0,
        }

    def message_payload(
        self,
        content: str,
        *,
        author: dict[str, Any] | None = None,
        channel_id: int = CHANNEL_ID,
        guild: bool = True,
        mentions: list[dict[str, Any]] | None = None,
        reference: dict[str, Any] | None = None,
        roles: list[int] | None = None,
    ) -> dict[str, Any]:
        """A user's MESSAGE_CREATE payload; ``reference`` is a message it replies to."""
        author = author or HUMAN
        data: dict[str, Any] = {
            "id": str(self.next_id()),
            "channel_id": str(channel_id),
            "type": 19 if reference else 0,
            "content": content,
            "author": author,
            "timestamp": TIMESTAMP,
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": mentions or [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "flags": 0,
            "components": [],
        }
        if guild:
            data["guild_id"] = str(self.guild_of(channel_id))
            data["member"] = {k: v for k, v in self.member_payload(author, roles).items() if k != "user"}
        if reference:
            data["message_reference"] = {
                "message_id": reference["id"],
                "channel_id": reference["channel_id"],
                "guild_id": reference.get("guild_id"),
            }
            data["referenced_message"] = reference
        return data

    def interaction_payload(
        self,
        kind: int,
        data: dict[str, Any],
        *,
        permissions: int = 1024 | 2048,
        message: dict[str, Any] | None = None,
        user: dict[str, Any] | None = None,
        channel_id: int = CHANNEL_ID,
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE payload in a guild channel (kind 2: command, 3: button)."""
        guild_id = self.guild_of(channel_id)
        payload: dict[str, Any] = {
            "id": str(self.next_id()),
            "application_id": str(APP_ID),
            "type": kind,
            "token": f"itoken-{self.next_id()}",
            "version": 1,
            "guild_id": str(guild_id),
            "channel_id": str(channel_id),
            "channel": self.channel_payload(channel_id),
            "member": {**self.member_payload(user), "permissions": str(permissions)},
            "data": data,
            "locale": "en-US",
            "guild_locale": "en-US",
            "attachment_size_limit": 8 << 20,
            "app_permissions": str(1024 | 2048 | 16384),
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(guild_id)},
            "context": 0,
        }
        if message is not None:
            payload["message"] = message
        return payload

    def command(
        self, name: str, options: list[dict[str, Any]] | None = None, *, guild: bool = True, **kwargs: Any
    ) -> dict[str, Any]:
        data: dict[str, Any] = {"id": str(self.next_id()), "name": name, "type": 1, "options": options or []}
        if guild:
            data["guild_id"] = str(self.guild_of(kwargs.get("channel_id", CHANNEL_ID)))
        return self.interaction_payload(2, data, **kwargs)

    def button_message(self, *custom_ids: str) -> dict[str, Any]:
        """A message of Byline's carrying buttons (Discord only routes clicks on buttons a message has)."""
        buttons = [{"type": 2, "style": 2, "label": "b", "custom_id": c} for c in custom_ids]
        return self._bot_message(
            str(CHANNEL_ID),
            {"content": "buttons", "components": [{"type": 1, "components": buttons}]},
            guild_id=str(GUILD_ID),
        )

    def click(self, custom_id: str, message: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self.interaction_payload(3, {"custom_id": custom_id, "component_type": 2}, message=message, **kwargs)

    def attachment(self, filename: str, data: bytes, size: int | None = None) -> dict[str, Any]:
        """An attachment payload whose URL this fake serves (as Discord's CDN would) with ``data``."""
        attachment_id = str(self.next_id())
        path = f"{attachment_id}/{filename}"
        self.files[path] = data
        url = f"http://127.0.0.1:{self.port}/attachments/{path}"
        return {
            "id": attachment_id,
            "filename": filename,
            "size": len(data) if size is None else size,
            "url": url,
            "proxy_url": url,
            "content_type": "text/plain; charset=utf-8",
        }

    def command_with_file(self, name: str, option: str, attachment: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """A slash command whose ``option`` is ``attachment`` (resolved, as Discord sends it)."""
        payload = self.command(name, [{"name": option, "type": 11, "value": attachment["id"]}], **kwargs)
        payload["data"]["resolved"] = {"attachments": {attachment["id"]: attachment}}
        return payload

    def revoke_token(self) -> None:
        """What Discord does when a running bot's token is reset: close the gateway with 4004."""
        self.token = "revoked-" + self.token
        asyncio.run_coroutine_threadsafe(self.drop_gateway(4004, b"Authentication failed."), self.loop).result(5)

    async def _cdn(self, request: web.Request) -> web.StreamResponse:
        with self._lock:
            self.requests.append(Recorded("GET", request.path, dict(request.query), None))
        data = self.files.get(request.match_info["tail"])
        if data is None:
            return web.Response(status=404, text="not found")
        return web.Response(body=data, headers={"Content-Type": "text/plain; charset=utf-8"})

    # -- REST --------------------------------------------------------------------------

    @staticmethod
    def _json(data: Any, status: int = 200) -> web.Response:
        return web.Response(body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"})

    def _error(self, status: int, code: int, message: str) -> web.Response:
        return self._json({"code": code, "message": message}, status)

    def _bot_message(self, channel_id: str, body: dict[str, Any], **extra: Any) -> dict[str, Any]:
        message = {
            "id": str(self.next_id()),
            "channel_id": channel_id,
            "type": 0,
            "content": body.get("content") or "",
            "author": BOT_USER,
            "timestamp": TIMESTAMP,
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": body.get("embeds") or [],
            "pinned": False,
            "flags": body.get("flags", 0),
            "components": body.get("components") or [],
            **extra,
        }
        if body.get("message_reference"):
            message["message_reference"] = body["message_reference"]
            message["type"] = 19
        self.messages[int(message["id"])] = message
        return message

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        body: Any = None
        if request.can_read_body:
            raw = await request.read()
            if request.content_type == "multipart/form-data":
                body = {"multipart": raw.decode(errors="replace")}
            elif raw:
                body = json.loads(raw)
        fault = self._take_fault(f"{request.method} {path}")
        with self._lock:
            self.requests.append(Recorded(request.method, path, dict(request.query), body, fault or 200))
        if fault == 429:
            # discord.py retries a 429 only with a Via header (else it takes it for a Cloudflare ban).
            limited = {"message": "You are being rate limited.", "retry_after": 0.2, "global": False}
            response = self._json(limited, 429)
            response.headers.update({"Retry-After": "0.2", "Via": "1.1 google", "X-RateLimit-Scope": "user"})
            return response
        if fault:
            return web.Response(status=fault, text="Internal Server Error")
        if request.headers.get("Authorization") not in (f"Bot {self.token}", None) and not path.startswith(
            ("/webhooks", "/interactions")
        ):
            return self._error(401, 0, "401: Unauthorized")
        return await self._route(request.method, path, body or {})

    def _take_fault(self, request_line: str) -> int:
        """The status of a fault planned for this request (0: none); a planned drop starts here."""
        with self._lock:
            for index, (fragment, status) in enumerate(self.fail_next):
                if fragment in request_line:
                    del self.fail_next[index]
                    return status
            drops = [f for f in self.drop_gateway_on if f in request_line]
            for fragment in drops:
                self.drop_gateway_on.remove(fragment)
        if drops:
            asyncio.ensure_future(self.drop_gateway())
        return 0

    async def drop_gateway(self, code: int = 4000, message: bytes = b"dropped by the fake") -> None:
        """Close every gateway socket, by default with a resumable code as on a server restart."""
        for socket in list(self._sockets):
            self._sockets.remove(socket)
            await socket.close(code=code, message=message)

    def count(self, method: str, fragment: str, status: int = 200) -> int:
        with self._lock:
            return sum(1 for r in self.requests if r.method == method and fragment in r.path and r.status == status)

    async def _route(self, method: str, path: str, body: Any) -> web.StreamResponse:
        parts = path.strip("/").split("/")
        if path == "/users/@me":
            return self._json(BOT_USER)
        if path == "/gateway/bot":
            # What AutoShardedClient asks when it is given no shard count.
            limit = {"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1}
            return self._json({"url": self.gateway_url, "shards": 1, "session_start_limit": limit})
        if path == "/oauth2/applications/@me":
            return self._json(
                {
                    "id": str(APP_ID),
                    "name": "Byline",
                    "description": "",
                    "icon": None,
                    "bot_public": True,
                    "bot_require_code_grant": False,
                    "owner": HUMAN,
                    "verify_key": "0" * 64,
                    "flags": 1 << 19,
                    "team": None,
                    "summary": "",
                }
            )
        if parts[0] == "applications" and "commands" in parts and method == "PUT":
            guild = parts[3] if "guilds" in parts else None
            return self._json(
                [
                    {
                        **c,
                        "id": str(self.next_id()),
                        "application_id": str(APP_ID),
                        "version": "1",
                        **({"guild_id": guild} if guild else {}),
                    }
                    for c in body
                ]
            )
        if parts[0] == "channels" and len(parts) >= 3:
            channel = int(parts[1])
            if channel in self.forbidden_channels:
                return self._error(403, 50013, "Missing Permissions")
            if channel in self.missing_channels:
                return self._error(404, 10003, "Unknown Channel")
            if parts[2] == "typing":
                return web.Response(status=204)
            if parts[2] == "messages" and method == "POST":
                known = channel in self.channels or self.guild_of(channel) != GUILD_ID
                in_guild = {"guild_id": str(self.guild_of(channel))} if known else {}
                return self._json(self._bot_message(parts[1], body, **in_guild))
            if parts[2] == "messages" and method == "GET" and len(parts) == 4:
                found = self.messages.get(int(parts[3]))
                return self._json(found) if found else self._error(404, 10008, "Unknown Message")
        if parts[0] == "interactions" and parts[-1] == "callback":
            kind = body.get("type")
            data = body.get("data") or {}
            interaction = {
                "id": parts[1],
                "type": 2,
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool(data.get("flags", 0) & 64),
            }
            resource: dict[str, Any] = {"type": kind}
            if kind in (4, 7):
                message = self._bot_message(
                    str(CHANNEL_ID),
                    data,
                    interaction_metadata={
                        "id": parts[1],
                        "type": 2,
                        "user": HUMAN,
                        "authorizing_integration_owners": {},
                    },
                )
                interaction["response_message_id"] = message["id"]
                resource["message"] = message
            return self._json({"interaction": interaction, "resource": resource})
        if parts[0] == "webhooks":
            if method == "DELETE":
                return web.Response(status=204)
            return self._json(self._bot_message(str(CHANNEL_ID), body))
        return self._error(404, 0, f"fake has no route for {method} {path}")

    # -- gateway -----------------------------------------------------------------------

    async def _send(self, socket: web.WebSocketResponse, op: int, data: Any, event: str | None = None) -> None:
        frame = {"op": op, "d": data, "s": next(self._seq) if op == 0 else None, "t": event}
        await socket.send_str(json.dumps(frame))

    async def _dispatch(self, event: str, data: dict[str, Any]) -> None:
        for socket in list(self._sockets):
            if not socket.closed and self._receives(socket, data):
                self.deliveries.append((event, str(data.get("id", "")), self._shards.get(socket, (0, 1))))
                await self._send(socket, 0, data, event)

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await self._send(socket, 10, {"heartbeat_interval": self.heartbeat_interval_ms})
        async for frame in socket:
            if frame.type != WSMsgType.TEXT:
                break
            message = json.loads(frame.data)
            if message["op"] == 1:
                self.heartbeats.append(time.monotonic())
                await self._send(socket, 11, None)
            elif message["op"] == 6:
                # RESUME after a drop: replay nothing (nothing was missed here), say RESUMED.
                self.resumes += 1
                self._shards[socket] = self._session_shards.get(message["d"].get("session_id", ""), (0, 1))
                await self._send(socket, 0, {}, "RESUMED")
                self._sockets.append(socket)
            elif message["op"] == 2:
                if message["d"]["token"] != self.token:
                    await socket.close(code=4004, message=b"Authentication failed.")
                    break
                self.identifies += 1
                self.identify_payloads.append(message["d"])
                await self._identified(socket, message["d"])
        if socket in self._sockets:
            self._sockets.remove(socket)
        self._shards.pop(socket, None)
        return socket

    async def _identified(self, socket: web.WebSocketResponse, identify: dict[str, Any]) -> None:
        """READY for the shard the client named (if any), then GUILD_CREATE for that shard's guilds."""
        shard, count = identify.get("shard") or (0, 1)
        session = f"session-{self.identifies}"
        self._shards[socket] = self._session_shards[session] = (shard, count)
        guilds = [g for g in self.guild_ids() if self.shard_of(g, count) == shard]
        ready: dict[str, Any] = {
            "v": 10,
            "user": BOT_USER,
            "guilds": [{"id": str(g), "unavailable": True} for g in guilds],
            "session_id": session,
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(APP_ID), "flags": 1 << 19},
            "private_channels": [],
        }
        if "shard" in identify:
            ready["shard"] = [shard, count]  # Discord echoes it only to a client that sent it
        await self._send(socket, 0, ready, "READY")
        for guild in guilds:
            payload = self.guild_payload() if guild == GUILD_ID else self.other_guild_payload(guild)
            await self._send(socket, 0, payload, "GUILD_CREATE")
        self._sockets.append(socket)


@contextmanager
def restored_endpoints() -> Iterator[None]:
    """Put discord.py's process-wide API and gateway URLs back after a test pointed them here."""
    import discord

    old = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    try:
        yield
    finally:
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = old


@contextmanager
def running_fake() -> Iterator[DiscordFake]:
    """A started fake, stopped afterwards, with discord.py's endpoints restored."""
    started = DiscordFake().start()
    try:
        with restored_endpoints():
            yield started
    finally:
        started.stop()
