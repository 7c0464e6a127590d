"""The admin-only ``/ingest URL`` chat command, and ingest of files attached in chat.

Adapters call ``register_ingest(service)`` once (it registers the command), and hand an
attached file to ``ingest_upload(service, filename, data, asker)``. Both reply with what was
added (headline, paragraphs, quotes found) or why nothing was. Given the ingest queue (the
cluster backend with a Redis: ``ingest_queue.queue_for``), they hand the work to ``byline worker``
and wait for its report instead of embedding in the bot's process.
"""

from __future__ import annotations

import os
from pathlib import PurePath
from typing import TYPE_CHECKING

from bot.asking import Asker, Command
from bot.output import plural
from bot.replies import TextReply
from bot.service import Service
from retrieval.errors import BylineError, UnreadableArticle
from retrieval.ingest.fetch import Fetcher
from retrieval.ingest.web import ingest_urls, store_drafts
from retrieval.library import IngestReport
from retrieval.models import ArticleDraft
from retrieval.reading.html import html_to_draft
from retrieval.reading.loader import MAX_FILE_BYTES, SUPPORTED_SUFFIXES, decode_text, parse_text_article

if TYPE_CHECKING:
    from bot.jobs.ingest_queue import IngestQueue

USAGE = "Usage: `/ingest URL` (operators only), e.g. `/ingest https://www.bbc.co.uk/sport/football/123`"
# Browsers and servers commonly stop at about 2,000 characters; a longer "URL" is not a page.
MAX_URL_LENGTH = 2048


def register_ingest(service: Service, fetcher: Fetcher | None = None, queue: IngestQueue | None = None) -> None:
    """Add ``/ingest`` to the service; the fetcher defaults to the environment's policy (with a
    queue, the workers fetch under theirs)."""

    def run(args: str, asker: Asker) -> TextReply:
        url = args.strip().strip("<>")  # Slack wraps links in <...>
        if not url or " " in url:
            return TextReply(USAGE, private=True, error=True)
        if len(url) > MAX_URL_LENGTH:
            return TextReply(
                f"That URL is {len(url):,} characters long; `/ingest` takes URLs of up to {MAX_URL_LENGTH:,}.",
                private=True,
                error=True,
            )
        if queue is not None:
            return queued(service, queue, [], [url])
        policy = fetcher or Fetcher.from_env(os.environ)
        return describe(ingest_urls(service.library, [url], policy))

    summary = "add an article from a web page (Byline's operators only: the library is shared)"
    service.register(Command("ingest", "/ingest URL", summary, run, operator_only=True))


def upload_refusal(asker: Asker, filename: str, size: int) -> TextReply | None:
    """Why an attached file will not be read (not an admin, not an article file, too big), or
    None; checked before the file is downloaded where the platform gives its name and size."""
    if not asker.is_operator:
        return TextReply(
            "Only Byline's operators can add articles: the library is shared by every workspace and server.",
            private=True,
            error=True,
        )
    name, suffix = _upload_name(filename)
    if suffix not in SUPPORTED_SUFFIXES:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        shown = suffix or "files without an extension"
        return TextReply(f"{name}: Byline reads {kinds} files, not {shown}.", private=True, error=True)
    if size > MAX_FILE_BYTES:
        return TextReply(f"{name}: {size / 1_000_000:.1f} MB is too big for one article.", private=True, error=True)
    return None


def _upload_name(filename: str) -> tuple[str, str]:
    """The attachment's bare file name (no folders) and its lower-cased suffix."""
    name = PurePath(filename).name or "upload"
    return name, PurePath(name).suffix.lower()


def ingest_upload(
    service: Service, filename: str, data: bytes, asker: Asker, queue: IngestQueue | None = None
) -> TextReply:
    """Ingest a file attached to a chat message (.txt, .md, .html); admins only."""
    refusal = upload_refusal(asker, filename, len(data))
    if refusal is not None:
        return refusal
    name, suffix = _upload_name(filename)
    # Keyed by platform and file name: uploading a corrected file replaces the earlier one.
    key = f"upload:{asker.platform}:{name}"
    try:
        text = decode_text(data, name)
        if suffix in {".html", ".htm"}:
            draft = html_to_draft(text, key)
        else:
            draft = parse_text_article(text, key, markdown=suffix in {".md", ".markdown"})
    except UnreadableArticle as error:
        return TextReply(f"{name}: could not add it: {error}", private=True, error=True)
    queue = queue if queue is not None else service.ingest_queue
    if queue is not None:
        return queued(service, queue, [draft], [])
    try:
        return describe(store_drafts(service.library, [draft]))
    except BylineError as error:
        return TextReply(f"{name}: could not add it: {error}", private=True, error=True)


def queued(service: Service, queue: IngestQueue, drafts: list[ArticleDraft], urls: list[str]) -> TextReply:
    """Ingest through the queue, then take the new articles into this process's indexes."""
    try:
        report = queue.ingest(drafts, urls)
    except BylineError as error:  # no worker answered, or no Redis
        text = str(error)
        return TextReply(text[:1].upper() + text[1:] + ".", private=True, error=True)
    service.library.catch_up()  # so that the next question can cite them, without waiting
    return describe(report)


def describe(report: IngestReport) -> TextReply:
    """What an ingest did, in a line or a few."""
    lines = [f"Added “{title}”" for _, title in report.added]
    lines += [f"Updated “{title}” (the old version was replaced)" for _, title in report.replaced]
    lines += [f"Already stored, unchanged: {key}" for key in report.unchanged]
    # Fetch errors already start with their URL; don't say it twice.
    for key, why in report.failed:
        lines.append(f"Could not add {why}" if why.startswith(key) else f"Could not add {key}: {why}")
    if report.added or report.replaced:
        lines.append(f"{plural(report.paragraphs, 'paragraph')}, {plural(report.quotes, 'quote')} found.")
    failed_only = bool(report.failed) and not (report.added or report.replaced or report.unchanged)
    return TextReply("\n".join(lines) or "Nothing to add.", private=failed_only, error=failed_only)
