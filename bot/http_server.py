"""The one small HTTP server Byline runs (Slack's Events API and /healthz, /metrics): wsgiref,
a thread per request, and nothing a client does ever reaches stderr.

wsgiref's handler lets a read timeout or a reset connection escape ``handle()``, and
socketserver's ``handle_error`` then prints a traceback to stderr, outside the logger (50 idle
connections gave 50 tracebacks and 850 lines that were not JSON). Here a client's behaviour is one
debug line in Byline's log; a bug of ours is still logged, through the logger, with its traceback.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

log = logging.getLogger("byline.http")

# Seconds a socket read may wait: a client that stops sending its request is dropped.
READ_TIMEOUT_S = 15
# What a client can do to a connection: time out, reset it, send garbage or close it early.
CLIENT_FAULTS = (TimeoutError, ConnectionError, OSError, ValueError)


class QuietServer(ThreadingMixIn, WSGIServer):
    """wsgiref's server, one thread per request, so a slow client never delays another's ack."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.exception("HTTP: a request from %s failed inside Byline.", client_address[0] if client_address else "?")


class QuietHandler(WSGIRequestHandler):
    """Request lines go to the logger at debug level; a client's fault ends its connection quietly."""

    timeout = READ_TIMEOUT_S

    def handle(self) -> None:
        try:
            super().handle()
        except CLIENT_FAULTS as error:
            log.debug("HTTP: dropped a connection from %s (%s).", self.client_address[0], type(error).__name__)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        log.debug("HTTP: " + format, *args)


def serve_in_thread(host: str, port: int, app: Callable[..., Any], name: str) -> WSGIServer:
    """``app`` served on ``host:port`` by a daemon thread; returns the server (``server_port``)."""
    server = make_server(host, port, app, server_class=QuietServer, handler_class=QuietHandler)
    threading.Thread(target=server.serve_forever, name=name, daemon=True).start()
    return server
