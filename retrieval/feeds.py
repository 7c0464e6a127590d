"""Feed subscriptions (RSS 0.9x/1.0/2.0, Atom) and polling them into the library.

Each poll fetches a feed conditionally (ETag / Last-Modified), fetches every new or changed
item's link through the SSRF guard and extracts the article; when the page cannot be had,
the feed's own content or summary stands in. Every failure is recorded on its feed and shown
by ``byline feeds list``; one bad feed never stops the others.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin

import feedparser
import lxml.html

from .errors import BylineError
from .fetch import Fetcher
from .library import IngestReport, Library
from .models import ArticleDraft
from .netguard import check_url
from .store import Store, utc_now
from .web import FetchedPage, fetch_page, normalise_url, remember_pages, store_drafts, stored_keys

log = logging.getLogger("byline.feeds")

MAX_ITEMS_PER_POLL = 50


class FeedError(BylineError):
    """A feed that cannot be added, found or read."""


@dataclass(frozen=True)
class Feed:
    """A subscription and how its last polls went."""

    id: int
    url: str
    title: str
    added_at: str
    etag: str
    last_modified: str
    last_fetch: str
    last_success: str
    last_error: str
    failures: int
    articles_added: int


@dataclass
class FeedResult:
    """What one poll of one feed did."""

    feed: Feed
    added: int = 0
    updated: int = 0
    items: int = 0
    not_modified: bool = False
    error: str = ""
    item_errors: list[tuple[str, str]] = field(default_factory=list)


class FeedBook:
    """The feed subscriptions in the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add(self, url: str, fetcher: Fetcher | None = None) -> Feed:
        """Subscribe to a feed; the URL is checked by the SSRF guard when a fetcher is given."""
        url = url.strip()
        if fetcher is not None:
            check_url(url, fetcher.allowlist)
        with self.store.transaction(reindex=False) as connection:
            connection.execute("INSERT OR IGNORE INTO feeds (url, added_at) VALUES (?, ?)", (url, utc_now()))
        feed = self.get(url)
        assert feed is not None
        return feed

    def remove(self, url: str) -> None:
        with self.store.transaction(reindex=False) as connection:
            removed = connection.execute("DELETE FROM feeds WHERE url=?", (url.strip(),)).rowcount
        if not removed:
            raise FeedError(f"{url}: not a subscribed feed (see `byline feeds list`)")

    def get(self, url: str) -> Feed | None:
        row = self.store._connect().execute("SELECT * FROM feeds WHERE url=?", (url.strip(),)).fetchone()
        return Feed(**dict(row)) if row else None

    def list(self) -> list[Feed]:
        return [Feed(**dict(row)) for row in self.store._connect().execute("SELECT * FROM feeds ORDER BY id")]

    def seen(self, feed_id: int) -> dict[str, str]:
        rows = self.store._connect().execute("SELECT guid, updated FROM feed_items WHERE feed_id=?", (feed_id,))
        return {row["guid"]: row["updated"] for row in rows}

    def record(self, feed: Feed, result: FeedResult, etag: str, last_modified: str, title: str = "") -> None:
        now = utc_now()
        with self.store.transaction(reindex=False) as connection:
            if result.error:
                connection.execute(
                    "UPDATE feeds SET last_fetch=?, last_error=?, failures=failures+1 WHERE id=?",
                    (now, result.error, feed.id),
                )
            else:
                connection.execute(
                    "UPDATE feeds SET last_fetch=?, last_success=?, last_error=?, failures=0, etag=?, last_modified=?, "
                    "articles_added=articles_added+?, title=CASE WHEN ?='' THEN title ELSE ? END WHERE id=?",
                    (now, now, _item_errors_note(result), etag, last_modified, result.added, title, title, feed.id),
                )

    def mark_seen(self, feed_id: int, items: Sequence[tuple[str, str, str, str]]) -> None:
        """Remember (guid, link, updated, article key) of items that are now stored."""
        now = utc_now()
        with self.store.transaction(reindex=False) as connection:
            connection.executemany(
                "INSERT INTO feed_items (feed_id, guid, link, updated, article_key, seen_at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(feed_id, guid) DO UPDATE SET link=excluded.link, updated=excluded.updated, "
                "article_key=excluded.article_key, seen_at=excluded.seen_at",
                [(feed_id, guid, link, updated, key, now) for guid, link, updated, key in items],
            )


def _item_errors_note(result: FeedResult) -> str:
    if not result.item_errors:
        return ""
    link, reason = result.item_errors[0]
    more = f" (and {len(result.item_errors) - 1} more)" if len(result.item_errors) > 1 else ""
    return f"{len(result.item_errors)} problem(s) with items: {reason}{more}"


def poll_feeds(library: Library, fetcher: Fetcher, urls: Sequence[str] | None = None) -> list[FeedResult]:
    """One polling round over every subscription (or the given ones); never raises per feed."""
    book = FeedBook(library.store)
    feeds = book.list() if urls is None else [f for f in book.list() if f.url in set(urls)]
    results = []
    for feed in feeds:
        try:
            results.append(poll_feed(library, fetcher, book, feed))
        except Exception as error:  # one bad feed never stops the others, whatever went wrong
            log.exception("Polling %s failed unexpectedly.", feed.url)
            result = FeedResult(feed, error=f"{feed.url}: unexpected error: {error}")
            book.record(feed, result, feed.etag, feed.last_modified)
            results.append(result)
    return results


def poll_feed(library: Library, fetcher: Fetcher, book: FeedBook, feed: Feed) -> FeedResult:
    result = FeedResult(feed)
    try:
        response = fetcher.fetch(feed.url, "feed", feed.etag, feed.last_modified)
    except BylineError as error:
        log.warning("Feed %s: %s", feed.url, error)
        result.error = str(error)
        book.record(feed, result, feed.etag, feed.last_modified)
        return result
    if response.not_modified:
        result.not_modified = True
        book.record(feed, result, response.etag or feed.etag, response.last_modified or feed.last_modified)
        return result
    parsed = feedparser.parse(
        response.body, response_headers={"content-type": response.content_type or "application/xml"}
    )
    if not parsed.entries and (parsed.bozo or not parsed.get("version")):
        reason = getattr(parsed, "bozo_exception", None) or "no RSS or Atom items found"
        result.error = f"{feed.url}: not a readable feed ({reason})"
        log.warning("Feed %s", result.error)
        book.record(feed, result, feed.etag, feed.last_modified)
        return result
    if parsed.bozo:
        # Recovered from broken XML: keep what was readable, and say so in `feeds list`.
        result.item_errors.append((feed.url, f"broken XML, read what could be ({parsed.get('bozo_exception')})"))
    seen = book.seen(feed.id)
    feed_title = str(parsed.feed.get("title", "")).strip()
    drafts: list[tuple[tuple[str, str, str], ArticleDraft, FetchedPage | None]] = []
    for entry in parsed.entries[:MAX_ITEMS_PER_POLL]:
        raw_link = str(entry.get("link", "")).strip()
        link = urljoin(response.url, raw_link) if raw_link else ""
        guid = str(entry.get("id") or link).strip()
        # "published" first: asking feedparser for a missing "updated" warns about a fallback.
        updated = str(entry.get("published") or entry.get("updated") or "")
        if not guid or (guid in seen and seen[guid] == updated):
            continue
        result.items += 1
        item = _item_draft(library, fetcher, entry, link, feed_title, result)
        if item is not None:
            drafts.append(((guid, link, updated), *item))
    report = store_drafts(library, [draft for _, draft, _ in drafts], IngestReport())
    result.added, result.updated = len(report.added), len(report.replaced)
    done = stored_keys(report)
    stored = [(ident, draft, page) for ident, draft, page in drafts if draft.key in done]
    remember_pages(library.store, [(ident[1], page) for ident, _, page in stored if page is not None])
    book.mark_seen(feed.id, [(*ident, draft.key) for ident, draft, _ in stored])
    for key, reason in report.failed:
        result.item_errors.append((key, reason))
    book.record(feed, result, response.etag, response.last_modified, feed_title)
    return result


def _item_draft(
    library: Library, fetcher: Fetcher, entry: Any, link: str, feed_title: str, result: FeedResult
) -> tuple[ArticleDraft, FetchedPage | None] | None:
    """The article for a feed item: its page, else the feed's own text for it."""
    page_error = ""
    if link:
        try:
            page = fetch_page(fetcher, library.store, link)
            if page is None:
                return None  # not modified since it was stored
            _fill_from_entry(page.draft, entry, feed_title)
            return page.draft, page
        except BylineError as error:
            page_error = str(error)
            log.info("Feed item %s: %s; using the feed's text.", link, error)
    draft = _entry_draft(entry, link, feed_title)
    if draft is None:
        result.item_errors.append((link, page_error or "the item has no link and no text"))
        return None
    if page_error:
        result.item_errors.append((link, page_error))
    return draft, None


def _fill_from_entry(draft: ArticleDraft, entry: Any, feed_title: str) -> None:
    draft.title = draft.title or str(entry.get("title", "")).strip()
    draft.author = draft.author or str(entry.get("author", "")).strip()
    draft.published = draft.published or _entry_date(entry)
    draft.source = draft.source or feed_title


def _entry_draft(entry: Any, link: str, feed_title: str) -> ArticleDraft | None:
    """An article from the feed's content or summary (HTML allowed), one paragraph per block."""
    html = ""
    for content in entry.get("content", []) or []:
        html = max(html, str(content.get("value", "")), key=len)
    html = html or str(entry.get("summary", ""))
    text = _html_paragraphs(html)
    title = str(entry.get("title", "")).strip()
    if not text or not title:
        return None
    key = normalise_url(link) if link else f"feed-item:{entry.get('id', title)}"
    return ArticleDraft(
        key=key,
        title=title,
        text=text,
        source=feed_title,
        url=normalise_url(link) if link else "",
        published=_entry_date(entry),
        author=str(entry.get("author", "")).strip(),
    )


def _html_paragraphs(html: str) -> str:
    if not html.strip():
        return ""
    try:
        root = lxml.html.fragment_fromstring(html, create_parent="div")
    except (ValueError, lxml.etree.ParserError):
        return ""
    for junk in root.xpath("//script|//style"):
        junk.drop_tree()
    blocks = root.xpath("//p|//li|//blockquote|//h2|//h3")
    texts = [" ".join(b.text_content().split()) for b in blocks] if blocks else [" ".join(root.text_content().split())]
    return "\n\n".join(t for t in texts if t)


def _entry_date(entry: Any) -> str:
    parsed = entry.get("published_parsed") or entry.get("updated_parsed")
    if not parsed:
        return ""
    year, month, day, hour, minute, second = parsed[:6]
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
