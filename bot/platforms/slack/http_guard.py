"""The WSGI layer in front of bolt on the public Slack endpoint: Slack's signature is checked on
the raw bytes before anything parses them.

bolt parses a body before it checks the signature, so an unsigned, malformed body gave an HTTP 500
with a traceback, and it logs a refused body in full. Here, in order, and each refusal short and
without a traceback:

1. the declared length: none → 411, not a number → 400, over ``MAX_BODY`` → 413, all without
   reading the body;
2. the timestamp (an integer within ``WINDOW_S`` of now) and the signature's form → 401, still
   without reading the body;
3. the body, read within ``READ_DEADLINE_S``, and ``v0=HMAC-SHA256(secret, "v0:{ts}:{body}")``
   compared in constant time → 401;
4. a signature already seen within the window (a replay) → 409, with ``X-Slack-No-Retry``;
5. a signed body Slack would never send (not UTF-8, not a JSON object, a form whose ``payload``
   is not one) → 400.

Only then is the request handed on, with the bytes already read. One line per refused request is
logged, at most once a second per source address, and never the body.

The exception is ``browser_paths`` (the OAuth install pages, ``bot/platforms/slack/oauth.py``): a person's
browser opens them, so they carry no Slack signature; they are handed on for a ``GET`` with no
body, and refused for anything else.
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import io
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

    from bot.state.event_dedupe import EventDedupe

log = logging.getLogger("byline.slack")

# Slack's payloads are a few KB; 1 MB is generous and bounds the memory one request can take.
MAX_BODY = 1024 * 1024
# Slack's own rule: a request whose timestamp is more than 5 minutes off is refused.
WINDOW_S = 5 * 60
# A client trickling its body is dropped after this long, so it cannot hold a thread forever.
READ_DEADLINE_S = 10.0
LOG_EVERY_S = 1.0
# Slack sends an app at most 30,000 events an hour per workspace, about 5,000 in the 10 minutes a
# signature stays valid (5 either side of now): this many remembered is far more than it sends.
REMEMBERED_SIGNATURES = 20_000
# Source addresses whose last log line is remembered; beyond this, others share one entry.
LOGGED_ADDRESSES = 4_096
# Install pages (GET /slack/install, /slack/oauth_redirect) one address may open a minute.
PAGES_PER_MINUTE = 20
OTHER_ADDRESSES = "other addresses"

_LENGTH = re.compile(r"[0-9]{1,12}")
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Refusal:
    """An HTTP status and what went wrong, said in the response body and the log line."""

    status: int
    reason: str
    headers: tuple[tuple[str, str], ...] = ()


_STATUS_TEXT = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    411: "Length Required",
    413: "Content Too Large",
    429: "Too Many Requests",
}


class PageRate:
    """Install pages opened per address: at most ``per_minute`` in any minute. Bounded: past
    ``size`` addresses the map is cleared (a flood from many addresses then meets the cap on
    pending OAuth states instead, ``slack_installations.MAX_PENDING_STATES``)."""

    def __init__(self, per_minute: int = PAGES_PER_MINUTE, size: int = LOGGED_ADDRESSES) -> None:
        self.per_minute, self.size = per_minute, size
        self._opened: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def allow(self, address: str, now: float) -> bool:
        with self._lock:
            if len(self._opened) > self.size:
                self._opened.clear()
            recent = [moment for moment in self._opened.get(address, []) if now - moment < 60]
            allowed = len(recent) < self.per_minute
            if allowed:
                recent.append(now)
            self._opened[address] = recent
            return allowed


class SignatureLedger:
    """The signatures accepted lately, each until its timestamp leaves the window, so that a
    captured request sent again is refused. Bounded: past ``size`` the soonest to expire goes."""

    def __init__(self, size: int = REMEMBERED_SIGNATURES) -> None:
        self.size = size
        self._expiry: dict[bytes, float] = {}
        self._heap: list[tuple[float, bytes]] = []
        self._lock = threading.Lock()

    def first_time(self, signature: bytes, expires_at: float, now: float) -> bool:
        """Whether ``signature`` is new; remembers it until ``expires_at`` either way."""
        with self._lock:
            while self._heap and (self._heap[0][0] < now or len(self._heap) >= self.size):
                _, old = heapq.heappop(self._heap)
                self._expiry.pop(old, None)
            if signature in self._expiry:
                return False
            self._expiry[signature] = expires_at
            heapq.heappush(self._heap, (expires_at, signature))
            return True

    def __len__(self) -> int:
        return len(self._expiry)


class RefusalLog:
    """Logs refusals at most once per ``every`` seconds per source address, counting the rest."""

    def __init__(self, every: float = LOG_EVERY_S, size: int = LOGGED_ADDRESSES) -> None:
        self.every = every
        self.size = size
        self._last: dict[str, tuple[float, int]] = {}  # address -> (when logged, refused since)
        self._lock = threading.Lock()

    def refused(self, address: str, refusal: Refusal, now: float) -> None:
        with self._lock:
            if address not in self._last and len(self._last) >= self.size:
                self._last = {a: v for a, v in self._last.items() if now - v[0] < self.every}
                if len(self._last) >= self.size:
                    address = OTHER_ADDRESSES  # a flood from many addresses: one line a second for all
            logged_at, since = self._last.get(address, (float("-inf"), 0))
            if now - logged_at < self.every:
                self._last[address] = (logged_at, since + 1)
                return
            self._last[address] = (now, 0)
        more = f" ({since} more refused from there in the last {now - logged_at:.0f} s)" if since else ""
        log.warning(
            "Slack HTTP: refused a request from %s: %s (HTTP %d)%s.", address, refusal.reason, refusal.status, more
        )


def body_problem(body: bytes, content_type: str) -> str | None:
    """Why a (signed) body is not one Slack sends, read the way bolt will read it; None if fine."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return "the body is not UTF-8"
    try:
        if content_type == "application/json" or text.startswith("{"):
            parsed = json.loads(text) if text else {}
            return None if isinstance(parsed, dict) else "the JSON body is not an object"
        payload = dict(parse_qsl(text)).get("payload")
        if payload is not None and not isinstance(json.loads(payload), dict):
            return "the form's payload is not a JSON object"
    except ValueError:  # JSONDecodeError, or parse_qsl's own errors
        return "the body is not valid JSON or form data"
    return None


def _is_ssl_check(body: bytes) -> bool:
    """Slack's certificate check of a command URL, and nothing else (bolt skips the signature for it)."""
    try:
        fields = parse_qsl(body.decode("ascii"), keep_blank_values=True)
    except (UnicodeDecodeError, ValueError):
        return False
    names = [name for name, _ in fields]
    return (
        dict(fields).get("ssl_check") == "1" and set(names) <= {"ssl_check", "token"} and len(names) == len(set(names))
    )


class SlackHttpGuard:
    """WSGI middleware: checks a request to ``path`` as the module says, then calls ``app``."""

    def __init__(
        self,
        app: WSGIApplication,
        signing_secret: str,
        path: str,
        clock: Callable[[], float] = time.time,
        max_body: int = MAX_BODY,
        read_deadline: float = READ_DEADLINE_S,
        browser_paths: Iterable[str] = (),
        shared_signatures: EventDedupe | None = None,
    ) -> None:
        if not signing_secret:
            raise ValueError("the Slack HTTP endpoint needs a signing secret")
        self.app = app
        self.secret = signing_secret.encode()
        self.path = path
        self.clock = clock
        self.max_body = max_body
        self.read_deadline = read_deadline
        self.browser_paths = frozenset(browser_paths)
        self.ledger = SignatureLedger()
        # Signatures seen by every worker (Redis), so that a captured command or button click
        # replayed to another worker is refused too; None: this process's ledger only.
        self.shared_signatures = shared_signatures
        self.refusals = RefusalLog()
        self.page_rate = PageRate()

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        outcome = self._check(environ)
        if isinstance(outcome, Refusal):
            if outcome.status != 200:
                self.refusals.refused(str(environ.get("REMOTE_ADDR", "?")), outcome, time.monotonic())
            return _answer(start_response, outcome)
        if isinstance(outcome, _BrowserPage):
            return self.app(environ, start_response)
        environ["wsgi.input"] = io.BytesIO(outcome)
        environ["CONTENT_LENGTH"] = str(len(outcome))
        return self.app(environ, start_response)

    def _check(self, environ: WSGIEnvironment) -> Refusal | bytes | _BrowserPage:
        """The request's body if it may go on to bolt, or why not."""
        if environ.get("PATH_INFO", "") in self.browser_paths:
            if not self.page_rate.allow(str(environ.get("REMOTE_ADDR", "?")), time.monotonic()):
                wait = (("Retry-After", "60"),)
                return Refusal(429, "too many install page requests from this address; wait a minute", wait)
            return _browser_request(environ)
        if environ.get("PATH_INFO", "") != self.path:
            return Refusal(404, f"only {self.path} is served here")
        if environ.get("REQUEST_METHOD") != "POST":
            return Refusal(405, "only POST is accepted", (("Allow", "POST"),))
        length = _declared_length(environ, self.max_body)
        if isinstance(length, Refusal):
            return length
        timestamp = str(environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP", ""))
        signature = str(environ.get("HTTP_X_SLACK_SIGNATURE", ""))
        body: bytes | Refusal | None = None
        if not signature and not timestamp and length <= 256:
            body = self._read(environ, length)
            if isinstance(body, bytes) and _is_ssl_check(body):
                return Refusal(200, "")
        if not _TIMESTAMP.fullmatch(timestamp):
            return Refusal(401, "no X-Slack-Request-Timestamp, or not a whole number of seconds")
        now = self.clock()
        if abs(now - int(timestamp)) > WINDOW_S:
            return Refusal(401, "X-Slack-Request-Timestamp is over 5 minutes off (check this server's clock)")
        if not _SIGNATURE.fullmatch(signature):
            return Refusal(401, "no X-Slack-Signature of the form v0=<64 hex digits>")
        if body is None:
            body = self._read(environ, length)
        if isinstance(body, Refusal):
            return body
        expected = hmac.new(self.secret, b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(f"v0={expected}".encode(), signature.encode()):
            return Refusal(401, "X-Slack-Signature does not match (check SLACK_SIGNING_SECRET)")
        if not self.ledger.first_time(bytes.fromhex(signature[3:]), int(timestamp) + WINDOW_S, now) or (
            self.shared_signatures is not None and not self.shared_signatures.first_time(signature[3:])
        ):
            # No retry: the first of these was accepted, and answering twice is what this prevents.
            return Refusal(409, "this signature was already used (a replayed request)", (("X-Slack-No-Retry", "1"),))
        content_type = str(environ.get("CONTENT_TYPE", "")).split(";")[0].strip().lower()
        problem = body_problem(body, content_type)
        if problem:
            return Refusal(400, f"signed, but {problem}")
        return body

    def _read(self, environ: WSGIEnvironment, length: int) -> bytes | Refusal:
        """Exactly ``length`` bytes of the body (already known to be at most ``max_body``)."""
        stream = environ["wsgi.input"]
        read = getattr(stream, "read1", stream.read)
        deadline = time.monotonic() + self.read_deadline
        parts: list[bytes] = []
        got = 0
        try:
            while got < length:
                if time.monotonic() > deadline:
                    return Refusal(408, f"the body did not arrive within {self.read_deadline:.0f} s")
                part = read(min(_CHUNK, length - got))
                if not part:
                    return Refusal(400, "the body is shorter than its Content-Length")
                parts.append(part)
                got += len(part)
        except TimeoutError:
            return Refusal(408, "the body stopped arriving")
        return b"".join(parts)


class _BrowserPage:
    """Stands for "a browser's page request: hand it on as it is"."""


_BROWSER = _BrowserPage()


def _browser_request(environ: WSGIEnvironment) -> Refusal | _BrowserPage:
    """An install page opened in a browser: a ``GET`` without a body, or refused."""
    if environ.get("REQUEST_METHOD") != "GET":
        return Refusal(405, "only GET is accepted here (open this page in a browser)", (("Allow", "GET"),))
    if environ.get("HTTP_TRANSFER_ENCODING") or str(environ.get("CONTENT_LENGTH", "") or "0").strip() not in {"", "0"}:
        return Refusal(400, "a page request has no body")
    return _BROWSER


def _declared_length(environ: WSGIEnvironment, limit: int) -> int | Refusal:
    if environ.get("HTTP_TRANSFER_ENCODING"):
        return Refusal(411, "send a Content-Length, not a Transfer-Encoding")
    raw = str(environ.get("CONTENT_LENGTH", "")).strip()
    if not raw:
        return Refusal(411, "no Content-Length")
    if not _LENGTH.fullmatch(raw):
        return Refusal(400, "Content-Length is not a number")
    length = int(raw)
    if length > limit:
        return Refusal(413, f"the body is over {_size(limit)}; Slack's requests are far smaller")
    return length


def _size(limit: int) -> str:
    megabytes, rest = divmod(limit, 1024 * 1024)
    return f"{megabytes} MB" if megabytes and not rest else f"{limit:,} bytes"


def _answer(start_response: StartResponse, refusal: Refusal) -> list[bytes]:
    body = f"{refusal.reason}\n".encode() if refusal.reason else b""
    headers = [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body))), *refusal.headers]
    start_response(f"{refusal.status} {_STATUS_TEXT[refusal.status]}", headers)
    return [body]


__all__ = ["MAX_BODY", "WINDOW_S", "RefusalLog", "SignatureLedger", "SlackHttpGuard", "body_problem"]
