"""``/healthz`` and ``/metrics`` for ``byline serve``, on ``BYLINE_HTTP_PORT`` in every mode.

``/healthz`` answers 200 only once the model is warm and the library is open, and 503 before
(and while shutting down), so a load balancer or ``docker compose`` sends nothing to a Byline that
would make its first asker wait for the model. ``/metrics`` is the Prometheus text format.

In Slack's HTTP mode the two paths are served by the same server as ``/slack/events`` (same port),
so there is one port to expose whatever the mode.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol
from wsgiref.simple_server import WSGIServer

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from bot.http_server import serve_in_thread
from bot.limits import RetrievalPool
from bot.replies import AnswerReply, Reply, TextReply

log = logging.getLogger("byline.health")


class Measured(Protocol):
    """What the metrics read of the service (``bot.service.Service``): its retrieval pool, and
    ``ask``, which ``instrument`` wraps to count every question."""

    @property
    def pool(self) -> RetrievalPool: ...

    @property
    def ask(self) -> Callable[..., Reply]: ...


WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
HEALTH_PATH = "/healthz"
METRICS_PATH = "/metrics"
# Retrieval answers in tens of milliseconds once warm; the tail buckets catch a cold model or a queue.
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Health:
    """Readiness flags and the metrics of one Byline process."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.model_warm = False
        self.library_open = False
        self.stopping = False
        # Whether this worker runs feeds, digests and retention (bot/state/leader.py); set by serve.
        self.leader = False
        self.questions = Counter("byline_questions", "Questions asked", ["platform"], registry=self.registry)
        self.answers = Counter("byline_answers", "Questions answered with cited spans", registry=self.registry)
        self.abstentions = Counter(
            "byline_abstentions",
            "Questions not answered, by the check that refused",
            ["refused_by"],
            registry=self.registry,
        )
        self.refusals = Counter(
            "byline_question_refusals", "Questions turned away (rate limit, busy, empty)", registry=self.registry
        )
        self.latency = Histogram(
            "byline_answer_seconds", "Time to answer a question", buckets=LATENCY_BUCKETS, registry=self.registry
        )
        self.queue_depth = Gauge(
            "byline_queue_depth", "Questions running or waiting for a worker", registry=self.registry
        )
        self.ingested = Counter(
            "byline_ingested_articles", "Articles stored by feeds and the watched folder", ["source", "outcome"],
            registry=self.registry,
        )  # fmt: skip
        self.feed_errors = Counter("byline_feed_errors", "Feed polls that failed", registry=self.registry)

    @property
    def ready(self) -> bool:
        return self.model_warm and self.library_open and not self.stopping

    def watch_queue(self, service: Measured) -> None:
        self.queue_depth.set_function(lambda: float(service.pool.outstanding))

    def instrument(self, service: Measured) -> None:
        """Count every question the service answers, whichever adapter asked it."""
        ask = service.ask

        def counted(question: str, asker: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            reply = ask(question, asker, *args, **kwargs)
            self.questions.labels(platform=asker.platform).inc()
            if isinstance(reply, AnswerReply):
                self.latency.observe(time.perf_counter() - started)
                if reply.answer.answered:
                    self.answers.inc()
                else:
                    self.abstentions.labels(refused_by=reply.answer.refused_by or "none").inc()
            elif isinstance(reply, TextReply):
                self.refusals.inc()
            return reply

        # An instance attribute, so adapters calling ``service.ask`` are counted without each
        # having to know about metrics.
        setattr(service, "ask", counted)  # noqa: B010

    # -- WSGI ----------------------------------------------------------------------------

    def routes(self, fallback: WSGIApp | None = None) -> WSGIApp:
        """``/healthz`` and ``/metrics``; anything else goes to ``fallback`` (or is a 404)."""

        def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            path = environ.get("PATH_INFO", "")
            if path == HEALTH_PATH:
                body = json.dumps(
                    {
                        "status": "ready" if self.ready else ("stopping" if self.stopping else "starting"),
                        "model_warm": self.model_warm,
                        "library_open": self.library_open,
                        "leader": self.leader,
                    }
                ).encode()
                status = "200 OK" if self.ready else "503 Service Unavailable"
                start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
                return [body]
            if path == METRICS_PATH:
                body = generate_latest(self.registry)
                start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(body)))])
                return [body]
            if fallback is not None:
                return fallback(environ, start_response)
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found: Byline serves /healthz and /metrics here\n"]

        return app

    def serve(self, host: str, port: int) -> WSGIServer:
        """Serve the two paths on ``host:port`` in a background thread; returns the server."""
        server = serve_in_thread(host, port, self.routes(), "byline-health")
        log.info("Health and metrics on http://%s:%s%s and %s", host, server.server_port, HEALTH_PATH, METRICS_PATH)
        return server


# The process's one Health: serve marks readiness, adapters and the poller count into it, and the
# Slack HTTP server mounts its routes beside /slack/events.
HEALTH = Health()
