"""A small round-robin reverse proxy on 127.0.0.1, standing in for the load balancer of the cluster
profile (``deploy/nginx-cluster.conf``) in tests of several ``byline serve`` workers.

Each request goes to the next upstream in turn (1, 2, 1, 2 ...), with its method, path, headers and
the exact body bytes (Slack signs the raw body). It fails over the way that nginx config does for
Slack's requests, which are all POSTs: ``proxy_next_upstream error timeout`` passes a request to the
next server only while it could not be sent (a refused or timed-out connection); once it was sent,
nginx does not resend a non-idempotent request (no ``non_idempotent`` flag), so a failure after
that is a 502 (an error) or a 504 (a timeout) to the client. Every attempt is logged, so a test
can say which worker got which delivery.
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Headers about one connection, not the request: never passed on (RFC 9110, 7.6.1).
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host"}
)


@dataclass(frozen=True)
class Upstream:
    """A worker the proxy forwards to."""

    name: str
    host: str
    port: int


@dataclass(frozen=True)
class Attempt:
    """One try at passing a request to an upstream: its answer, or why there was none."""

    request: int  # the proxy's number for the client request (attempts of one request share it)
    upstream: str
    headers: dict[str, str]
    body: bytes
    status: int | None  # None: no answer (``error`` says why)
    error: str = ""
    sent: bool = False  # whether the request reached the upstream before it failed


class RoundRobinProxy:
    """A threaded HTTP server forwarding each request round robin to ``upstreams``."""

    def __init__(self, upstreams: Sequence[Upstream], connect_timeout: float = 1.0, read_timeout: float = 5.0) -> None:
        self.upstreams = list(upstreams)
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._lock = threading.Lock()
        self._next = 0
        self._requests = 0
        self._attempts: list[Attempt] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                proxy._forward(self)

            def do_GET(self) -> None:  # noqa: N802
                proxy._forward(self)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, name="round-robin-proxy", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    @property
    def attempts(self) -> list[Attempt]:
        with self._lock:
            return list(self._attempts)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _forward(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["X-Forwarded-For"] = request.client_address[0]
        with self._lock:
            first, number = self._next, self._requests
            self._next = (self._next + 1) % len(self.upstreams)
            self._requests += 1
        status, reply_headers, reply = 502, [("Content-Type", "text/plain")], b"no upstream answered\n"
        for step in range(len(self.upstreams)):
            upstream = self.upstreams[(first + step) % len(self.upstreams)]
            attempt, answer = self._try(number, upstream, request.command, request.path, headers, body)
            with self._lock:
                self._attempts.append(attempt)
            if answer is not None:
                status, reply_headers, reply = answer
                break
            if attempt.sent:
                # Sent and then lost: a POST is not sent again (nginx without ``non_idempotent``).
                status = 504 if "timed out" in attempt.error else 502
                reply = f"upstream {upstream.name}: {attempt.error}\n".encode()
                break
        request.send_response(status)
        for name, value in reply_headers:
            if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                request.send_header(name, value)
        request.send_header("Content-Length", str(len(reply)))
        request.end_headers()
        request.wfile.write(reply)

    def _try(
        self, number: int, upstream: Upstream, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[Attempt, tuple[int, list[tuple[str, str]], bytes] | None]:
        connection = http.client.HTTPConnection(upstream.host, upstream.port, timeout=self.connect_timeout)
        sent = False
        try:
            connection.connect()
            assert connection.sock is not None
            connection.sock.settimeout(self.read_timeout)
            connection.request(method, path, body=body, headers=headers)
            sent = True
            response = connection.getresponse()
            answer = (response.status, response.getheaders(), response.read())
        except (OSError, http.client.HTTPException) as error:
            why = "timed out" if isinstance(error, TimeoutError) else type(error).__name__
            return Attempt(number, upstream.name, headers, body, None, why, sent), None
        finally:
            connection.close()
        return Attempt(number, upstream.name, headers, body, answer[0], sent=True), answer


@contextmanager
def running_proxy(upstreams: Sequence[Upstream], **timeouts: float) -> Iterator[RoundRobinProxy]:
    proxy = RoundRobinProxy(upstreams, **timeouts)
    try:
        yield proxy
    finally:
        proxy.close()
