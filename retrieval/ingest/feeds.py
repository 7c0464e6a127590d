"""Feed subscriptions (RSS 0.9x/1.0/2.0, Atom) and polling them into the library.

Each poll fetches a feed conditionally (ETag / Last-Modified), fetches every new or changed
item's link through the SSRF guard and extracts the article; when the page cannot be had,
the feed's own content or summary stands in. Every failure is recorded on its feed and shown
by ``byline feeds list``; one bad feed never stops the others.

A feed's body comes from whoever runs its server, so it is data and nothing else: feedparser
gets it as a stream, because given a ``str`` or ``bytes`` it would open a local file of that
name or a URL (``/etc/passwd``, a file in the data dir, ``/dev/zero``), and a body declaring
an external XML entity is refused before any parser sees it. Feeds are fetched by a few
workers at once, so one stalled server costs its own feed only; what they gather is stored
one feed at a time on the calling thread, as a single ingest always is.
"""

from __future__ import annotations

import io
import logging
import re
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin

import lxml.html

from retrieval.errors import BylineError
from retrieval.ingest.fetch import Fetcher
from retrieval.ingest.netguard import check_url
from retrieval.ingest.web import FetchedPage, fetch_page, normalise_url, remember_pages, store_drafts, stored_keys
from retrieval.models import ArticleDraft, IngestReport
from retrieval.ports import IngestTarget
from retrieval.storage.feeds import Feed, FeedStore
from retrieval.storage.store import Store

log = logging.getLogger("byline.feeds")

MAX_ITEMS_PER_POLL = 50
FEED_WORKERS = 4
# The item pages of one feed share a budget of this many fetch deadlines per round; items
# beyond it wait for the next round, so a feed of slow pages cannot hold a worker for long.
PAGE_BUDGET_DEADLINES = 3

# <!ENTITY name SYSTEM "file:///etc/passwd"> (or a % parameter entity, or PUBLIC): the XXE shape.
_EXTERNAL_ENTITY = re.compile(r"<!ENTITY\s+(?:%\s*)?[^\s>]+\s+(?:SYSTEM|PUBLIC)\b", re.IGNORECASE)


_ANY_ENTITY = re.compile(rb"<!ENTITY", re.IGNORECASE)


class FeedError(BylineError):
    """A feed that cannot be added, found or read."""


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
    """The feed subscriptions in the store: what may be subscribed to (``feed_store.FeedStore``
    keeps the rows)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.rows = FeedStore(store)

    def add(self, url: str, fetcher: Fetcher | None = None) -> Feed:
        """Subscribe to a feed; the URL is checked by the SSRF guard when a fetcher is given."""
        url = url.strip()
        if fetcher is not None:
            check_url(url, fetcher.allowlist)
        self.rows.add_if_new(url)
        feed = self.get(url)
        assert feed is not None
        return feed

    def subscribe(self, url: str, fetcher: Fetcher) -> Feed:
        """``byline feeds add``: fetch the URL once and subscribe only to a real feed.

        A 404, an error or a body that is not RSS or Atom is refused with the reason; a web page
        that names its feed (``<link rel="alternate" type="application/rss+xml" href=...>``)
        subscribes to that feed instead. A feed already followed is refused, not added twice."""
        url = url.strip()
        check_url(url, fetcher.allowlist)
        self._refuse_known(url)  # before fetching: a feed already followed needs no fetch
        found_url, title = _probe(url, fetcher)
        self._refuse_known(found_url)
        self.rows.add(found_url, title)
        feed = self.get(found_url)
        assert feed is not None
        return feed

    def _refuse_known(self, url: str) -> None:
        for known in self.list():
            if normalise_url(known.url) == normalise_url(url):
                raise FeedError(f"{known.url}: already followed (see `byline feeds list`)")

    def remove(self, url: str) -> None:
        if not self.rows.delete(url.strip()):
            raise FeedError(f"{url}: not a subscribed feed (see `byline feeds list`)")

    def get(self, url: str) -> Feed | None:
        return self.rows.feed(url.strip())

    def list(self) -> list[Feed]:
        return self.rows.feeds()

    def seen(self, feed_id: int) -> dict[str, str]:
        return self.rows.seen_items(feed_id)

    def record(self, feed: Feed, result: FeedResult, etag: str, last_modified: str, title: str = "") -> None:
        self.rows.record_poll(
            feed.id, result.error, _item_errors_note(result), etag, last_modified, result.added, title
        )

    def mark_seen(self, feed_id: int, items: Sequence[tuple[str, str, str, str]]) -> None:
        """Remember (guid, link, updated, article key) of items that are now stored."""
        self.rows.mark_seen(feed_id, items)


# <link rel="alternate" type="..."> types that name a feed, in order of preference.
_FEED_LINK_TYPES = ("application/rss+xml", "application/atom+xml", "application/rdf+xml")


def _probe(url: str, fetcher: Fetcher, discovered: bool = False) -> tuple[str, str]:
    """(the feed's URL, its title) after one fetch of ``url`` (two when a page names its feed);
    raises ``FeedError`` saying why it is not a feed. A fetch error already names the URL."""
    response = fetcher.fetch(url, "feed")
    refusal = refuse_feed_body(response.body)
    if refusal:
        raise FeedError(f"{url}: {refusal}")
    import feedparser  # here, not at the top: most commands never read a feed

    parsed = feedparser.parse(
        io.BytesIO(response.body), response_headers={"content-type": response.content_type or "application/xml"}
    )
    if parsed.get("version") and not (parsed.bozo and not parsed.entries):
        return url, str(parsed.feed.get("title", "")).strip()
    if not discovered:
        link = _feed_link(response.text(), response.url)
        if link:
            check_url(link, fetcher.allowlist)
            return _probe(link, fetcher, discovered=True)
    if b"<html" in response.body[:4096].lower():
        raise FeedError(
            f"{url}: not a feed: a web page that links no RSS or Atom feed; give the feed's own URL"
            " (sites often link it as RSS)"
        )
    raise FeedError(f"{url}: not a feed: the server's answer is not RSS or Atom; give the feed's own URL")


def _feed_link(html: str, page_url: str) -> str:
    """The feed a page announces with ``<link rel="alternate" type="application/rss+xml">``."""
    try:
        tree = lxml.html.fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return ""
    for wanted in _FEED_LINK_TYPES:
        for link in tree.xpath("//link[@href and @type]"):
            rel = str(link.get("rel", "")).lower().split()
            if "alternate" in rel and str(link.get("type", "")).strip().lower() == wanted:
                absolute = urljoin(page_url, str(link.get("href")).strip())
                if absolute.startswith(("http://", "https://")):
                    return absolute
    return ""


def _item_errors_note(result: FeedResult) -> str:
    if not result.item_errors:
        return ""
    link, reason = result.item_errors[0]
    more = f" (and {len(result.item_errors) - 1} more)" if len(result.item_errors) > 1 else ""
    return f"{len(result.item_errors)} problem(s) with items: {reason}{more}"


def poll_feeds(
    library: IngestTarget, fetcher: Fetcher, urls: Sequence[str] | None = None, workers: int = FEED_WORKERS
) -> list[FeedResult]:
    """One polling round over every subscription (or the given ones); never raises per feed.

    Up to ``workers`` feeds are fetched at once; each feed's articles are stored as soon as
    it is done, one feed at a time. Results come back in subscription order."""
    book = FeedBook(library.store)
    feeds = book.list() if urls is None else [f for f in book.list() if f.url in set(urls)]
    if not feeds:
        return []
    results: dict[int, FeedResult] = {}
    with ThreadPoolExecutor(max(1, min(workers, len(feeds))), thread_name_prefix="byline-feed") as pool:
        futures = {pool.submit(_gather_in_worker, library, fetcher, book, feed): feed for feed in feeds}
        for future in as_completed(futures):
            feed = futures[future]
            try:
                results[feed.id] = _store_gathered(library, book, future.result())
            except Exception as error:  # one bad feed never stops the others, whatever went wrong
                log.exception("Polling %s failed unexpectedly.", feed.url)
                result = FeedResult(feed, error=f"{feed.url}: unexpected error: {error}")
                book.record(feed, result, feed.etag, feed.last_modified)
                results[feed.id] = result
    return [results[feed.id] for feed in feeds]


@dataclass
class _Gathered:
    """What a worker brought back for one feed: the items' drafts, and the validators and
    title to record once they are stored."""

    result: FeedResult
    etag: str
    last_modified: str
    title: str = ""
    drafts: list[tuple[tuple[str, str, str], ArticleDraft, FetchedPage | None]] = field(default_factory=list)


def _gather_in_worker(library: IngestTarget, fetcher: Fetcher, book: FeedBook, feed: Feed) -> _Gathered:
    try:
        return _gather(library, fetcher, book, feed)
    finally:
        library.store.close()  # only this worker thread's own SQLite connection


def _gather(library: IngestTarget, fetcher: Fetcher, book: FeedBook, feed: Feed) -> _Gathered:
    """Fetch and parse one feed and fetch its new items' pages: network only, nothing stored."""
    result = FeedResult(feed)
    gathered = _Gathered(result, feed.etag, feed.last_modified)
    try:
        response = fetcher.fetch(feed.url, "feed", feed.etag, feed.last_modified)
    except BylineError as error:
        log.warning("Feed %s: %s", feed.url, error)
        result.error = str(error)
        return gathered
    if response.not_modified:
        result.not_modified = True
        gathered.etag = response.etag or feed.etag
        gathered.last_modified = response.last_modified or feed.last_modified
        return gathered
    refusal = refuse_feed_body(response.body)
    if refusal:
        result.error = f"{feed.url}: {refusal}"
        log.warning("Feed %s", result.error)
        return gathered
    import feedparser  # here, not at the top: most commands never read a feed

    # A stream, never str or bytes: feedparser would open a file or URL of that name.
    parsed = feedparser.parse(
        io.BytesIO(response.body), response_headers={"content-type": response.content_type or "application/xml"}
    )
    if not parsed.entries and (parsed.bozo or not parsed.get("version")):
        reason = getattr(parsed, "bozo_exception", None) or "no RSS or Atom items found"
        result.error = f"{feed.url}: not a readable feed ({reason})"
        log.warning("Feed %s", result.error)
        return gathered
    if parsed.bozo:
        # Recovered from broken XML: keep what was readable, and say so in `feeds list`.
        result.item_errors.append((feed.url, f"broken XML, read what could be ({parsed.get('bozo_exception')})"))
    seen = book.seen(feed.id)
    gathered.title = str(parsed.feed.get("title", "")).strip()
    budget = fetcher.deadline * PAGE_BUDGET_DEADLINES
    out_of_time = time.monotonic() + budget
    left = 0
    for entry in parsed.entries[:MAX_ITEMS_PER_POLL]:
        raw_link = str(entry.get("link", "")).strip()
        link = urljoin(response.url, raw_link) if raw_link else ""
        guid = str(entry.get("id") or link).strip()
        # "published" first: asking feedparser for a missing "updated" warns about a fallback.
        updated = str(entry.get("published") or entry.get("updated") or "")
        if not guid or (guid in seen and seen[guid] == updated):
            continue
        if time.monotonic() > out_of_time:
            left += 1  # not marked seen, so the next round picks it up
            continue
        result.items += 1
        item = _item_draft(library, fetcher, entry, link, gathered.title, result)
        if item is not None:
            gathered.drafts.append(((guid, link, updated), *item))
    if left:
        result.item_errors.append(
            (feed.url, f"{left} new item(s) left for the next poll: this feed's pages took over {budget:g} s")
        )
    else:
        # Only now may the feed answer 304 next time; with items left over it must not.
        gathered.etag, gathered.last_modified = response.etag, response.last_modified
    return gathered


def _store_gathered(library: IngestTarget, book: FeedBook, gathered: _Gathered) -> FeedResult:
    """Store one feed's drafts and record how its poll went (on the polling thread)."""
    result, feed = gathered.result, gathered.result.feed
    if result.error or result.not_modified:
        book.record(feed, result, gathered.etag, gathered.last_modified)
        return result
    drafts = gathered.drafts
    report = store_drafts(library, [draft for _, draft, _ in drafts], IngestReport())
    result.added, result.updated = len(report.added), len(report.replaced)
    done = stored_keys(report)
    stored = [(ident, draft, page) for ident, draft, page in drafts if draft.key in done]
    remember_pages(library.store, [(ident[1], page) for ident, _, page in stored if page is not None])
    book.mark_seen(feed.id, [(*ident, draft.key) for ident, draft, _ in stored])
    for key, reason in report.failed:
        result.item_errors.append((key, reason))
    book.record(feed, result, gathered.etag, gathered.last_modified, gathered.title)
    return result


def refuse_feed_body(body: bytes) -> str:
    """Why a fetched body must not be parsed as a feed ("" when it may be).

    A body without any markup cannot be RSS or Atom; it is named in the error, so that a
    "feed" that is only a path or URL (``/etc/passwd``, ``file:///...``) reads as what it is.
    External entities are refused outright, though feedparser also drops them, since
    resolving one would read a local file or fetch a URL past the SSRF guard."""
    text = body[:65536].decode("utf-8", errors="replace")
    stripped = text.strip().lstrip("\ufeff")
    if not stripped:
        return "not a feed: the server sent an empty body"
    if "<" not in stripped[:4096]:
        first = stripped.splitlines()[0]
        shown = first if len(first) <= 80 else first[:80] + "…"
        return (
            f"not a feed: the server sent plain text ({shown!r}), not RSS or Atom; Byline only parses what a "
            "feed's server sends and never opens a file or URL named in it"
        )
    declared = _EXTERNAL_ENTITY.search(text)
    if declared:
        return (
            f"refused: the feed declares an external XML entity ({declared.group(0)} …), which could read local "
            "files; Byline never resolves them (fix the feed, or remove it with `byline feeds remove`)"
        )
    # Any entity declaration, in the whole body (a DTD can be padded past the first 64 KB): nested
    # internal entities (the "billion laughs") expand a few KB into gigabytes inside the parser,
    # and no RSS or Atom feed needs one. Checked on the bytes, before anything is parsed.
    if _ANY_ENTITY.search(body):
        return (
            "refused: the feed declares XML entities (<!ENTITY …), which no RSS or Atom feed needs and which can "
            "expand into gigabytes when parsed (fix the feed, or remove it with `byline feeds remove`)"
        )
    return ""


def _item_draft(
    library: IngestTarget, fetcher: Fetcher, entry: Any, link: str, feed_title: str, result: FeedResult
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
    draft.tags = draft.tags or _entry_tags(entry)


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
        tags=_entry_tags(entry),
    )


def _entry_tags(entry: Any) -> tuple[str, ...]:
    """An item's categories (RSS ``<category>``, Atom ``<category term>``), for ``tag:`` scopes."""
    return tuple(str(t.get("term") or t.get("label") or "") for t in entry.get("tags", []) or [] if hasattr(t, "get"))


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
