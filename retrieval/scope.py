"""A channel's scope: which articles answer there, and the id sets it resolves to.

A scope is a set of entries of four kinds: ``feed:`` (a subscribed feed, by URL or title),
``outlet:`` (an article's source, as ``/sources`` shows it), ``tag:`` (front matter ``tags:`` or
a feed item's category) and ``since:`` (a date window such as ``since:30d``). Entries of one kind
are ORed and different kinds ANDed: ``outlet:BBC Sport`` + ``outlet:The Guardian`` + ``tag:
football`` is football from either outlet, which is what an admin adding two outlets and a
section means (the issue is silent; this is how Slack's and Onyx's source filters combine too).

``resolve`` turns a scope into the article, passage and sentence ids it allows, as
``ports.IdSet``s handed to the indexes' ``search(..., within=...)``: the filter is applied inside
the index search, so a scope of 1% of the library still gets its own top k. The resolution is
cached per library generation (and, for a date window, per hour), so a question in a scoped
channel costs a dictionary look-up, not a scan of the store.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from retrieval.errors import BylineError
from retrieval.ports import IdSet
from retrieval.storage.feeds import FeedStore
from retrieval.storage.scopes import ScopeStore
from retrieval.urls import normalise_url

if TYPE_CHECKING:
    from retrieval.models import Article
    from retrieval.ports import ArticleStore
    from retrieval.storage.store import Store

KINDS = ("feed", "outlet", "tag", "since")
# ``section:`` is what newsrooms call a tag; ``source:`` is Byline's own word for an outlet.
_KIND_ALIASES = {"section": "tag", "source": "outlet", "feeds": "feed", "outlets": "outlet", "tags": "tag"}
MAX_ENTRIES = 50
MAX_DAYS = 3650
# How many known values an "unknown outlet" message lists before "and N more".
KNOWN_SHOWN = 15
_WINDOW = re.compile(r"^(\d{1,5})\s*(d|days?|w|weeks?|m|months?|y|years?)$", re.I)
_UNIT_DAYS = {"d": 1, "w": 7, "m": 30, "y": 365}


class ScopeError(BylineError):
    """A scope entry Byline cannot follow; the message says why and what is known."""


@dataclass(frozen=True)
class Scope:
    """What a channel follows: feed URLs, outlets and tags as stored, and a window in days
    (0: no window). Empty: the whole library."""

    feeds: tuple[str, ...] = ()
    outlets: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    since_days: int = 0

    def is_empty(self) -> bool:
        return not (self.feeds or self.outlets or self.tags or self.since_days)

    def entries(self) -> list[str]:
        """The entries as an admin types them (``outlet:BBC Sport``), in a stable order."""
        found = [f"feed:{f}" for f in self.feeds] + [f"outlet:{o}" for o in self.outlets]
        found += [f"tag:{t}" for t in self.tags]
        return found + ([f"since:{self.since_days}d"] if self.since_days else [])

    def describe(self) -> str:
        """The scope in words: ``from BBC Sport or The Guardian, tagged football, of the last 30 days``."""
        parts = []
        if self.outlets:
            parts.append("from " + _either(self.outlets))
        if self.feeds:
            parts.append(("in the feed " if len(self.feeds) == 1 else "in the feeds ") + _either(self.feeds))
        if self.tags:
            parts.append("tagged " + _either(self.tags))
        if self.since_days:
            parts.append("of the last day" if self.since_days == 1 else f"of the last {self.since_days} days")
        return ", ".join(parts) if parts else "from every source"

    def to_json(self) -> str:
        return json.dumps(
            {"feeds": self.feeds, "outlets": self.outlets, "tags": self.tags, "since_days": self.since_days}
        )

    @classmethod
    def from_json(cls, text: str) -> Scope:
        data: dict[str, Any] = json.loads(text)
        return cls(
            tuple(data.get("feeds", ())),
            tuple(data.get("outlets", ())),
            tuple(data.get("tags", ())),
            int(data.get("since_days", 0)),
        )

    def size(self) -> int:
        return len(self.feeds) + len(self.outlets) + len(self.tags) + (1 if self.since_days else 0)


def _either(values: tuple[str, ...]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " or " + values[-1]


# -- entries, checked against the library --------------------------------------------------------


def known_outlets(store: Store) -> list[str]:
    return ScopeStore(store).outlets()


def known_feeds(store: Store) -> list[tuple[str, str]]:
    """(URL, title) of every subscribed feed."""
    return FeedStore(store).urls_and_titles()


def known_tags(store: Store) -> list[str]:
    return ScopeStore(store).tags()


def parse_entry(store: Store, text: str) -> tuple[str, str | int]:
    """``kind:value`` checked against the library: (kind, the value as stored, or days for
    ``since``). Raises ``ScopeError`` naming the known values when the value is unknown, so a
    typo never silently empties a channel's answers."""
    kind, sep, value = text.partition(":")
    kind = _KIND_ALIASES.get(kind.strip().lower(), kind.strip().lower())
    value = " ".join(value.split())
    if not sep or kind not in KINDS or not value:
        raise ScopeError(
            f"`{_shown(text)}` is not a scope entry: write `feed:URL`, `outlet:NAME`, `tag:NAME` or `since:30d`."
        )
    if kind == "since":
        match = _WINDOW.match(value)
        if not match:
            raise ScopeError(f"`since:{_shown(value)}` is not a window: write a number of days, e.g. `since:30d`.")
        days = int(match.group(1)) * _UNIT_DAYS[match.group(2)[0].lower()]
        if not 1 <= days <= MAX_DAYS:
            raise ScopeError(f"A window runs from 1 day to {MAX_DAYS} days (`since:{MAX_DAYS}d`), not {days} days.")
        return kind, days
    if kind == "outlet":
        outlets = known_outlets(store)
        found = next((o for o in outlets if o.casefold() == value.casefold()), None)
        if found is None:
            raise ScopeError(f"No article comes from the outlet “{_shown(value)}”. {_known('outlets', outlets)}")
        return kind, found
    if kind == "tag":
        tags = known_tags(store)
        wanted = value.casefold()
        if wanted not in tags:
            raise ScopeError(f"No article is tagged “{_shown(value)}”. {_known('tags', tags)}")
        return kind, wanted

    feeds = known_feeds(store)
    url = normalise_url(value) if "://" in value else ""
    found = next(
        (u for u, title in feeds if (url and normalise_url(u) == url) or title.casefold() == value.casefold()), None
    )
    if found is None:
        shown = [f"{title} ({u})" if title else u for u, title in feeds]
        raise ScopeError(f"Byline follows no feed “{_shown(value)}”. {_known('feeds', shown)}")
    return kind, found


def _shown(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _known(what: str, values: list[str]) -> str:
    if not values:
        how = {"feeds": "`byline feeds add URL`", "tags": "front matter `tags:` or a feed's categories"}
        return f"There are no {what} yet" + (f" (add some with {how[what]})." if what in how else ".")
    listed = ", ".join(_shown(v, 60) for v in values[:KNOWN_SHOWN])
    more = f" and {len(values) - KNOWN_SHOWN} more" if len(values) > KNOWN_SHOWN else ""
    return f"Known {what}: {listed}{more}."


def with_entry(scope: Scope, kind: str, value: str | int) -> Scope:
    """The scope with one more entry (a repeated one changes nothing; a new window replaces the old)."""
    if kind == "since":
        return replace(scope, since_days=int(value))
    values = {"feed": scope.feeds, "outlet": scope.outlets, "tag": scope.tags}[kind]
    if value in values:
        return scope
    if scope.size() >= MAX_ENTRIES:
        raise ScopeError(f"A scope holds at most {MAX_ENTRIES} entries; clear it and add fewer.")
    grown = (*values, str(value))
    if kind == "feed":
        return replace(scope, feeds=grown)
    return replace(scope, outlets=grown) if kind == "outlet" else replace(scope, tags=grown)


# -- what a scope allows -----------------------------------------------------------------------


@dataclass(frozen=True)
class ResolvedScope:
    """A scope's articles (newest first) and the passage and sentence ids the indexes search within."""

    scope: Scope
    article_ids: np.ndarray
    passages: IdSet
    sentences: IdSet
    articles: IdSet

    @property
    def article_count(self) -> int:
        return len(self.article_ids)

    def articles_phrase(self) -> str:
        """``the 214 articles from BBC Sport this channel follows``: what an abstention searched."""
        count = self.article_count
        return f"the {count} article{'s' if count != 1 else ''} {self.scope.describe()} this channel follows"

    def allows_article(self, article_id: int) -> bool:
        return article_id in self.articles

    def quote_ranges(self, ranges: np.ndarray) -> np.ndarray:
        """The rows of ``Store.speaker_quote_ranges`` whose article (column 4) is in scope."""
        if not len(ranges):
            return ranges
        return ranges[np.isin(ranges[:, 4], self.articles.ids)]


def articles_phrase(store: ArticleStore, scope: ResolvedScope | None) -> str:
    """What a "not found" searched: the scope's articles, or ``the N articles I have``."""
    if scope is not None:
        return scope.articles_phrase()
    count = store.article_count()
    return f"the {count} article{'s' if count != 1 else ''} I have"


def _cutoff(days: int, now: datetime) -> str:
    # By the hour, so the cached resolution of a window is at most an hour stale.
    start = (now - timedelta(days=days)).replace(minute=0, second=0, microsecond=0)
    return start.strftime("%Y-%m-%dT%H:%M:%S")


def _article_date(published: str, added_at: str) -> str:
    """When an article appeared, for a date window: its published date when it reads as one
    (``2017-12-11``, ``2017-12-11T10:00:00Z``), else when Byline added it."""
    text = published.strip()
    if re.match(r"^\d{4}-\d{2}-\d{2}", text):
        return text[:19].replace(" ", "T")
    return added_at[:19]


def matching_articles(store: Store, scope: Scope, now: datetime | None = None) -> np.ndarray:
    """Ids of the scope's articles, newest first (as ``/sources`` orders them)."""
    rows = ScopeStore(store).article_dates(scope.outlets, scope.feeds, scope.tags)
    if scope.since_days:
        cutoff = _cutoff(scope.since_days, now or datetime.now(UTC))
        rows = [row for row in rows if _article_date(row[1], row[2]) >= cutoff]
    return np.array([row[0] for row in rows], dtype=np.int64)


def resolve_now(store: Store, scope: Scope, now: datetime | None = None) -> ResolvedScope:
    """The scope's ids read from the store (uncached: see ``ScopeCache``)."""
    article_ids = matching_articles(store, scope, now)
    rows = ScopeStore(store)
    return ResolvedScope(
        scope,
        article_ids,
        IdSet(rows.passage_ids_of_articles(article_ids)),
        IdSet(rows.sentence_ids_of_articles(article_ids)),
        IdSet(article_ids),
    )


class ScopeCache:
    """Resolved scopes by (scope, library generation, window hour); the most recent few kept.

    ``Library`` clears it whenever its articles change; the generation in the key also keeps a
    resolution from before another process's ingest from being reused.
    """

    SIZE = 64

    def __init__(self) -> None:
        self._resolved: OrderedDict[tuple[Scope, int, str], ResolvedScope] = OrderedDict()
        self._lock = threading.Lock()

    def resolve(self, store: Store, scope: Scope, generation: int, now: datetime | None = None) -> ResolvedScope:
        moment = now or datetime.now(UTC)
        key = (scope, generation, _cutoff(scope.since_days, moment) if scope.since_days else "")
        with self._lock:
            found = self._resolved.get(key)
            if found is not None:
                self._resolved.move_to_end(key)
                return found
        resolved = resolve_now(store, scope, moment)
        with self._lock:
            self._resolved[key] = resolved
            while len(self._resolved) > self.SIZE:
                self._resolved.popitem(last=False)
        return resolved

    def clear(self) -> None:
        with self._lock:
            self._resolved.clear()


def articles_added(store: Store, scope: ResolvedScope, since: str, until: str, limit: int) -> list[Article]:
    """The scope's articles added in ``[since, until)``, newest first, at most ``limit`` (for a
    digest): selected in SQL before the limit, so a narrow scope is not crowded out of a busy window."""
    ids = ScopeStore(store).added_between(since, until, scope.article_ids, limit)
    found = store.articles(ids)
    return [found[i] for i in ids if i in found]
