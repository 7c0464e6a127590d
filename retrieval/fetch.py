"""Safe HTTP fetching for pages and feeds: every hop checked, every response bounded.

Redirects are followed by hand (never by the HTTP library) so that each target goes through
the SSRF guard again; the connection goes to the address the guard checked, so a DNS answer
that changes between the check and the connect cannot slip past it. Responses are capped in
size and time, binary and non-HTML bodies are refused, and transient failures (timeouts,
refused connections, 5xx, 429) are retried with exponential backoff.
"""

from __future__ import annotations

import http.client
import logging
import random
import socket
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urljoin, urlsplit

from .netguard import Allowlist, BlockedURL, FetchError, Target, check_url

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
    "UnsupportedContent",
]

Kind = Literal["html", "feed"]

MAX_BYTES = 5 * 1024 * 1024
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

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Fetcher:
        timeout = float(environ.get("BYLINE_FETCH_TIMEOUT", "") or 10)
        return cls(allowlist=Allowlist.from_env(environ), timeout=timeout)

    def fetch(self, url: str, kind: Kind = "html", etag: str = "", last_modified: str = "") -> FetchResult:
        """GET a URL, following redirects; raises a ``FetchError`` subclass naming the URL."""
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
            result, location = self._with_retries(current, target, kind, *conditional)
            if location is None:
                assert result is not None
                return result
            current = urljoin(current, location)

    def _with_retries(
        self, url: str, target: Target, kind: Kind, etag: str, last_modified: str
    ) -> tuple[FetchResult | None, str | None]:
        for attempt in range(self.retries + 1):
            try:
                return self._once(url, target, kind, etag, last_modified)
            except (FetchTimeout, HTTPStatusError, _Transient) as error:
                retryable = not isinstance(error, HTTPStatusError) or error.status in _RETRY_STATUSES
                if not retryable or attempt == self.retries:
                    if isinstance(error, _Transient):
                        raise FetchError(url, error.reason) from None
                    raise
                # Exponential backoff with jitter, so many feeds failing together spread out.
                delay = self.backoff * (2**attempt) * (0.5 + random.random())
                log.info("Fetching %s failed (%s); retrying in %.1f s.", url, error, delay)
                time.sleep(delay)
        raise AssertionError("unreachable")

    def _once(
        self, url: str, target: Target, kind: Kind, etag: str, last_modified: str
    ) -> tuple[FetchResult | None, str | None]:
        deadline = time.monotonic() + self.timeout * 3  # a slow drip of bytes must end too
        connection = _connection(target, self.timeout)
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
            body = _read_capped(url, response, self.max_bytes, deadline)
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
        except TimeoutError:
            raise FetchTimeout(url, f"no answer within {self.timeout:g} s") from None
        except ssl.SSLError as error:
            raise FetchError(url, f"TLS failed ({error.reason or error})") from None
        except (http.client.HTTPException, OSError) as error:
            raise _Transient(url, f"connection failed ({error.__class__.__name__}: {error})") from None
        finally:
            connection.close()


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


def _read_capped(url: str, response: http.client.HTTPResponse, limit: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise FetchTimeout(url, "the response took too long to arrive")
        chunk = response.read(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise TooLarge(url, f"the response is over the {limit:,}-byte limit")
        chunks.append(chunk)
