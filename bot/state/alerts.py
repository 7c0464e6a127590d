"""Quote alert subscriptions and the log of alerts sent, in the bot's state store (tables of
``bot/state/store.py``'s alerts migration), over SQLite or PostgreSQL.

Every subscription carries its tenant (``bot/tenancy.py``: the Slack workspace, the Discord
server, or the operator for the CLI) and every read a user can cause filters by it. The alert
job (``bot/jobs/alerts.py``) is the operator's own process and reads them all to deliver them.

An alert is *claimed* in the sent log before it is posted, keyed by (subscription, article
checksum, quote span) and by (subscription, the quote's words): the database's unique keys, not
a process's memory, decide that it is posted once, so a restart, a second worker, a new leader or
the same article ingested again (under a new id, or from another outlet) never posts it twice. A
crash between claiming and posting leaves it ``sending``: reported, never re-sent.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass

from bot.state.store import BotState
from retrieval.storage.database import Cursor, Row
from retrieval.storage.store import utc_now

# Statuses of a claimed alert.
SENDING, SENT, FAILED = "sending", "sent", "failed"


@dataclass(frozen=True)
class QuoteAlert:
    """A channel's subscription to a person's new quotes (on a topic, when one is given)."""

    id: int
    tenant: str
    platform: str
    channel_id: str
    speaker: str
    topic: str
    created_by: str
    created_at: str


@dataclass(frozen=True)
class SentQuote:
    """What identifies one quote of one article for the sent log."""

    article_id: int
    article_hash: str
    start: int
    end: int
    words: str

    @property
    def words_hash(self) -> str:
        folded = " ".join(self.words.replace("’", "'").casefold().split())
        return hashlib.sha256(folded.encode("utf-8", "surrogatepass")).hexdigest()


class AlertStore:
    """Reads and writes the alert tables through ``BotState``'s connection helpers."""

    def __init__(self, state: BotState) -> None:
        self.state = state

    # -- subscriptions (every read by tenant) -----------------------------------------------

    def add(
        self, tenant: str, platform: str, channel_id: str, speaker: str, topic: str, created_by: str, now: str = ""
    ) -> QuoteAlert | None:
        """Subscribe a channel; None when it already has this subscription."""
        now = now or utc_now()
        with self.state._write() as connection:
            cursor = connection.execute(
                "INSERT INTO quote_alerts (tenant, platform, channel_id, speaker, topic, created_by, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (tenant, platform, channel_id, speaker, topic, created_by, now),
            )
        if cursor.rowcount == 0:
            return None
        return self.find(tenant, platform, channel_id, speaker, topic)

    def find(self, tenant: str, platform: str, channel_id: str, speaker: str, topic: str) -> QuoteAlert | None:
        row = (
            self._read()
            .execute(
                "SELECT * FROM quote_alerts WHERE tenant=? AND platform=? AND channel_id=? AND speaker=? AND topic=?",
                (tenant, platform, channel_id, speaker, topic),
            )
            .fetchone()
        )
        return _alert(row) if row else None

    def of_channel(self, tenant: str, platform: str, channel_id: str) -> list[QuoteAlert]:
        rows = self._read().execute(
            "SELECT * FROM quote_alerts WHERE tenant=? AND platform=? AND channel_id=? ORDER BY id",
            (tenant, platform, channel_id),
        )
        return [_alert(row) for row in rows]

    def of_tenant(self, tenant: str) -> list[QuoteAlert]:
        rows = self._read().execute("SELECT * FROM quote_alerts WHERE tenant=? ORDER BY id", (tenant,))
        return [_alert(row) for row in rows]

    def remove(self, tenant: str, alert_id: int, platform: str = "", channel_id: str = "") -> bool:
        """Remove one of the tenant's subscriptions (of that channel, when one is given)."""
        query, args = "DELETE FROM quote_alerts WHERE tenant=? AND id=?", [tenant, alert_id]
        if platform:
            query, args = query + " AND platform=? AND channel_id=?", [*args, platform, channel_id]
        with self.state._write() as connection:
            cursor = connection.execute(query, args)
        return cursor.rowcount > 0

    def every_alert(self) -> list[QuoteAlert]:
        """Every tenant's subscriptions: for the delivery job only, never shown to a user."""
        return [_alert(row) for row in self._read().execute("SELECT * FROM quote_alerts ORDER BY id")]

    # -- the sent log -------------------------------------------------------------------

    def claim(self, alert: QuoteAlert, quote: SentQuote) -> bool:
        """Record a quote as being sent for a subscription; False when it was claimed before
        (this span of this article, or the same words from another copy)."""
        with self.state._write() as connection:
            cursor = connection.execute(
                "INSERT INTO quote_alerts_sent (alert_id, tenant, platform, channel_id, article_id, article_hash, "
                "quote_start, quote_end, words_hash, status, claimed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                (
                    alert.id,
                    alert.tenant,
                    alert.platform,
                    alert.channel_id,
                    quote.article_id,
                    quote.article_hash,
                    quote.start,
                    quote.end,
                    quote.words_hash,
                    SENDING,
                    utc_now(),
                ),
            )
        return cursor.rowcount > 0

    def already_sent(self, alert: QuoteAlert, quote: SentQuote) -> bool:
        row = (
            self._read()
            .execute(
                "SELECT 1 FROM quote_alerts_sent WHERE alert_id=? AND ((article_hash=? AND quote_start=? "
                "AND quote_end=?) OR words_hash=?)",
                (alert.id, quote.article_hash, quote.start, quote.end, quote.words_hash),
            )
            .fetchone()
        )
        return row is not None

    def finish(self, alert: QuoteAlert, quote: SentQuote, status: str, error: str = "") -> None:
        with self.state._write() as connection:
            connection.execute(
                "UPDATE quote_alerts_sent SET status=?, error=? WHERE alert_id=? AND article_hash=? "
                "AND quote_start=? AND quote_end=?",
                (status, error[:500], alert.id, quote.article_hash, quote.start, quote.end),
            )

    def release(self, alert: QuoteAlert, quote: SentQuote) -> None:
        """Forget a claim whose post failed for a passing reason, so the next pass tries again."""
        with self.state._write() as connection:
            connection.execute(
                "DELETE FROM quote_alerts_sent WHERE alert_id=? AND article_hash=? AND quote_start=? AND quote_end=?",
                (alert.id, quote.article_hash, quote.start, quote.end),
            )

    def sent_since(self, platform: str, channel_id: str, since: str) -> int:
        """Quotes claimed for a channel since ``since`` (UTC ``added_at`` text): its rate limit."""
        row = (
            self._read()
            .execute(
                "SELECT count(*) AS n FROM quote_alerts_sent WHERE platform=? AND channel_id=? AND claimed_at >= ? "
                "AND status IN (?, ?)",
                (platform, channel_id, since, SENDING, SENT),
            )
            .fetchone()
        )
        return int(row["n"]) if row else 0

    def history(self, tenant: str, alert_id: int) -> dict[str, int]:
        """How many quotes of one of the tenant's subscriptions were sent, failed or interrupted."""
        rows = self._read().execute(
            "SELECT status, count(*) AS n FROM quote_alerts_sent WHERE tenant=? AND alert_id=? GROUP BY status",
            (tenant, alert_id),
        )
        return {row["status"]: int(row["n"]) for row in rows}

    def _read(self) -> Cursor:
        # A cursor of our own, so that BotState's connection keeps its plain tuple rows.
        cursor = self.state._connect().cursor()
        cursor.row_factory = sqlite3.Row
        return cursor


def _alert(row: Row) -> QuoteAlert:
    return QuoteAlert(
        int(row["id"]),
        row["tenant"],
        row["platform"],
        row["channel_id"],
        row["speaker"],
        row["topic"],
        row["created_by"],
        row["created_at"],
    )
