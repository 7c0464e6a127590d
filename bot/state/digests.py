"""Digest subscriptions and run history, in the bot's state file (tables from ``bot/state/store.py``).

A scheduled run is *claimed* before anything is posted: one row per (channel, due time), kept
unique by the database. A second process, a second pass or a restart that finds the row never
posts that run again; a crash between claiming and posting leaves the row ``sending``, which
``/digest status`` reports as interrupted rather than sending it twice.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from bot.state.store import BotState
from retrieval.storage.database import Cursor, Row
from retrieval.storage.store import utc_now

# Statuses of a run: claimed, then one of the three outcomes.
SENDING, SENT, EMPTY, FAILED = "sending", "sent", "empty", "failed"


# The kinds digest_runs' CHECK allows.
RUN_KINDS = ("scheduled", "on_demand")


@dataclass(frozen=True)
class Subscription:
    """A channel's scheduled digest. ``always`` posts "Nothing new" instead of staying quiet."""

    platform: str
    channel_id: str
    schedule: str
    timezone: str
    always: bool
    created_by: str
    updated_at: str
    tenant: str = ""


@dataclass(frozen=True)
class DigestRun:
    """One digest, scheduled or on demand, and how it went. Times are UTC ``added_at`` strings."""

    id: int
    platform: str
    channel_id: str
    kind: str
    due_at: str
    since: str
    until: str
    status: str
    late: bool
    article_count: int
    error: str
    started_at: str
    finished_at: str


class DigestStore:
    """Reads and writes the digest tables through the connection helpers of ``BotState``."""

    def __init__(self, state: BotState) -> None:
        self.state = state

    # -- subscriptions -------------------------------------------------------------------

    def subscribe(
        self,
        platform: str,
        channel_id: str,
        schedule: str,
        timezone: str,
        always: bool,
        user_id: str,
        now: str = "",
        tenant: str = "",
    ) -> Subscription | None:
        """Create or replace the channel's subscription (one per channel); ``now`` is when, in UTC.
        None when another tenant owns the channel's subscription (a shared Slack Connect channel)."""
        now = now or utc_now()
        with self.state._write() as connection:
            cursor = connection.execute(
                "INSERT INTO digest_subscriptions (platform, channel_id, schedule, timezone, always, created_by, "
                "updated_at, tenant) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(platform, channel_id) DO UPDATE SET schedule=excluded.schedule, "
                "timezone=excluded.timezone, always=excluded.always, created_by=excluded.created_by, "
                "updated_at=excluded.updated_at, tenant=excluded.tenant "
                "WHERE digest_subscriptions.tenant IN (excluded.tenant, '')",
                (platform, channel_id, schedule, timezone, int(always), user_id, now, tenant),
            )
        if cursor.rowcount == 0:
            return None
        return Subscription(platform, channel_id, schedule, timezone, always, user_id, now, tenant)

    def unsubscribe(self, platform: str, channel_id: str, tenant: str = "") -> bool:
        with self.state._write() as connection:
            cursor = connection.execute(
                "DELETE FROM digest_subscriptions WHERE platform=? AND channel_id=? AND tenant IN (?, '')",
                (platform, channel_id, tenant),
            )
        return cursor.rowcount > 0

    def subscription(self, platform: str, channel_id: str, tenant: str | None = None) -> Subscription | None:
        """The channel's subscription; with ``tenant``, only that tenant's (or one from before tenancy)."""
        query, args = "SELECT * FROM digest_subscriptions WHERE platform=? AND channel_id=?", [platform, channel_id]
        if tenant is not None:
            query, args = query + " AND tenant IN (?, '')", [platform, channel_id, tenant]
        row = self._read().execute(query, args).fetchone()
        return _subscription(row) if row else None

    def subscriptions(self) -> list[Subscription]:
        rows = self._read().execute("SELECT * FROM digest_subscriptions ORDER BY platform, channel_id")
        return [_subscription(row) for row in rows]

    # -- runs ----------------------------------------------------------------------------

    def claim(
        self, platform: str, channel_id: str, kind: str, due_at: str, since: str, until: str, late: bool = False
    ) -> int | None:
        """Record a run as ``sending`` before posting; None when this scheduled run was claimed already."""
        if kind not in RUN_KINDS:
            # Refused alike on every backend: SQLite's INSERT OR IGNORE would skip the CHECK's
            # violation silently and read as "claimed already" (the state store contract tests).
            raise ValueError(f"a digest run is {' or '.join(RUN_KINDS)}, not {kind!r}")
        with self.state._write() as connection:
            cursor = connection.execute(
                "INSERT OR IGNORE INTO digest_runs "
                "(platform, channel_id, kind, due_at, since, until, status, late, started_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (platform, channel_id, kind, due_at, since, until, SENDING, int(late), utc_now()),
            )
        return int(cursor.lastrowid or 0) if cursor.rowcount > 0 else None

    def finish(self, run_id: int, status: str, article_count: int = 0, error: str = "") -> None:
        with self.state._write() as connection:
            connection.execute(
                "UPDATE digest_runs SET status=?, article_count=?, error=?, finished_at=? WHERE id=?",
                (status, article_count, error, utc_now(), run_id),
            )

    def last_run(self, platform: str, channel_id: str, kind: str | None = None) -> DigestRun | None:
        """The channel's latest run (of one kind, or any), whatever its outcome."""
        query = "SELECT * FROM digest_runs WHERE platform=? AND channel_id=?"
        params: tuple[str, ...] = (platform, channel_id)
        if kind:
            query, params = query + " AND kind=?", (*params, kind)
        row = self._read().execute(query + " ORDER BY id DESC LIMIT 1", params).fetchone()
        return _run(row) if row else None

    def last_delivered(
        self, platform: str, channel_id: str, kind: str | None = None, statuses: tuple[str, ...] = (SENT, EMPTY)
    ) -> DigestRun | None:
        """The latest run whose window was covered (posted, or empty): the next window starts there."""
        marks = ", ".join("?" * len(statuses))
        query = f"SELECT * FROM digest_runs WHERE platform=? AND channel_id=? AND status IN ({marks})"
        params: tuple[str, ...] = (platform, channel_id, *statuses)
        if kind:
            query, params = query + " AND kind=?", (*params, kind)
        row = self._read().execute(query + " ORDER BY until DESC, id DESC LIMIT 1", params).fetchone()
        return _run(row) if row else None

    def first_run(self, platform: str, channel_id: str, kind: str) -> DigestRun | None:
        row = (
            self._read()
            .execute(
                "SELECT * FROM digest_runs WHERE platform=? AND channel_id=? AND kind=? ORDER BY id LIMIT 1",
                (platform, channel_id, kind),
            )
            .fetchone()
        )
        return _run(row) if row else None

    def runs(self, platform: str, channel_id: str) -> list[DigestRun]:
        rows = self._read().execute(
            "SELECT * FROM digest_runs WHERE platform=? AND channel_id=? ORDER BY id", (platform, channel_id)
        )
        return [_run(row) for row in rows]

    def _read(self) -> Cursor:
        # A cursor of our own, so that BotState's connection keeps its plain tuple rows.
        cursor = self.state._connect().cursor()
        cursor.row_factory = sqlite3.Row
        return cursor


def _subscription(row: Row) -> Subscription:
    return Subscription(
        row["platform"],
        row["channel_id"],
        row["schedule"],
        row["timezone"],
        bool(row["always"]),
        row["created_by"],
        row["updated_at"],
        row["tenant"],
    )


def _run(row: Row) -> DigestRun:
    return DigestRun(
        row["id"],
        row["platform"],
        row["channel_id"],
        row["kind"],
        row["due_at"],
        row["since"],
        row["until"],
        row["status"],
        bool(row["late"]),
        row["article_count"],
        row["error"],
        row["started_at"],
        row["finished_at"],
    )
