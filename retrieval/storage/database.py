"""The one door to SQL: a store is a ``Database`` on a SQLite file or a PostgreSQL URL.

The stores (``store.Store`` for articles, ``bot.state.store.BotState`` for the bot's state) are written
once, in SQLite's SQL, against the small connection shape below; the location decides the
engine: a path is the embedded SQLite file (``sqlite.py``, the default), a ``postgresql://`` URL
is a shared server (``postgres.py``, the cluster backend). Nothing outside the stores opens a
connection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeAlias

from retrieval.storage.postgres import DatabaseUnavailable, PostgresEngine, is_database_url
from retrieval.storage.sqlite import SqliteEngine

# A result row, read by column name or by position: ``sqlite3.Row`` or ``postgres.Row``.
Row: TypeAlias = Any


class Cursor(Protocol):
    """What the stores use of a cursor (``sqlite3.Cursor`` and ``postgres.Cursor`` have it)."""

    row_factory: Any

    @property
    def rowcount(self) -> int: ...

    @property
    def lastrowid(self) -> int | None: ...

    def execute(self, sql: str, parameters: Any = ..., /) -> Cursor: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What the stores use of a connection."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Any, /) -> Cursor: ...

    def cursor(self) -> Cursor: ...


def _database_errors() -> tuple[type[Exception], ...]:
    try:
        # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
        import psycopg
    except ImportError:  # the cluster extra is not installed: only SQLite can be used
        return (sqlite3.Error, DatabaseUnavailable)
    return (sqlite3.Error, psycopg.Error, DatabaseUnavailable)


# Errors a store can raise, whichever the engine (for ``except`` clauses outside the stores).
DATABASE_ERRORS = _database_errors()


class Database:
    """A store's database: SQLite at a path, or PostgreSQL at a URL; ``migrations[i]`` (SQLite's
    SQL) brings it to version i + 1. ``name`` tells two stores sharing one PostgreSQL apart."""

    def __init__(
        self, location: Path | str, migrations: Sequence[str], named_rows: bool = True, name: str = ""
    ) -> None:
        self.engine: SqliteEngine | PostgresEngine
        self.location = location  # what opens this database again (a restarted process)
        if is_database_url(location):
            self.engine = PostgresEngine(str(location), migrations, named_rows, name or type(self).__name__)
            self.path = Path()  # no file: ``where`` names the server
        else:
            self.path = Path(location)
            self.engine = SqliteEngine(self.path, migrations, named_rows)
        self.where = self.engine.where  # for messages: the file, or the URL without its password

    @property
    def shared(self) -> bool:
        """True on a server that other machines share (PostgreSQL), False for a local file."""
        return isinstance(self.engine, PostgresEngine)

    def _connect(self) -> Connection:
        return self.engine.connect()

    def _write(self) -> AbstractContextManager[Connection]:
        """One atomic write: all of it lands, or (on any error, or a crash) none of it."""
        return self.engine.write()

    def close(self) -> None:
        self.engine.close()
