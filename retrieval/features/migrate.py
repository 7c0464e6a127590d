"""Moving a library between backends: ``byline migrate --to cluster``.

An embedded library is copied into the cluster backend table by table: every row of the SQLite
store (articles, passages, sentences with their vectors, quotes, feeds, the audit log) and of
the bot's state file goes into PostgreSQL in one transaction per database, with the same ids.
The Qdrant collections are then filled from the copied store, vectors included, so nothing is
re-embedded; last, the row counts of both sides and the collections' counts are compared, and
any difference fails the migration with what differed. The embedded files are only read: after
a migration the same data directory still opens as the embedded library it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from retrieval.backend import STORE_FILE, Backend, SharedIndexes
from retrieval.errors import BylineError
from retrieval.storage.database import Database
from retrieval.storage.postgres import PostgresEngine
from retrieval.storage.sqlite import SqliteEngine
from retrieval.storage.store import Store

# Rows per INSERT batch while copying.
_COPY_BATCH = 2000
# Tables a fresh database already has rows in (the store's generation counter); every other
# table of the target must be empty, so that a migration never mixes two libraries' data.
_SEEDED_BY_MIGRATIONS = frozenset({"meta"})


class MigrationError(BylineError):
    """A migration that could not start or whose copy did not verify; nothing was half-done
    where it says so."""


@dataclass
class MigrationReport:
    """What was copied: rows per table, and the indexes filled."""

    tables: dict[str, int] = field(default_factory=dict)
    sentences_indexed: int = 0
    passages_indexed: int = 0

    def summary(self) -> str:
        rows = sum(self.tables.values())
        return (
            f"{rows:,} rows in {len(self.tables)} tables copied; {self.sentences_indexed:,} sentence vectors and "
            f"{self.passages_indexed:,} passages indexed in Qdrant"
        )


def copy_database(source: Database, target: Database, report: MigrationReport) -> None:
    """Copy every table of the SQLite ``source`` into the PostgreSQL ``target`` (migrated to the
    same version, and empty apart from what its migrations insert), in one transaction."""
    if not isinstance(source.engine, SqliteEngine) or not isinstance(target.engine, PostgresEngine):
        raise MigrationError("a migration copies a SQLite file into PostgreSQL")
    tables = _tables(source.engine)
    for table in tables:
        if table not in target.engine.dialect.tables:
            raise MigrationError(f"{target.where} has no table {table!r}: is it a Byline database of this version?")
        if table not in _SEEDED_BY_MIGRATIONS:
            check_empty(target, table)
    with target.engine.write() as connection:
        raw = connection.raw  # psycopg's own connection: plain %s statements, no translation
        for table in tables:
            if table in _SEEDED_BY_MIGRATIONS:
                # What the target's migrations inserted (the generation counter) gives way to the source's rows.
                raw.execute(f"DELETE FROM {table}")
            copied = 0
            for columns, rows in _batches(source.engine, table):
                names = ", ".join(f'"{c}"' for c in columns)
                marks = ", ".join(["%s"] * len(columns))
                with raw.cursor() as cursor:
                    cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)
                copied += len(rows)
            report.tables[table] = report.tables.get(table, 0) + copied
            if target.engine.dialect.tables[table].has_identity_id:
                # Rows came with their ids: new rows must be numbered after them.
                highest = f"GREATEST((SELECT max(id) FROM {table}), 1)"
                raw.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), {highest})")
    _verify_counts(source, target, tables)


def check_empty(target: Database, table: str) -> None:
    found = target._connect().execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    if found:
        raise MigrationError(
            f"{target.where} already holds {found:,} rows in {table}: migrate into an empty database "
            "(or drop that one first), so that nothing there is mixed with this library."
        )


def _tables(source: SqliteEngine) -> list[str]:
    # Parents before children (the order they were created in), so foreign keys hold at each insert.
    rows = source.connect().execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
    )
    return [str(row[0]) for row in rows]


def _batches(source: SqliteEngine, table: str) -> Iterator[tuple[list[str], list[tuple[object, ...]]]]:
    cursor = source.connect().cursor()
    cursor.row_factory = None
    cursor.execute(f"SELECT * FROM {table}")
    columns = [str(d[0]) for d in cursor.description]
    while rows := cursor.fetchmany(_COPY_BATCH):
        yield columns, [tuple(row) for row in rows]


def _verify_counts(source: Database, target: Database, tables: list[str]) -> None:
    differ = []
    for table in tables:
        before = source._connect().execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        after = target._connect().execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        if before != after:
            differ.append(f"{table}: {before:,} rows in {source.where}, {after:,} in {target.where}")
    if differ:
        raise MigrationError("The copy did not verify: " + "; ".join(differ))


def migrate_library(data_dir: Path, backend: Backend) -> MigrationReport:
    """Copy the embedded library in ``data_dir`` into the cluster ``backend``: the store into
    PostgreSQL, then its vectors and passages into Qdrant, verified by counts."""

    if not backend.is_cluster:
        raise MigrationError("migrate copies an embedded library to the cluster backend: use --to cluster")
    report = MigrationReport()
    source = Store(source_path(data_dir, STORE_FILE))
    target = Store(backend.store_location(data_dir))
    try:
        copy_database(source, target, report)
        keeper = SharedIndexes.open(backend, data_dir, target)
        dense = keeper.rebuild_dense(target)
        sparse = keeper.rebuild_sparse(target)
        counts = target.counts()
        if (dense.count(), sparse.count()) != (counts["sentences"], counts["passages"]):
            raise MigrationError(
                f"The indexes did not verify: Qdrant holds {dense.count():,} sentences and "
                f"{sparse.count():,} passages, the store {counts['sentences']:,} and {counts['passages']:,}. "
                "Run the migration again."
            )
        keeper.save(dense, sparse, target.generation())
        report.sentences_indexed, report.passages_indexed = dense.count(), sparse.count()
    finally:
        source.close()
        target.close()
    return report


def source_path(data_dir: Path, name: str) -> Path:
    path = data_dir / name
    if not path.is_file():
        raise MigrationError(f"There is no {name} in {data_dir}: point BYLINE_DATA_DIR at the library to migrate.")
    return path
