"""SQLite the way Byline uses it: a connection per thread, WAL, migrations, atomic writes.

The embedded engine behind ``database.Database`` (the default): shared by the article store and
the bot's state file, so both get the same durability and the same handling of a database that
another process holds busy. ``postgres.py`` is the other engine, running the same SQL.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from retrieval.errors import CorruptDatabase


def _as_int(value: object) -> int:
    return int(value)  # type: ignore[call-overload]


# sqlite3 would bind a numpy integer (the ids FAISS and the store's arrays hand out) as a BLOB,
# which equals no integer id: a read given one found nothing, silently, where PostgreSQL found the
# row (tests/contract/test_article_store_contract.py). Bound as the int it is, both agree.
for _numpy_int in (np.int64, np.int32, np.int16, np.int8, np.uint32, np.uint16, np.uint8):
    sqlite3.register_adapter(_numpy_int, _as_int)

BUSY_RETRIES = 20


def corrupt_database(path: Path, error: sqlite3.DatabaseError) -> CorruptDatabase:
    """The one line a user sees for a damaged database file: which file, and what to do."""
    return CorruptDatabase(
        f"{path} is damaged or is not a Byline database ({error}). Nothing was changed: restore it from a "
        "backup, or move it away to start with an empty one."
    )


def is_corruption(error: sqlite3.DatabaseError) -> bool:
    """True for a damaged file (\"not a database\", \"malformed\"), not a busy or full one."""
    return not isinstance(error, sqlite3.OperationalError) or "malformed" in str(error)


class SqliteEngine:
    """One SQLite file shared between threads; ``migrations[i]`` brings it to version i + 1."""

    def __init__(self, path: Path, migrations: Sequence[str], named_rows: bool = True) -> None:
        self.path = path
        self.named_rows = named_rows
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self.where = str(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._migrate(migrations)
        except sqlite3.DatabaseError as error:
            # A damaged file is reported, never recreated: it may be the only copy of the data.
            if not is_corruption(error):
                raise
            self.close()
            raise corrupt_database(path, error) from None

    def connect(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            if self.named_rows:
                connection.row_factory = sqlite3.Row
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA foreign_keys=ON")
            # WAL with synchronous=NORMAL: a commit survives a process crash (kill -9); only
            # an OS crash can lose the last commits, never corrupt the file.
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute("PRAGMA busy_timeout=30000")
            self._local.connection = connection
        return connection

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One atomic write: all of it lands, or (on any error, or a crash) none of it."""
        connection = self.connect()
        with self._write_lock:
            for attempt in range(BUSY_RETRIES):
                try:
                    connection.execute("BEGIN IMMEDIATE")
                    break
                except sqlite3.OperationalError as error:
                    # Another process held the write lock beyond busy_timeout: back off.
                    if "locked" not in str(error) or attempt == BUSY_RETRIES - 1:
                        raise
                    time.sleep(0.05 * (attempt + 1))
            try:
                yield connection
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise

    def _migrate(self, migrations: Sequence[str]) -> None:
        connection = self.connect()
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        for number, script in enumerate(migrations[version:], start=version + 1):
            with self._write_lock:
                connection.executescript(f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version = {number};\nCOMMIT;")

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None
