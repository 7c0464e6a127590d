"""The ingest job queue (Dramatiq on Redis): the CLI and the bot enqueue, ``byline worker`` embeds.

Embedding is the slow part of an ingest (about 200 sentences a second per machine), so on the
cluster backend with a Redis (``BYLINE_BACKEND=cluster`` and ``BYLINE_REDIS_URL``) the processes
that take articles in (``byline ingest``, chat's ``/ingest``) only read them and put jobs on the
queue, and any number of ``byline worker`` processes take the jobs off it, each with one library
opened once. Without that pair of settings nothing here is used: ingest runs in-process.

How the enqueuer learns the outcome: each job names a reply list in Redis, and the worker pushes
``started``, a ``progress`` count now and then, and last ``done`` (with the ingest report) or
``failed`` (with the reason and what was stored before it) onto it, while the enqueuer blocks on
the list. A list rather than Dramatiq's Results middleware, which stores one value at the end:
``started`` tells "no worker is taking jobs" (nothing within ``ANSWER_WITHIN_S``) from "a long
ingest", and the progress keeps ``byline ingest``'s bar moving. What is retried is in ``ingest_jobs``.
"""

from __future__ import annotations

# dramatiq and redis are imported inside the functions that use them: they come with the cluster
# extra, which a one-machine install does not have.
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.jobs.ingest import (
    MAX_BACKOFF_MS,
    MAX_RETRIES,
    MIN_BACKOFF_MS,
    BadJob,
    Job,
    absorb,
    failure_reason,
    merge,
    report_json,
    should_retry,
    split_jobs,
)
from bot.state.redis_client import describe
from retrieval.errors import BylineError, UnreadableArticle
from retrieval.ingest.web import INGEST_LOCK, ingest_urls
from retrieval.library import IngestReport
from retrieval.models import ArticleDraft
from retrieval.reading.dedup import NearDuplicates, merge_near_duplicates
from retrieval.reading.loader import iter_article_files, not_an_article_file, read_article_file

if TYPE_CHECKING:
    import dramatiq
    import redis

    from bot.settings import Settings
    from retrieval.ingest.fetch import Fetcher
    from retrieval.library import Library

log = logging.getLogger("byline.ingest_queue")

# Dramatiq's keys are byline:ingest (the queue), byline:ingest.DQ (retries waiting) and
# byline:ingest.XQ (dead letters: jobs that failed for good, kept a week).
NAMESPACE = "byline"
QUEUE = "ingest"
ACTOR = "byline_ingest"
REPLY_PREFIX = "byline:ingest-replies:"
# No word from any worker this long after enqueueing: none is running (or all are busy).
ANSWER_WITHIN_S = 30.0
# Once a worker has answered, this long without a word means it is gone. Longer than a retry's
# wait and than Dramatiq's 60 s heartbeat timeout, after which another worker takes the job.
SILENT_AFTER_S = 300.0
REPLY_TTL_S = 24 * 3600  # replies nobody reads (the enqueuer gave up) expire
PROGRESS_EVERY_S = 1.0
TIME_LIMIT_MS = 30 * 60 * 1000  # Dramatiq's default, 10 minutes, is too short for 20 slow URLs
# Under the 1 s socket timeout of ``redis_client``: a blocking pop must return before it.
_POLL_S = 0.5
WORKER_NAME = f"{socket.gethostname()}:{os.getpid()}"

Progress = Callable[[int], None]  # how many of the ingest's articles and URLs are done
Note = Callable[[str], None]


class QueueUnavailable(BylineError):
    """BYLINE_REDIS_URL is set, but no Redis answers there."""


class NoWorker(BylineError):
    """The jobs are queued, but no worker took one in time."""


def queue_for(settings: Settings) -> IngestQueue | None:
    """The queue that ingest goes through with these settings, or None to ingest in-process."""
    if settings.backend != "cluster" or not settings.redis_url:
        return None
    return IngestQueue(settings.redis_url)


def read_drafts(paths: Sequence[Path], report: IngestReport) -> list[ArticleDraft]:
    """The articles of the files and folders ``paths``, read here, where the files are; what
    cannot be read goes to ``report.failed`` as ``Library.ingest`` would report it."""
    for path in paths:
        refusal = not_an_article_file(path)
        if refusal:
            report.failed.append((str(path), refusal))
    drafts = []
    for path in iter_article_files(paths):
        try:
            drafts.append(read_article_file(path))
        except UnreadableArticle as error:
            report.failed.append((str(path), str(error)))
    return drafts


class IngestQueue:
    """The ingest queue on one Redis: ``ingest`` enqueues and waits; ``work`` consumes."""

    def __init__(self, redis_url: str) -> None:
        import dramatiq
        from dramatiq.brokers.redis import RedisBroker
        from dramatiq.middleware import CurrentMessage

        from bot.state.redis_client import redis_client

        self.where = describe(redis_url)
        self.client = redis_client(redis_url)
        self.broker = RedisBroker(client=self.client, namespace=NAMESPACE)
        self.broker.add_middleware(CurrentMessage())  # the job reads its retry count from it
        self.runner: JobRunner | None = None
        self.actor = dramatiq.actor(
            broker=self.broker,
            actor_name=ACTOR,
            queue_name=QUEUE,
            retry_when=should_retry,
            min_backoff=MIN_BACKOFF_MS,
            max_backoff=MAX_BACKOFF_MS,
            time_limit=TIME_LIMIT_MS,
            throws=(BadJob,),  # logged without a traceback, and never retried
        )(self._perform)

    def close(self) -> None:
        self.broker.close()
        self.client.close()

    # -- the enqueuer's side -------------------------------------------------------------

    def ingest(
        self,
        drafts: Sequence[ArticleDraft],
        urls: Sequence[str] = (),
        progress: Progress | None = None,
        note: Note | None = None,
        answer_within_s: float | None = None,
    ) -> IngestReport:
        """Enqueue the drafts and URLs as jobs and wait for the workers' reports.

        ``NoWorker`` when no worker answered within ``answer_within_s`` (default ``ANSWER_WITHIN_S``;
        the jobs stay queued); ``QueueUnavailable`` when Redis cannot be reached."""
        import redis

        jobs = split_jobs(REPLY_PREFIX + uuid.uuid4().hex, drafts, urls)
        if not jobs:
            return IngestReport()
        try:
            for job in jobs:
                self.actor.send(job.to_json())
            return self._wait(jobs, progress, note or log.warning, answer_within_s or ANSWER_WITHIN_S)
        except redis.RedisError as error:
            raise QueueUnavailable(
                f"cannot reach Redis at {self.where} ({type(error).__name__}): start it, or fix BYLINE_REDIS_URL "
                "(unset it to ingest in this process)"
            ) from None

    def _wait(self, jobs: list[Job], progress: Progress | None, note: Note, answer_within_s: float) -> IngestReport:
        report = IngestReport()
        reply = jobs[0].reply
        pending = {job.part: job for job in jobs}
        done = dict.fromkeys(pending, 0)
        heard = False
        deadline = time.monotonic() + answer_within_s
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                if not heard:
                    raise NoWorker(
                        f"queued; no worker answered within {answer_within_s:g} s: start `byline worker` "
                        "(the ingest stays queued and runs when a worker takes it)"
                    )
                for job in pending.values():
                    why = f"no word from its worker for {SILENT_AFTER_S:g} s; it stays queued for another worker"
                    report.failed.append((job.describe(), why))
                break
            popped = self.client.blpop([reply], timeout=min(left, _POLL_S))
            if popped is None:
                continue
            heard = True
            deadline = time.monotonic() + SILENT_AFTER_S
            event = json.loads(popped[1])
            answered = pending.get(event.get("part"))
            if answered is None:
                continue  # an event of a job already reported (one run twice)
            if event.get("event") == "progress":
                done[answered.part] = min(answered.size, int(event.get("done", 0)))
            elif event.get("event") == "retrying":
                note(f"{answered.describe()}: {event.get('why')}; Dramatiq retries it")
            elif event.get("event") in {"done", "failed"}:
                absorb(report, event.get("report"))
                done[answered.part] = answered.size
                del pending[answered.part]
            if progress:
                progress(sum(done.values()))
        if not pending:
            self.client.delete(reply)
        return report

    # -- the worker's side ---------------------------------------------------------------

    def work(self, runner: JobRunner, threads: int = 1) -> dramatiq.Worker:
        """Start Dramatiq worker threads in this process, running jobs with ``runner``."""
        import dramatiq

        self.runner = runner
        worker = dramatiq.Worker(self.broker, worker_threads=threads)
        # Dramatiq fetches two messages a thread ahead; a job is a minute of embedding, so one a
        # thread leaves the rest of the queue to idle workers.
        worker.queue_prefetch = threads
        worker.start()
        return worker

    def _perform(self, payload: dict[str, Any]) -> None:
        """The actor: ingest one job and reply; raising lets Dramatiq's retry policy decide."""
        runner = self.runner
        if runner is None:
            raise RuntimeError("this IngestQueue enqueues jobs; call work() to run them")
        try:
            job = Job.from_json(payload)
        except BadJob as error:
            _refuse(self.client, payload, str(error))
            raise
        replies = _Replies(self.client, job)
        retries = _retries()
        replies.send("started", worker=WORKER_NAME, attempt=retries + 1)
        log.info("Ingest %s: started (attempt %d of at most %d).", job.describe(), retries + 1, MAX_RETRIES + 1)
        started = time.monotonic()
        report = IngestReport()
        try:
            runner.run(job, report, replies.progress)
        except BaseException as error:  # Dramatiq's time limit is a BaseException too
            why = failure_reason(error)
            if should_retry(retries, error):
                log.warning("Ingest %s: %s; Dramatiq retries it.", job.describe(), why)
                replies.send("retrying", why=why, attempt=retries + 1)
            else:
                log.error("Ingest %s failed, not retried: %s", job.describe(), why)
                _unaccounted(job, report, why)
                replies.send("failed", why=why, report=report_json(report))
            raise
        log.info("Ingest %s: done in %.1f s: %s.", job.describe(), time.monotonic() - started, report.summary())
        replies.send("done", report=report_json(report))


class JobRunner:
    """How a worker ingests a job, with the one library it opened (shared by its threads)."""

    def __init__(self, library: Library, fetcher: Fetcher) -> None:
        self.library = library
        self.fetcher = fetcher

    def run(self, job: Job, report: IngestReport, progress: Progress) -> None:
        """Ingest ``job`` into ``report`` (which holds what was done if this raises part way)."""
        if job.drafts:
            self._store(job.drafts, report, progress)
        if job.urls:
            merge(report, ingest_urls(self.library, job.urls, self.fetcher))

    def _store(self, drafts: list[ArticleDraft], report: IngestReport, progress: Progress) -> None:

        # As ``Library.ingest`` does for files: near-duplicates are reported, not stored. Checked
        # under the cluster's writer lock, so that jobs on two workers see each other's articles.
        with INGEST_LOCK, self.library.writer.hold():
            kept, duplicates = merge_near_duplicates(drafts, NearDuplicates(self.library.store))
            report.duplicates.extend(duplicates)
            self.library.add_drafts(kept, report, lambda done, _total: progress(done))


class _Replies:
    """A job's events on its reply list."""

    def __init__(self, client: redis.Redis, job: Job) -> None:
        self.client = client
        self.job = job
        self._last_progress = 0.0

    def send(self, event: str, **fields: Any) -> None:
        with self.client.pipeline() as pipe:
            pipe.rpush(self.job.reply, json.dumps({"event": event, "part": self.job.part, **fields}))
            pipe.expire(self.job.reply, REPLY_TTL_S)
            pipe.execute()

    def progress(self, done: int) -> None:
        import redis

        now = time.monotonic()
        if now - self._last_progress < PROGRESS_EVERY_S:
            return
        self._last_progress = now
        try:
            self.send("progress", done=done)
        except redis.RedisError as error:  # a progress line is not worth stopping an ingest for
            log.debug("Could not send progress: %s", type(error).__name__)


def _retries() -> int:
    """How many times Dramatiq has retried the message being processed."""
    from dramatiq.middleware import CurrentMessage

    message = CurrentMessage.get_current_message()
    return int(message.options.get("retries", 0)) if message is not None else 0


def _unaccounted(job: Job, report: IngestReport, why: str) -> None:
    """Name each article and URL of a job that stopped part way that is not yet in its report."""
    accounted = {key for key, _ in report.added + report.replaced + report.failed + report.duplicates}
    accounted.update(report.unchanged)
    for key in [draft.key for draft in job.drafts] + job.urls:
        if key not in accounted:
            report.failed.append((key, f"not stored: the job stopped at {why}"))


def _refuse(client: redis.Redis, payload: object, why: str) -> None:
    """Tell the enqueuer of a job this worker cannot read, when it can at least see where to."""
    if isinstance(payload, dict) and isinstance(payload.get("reply"), str) and isinstance(payload.get("part"), int):
        failed = IngestReport(failed=[("the job", f"this worker cannot read it: {why}")])
        event = {"event": "failed", "part": payload["part"], "why": why, "report": report_json(failed)}
        client.rpush(payload["reply"], json.dumps(event))
        client.expire(payload["reply"], REPLY_TTL_S)
