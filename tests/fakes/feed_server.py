"""A small local web server for the fetch and feed tests: pages, feeds and misbehaviour.

Routes are set per test (``server.route(path, ...)``); the server counts hits per path and
records the conditional headers it was sent, so tests can check ETag / 304 handling. A route
can also misbehave the way a hostile server does: trickle its body (``trickle`` seconds between
pieces of ``piece`` bytes, chunked or not), trickle even its headers, send headers and then go
silent (``stall="after-headers"``), or never answer at all (``stall="before-headers"``).
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    etag: str = ""
    send_length: bool = True
    trickle: float = 0.0
    piece: int = 1
    chunked: bool = False
    trickle_headers: bool = False
    stall: str = ""  # "before-headers" or "after-headers"


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up early (a fetch past its deadline, a refused body) is what these
    tests provoke on purpose: not worth a traceback on stderr, where tests read Byline's output."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class FeedServer:
    """``http://127.0.0.1:PORT``; routes can be changed while it runs."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: Counter[str] = Counter()
        self.hit_times: dict[str, list[float]] = defaultdict(list)  # time.monotonic() of each hit
        self.conditional: list[tuple[str, str]] = []
        self._stop = threading.Event()
        handler = _handler(self)
        self.httpd = _QuietServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def url(self, path: str) -> str:
        return self.base + path

    def route(self, path: str, body: bytes | str = b"", **options: object) -> str:
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = Route(data, **options)  # type: ignore[arg-type]
        return self.url(path)

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        return self.route(path, b"", status=status, headers={"Location": location})

    def start(self) -> FeedServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # releases handlers that are stalling or trickling
        self.httpd.shutdown()
        self.httpd.server_close()


def _handler(server: FeedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:
            path = self.path
            server.hits[path] += 1
            server.hit_times[path].append(time.monotonic())
            route = server.routes.get(path)
            if route is None:
                self._send(404, b"not found", "text/plain", {})
                return
            if route.delay:
                time.sleep(route.delay)
            if route.stall == "before-headers":
                server._stop.wait(120)  # hold the connection open, answer nothing
                return
            if route.trickle or route.stall or route.chunked:
                self._misbehave(route)
                return
            sent_tag = self.headers.get("If-None-Match", "")
            if sent_tag or self.headers.get("If-Modified-Since"):
                server.conditional.append((path, sent_tag))
            if route.etag and sent_tag == route.etag:
                self._send(304, b"", "", {"ETag": route.etag})
                return
            headers = dict(route.headers)
            if route.etag:
                headers["ETag"] = route.etag
            self._send(route.status, route.body, route.content_type, headers, route.send_length)

        def _send(
            self, status: int, body: bytes, content_type: str, headers: dict[str, str], length: bool = True
        ) -> None:
            try:
                self.send_response(status)
                if content_type:
                    self.send_header("Content-Type", content_type)
                for name, value in headers.items():
                    self.send_header(name, value)
                if length:
                    self.send_header("Content-Length", str(len(body)))
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if status != 304:
                    self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a cap or timeout under test)

        def _misbehave(self, route: Route) -> None:
            head = [f"HTTP/1.1 {route.status} OK", f"Content-Type: {route.content_type}"]
            head.append("Transfer-Encoding: chunked" if route.chunked else f"Content-Length: {len(route.body)}")
            raw_head = ("\r\n".join(head) + "\r\n\r\n").encode()
            self.close_connection = True
            try:
                if route.trickle_headers:
                    self._drip(raw_head, route.trickle, framed=False)
                else:
                    self.wfile.write(raw_head)
                    self.wfile.flush()
                if route.stall == "after-headers":
                    server._stop.wait(120)
                    return
                self._drip(route.body, route.trickle, framed=route.chunked, piece=route.piece)
                if route.chunked:
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up, as it should

        def _drip(self, data: bytes, pause: float, framed: bool, piece: int = 1) -> None:
            for start in range(0, len(data), piece):
                part = data[start : start + piece]
                self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n" if framed else part)
                self.wfile.flush()
                if server._stop.wait(pause):
                    return

    return Handler


@contextmanager
def running_server() -> Iterator[FeedServer]:
    server = FeedServer().start()
    try:
        yield server
    finally:
        server.stop()


def article_html(title: str, paragraphs: list[str], canonical: str = "", published: str = "2024-05-01") -> str:
    """A news page with navigation, ads, a script and comments around the article."""
    link = f'<link rel="canonical" href="{canonical}">' if canonical else ""
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return f"""<!doctype html><html><head><title>{title}</title>{link}
<meta property="og:title" content="{title}"><meta name="author" content="Jane Reporter">
<meta property="article:published_time" content="{published}T10:00:00Z">
<meta property="og:site_name" content="Test Gazette">
<script>var ads = "BUY NOW";</script></head><body>
<nav><a href="/">Home</a> <a href="/sport">Sport</a> <a href="/news">News</a></nav>
<div class="ad">Advertisement: cheap flights to everywhere</div>
<article><h1>{title}</h1>{body}</article>
<div id="comments"><p>Comment: first!</p></div>
<footer>Copyright Test Gazette</footer></body></html>"""


def rss(title: str, items: list[tuple[str, str, str]]) -> str:
    """RSS 2.0 with (title, link, description) items."""
    entries = "".join(
        f"<item><title>{t}</title><link>{link}</link><guid>{link}</guid><description>{d}</description>"
        f"<pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate></item>"
        for t, link, d in items
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>{title}</title><link>http://x/</link>{entries}</channel></rss>'


def atom(title: str, items: list[tuple[str, str, str]]) -> str:
    """Atom 1.0 with (title, link, summary) entries."""
    entries = "".join(
        f'<entry><title>{t}</title><link href="{link}"/><id>{link}</id><updated>2024-05-01T10:00:00Z</updated>'
        f"<summary>{s}</summary></entry>"
        for t, link, s in items
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>{title}</title>'
        f"<id>urn:test</id><updated>2024-05-01T10:00:00Z</updated>{entries}</feed>"
    )
