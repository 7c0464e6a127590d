"""``byline migrate --to cluster``: copy the embedded library and the bot's state to the cluster.

The data directory (``BYLINE_DATA_DIR``) is the source; the cluster is what ``BYLINE_DATABASE_URL``
and ``BYLINE_QDRANT_URL`` name (``BYLINE_BACKEND`` itself need not be set yet: set it to
``cluster`` after the copy verifies, and restart). Nothing is re-embedded: the vectors are in the
store. The source files are only read, so the embedded library still works if the move is called off.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from bot.settings import Settings
from bot.state.store import STATE_FILE, BotState
from retrieval.features.migrate import MigrationError, copy_database, migrate_library, source_path


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    migrate = commands.add_parser(
        "migrate", help="copy the embedded library and bot state to the cluster backend (PostgreSQL, Qdrant)"
    )
    migrate.add_argument("--to", choices=["cluster"], required=True, help="the backend to copy to")


def run(settings: Settings) -> int:
    backend = replace(settings.storage(), kind="cluster")
    if not backend.database_url:
        raise MigrationError("Set BYLINE_DATABASE_URL (a postgresql:// URL) to the database to migrate into.")
    if not backend.qdrant_location:
        raise MigrationError("Set BYLINE_QDRANT_URL to the Qdrant server to migrate into.")
    print(f"Copying the library in {settings.data_dir} to the cluster …")
    report = migrate_library(settings.data_dir, backend)
    state_file = settings.data_dir / STATE_FILE
    if state_file.is_file():
        source, target = BotState(source_path(settings.data_dir, STATE_FILE)), BotState(backend.database_url)
        try:
            copy_database(source, target, report)
        finally:
            source.close()
            target.close()
    print(f"Done and verified: {report.summary()}.")
    filled = {table: rows for table, rows in sorted(report.tables.items()) if rows}
    print("  " + ", ".join(f"{table} {rows:,}" for table, rows in filled.items()))
    print("Now set BYLINE_BACKEND=cluster (with the same URLs) and restart Byline.")
    return 0
