"""One leader among many workers: only it polls feeds, posts digests and prunes old state.

Any number of ``byline serve`` processes may answer questions, but the jobs that act on a clock
must run once, or every digest is posted once per worker. Each worker tries to take the leader
lock every ``TRY_EVERY_SECONDS``; the one that holds it starts the singleton jobs, and stops them
the moment it finds it has lost the lock. The lock is tied to the holder's life, so a leader that
dies (killed, crashed, its machine gone) frees it without anyone's help, and another worker takes
over within one try (plus, for a machine that vanished, the server's keepalive timeout):

- cluster backend: a PostgreSQL session advisory lock, held by one connection kept open while
  leading (the server drops it with the session);
- embedded backend: ``flock`` on a file of the data directory (the kernel drops it with the
  process), so two ``serve`` processes on one data directory do not both post either.

A digest that fell due while no one led is sent by the new leader's first pass, once: the
scheduler claims each scheduled run in the shared state before posting it (``digest_store``).
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from retrieval.storage.postgres import PostgresEngine, lock_key

log = logging.getLogger("byline.leader")

TRY_EVERY_SECONDS = 5.0
LEADER_FILE = "leader.lock"
_LOCK_NAME = "byline-leader"


class LeaderLock(Protocol):
    """A lock that dies with its holder."""

    def try_acquire(self) -> bool:
        """Take the lock if no one holds it; never waits."""
        ...

    def still_held(self) -> bool:
        """Whether this holder still has it (False once its session or file is gone)."""
        ...

    def release(self) -> None: ...


class FileLeaderLock:
    """``flock`` on a file: one leader among the processes of one machine and data directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._descriptor: int | None = None

    def try_acquire(self) -> bool:
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            return False
        self._descriptor = descriptor
        return True

    def still_held(self) -> bool:
        return self._descriptor is not None

    def release(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None


class ServerLeaderLock:
    """A PostgreSQL session advisory lock: one leader among every worker of the cluster."""

    def __init__(self, engine: PostgresEngine) -> None:
        self.engine = engine
        self.key = lock_key(f"{_LOCK_NAME}:{engine.name}")
        self._session: Any = None

    def try_acquire(self) -> bool:
        session = self.engine.open_session(keepalive=True)
        try:
            if "host=/" not in self.engine.url:
                # The server's side of the keepalive: it notices a vanished leader in ~25 s.
                for name, value in (("tcp_keepalives_idle", 10), ("tcp_keepalives_interval", 5)):
                    session.execute(f"SET {name} = {value}")
            if not session.execute("SELECT pg_try_advisory_lock(%s)", (self.key,)).fetchone()[0]:
                session.close()
                return False
        except Exception:
            session.close()
            raise
        self._session = session
        return True

    def still_held(self) -> bool:
        if self._session is None:
            return False
        try:
            # A session lock lasts as long as its session and nothing here unlocks it early, so
            # a live session is a held lock.
            self._session.execute("SELECT 1")
        except Exception:  # the connection is gone, and the lock with it
            self.release()
            return False
        return True

    def release(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            try:
                session.close()  # ending the session frees the lock
            except Exception:
                log.debug("Closing the leader session failed (it was already gone).")


class Leadership:
    """Runs ``start_jobs`` while this process is the leader; stops the jobs when it is not.

    ``start_jobs(stop)`` starts the singleton jobs and returns their threads; they must end soon
    after ``stop`` is set.
    """

    def __init__(
        self,
        lock: LeaderLock,
        start_jobs: Callable[[threading.Event], list[threading.Thread]],
        try_every: float = TRY_EVERY_SECONDS,
        name: str = "",
    ) -> None:
        self.lock = lock
        self.start_jobs = start_jobs
        self.try_every = try_every
        self.name = name or f"pid {os.getpid()}"
        self.leading = threading.Event()
        self.terms = 0  # how many times this process became the leader

    def start(self, stop: threading.Event) -> threading.Thread:
        thread = threading.Thread(target=self._run, args=(stop,), name="byline-leadership", daemon=True)
        thread.start()
        return thread

    def _run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                acquired = self.lock.try_acquire()
            except Exception as error:  # the database is unreachable this round: try again later
                log.warning("Could not try the leader lock (%s); trying again.", type(error).__name__)
                acquired = False
            if acquired:
                self._lead(stop)
            if stop.wait(self.try_every):
                break

    def _lead(self, stop: threading.Event) -> None:
        self.terms += 1
        # Worth a line among many workers; one process on its own data directory always leads.
        level = logging.INFO if isinstance(self.lock, ServerLeaderLock) else logging.DEBUG
        log.log(level, "Leader (%s): running feed polling, digests and retention here.", self.name)
        jobs_stop = threading.Event()
        self.leading.set()
        threads = self.start_jobs(jobs_stop)
        try:
            while not stop.wait(self.try_every):
                if not self.lock.still_held():
                    log.warning("Lost the leader lock (%s): stopping feed polling and digests here.", self.name)
                    break
        finally:
            self.leading.clear()
            jobs_stop.set()
            for thread in threads:
                thread.join(timeout=self.try_every)
            self.lock.release()


def leader_lock(data_dir: Path, engine: object) -> LeaderLock:
    """The cluster's lock when the state is in PostgreSQL, else the data directory's file."""
    if isinstance(engine, PostgresEngine):
        return ServerLeaderLock(engine)
    return FileLeaderLock(data_dir / LEADER_FILE)
