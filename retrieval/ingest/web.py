"""Articles from web pages: fetch (safely), extract, key by canonical URL, deduplicate, store.

The canonical URL (``<link rel=canonical>`` or ``og:url``, normalised) is the article's key,
so the same story reached through two feeds, or with tracking parameters, is stored once.
A page's ETag / Last-Modified are remembered only after its article is stored, so a crash
between the fetch and the store makes the next run fetch it again instead of skipping it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import lxml.html

from retrieval.errors import BylineError, UnreadableArticle
from retrieval.ingest.fetch import Fetcher, FetchResult
from retrieval.models import ArticleDraft, IngestReport
from retrieval.ports import IngestTarget
from retrieval.reading.dedup import NearDuplicates, merge_near_duplicates
from retrieval.reading.html import html_to_draft
from retrieval.storage.feeds import WebPageStore
from retrieval.storage.store import Store
from retrieval.urls import normalise_url

log = logging.getLogger("byline.web")

# One ingest at a time per process: the poller, the CLI and chat commands all come through
# here, and the library's batch (embed, store, update indexes, save) is not meant to interleave.
INGEST_LOCK = threading.Lock()


def canonical_url(html: str, page_url: str) -> str:
    """The page's own idea of its URL (canonical link, else og:url), else the page URL."""
    try:
        tree = lxml.html.fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return normalise_url(page_url)
    found = tree.xpath("//link[translate(@rel,'CANONICAL','canonical')='canonical']/@href") or tree.xpath(
        "//meta[@property='og:url']/@content"
    )
    for candidate in found:
        absolute = urljoin(page_url, str(candidate).strip())
        if urlsplit(absolute).scheme in {"http", "https"}:
            return normalise_url(absolute)
    return normalise_url(page_url)


@dataclass
class FetchedPage:
    """An article fetched from a page, with the validators to remember once it is stored."""

    draft: ArticleDraft
    result: FetchResult


def fetch_page(fetcher: Fetcher, store: Store, url: str) -> FetchedPage | None:
    """Fetch and extract one article page; ``None`` when it has not changed since last time."""
    etag, last_modified, key = WebPageStore(store).validators(url)
    if key and store.find_by_key(key) is None:
        etag = last_modified = ""  # the stored article is gone: fetch it whole again
    result = fetcher.fetch(url, "html", etag, last_modified)
    if result.not_modified:
        return None
    html = result.text()
    canonical = canonical_url(html, result.url)
    try:
        draft = html_to_draft(html, canonical, canonical)
    except UnreadableArticle as error:
        raise UnreadableArticle(f"{url}: {error}") from None
    draft.key = canonical
    draft.url = canonical
    return FetchedPage(draft, result)


def remember_pages(store: Store, pages: Iterable[tuple[str, FetchedPage]]) -> None:
    """Record the validators of pages whose articles are now stored (or already were)."""
    rows = [(url, page.draft.key, page.result.etag, page.result.last_modified) for url, page in pages]
    if not rows:
        return
    WebPageStore(store).remember(rows)


def store_drafts(
    library: IngestTarget, drafts: Sequence[ArticleDraft], report: IngestReport | None = None
) -> IngestReport:
    """Deduplicate drafts against each other and recent articles, then add them."""
    report = report or IngestReport()
    with INGEST_LOCK:
        merged, skipped = merge_near_duplicates(drafts, NearDuplicates(library.store))
        report.unchanged.extend(key for key, _ in skipped)
        library.add_drafts(merged, report)
    return report


def stored_keys(report: IngestReport) -> set[str]:
    return {key for key, _ in report.added} | {key for key, _ in report.replaced} | set(report.unchanged)


def ingest_urls(library: IngestTarget, urls: Sequence[str], fetcher: Fetcher) -> IngestReport:
    """Fetch, extract and store article URLs; each failure is reported with its URL."""
    report = IngestReport()
    pages: list[tuple[str, FetchedPage]] = []
    for url in urls:
        try:
            page = fetch_page(fetcher, library.store, url)
        except BylineError as error:
            log.warning("Cannot ingest %s: %s", url, error)
            report.failed.append((url, str(error)))
            continue
        if page is None:
            report.unchanged.append(url)
        else:
            pages.append((url, page))
    store_drafts(library, [page.draft for _, page in pages], report)
    done = stored_keys(report)
    remember_pages(library.store, [(url, page) for url, page in pages if page.draft.key in done])
    return report
