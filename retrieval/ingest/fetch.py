"""Safe HTTP fetching for pages and feeds: every hop checked, every response bounded.

Redirects are followed by hand (never by the HTTP library) so that each target goes through
the SSRF guard again; the connection goes to the address the guard checked, so a DNS answer
that changes between the check and the connect cannot slip past it. Responses are capped in
size, binary and non-HTML bodies are refused, and transient failures (timeouts, refused
connections, 5xx, 429) are retried with exponential backoff.

Time is bounded three ways, because a hostile server can answer slowly at every step: each
socket operation waits at most ``timeout``; the whole fetch (every connect, redirect, retry and
byte read) ends at ``deadline`` (``BYLINE_FETCH_DEADLINE``), enforced by a watchdog that shuts
the socket down, since a server that trickles one byte a second never trips a per-read timeout;
and a body arriving slower than ``min_rate`` bytes a second once ``rate_grace`` seconds have
passed is dropped without waiting for the deadline.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import random
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urljoin, urlsplit

from retrieval.errors import BylineError
from retrieval.ingest.netguard import Allowlist, BlockedURL, FetchError, Target, check_url

log = logging.getLogger("byline.fetch")

__all__ = [
    "BlockedURL",
    "FetchError",
    "FetchResult",
    "FetchTimeout",
    "Fetcher",
    "HTTPStatusError",
    "RedirectLoop",
    "TooLarge",
    "TooSlow",
    "UnsupportedContent",
]

Kind = Literal["html", "feed"]

MAX_BYTES = 5 * 1024 * 1024
DEADLINE_VARIABLE = "BYLINE_FETCH_DEADLINE"
DEFAULT_TIMEOUT = 10.0
DEFAULT_DEADLINE = 20.0
# A real news server sends a page at many KB/s; 1 KB/s averaged over the first 5 s is a
# server that is stalling on purpose (or is too broken to be worth waiting for).
MIN_RATE = 1024.0
RATE_GRACE = 5.0
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Feeds are served under many types in the wild; feedparser decides whether it is one.
FEED_TYPES = HTML_TYPES | frozenset(
    {
        "application/rss+xml",
        "application/atom+xml",
        "application/rdf+xml",
        "application/xml",
        "text/xml",
        "application/feed+json",
        "text/plain",
    }
)
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class FetchTimeout(FetchError):
    """The server did not answer (or finish answering) in time."""


class HTTPStatusError(FetchError):
    """The server answered with an error status."""

    def __init__(self, url: str, status: int, reason: str) -> None:
        super().__init__(url, f"the server answered HTTP {status} {reason}".rstrip())
        self.status = status


class TooLarge(FetchError):
    """The response is bigger than the cap."""


class TooSlow(FetchError):
    """The response arrives slower than the minimum transfer rate (not retried)."""


class UnsupportedContent(FetchError):
    """A binary or non-HTML body where a page or feed was expected."""


class RedirectLoop(FetchError):
    """Redirects that come back to a URL already visited, or go on too long."""


@dataclass(frozen=True)
class FetchResult:
    """A fetched response; ``status`` 304 means not modified since the given ETag/date."""

    url: str
    status: int
    body: bytes = b""
    content_type: str = ""
    charset: str = ""
    etag: str = ""
    last_modified: str = ""

    @property
    def not_modified(self) -> bool:
        return self.status == 304

    def text(self) -> str:
        try:
            return self.body.decode(self.charset or "utf-8", errors="replace")
        except LookupError:  # an unknown charset name
            return self.body.decode("utf-8", errors="replace")


@dataclass
class Fetcher:
    """Fetches URLs under one policy (timeouts, retries, size cap, allowlist)."""

    allowlist: Allowlist = field(default_factory=Allowlist)
    timeout: float = 10.0
    retries: int = 2
    backoff: float = 0.5
    max_bytes: int = MAX_BYTES
    max_redirects: int = 5
    user_agent: str = "Byline/0.1 (+news question answering bot)"
    deadline: float = DEFAULT_DEADLINE
    min_rate: float = MIN_RATE
    rate_grace: float = RATE_GRACE

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Fetcher:
        return cls(
            allowlist=Allowlist.from_env(environ),
            timeout=_seconds(environ, "BYLINE_FETCH_TIMEOUT", DEFAULT_TIMEOUT),
            deadline=_seconds(environ, DEADLINE_VARIABLE, DEFAULT_DEADLINE),
        )

    def fetch(self, url: str, kind: Kind = "html", etag: str = "", last_modified: str = "") -> FetchResult:
        """GET a URL, following redirects; raises a ``FetchError`` subclass naming the URL.

        The whole call, redirects and retries included, ends within ``deadline`` seconds."""
        clock = _Clock(url, self.deadline)
        visited: list[str] = []
        current = url
        while True:
            if current in visited:
                raise RedirectLoop(url, f"redirect loop ({' -> '.join([*visited, current])})")
            if len(visited) > self.max_redirects:
                raise RedirectLoop(url, f"more than {self.max_redirects} redirects")
            visited.append(current)
            target = check_url(current, self.allowlist)
            # Conditional headers only make sense for the URL they were recorded for.
            conditional = (etag, last_modified) if len(visited) == 1 else ("", "")
            result, location = self._with_retries(current, target, kind, *conditional, clock)
            if location is None:
                assert result is not None
                return result
            current = urljoin(current, location)

    def _with_retries(
        self, url: str, target: Target, kind: Kind, etag: str, last_modified: str, clock: _Clock
    ) -> tuple[FetchResult | None, str | None]:
        for attempt in range(self.retries + 1):
            clock.check()
            try:
                return self._once(url, target, kind, etag, last_modified, clock)
            except (FetchTimeout, HTTPStatusError, _Transient) as error:
                retryable = not isinstance(error, HTTPStatusError) or error.status in _RETRY_STATUSES
                # Exponential backoff with jitter, so many feeds failing together spread out.
                delay = self.backoff * (2**attempt) * (0.5 + random.random())
                if not retryable or attempt == self.retries or clock.expired or delay >= clock.remaining():
                    if isinstance(error, _Transient):
                        raise FetchError(url, error.reason) from None
                    raise
                log.info("Fetching %s failed (%s); retrying in %.1f s.", url, error, delay)
                time.sleep(delay)
        raise AssertionError("unreachable")

    def _once(
        self, url: str, target: Target, kind: Kind, etag: str, last_modified: str, clock: _Clock
    ) -> tuple[FetchResult | None, str | None]:
        # Never 0: a socket timeout of 0 would make the connect non-blocking, not instant.
        socket_timeout = max(0.05, min(self.timeout, clock.remaining()))
        connection = _connection(target, socket_timeout)
        watchdog = _Watchdog(connection, clock)
        parts = urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = {
            "User-Agent": self.user_agent,
            "Accept": "text/html,application/xhtml+xml;q=0.9"
            if kind == "html"
            else "application/rss+xml,application/atom+xml,application/xml;q=0.9,text/xml;q=0.8,*/*;q=0.5",
            "Accept-Encoding": "identity",
        }
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        try:
            connection.connect()
            watchdog.start()
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            status = response.status
            if status in {301, 302, 303, 307, 308}:
                location = response.getheader("Location", "")
                if not location:
                    raise FetchError(url, f"HTTP {status} redirect without a Location")
                return None, location
            if status == 304:
                return FetchResult(
                    url,
                    304,
                    etag=response.getheader("ETag", etag),
                    last_modified=response.getheader("Last-Modified", last_modified),
                ), None
            if status >= 400:
                raise HTTPStatusError(url, status, response.reason or "")
            content_type, charset = _content_type(response.getheader("Content-Type", ""))
            allowed = HTML_TYPES if kind == "html" else FEED_TYPES
            if content_type and content_type not in allowed:
                what = "a web page" if kind == "html" else "a feed"
                raise UnsupportedContent(url, f"the server sent {content_type}, not {what}")
            declared = response.getheader("Content-Length", "")
            if declared.isdigit() and int(declared) > self.max_bytes:
                raise TooLarge(url, f"the response is {int(declared):,} bytes; the limit is {self.max_bytes:,}")
            body = self._read_body(url, response, clock)
            if b"\x00" in body[:8192]:
                raise UnsupportedContent(url, "the server sent binary data, not text")
            return FetchResult(
                url,
                status,
                body,
                content_type,
                charset,
                etag=response.getheader("ETag", ""),
                last_modified=response.getheader("Last-Modified", ""),
            ), None
        except (TimeoutError, ssl.SSLError, http.client.HTTPException, OSError) as error:
            # The watchdog shut the socket, or the socket's own timeout was the deadline's rest
            # (it can go off a moment before the watchdog does): say why, not how it broke.
            deadline_timeout = isinstance(error, TimeoutError) and socket_timeout < self.timeout
            if watchdog.fired or deadline_timeout:
                raise clock.timeout() from None
            if isinstance(error, TimeoutError):
                raise FetchTimeout(url, f"no answer within {self.timeout:g} s") from None
            if isinstance(error, ssl.SSLError):
                raise FetchError(url, f"TLS failed ({error.reason or error})") from None
            raise _Transient(url, f"connection failed ({error.__class__.__name__}: {error})") from None
        finally:
            watchdog.cancel()
            connection.close()

    def _read_body(self, url: str, response: http.client.HTTPResponse, clock: _Clock) -> bytes:
        """The body, capped in size and dropped when it trickles in below the minimum rate.

        ``read1`` returns whatever one socket read brings, so the checks run as bytes arrive
        (``read(n)`` would block until n bytes came, however slowly)."""
        chunks: list[bytes] = []
        size = 0
        started = time.monotonic()
        while True:
            chunk = response.read1(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > self.max_bytes:
                raise TooLarge(url, f"the response is over the {self.max_bytes:,}-byte limit")
            chunks.append(chunk)
            elapsed = time.monotonic() - started
            if elapsed > self.rate_grace and size < self.min_rate * elapsed:
                raise TooSlow(
                    url,
                    f"the server sent {size:,} bytes in {elapsed:.0f} s, slower than the minimum of "
                    f"{self.min_rate:,.0f} bytes a second; dropped",
                )
        if clock.expired:  # the watchdog shut the socket mid-body: what was read is cut short
            raise clock.timeout()
        if response.length:  # Content-Length promised more than arrived before the close
            raise _Transient(url, f"the connection closed {response.length:,} bytes before the end of the response")
        return b"".join(chunks)


class _Transient(FetchError):
    """A connection-level failure worth retrying; surfaced to callers as a plain FetchError."""


def _connection(target: Target, timeout: float) -> http.client.HTTPConnection:
    connection: http.client.HTTPConnection
    if target.scheme == "https":
        connection = http.client.HTTPSConnection(
            target.host, target.port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(target.host, target.port, timeout=timeout)
    address = target.address

    # Connect to the address the guard checked; the Host header and TLS name stay the host.
    def create_connection(
        _address: tuple[str, int], timeout: float | None = None, source: tuple[str, int] | None = None
    ) -> socket.socket:
        return socket.create_connection((address, target.port), timeout, source)

    connection._create_connection = create_connection  # type: ignore[attr-defined]
    return connection


def _content_type(header: str) -> tuple[str, str]:
    media, _, params = header.partition(";")
    charset = ""
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip("\"'")
    return media.strip().lower(), charset


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise BylineError(f"{name} must be a number of seconds above 0, not {raw!r} (see .env.example)")
    return value


class _Clock:
    """The one deadline of a whole fetch, shared by its redirects and retries."""

    def __init__(self, url: str, seconds: float) -> None:
        self.url = url
        self.seconds = seconds
        self.ends = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self.ends - time.monotonic())

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.ends

    def timeout(self) -> FetchTimeout:
        return FetchTimeout(
            self.url, f"the server did not finish answering within {self.seconds:g} s ({DEADLINE_VARIABLE})"
        )

    def check(self) -> None:
        if self.expired:
            raise self.timeout()


class _Watchdog:
    """Shuts a connection's socket down when the fetch's deadline passes, which ends any read
    blocked on it at once (header lines and chunk sizes are read inside http.client, where no
    loop of ours could check the clock)."""

    def __init__(self, connection: http.client.HTTPConnection, clock: _Clock) -> None:
        self.connection = connection
        self.clock = clock
        self.fired = False
        self._timer: threading.Timer | None = None

    def start(self) -> None:
        self._timer = threading.Timer(self.clock.remaining(), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _fire(self) -> None:
        self.fired = True
        sock = self.connection.sock
        if sock is None:
            return
        # The plain socket's shutdown, also for TLS: SSLSocket.shutdown would unwrap the TLS
        # state under the reading thread instead of just ending its read. OSError: closed already.
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
