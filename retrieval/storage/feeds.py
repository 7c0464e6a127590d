"""What fetching remembers, in the article store: feed subscriptions, the items seen in them,
and the validators (ETag / Last-Modified) of pages fetched.

The SQL of the ``feeds``, ``feed_items`` and ``web_pages`` tables (``store.py``'s second
migration) lives here, beside ``Store`` rather than in it, as ``bot/state/digests.py`` does for
the bot's state: ``feeds.py`` and ``web.py`` decide what to fetch and store, and call these
methods for the bookkeeping. None of it makes the index files stale (``reindex=False``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.storage.store import Store, utc_now


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


class FeedStore:
    """Reads and writes the ``feeds`` and ``feed_items`` tables through ``Store``'s connection."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add_if_new(self, url: str) -> None:
        """Subscribe to ``url``; a feed already there is left as it is."""
        with self.store.transaction(reindex=False) as connection:
            connection.execute("INSERT OR IGNORE INTO feeds (url, added_at) VALUES (?, ?)", (url, utc_now()))

    def add(self, url: str, title: str) -> None:
        """Subscribe to ``url``; raises the engine's integrity error for a feed already there."""
        with self.store.transaction(reindex=False) as connection:
            connection.execute("INSERT INTO feeds (url, title, added_at) VALUES (?, ?, ?)", (url, title, utc_now()))

    def delete(self, url: str) -> int:
        """Unsubscribe (its items go with it); how many feeds were removed, 0 or 1."""
        with self.store.transaction(reindex=False) as connection:
            return int(connection.execute("DELETE FROM feeds WHERE url=?", (url,)).rowcount)

    def feed(self, url: str) -> Feed | None:
        row = self.store._connect().execute("SELECT * FROM feeds WHERE url=?", (url,)).fetchone()
        return Feed(**dict(row)) if row else None

    def feeds(self) -> list[Feed]:
        """Every subscription, oldest first."""
        return [Feed(**dict(row)) for row in self.store._connect().execute("SELECT * FROM feeds ORDER BY id")]

    def urls_and_titles(self) -> list[tuple[str, str]]:
        """(URL, title) of every subscription, by URL (what a ``feed:`` scope entry may name)."""
        rows = self.store._connect().execute("SELECT url, title FROM feeds ORDER BY url")
        return [(row[0], row[1]) for row in rows]

    def seen_items(self, feed_id: int) -> dict[str, str]:
        """guid -> the ``updated`` stamp of every item of a feed stored so far."""
        rows = self.store._connect().execute("SELECT guid, updated FROM feed_items WHERE feed_id=?", (feed_id,))
        return {row["guid"]: row["updated"] for row in rows}

    def record_poll(
        self, feed_id: int, error: str, note: str, etag: str, last_modified: str, added: int, title: str
    ) -> None:
        """How a poll went: with ``error``, one more failure; else a success, with the new
        validators, the articles it added, a note on its items' problems and (when not "") the
        feed's title."""
        now = utc_now()
        with self.store.transaction(reindex=False) as connection:
            if error:
                connection.execute(
                    "UPDATE feeds SET last_fetch=?, last_error=?, failures=failures+1 WHERE id=?",
                    (now, error, feed_id),
                )
            else:
                connection.execute(
                    "UPDATE feeds SET last_fetch=?, last_success=?, last_error=?, failures=0, etag=?, last_modified=?, "
                    "articles_added=articles_added+?, title=CASE WHEN ?='' THEN title ELSE ? END WHERE id=?",
                    (now, now, note, etag, last_modified, added, title, title, feed_id),
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


class WebPageStore:
    """The ``web_pages`` table: each fetched page's validators and the article it gave."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def validators(self, url: str) -> tuple[str, str, str]:
        """(ETag, Last-Modified, article key) remembered for ``url``; empty strings when none."""
        row = (
            self.store._connect()
            .execute("SELECT etag, last_modified, article_key FROM web_pages WHERE url=?", (url,))
            .fetchone()
        )
        return (row["etag"], row["last_modified"], row["article_key"]) if row else ("", "", "")

    def remember(self, pages: Sequence[tuple[str, str, str, str]]) -> None:
        """Record (URL, article key, ETag, Last-Modified) of pages whose articles are stored."""
        rows = [(url, key, etag, last_modified, utc_now()) for url, key, etag, last_modified in pages]
        with self.store.transaction(reindex=False) as connection:
            connection.executemany(
                "INSERT INTO web_pages (url, article_key, etag, last_modified, fetched_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(url) DO UPDATE SET article_key=excluded.article_key, etag=excluded.etag, "
                "last_modified=excluded.last_modified, fetched_at=excluded.fetched_at",
                rows,
            )
