"""What travels on the ingest queue: the job, the worker's replies, and which failures are retried.

Kept apart from the queue itself (``ingest_queue``) because both ends read it and none of it needs
Dramatiq or Redis: a job is plain JSON that a worker on another machine can read without the
enqueuer's disk, and the ingest report goes back as JSON too.

The retry policy, in one place: a job that failed because a connection was lost (PostgreSQL,
Qdrant, Redis: the worker's library or the queue) is retried by Dramatiq, up to ``MAX_RETRIES``
times with a growing delay; any other failure (a job this version cannot read, an article the
store refuses) would fail the same way again, so it is not retried: its reason goes straight back
to the enqueuer and the message to Dramatiq's dead-letter set. Running a job twice is harmless:
articles are stored by content hash, so a retry stores nothing twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from bot.output import plural
from retrieval.library import IngestReport
from retrieval.models import ArticleDraft

FORMAT_VERSION = 1
# A job is one Redis message and one worker's work between replies: at most this many articles
# or characters (about a minute of embedding), or this many URLs (each may take a fetch deadline).
JOB_ARTICLES = 100
JOB_CHARS = 2_000_000
JOB_URLS = 20
# Lost connections are retried this many times, waiting 5 s, 10 s, 20 s … (Dramatiq doubles the
# delay and adds up to as much again at random), never more than 2 minutes.
MAX_RETRIES = 5
MIN_BACKOFF_MS = 5_000
MAX_BACKOFF_MS = 120_000
_DRAFT_TEXT_FIELDS = ("key", "title", "text", "source", "url", "published", "author")


class BadJob(Exception):
    """A queue message that is not a job this version of Byline reads: never retried."""


@dataclass
class Job:
    """One part of an ingest: drafts read where it was enqueued, or URLs for the worker to fetch."""

    reply: str  # the Redis list the worker answers on (one per enqueued ingest)
    part: int
    parts: int
    drafts: list[ArticleDraft]
    urls: list[str]

    def describe(self) -> str:
        """``job 2 of 3 (48 articles)``: for log lines and messages."""
        what = [plural(len(self.drafts), "article")] if self.drafts else []
        what += [plural(len(self.urls), "URL")] if self.urls else []
        return f"job {self.part + 1} of {self.parts} ({', '.join(what) or 'empty'})"

    @property
    def size(self) -> int:
        """What the enqueuer's progress counts for this job: its articles and URLs."""
        return len(self.drafts) + len(self.urls)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "reply": self.reply,
            "part": self.part,
            "parts": self.parts,
            "drafts": [asdict(draft) for draft in self.drafts],
            "urls": list(self.urls),
        }

    @classmethod
    def from_json(cls, data: object) -> Job:
        """The job in a message; ``BadJob`` saying what is wrong with it otherwise."""
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            version = data.get("version") if isinstance(data, dict) else None
            raise BadJob(f"not an ingest job of format {FORMAT_VERSION} (format {version!r})")
        reply, part, parts = data.get("reply"), data.get("part"), data.get("parts")
        if not isinstance(reply, str) or not isinstance(part, int) or not isinstance(parts, int):
            raise BadJob("an ingest job without its reply key or part number")
        drafts, urls = data.get("drafts"), data.get("urls")
        if not isinstance(drafts, list) or not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
            raise BadJob("an ingest job whose drafts or URLs are not lists")
        return cls(reply, part, parts, [_draft(item) for item in drafts], urls)


def _draft(item: object) -> ArticleDraft:
    if not isinstance(item, dict) or not all(isinstance(item.get(name, ""), str) for name in _DRAFT_TEXT_FIELDS):
        raise BadJob("an ingest job with a malformed article")
    tags = item.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise BadJob("an ingest job with malformed article tags")
    values = {name: item.get(name, "") for name in _DRAFT_TEXT_FIELDS}
    return ArticleDraft(**values, tags=tuple(tags))


def split_jobs(reply: str, drafts: Sequence[ArticleDraft], urls: Sequence[str]) -> list[Job]:
    """The jobs of one ingest: drafts in runs of at most ``JOB_ARTICLES`` / ``JOB_CHARS``, then URLs
    in runs of ``JOB_URLS``; separate jobs can go to separate workers."""
    runs: list[tuple[list[ArticleDraft], list[str]]] = []
    current: list[ArticleDraft] = []
    chars = 0
    for draft in drafts:
        if current and (len(current) >= JOB_ARTICLES or chars + len(draft.text) > JOB_CHARS):
            runs.append((current, []))
            current, chars = [], 0
        current.append(draft)
        chars += len(draft.text)
    if current:
        runs.append((current, []))
    runs += [([], list(urls[i : i + JOB_URLS])) for i in range(0, len(urls), JOB_URLS)]
    return [Job(reply, part, len(runs), run_drafts, run_urls) for part, (run_drafts, run_urls) in enumerate(runs)]


def report_json(report: IngestReport) -> dict[str, Any]:
    return asdict(report)


def absorb(into: IngestReport, data: object) -> None:
    """Add a report (as ``report_json`` wrote it) to ``into``; what is not a report's field is ignored."""
    if not isinstance(data, dict):
        return
    for spec in fields(IngestReport):
        value, mine = data.get(spec.name), getattr(into, spec.name)
        if isinstance(mine, list) and isinstance(value, list):
            mine.extend(tuple(item) if isinstance(item, list) else item for item in value)
        elif isinstance(mine, int) and isinstance(value, int):
            setattr(into, spec.name, mine + value)


def merge(into: IngestReport, other: IngestReport) -> None:
    absorb(into, report_json(other))


def lost_connection(error: BaseException) -> bool:
    """Whether ``error`` is a server that went away (worth retrying later), not a bad job."""
    # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
    import psycopg
    import redis
    from qdrant_client.http.exceptions import ResponseHandlingException

    # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
    from retrieval.errors import QdrantUnavailable
    from retrieval.storage.postgres import DatabaseUnavailable

    connection_errors = (
        ConnectionError,  # the OSError family: refused, reset, broken pipe
        TimeoutError,
        psycopg.OperationalError,  # the server closed the connection, or is not there
        DatabaseUnavailable,
        redis.ConnectionError,
        redis.TimeoutError,
        ResponseHandlingException,  # qdrant-client's wrapper of an HTTP transport error
        QdrantUnavailable,
    )
    return isinstance(error, connection_errors)


def should_retry(retries: int, error: BaseException) -> bool:
    """Dramatiq's ``retry_when``: ``retries`` is how many times the job was retried already."""
    return retries < MAX_RETRIES and lost_connection(error)


def failure_reason(error: BaseException) -> str:
    """What to tell the enqueuer: a lost connection by its type only (its message can name the
    server's address); any other error by its first line, which says what was wrong."""
    if lost_connection(error):
        return f"lost the connection to a server ({type(error).__name__})"
    text = str(error).strip().splitlines()[0][:300] if str(error).strip() else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
