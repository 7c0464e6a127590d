"""Writes to bookkeeping tables (feeds, fetched pages) that the search indexes do not reflect.

``Store.transaction`` bumps the generation counter, which tells the library its index files
are stale; a feed's status changing must not force a full index rebuild at the next start,
so these writes take the store's write lock and a transaction of their own instead.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from .store import Store


@contextmanager
def side_transaction(store: Store) -> Iterator[sqlite3.Connection]:
    """One atomic write that leaves the index generation alone."""
    connection = store._connect()
    with store._write_lock:
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
