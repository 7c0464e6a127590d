"""Atomic file writes (a reader sees the old file or the new one, never half of either) and the
lock that keeps two processes from writing one data directory at once."""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp)`` on a temporary file beside ``path``, fsync it, then rename it over.

    If writing fails (disk full, a crash) the old file stays as it was and the temporary file
    is removed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    temporary = Path(name)
    try:
        write(temporary)
        with open(temporary, "rb+") as stream:
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def write_bytes_atomically(path: Path, data: bytes) -> None:
    write_atomically(path, lambda temporary: temporary.write_bytes(data))


class ReentrantLock:
    """One holder at a time across processes, re-entrant within a thread: the outermost ``hold``
    takes the process-wide lock (``_acquire``, a subclass's), the last one out lets it go."""

    def __init__(self) -> None:
        self._thread_lock = threading.RLock()
        self._depth = 0

    @contextmanager
    def hold(self, blocking: bool = True) -> Iterator[bool]:
        """Hold the lock for the block; yields False (without it) when ``blocking`` is False and
        another holder has it."""
        if not self._thread_lock.acquire(blocking=blocking):
            yield False
            return
        try:
            if self._depth == 0 and not self._acquire(blocking):
                yield False
                return
            self._depth += 1
            try:
                yield True
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release()
        finally:
            self._thread_lock.release()

    def _acquire(self, blocking: bool) -> bool:
        raise NotImplementedError

    def _release(self) -> None:
        raise NotImplementedError


class DirectoryLock(ReentrantLock):
    """One writer at a time across processes and threads: ``flock`` on a file in the directory.

    Two Byline processes on one data directory (``serve`` and a CLI ``ingest``) must not change
    the articles and save index files at the same time, or one saves indexes that miss the
    other's changes. The lock is re-entrant within a thread; each outermost hold opens its own
    descriptor, so threads of one process also exclude each other (flock locks belong to the
    open file, not the process).
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._descriptor: int | None = None

    def _acquire(self, blocking: bool) -> bool:
        return self._lock_file(blocking)

    def _release(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)  # closing the descriptor releases the flock
            self._descriptor = None

    def _lock_file(self, blocking: bool) -> bool:
        try:
            descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            # A read-only data directory: nothing can be saved there anyway, so there is
            # nothing to protect; run without the cross-process lock.
            return True
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(descriptor)
            return False
        self._descriptor = descriptor
        return True
