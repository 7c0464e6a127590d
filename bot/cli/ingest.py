"""``byline ingest PATH-or-URL…``: files, folders and pages, reported in one format.

Whatever the mix of arguments, the output is the same: a line per article added or updated
(stdout), a line per file or page skipped and why (stderr), then one summary line. Progress
goes to stderr: a bar on a terminal, and a plain line every few seconds otherwise (a log, CI,
``| tee``), so a long ingest is never silent. On the cluster backend with a Redis the files are
read here and the embedding is done by ``byline worker`` processes (``ingest_queue``); the output
is the same.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TextIO

from bot.cli.feeds import is_url
from bot.jobs.ingest_queue import IngestQueue, queue_for, read_drafts
from bot.output import plural
from bot.settings import Settings
from retrieval.ingest.fetch import Fetcher
from retrieval.ingest.web import ingest_urls
from retrieval.library import IngestReport, Library
from retrieval.reading.loader import iter_article_files, not_an_article_file, skip_message

# Without a terminal, a progress line at most this often (and one at the end).
LOG_EVERY_S = 5.0
# A bar for runs this long; a handful of files is done before a bar would be drawn.
BAR_FROM_FILES = 20


def ingest_command(settings: Settings, arguments: list[str]) -> int:
    urls = [a for a in arguments if is_url(a)]
    paths = [Path(a) for a in arguments if not is_url(a)]
    refused = [p for p in paths if not_an_article_file(p)]
    queue = queue_for(settings)
    report = ingest_here(settings, paths, urls) if queue is None else ingest_queued(queue, paths, urls)
    print_report(report)
    nothing_done = not (report.added or report.replaced or report.unchanged or report.duplicates)
    return 1 if refused or (report.failed and nothing_done) else 0


def ingest_here(settings: Settings, paths: list[Path], urls: list[str]) -> IngestReport:
    library = Library.open(settings.data_dir, backend=settings.storage())
    for message in library.messages:
        print(message, file=sys.stderr)
    report = IngestReport()
    try:
        if urls:
            merge(report, ingest_urls(library, urls, Fetcher.from_env(os.environ)))
        if paths:
            total = sum(1 for _ in iter_article_files(paths))
            progress = Progress(total, sys.stderr)
            try:
                merge(report, library.ingest(paths, progress))
            finally:
                progress.close()
    finally:
        library.close()
    return report


def ingest_queued(queue: IngestQueue, paths: list[Path], urls: list[str]) -> IngestReport:
    """Read the files here and hand them and the URLs to the workers (``byline worker``)."""
    report = IngestReport()
    drafts = read_drafts(paths, report)
    files = sum(1 for _ in iter_article_files(paths))
    unread = files - len(drafts)  # done with already, as in ``Library.ingest``'s progress
    total = files + len(urls)
    progress = Progress(total, sys.stderr)
    try:
        merge(
            report,
            queue.ingest(
                drafts,
                urls,
                progress=lambda done: progress(unread + done, total),
                note=lambda line: print(f"ingest: {line}", file=sys.stderr, flush=True),
            ),
        )
    finally:
        progress.close()
        queue.close()
    return report


def merge(into: IngestReport, other: IngestReport) -> None:
    into.added += other.added
    into.replaced += other.replaced
    into.unchanged += other.unchanged
    into.failed += other.failed
    into.duplicates += other.duplicates
    into.article_ids += other.article_ids
    into.quotes += other.quotes
    into.paragraphs += other.paragraphs


def print_report(report: IngestReport) -> None:
    for _, title in report.added:
        print(f"added: {title}")
    for _, title in report.replaced:
        print(f"updated: {title}")
    for key, why in report.duplicates:
        print(f"not stored: {key}: {why}")
    for name, reason in report.failed:
        print(f"skipped: {skip_message(name, reason)}", file=sys.stderr)
    counts = f"{plural(report.paragraphs, 'paragraph')}, {plural(report.quotes, 'quote')}"
    print(f"{report.summary()}; {counts}.")


class Progress:
    """``progress(done, total)`` for ``Library.ingest``: a tqdm bar on a terminal, else a line
    every ``LOG_EVERY_S`` seconds."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.stream = total, stream
        self.started = self.last_line = time.monotonic()
        self.done = 0
        self.bar = None
        if stream.isatty() and total >= BAR_FROM_FILES:
            # start-up: only this path needs it.
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="article", file=stream)
        elif total >= BAR_FROM_FILES:
            print(f"ingest: reading {plural(total, 'file')} (a line every {LOG_EVERY_S:g} s)", file=stream, flush=True)

    def __call__(self, done: int, _total: int) -> None:
        self.done = done
        if self.bar is not None:
            self.bar.n = done
            self.bar.refresh()
            return
        now = time.monotonic()
        if self.total >= BAR_FROM_FILES and now - self.last_line >= LOG_EVERY_S:
            self.last_line = now
            self._line(now)

    def _line(self, now: float) -> None:
        share = 100 * self.done // max(1, self.total)
        print(
            f"ingest: {self.done}/{self.total} files ({share}%), {now - self.started:.0f} s",
            file=self.stream,
            flush=True,
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.total >= BAR_FROM_FILES:
            self._line(time.monotonic())
