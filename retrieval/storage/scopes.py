"""The article store's reads behind a channel's scope (``scope.py``): the outlets and tags an
entry may name, and the ids of the articles, passages and sentences a scope allows.

Beside ``Store`` rather than in it, as ``feed_store.py`` is: ``scope.py`` decides what a scope
means (entries of one kind ORed, kinds ANDed, a date window) and asks here for the rows. Lists of
ids are passed as one JSON parameter (``json_each``) instead of thousands of ``?``, so a scope
has no size limit on either engine.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from retrieval.storage.store import Store


class ScopeStore:
    """Reads ``articles``, ``article_tags``, ``feed_items`` and the id columns of ``passages``
    and ``sentences`` through ``Store``'s connection."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def outlets(self) -> list[str]:
        """Every article source, sorted (empty sources left out)."""
        rows = self.store._connect().execute("SELECT DISTINCT source FROM articles WHERE source != '' ORDER BY source")
        return [row[0] for row in rows]

    def tags(self) -> list[str]:
        """Every article tag, sorted (tags are stored lower-cased)."""
        rows = self.store._connect().execute("SELECT DISTINCT tag FROM article_tags ORDER BY tag")
        return [row[0] for row in rows]

    def article_dates(
        self, outlets: Sequence[str], feed_urls: Sequence[str], tags: Sequence[str]
    ) -> list[tuple[int, str, str]]:
        """(id, published, added_at) of the articles from one of ``outlets``, stored from one of
        the feeds at ``feed_urls`` and with one of ``tags`` (an empty list: no condition), newest
        first."""
        conditions, values = [], []
        if outlets:
            conditions.append(f"a.source IN ({','.join('?' * len(outlets))})")
            values += list(outlets)
        if feed_urls:
            conditions.append(
                "a.key IN (SELECT i.article_key FROM feed_items i JOIN feeds f ON f.id = i.feed_id "
                f"WHERE f.url IN ({','.join('?' * len(feed_urls))}))"
            )
            values += list(feed_urls)
        if tags:
            marks = ",".join("?" * len(tags))
            conditions.append(f"a.id IN (SELECT article_id FROM article_tags WHERE tag IN ({marks}))")
            values += list(tags)
        where = " AND ".join(conditions) or "1 = 1"
        rows = (
            self.store._connect()
            .execute(
                f"SELECT a.id, a.published, a.added_at FROM articles a WHERE {where} "
                "ORDER BY COALESCE(NULLIF(a.published, ''), a.added_at) DESC, a.id DESC",
                values,
            )
            .fetchall()
        )
        return [(row[0], row[1], row[2]) for row in rows]

    def passage_ids_of_articles(self, article_ids: np.ndarray) -> np.ndarray:
        return self._ids_of_articles("passages", article_ids)

    def sentence_ids_of_articles(self, article_ids: np.ndarray) -> np.ndarray:
        return self._ids_of_articles("sentences", article_ids)

    def _ids_of_articles(self, table: str, article_ids: np.ndarray) -> np.ndarray:
        cursor = self.store._connect().cursor()
        cursor.row_factory = None
        # One JSON parameter instead of thousands of "?": no limit on the scope's size.
        rows = cursor.execute(
            f"SELECT id FROM {table} WHERE article_id IN (SELECT value FROM json_each(?))",
            (json.dumps(article_ids.tolist()),),
        ).fetchall()
        return np.array([row[0] for row in rows], dtype=np.int64)

    def added_between(self, since: str, until: str, article_ids: np.ndarray, limit: int) -> list[int]:
        """Ids of these articles added in ``[since, until)`` (``until`` "": no end), newest first,
        at most ``limit``: selected in SQL before the limit."""
        rows = self.store._connect().execute(
            "SELECT id FROM articles WHERE added_at >= ? AND (? = '' OR added_at < ?) "
            "AND id IN (SELECT value FROM json_each(?)) "
            "ORDER BY COALESCE(NULLIF(published, ''), added_at) DESC, id DESC LIMIT ?",
            (since, until, until, json.dumps(article_ids.tolist()), limit),
        )
        return [int(row[0]) for row in rows]
