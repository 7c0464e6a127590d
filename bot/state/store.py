"""The bot's own state: answers given (for buttons after a restart), votes, conversations,
question channels, shares and unanswered questions.

Kept in its own SQLite file beside the article store so that ``retrieval/`` stays usable as a
library without any of the chat side.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from retrieval.backend import Backend
from retrieval.storage.database import Database
from retrieval.storage.store import utc_now

STATE_FILE = "state.sqlite3"


def state_location(data_dir: Path, backend: Backend) -> Path | str:
    """The bot's state: a file beside the library's, or the cluster's PostgreSQL (the same
    database as the articles: the tables do not overlap)."""
    return backend.store_location(data_dir) if backend.is_cluster else data_dir / STATE_FILE


_MIGRATIONS = [
    """
    CREATE TABLE answers (
        id TEXT PRIMARY KEY,
        platform TEXT NOT NULL,
        user_id TEXT NOT NULL,
        question TEXT NOT NULL,
        answer_json TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE feedback (
        answer_id TEXT NOT NULL REFERENCES answers(id) ON DELETE CASCADE,
        platform TEXT NOT NULL,
        user_id TEXT NOT NULL,
        vote INTEGER NOT NULL CHECK (vote IN (-1, 1)),
        updated_at TEXT NOT NULL,
        PRIMARY KEY (answer_id, platform, user_id)
    );
    CREATE TABLE conversations (
        key TEXT NOT NULL,
        question TEXT NOT NULL,
        asked_at TEXT NOT NULL
    );
    CREATE INDEX conversations_key ON conversations(key, asked_at);
    """,
    # Digests (bot/state/digests.py): one subscription per channel, and every run, so that a
    # restart neither loses nor repeats a scheduled digest.
    """
    CREATE TABLE digest_subscriptions (
        platform TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        schedule TEXT NOT NULL,
        timezone TEXT NOT NULL,
        always INTEGER NOT NULL DEFAULT 0,
        created_by TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (platform, channel_id)
    );
    CREATE TABLE digest_runs (
        id INTEGER PRIMARY KEY,
        platform TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('scheduled', 'on_demand')),
        due_at TEXT NOT NULL,
        since TEXT NOT NULL,
        until TEXT NOT NULL,
        status TEXT NOT NULL,
        late INTEGER NOT NULL DEFAULT 0,
        article_count INTEGER NOT NULL DEFAULT 0,
        error TEXT NOT NULL DEFAULT '',
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL DEFAULT ''
    );
    CREATE UNIQUE INDEX digest_runs_due ON digest_runs(platform, channel_id, due_at) WHERE kind = 'scheduled';
    CREATE INDEX digest_runs_channel ON digest_runs(platform, channel_id, id);
    """,
    # Question channels (bot/commands/autoreply.py), shared private answers (one share each, so a second
    # click cannot post it twice), and what Byline could not answer (bot/commands/gaps.py): every
    # abstention and every thumbs-down, kept apart from ``answers`` so that a report survives
    # the answers it came from being pruned.
    """
    CREATE TABLE autoreply_channels (
        platform TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        set_by TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (platform, channel_id)
    );
    CREATE TABLE shares (
        answer_id TEXT PRIMARY KEY REFERENCES answers(id) ON DELETE CASCADE,
        platform TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        shared_at TEXT NOT NULL
    );
    CREATE TABLE gaps (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('abstained', 'downvoted')),
        platform TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        answer_id TEXT NOT NULL,
        question TEXT NOT NULL,
        refused_by TEXT NOT NULL DEFAULT '',
        scope TEXT NOT NULL DEFAULT '',
        closest_json TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL
    );
    CREATE INDEX gaps_created ON gaps(created_at);
    CREATE UNIQUE INDEX gaps_one_vote ON gaps(answer_id, platform, user_id) WHERE kind = 'downvoted';
    """,
    # Slack installations in many workspaces (bot/state/slack_installations.py). ``sealed`` is the whole
    # installation (every token, the webhook URL) encrypted with BYLINE_TOKEN_KEY; only the ids
    # needed to find it are in the clear. OAuth ``state`` values live until used or expired, and
    # each channel's workspace is kept so that a digest can be posted with that workspace's token.
    """
    CREATE TABLE slack_installations (
        client_id TEXT NOT NULL,
        enterprise_id TEXT NOT NULL,
        team_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        has_bot INTEGER NOT NULL,
        installed_at REAL NOT NULL,
        sealed TEXT NOT NULL,
        PRIMARY KEY (client_id, enterprise_id, team_id, user_id)
    );
    CREATE TABLE slack_oauth_states (
        state TEXT PRIMARY KEY,
        expires_at REAL NOT NULL
    );
    CREATE TABLE slack_channel_teams (
        channel_id TEXT PRIMARY KEY,
        enterprise_id TEXT NOT NULL,
        team_id TEXT NOT NULL,
        seen_at TEXT NOT NULL
    );
    """,
    # Per-channel scopes (bot/commands/scope.py): which sources answer in a channel, as the
    # JSON of ``retrieval.scope.Scope``; no row means the whole library.
    """
    CREATE TABLE channel_scopes (
        platform TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        scope_json TEXT NOT NULL,
        set_by TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (platform, channel_id)
    );
    """,
    # Tenants (bot/tenancy.py): every row that belongs to a workspace or server carries its tenant
    # key, and every read filters by it. Private answers and their gaps are marked so that no
    # report shows them unless their asker shared them. Old rows get "" (see bot/tenancy.py).
    """
    ALTER TABLE answers ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
    ALTER TABLE answers ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE feedback ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
    ALTER TABLE conversations ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
    ALTER TABLE autoreply_channels ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
    ALTER TABLE shares ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
    ALTER TABLE gaps ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
    ALTER TABLE gaps ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE channel_scopes ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
    ALTER TABLE digest_subscriptions ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
    ALTER TABLE digest_runs ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
    UPDATE gaps
        SET tenant = 'slack:' || (SELECT team_id FROM slack_channel_teams t WHERE t.channel_id = gaps.channel_id)
        WHERE platform = 'slack' AND channel_id IN (SELECT channel_id FROM slack_channel_teams);
    CREATE INDEX gaps_tenant ON gaps(tenant, created_at);
    CREATE INDEX conversations_tenant_key ON conversations(tenant, key, asked_at);
    """,
    # Quote alerts (bot/state/alerts.py, bot/jobs/alerts.py): a channel's subscriptions to a person's new
    # quotes, each with its tenant, and the log of quotes sent, claimed before posting and unique per
    # (subscription, article checksum, quote span) and per (subscription, the quote's words), so that
    # no restart, new leader or re-ingest of an article posts a quote twice.
    """
    CREATE TABLE quote_alerts (
        id INTEGER PRIMARY KEY,
        tenant TEXT NOT NULL,
        platform TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        speaker TEXT NOT NULL,
        topic TEXT NOT NULL DEFAULT '',
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX quote_alerts_one ON quote_alerts(tenant, platform, channel_id, speaker, topic);
    CREATE TABLE quote_alerts_sent (
        alert_id INTEGER NOT NULL,
        tenant TEXT NOT NULL,
        platform TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        article_id INTEGER NOT NULL,
        article_hash TEXT NOT NULL,
        quote_start INTEGER NOT NULL,
        quote_end INTEGER NOT NULL,
        words_hash TEXT NOT NULL,
        status TEXT NOT NULL,
        error TEXT NOT NULL DEFAULT '',
        claimed_at TEXT NOT NULL,
        PRIMARY KEY (alert_id, article_hash, quote_start, quote_end)
    );
    CREATE UNIQUE INDEX quote_alerts_sent_words ON quote_alerts_sent(alert_id, words_hash);
    CREATE INDEX quote_alerts_sent_channel ON quote_alerts_sent(platform, channel_id, claimed_at);
    """,
]

HISTORY_TURNS = 4


class BotState(Database):
    """Answers, feedback, conversation history and every other bit of the bot's state, shared
    safely between threads: in a SQLite file, or (the cluster backend) in PostgreSQL, shared
    by every worker."""

    def __init__(self, location: Path | str) -> None:
        # Columns are read by position here, so plain tuples rather than named rows.
        super().__init__(location, _MIGRATIONS, named_rows=False, name="state")

    def save_answer(
        self,
        platform: str,
        user_id: str,
        question: str,
        answer: dict[str, Any],
        tenant: str = "",
        private: bool = False,
    ) -> str:
        answer_id = uuid.uuid4().hex[:16]
        with self._write() as connection:
            connection.execute(
                "INSERT INTO answers (id, platform, user_id, question, answer_json, created_at, tenant, private) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (answer_id, platform, user_id, question, json.dumps(answer), utc_now(), tenant, int(private)),
            )
        return answer_id

    def answer(self, answer_id: str, tenant: str | None = None) -> dict[str, Any] | None:
        """A stored answer; with ``tenant``, only one given in that tenant (a button clicked
        elsewhere with a copied id finds nothing). ``None``: any (the operator)."""
        query, args = "SELECT answer_json FROM answers WHERE id=?", [answer_id]
        if tenant is not None:
            query, args = query + " AND tenant=?", [answer_id, tenant]
        row = self._connect().execute(query, args).fetchone()
        return json.loads(row[0]) if row else None

    def answer_owner(self, answer_id: str, tenant: str | None = None) -> tuple[str, str] | None:
        """(platform, user_id) of whoever asked, or None when the answer is unknown (in ``tenant``)."""
        query, args = "SELECT platform, user_id FROM answers WHERE id=?", [answer_id]
        if tenant is not None:
            query, args = query + " AND tenant=?", [answer_id, tenant]
        row = self._connect().execute(query, args).fetchone()
        return (row[0], row[1]) if row else None

    def answer_is_private(self, answer_id: str) -> bool:
        row = self._connect().execute("SELECT private FROM answers WHERE id=?", (answer_id,)).fetchone()
        return bool(row and row[0])

    def mark_shared(self, answer_id: str, platform: str, channel_id: str, user_id: str, tenant: str = "") -> bool:
        """Record that an answer was shared; False when it already was (nothing is recorded).

        A shared private answer is public from then on: its gaps may show in the tenant's report."""
        with self._write() as connection:
            cursor = connection.execute(
                "INSERT INTO shares (answer_id, platform, channel_id, user_id, shared_at, tenant) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(answer_id) DO NOTHING",
                (answer_id, platform, channel_id, user_id, utc_now(), tenant),
            )
            if cursor.rowcount == 1:
                connection.execute("UPDATE answers SET private=0 WHERE id=?", (answer_id,))
                connection.execute("UPDATE gaps SET private=0 WHERE answer_id=?", (answer_id,))
        return cursor.rowcount == 1

    def set_autoreply(self, platform: str, channel_id: str, on: bool, set_by: str, tenant: str = "") -> bool:
        """Turn a question channel on or off; False when another tenant owns the channel's row
        (a Slack Connect channel shared by two workspaces: the first one to set it keeps it)."""
        with self._write() as connection:
            if on:
                cursor = connection.execute(
                    "INSERT INTO autoreply_channels (platform, channel_id, set_by, updated_at, tenant) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(platform, channel_id) DO UPDATE SET set_by=excluded.set_by, "
                    "updated_at=excluded.updated_at, tenant=excluded.tenant "
                    "WHERE autoreply_channels.tenant IN (excluded.tenant, '')",
                    (platform, channel_id, set_by, utc_now(), tenant),
                )
                return cursor.rowcount > 0
            connection.execute(
                "DELETE FROM autoreply_channels WHERE platform=? AND channel_id=? AND tenant IN (?, '')",
                (platform, channel_id, tenant),
            )
            return True

    def is_autoreply(self, platform: str, channel_id: str, tenant: str = "") -> bool:
        row = (
            self._connect()
            .execute(
                "SELECT 1 FROM autoreply_channels WHERE platform=? AND channel_id=? AND tenant IN (?, '')",
                (platform, channel_id, tenant),
            )
            .fetchone()
        )
        return row is not None

    def set_channel_scope(
        self, platform: str, channel_id: str, scope_json: str | None, set_by: str, tenant: str = ""
    ) -> bool:
        """Store a channel's scope (``None``: clear it, so the whole library answers there);
        False when another tenant owns the channel's row (see ``set_autoreply``)."""
        with self._write() as connection:
            if scope_json is None:
                connection.execute(
                    "DELETE FROM channel_scopes WHERE platform=? AND channel_id=? AND tenant IN (?, '')",
                    (platform, channel_id, tenant),
                )
                return True
            cursor = connection.execute(
                "INSERT INTO channel_scopes (platform, channel_id, scope_json, set_by, updated_at, tenant) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(platform, channel_id) DO UPDATE SET "
                "scope_json=excluded.scope_json, set_by=excluded.set_by, updated_at=excluded.updated_at, "
                "tenant=excluded.tenant WHERE channel_scopes.tenant IN (excluded.tenant, '')",
                (platform, channel_id, scope_json, set_by, utc_now(), tenant),
            )
            return cursor.rowcount > 0

    def channel_scope(self, platform: str, channel_id: str, tenant: str = "") -> tuple[str, str, str] | None:
        """(scope JSON, set by, updated at) of a channel in ``tenant``, or None when it has no scope."""
        row = (
            self._connect()
            .execute(
                "SELECT scope_json, set_by, updated_at FROM channel_scopes "
                "WHERE platform=? AND channel_id=? AND tenant IN (?, '')",
                (platform, channel_id, tenant),
            )
            .fetchone()
        )
        return (row[0], row[1], row[2]) if row else None

    def vote(self, answer_id: str, platform: str, user_id: str, vote: int, tenant: str | None = None) -> bool:
        """Record or change a user's vote; False when the answer is unknown (in ``tenant``)."""
        if self.answer(answer_id, tenant) is None:
            return False
        with self._write() as connection:
            connection.execute(
                "INSERT INTO feedback (answer_id, platform, user_id, vote, updated_at, tenant) "
                "VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(answer_id, platform, user_id) DO UPDATE SET vote=excluded.vote, "
                "updated_at=excluded.updated_at",
                (answer_id, platform, user_id, vote, utc_now(), tenant or ""),
            )
        return True

    def votes(self, answer_id: str) -> dict[str, int]:
        rows = self._connect().execute("SELECT user_id, vote FROM feedback WHERE answer_id=?", (answer_id,))
        return {row[0]: row[1] for row in rows}

    def history(self, key: str, tenant: str = "") -> list[str]:
        rows = (
            self._connect()
            .execute(
                "SELECT question FROM conversations WHERE tenant=? AND key=? "
                "ORDER BY asked_at DESC, rowid DESC LIMIT ?",
                (tenant, key, HISTORY_TURNS),
            )
            .fetchall()
        )
        return [row[0] for row in reversed(rows)]

    def remember(self, key: str, question: str, tenant: str = "") -> None:
        with self._write() as connection:
            connection.execute(
                "INSERT INTO conversations (key, question, asked_at, tenant) VALUES (?, ?, ?, ?)",
                (key, question, utc_now(), tenant),
            )

    def prune(self, days: int, now: datetime | None = None) -> int:
        """Forget questions, answers, votes and user ids older than ``days`` (``BYLINE_RETENTION_DAYS``).

        Returns how many rows went. Buttons under a pruned answer then say it has expired.
        ``days`` 0 keeps everything."""
        if days <= 0:
            return 0
        cutoff = ((now or datetime.now(UTC)) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        with self._write() as connection:
            old = "SELECT id FROM answers WHERE created_at < ?"
            removed = connection.execute(f"DELETE FROM feedback WHERE answer_id IN ({old})", (cutoff,)).rowcount
            removed += connection.execute("DELETE FROM feedback WHERE updated_at < ?", (cutoff,)).rowcount
            removed += connection.execute("DELETE FROM answers WHERE created_at < ?", (cutoff,)).rowcount
            removed += connection.execute("DELETE FROM conversations WHERE asked_at < ?", (cutoff,)).rowcount
            # Other features' tables that keep a question or a user id (every migration creates them;
            # no sqlite_master lookup, which PostgreSQL, the cluster backend, does not have).
            for table, column in (("gaps", "created_at"), ("shares", "shared_at")):
                removed += connection.execute(f"DELETE FROM {table} WHERE {column} < ?", (cutoff,)).rowcount
        return removed
