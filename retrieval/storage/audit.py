"""The audit log of admin actions (removals), in the article store's ``audit`` table.

Its SQL lives here, beside ``Store``, as ``feed_store.py``'s does: ``removal.py`` decides what is
removed and who asked, and writes and reads the log through ``AuditLog``. Entries outlive the
articles they name (the table has no foreign key to them), and writing one never makes the index
files stale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.storage.store import Store


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: str
    actor: str
    action: str
    article_key: str
    title: str
    detail: str


class AuditLog:
    """Reads and writes the ``audit`` table through ``Store``'s connection."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add(self, entries: Sequence[tuple[str, str, str, str, str, str]]) -> None:
        """Record (at, actor, action, article key, title, detail) of each action, in one write."""
        with self.store.transaction(reindex=False) as connection:
            connection.executemany(
                "INSERT INTO audit (at, actor, action, article_key, title, detail) VALUES (?, ?, ?, ?, ?, ?)",
                entries,
            )

    def newest(self, limit: int = 100) -> list[AuditEntry]:
        """The ``limit`` newest entries, the newest first."""
        rows = self.store._connect().execute("SELECT * FROM audit ORDER BY id DESC LIMIT ?", (limit,))
        return [AuditEntry(**dict(row)) for row in rows]
