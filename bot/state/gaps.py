"""The ``gaps`` table (created by ``bot/state/store.py``): every abstention and every 👎, kept so that
``bot/commands/gaps.py`` can group and list what Byline couldn't answer.

A companion of ``BotState`` as ``digest_store.py`` is: all of the table's SQL is here, and the
grouping, the chat command and the terminal commands in ``gaps.py`` call these methods.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.state.store import BotState
from retrieval.models import Answer
from retrieval.storage.store import utc_now

if TYPE_CHECKING:
    from bot.asking import Asker

# The passages kept with a gap: the closest ones, or those a judged answer cited.
CLOSEST_KEPT = 3
ABSTAINED, DOWNVOTED = "abstained", "downvoted"


@dataclass(frozen=True)
class Gap:
    """One question Byline did not answer (``abstained``) or answered badly (``downvoted``)."""

    id: int
    kind: str
    platform: str
    channel_id: str
    user_id: str
    answer_id: str
    question: str
    refused_by: str
    scope: str
    closest: list[dict[str, Any]]
    created_at: str
    tenant: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "platform": self.platform,
            "channel_id": self.channel_id,
            "user_id": self.user_id,
            "answer_id": self.answer_id,
            "question": self.question,
            "refused_by": self.refused_by,
            "scope": self.scope,
            "closest": self.closest,
            "created_at": self.created_at,
            "tenant": self.tenant,
        }


def _citation(data: dict[str, Any]) -> dict[str, Any]:
    keys = ("article_id", "title", "source", "url", "published", "paragraph")
    return {key: data.get(key, "") for key in keys}


class GapStore:
    """Reads and writes the ``gaps`` table through the connection helpers of ``BotState``."""

    def __init__(self, state: BotState) -> None:
        self.state = state

    def record_abstention(
        self, asker: Asker, answer_id: str, answer: Answer, scope: str = "", private: bool = False
    ) -> None:
        closest = [_citation(asdict(hit.citation)) for hit in answer.closest[:CLOSEST_KEPT]]
        question = answer.standalone_question or answer.question
        with self.state._write() as connection:
            connection.execute(
                "INSERT INTO gaps (kind, platform, channel_id, user_id, answer_id, question, refused_by, scope, "
                "closest_json, created_at, tenant, private) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    ABSTAINED,
                    asker.platform,
                    asker.channel_id,
                    asker.user_id,
                    answer_id,
                    question,
                    answer.refused_by,
                    scope,
                    json.dumps(closest),
                    utc_now(),
                    asker.tenant,
                    int(private),
                ),
            )

    def record_vote(self, answer_id: str, asker: Asker, vote: int) -> None:
        """A 👎 is kept as a gap; changing it to 👍 takes it back out."""
        if vote > 0:
            with self.state._write() as connection:
                connection.execute(
                    "DELETE FROM gaps WHERE kind=? AND answer_id=? AND platform=? AND user_id=?",
                    (DOWNVOTED, answer_id, asker.platform, asker.user_id),
                )
            return
        stored = self.state.answer(answer_id, asker.tenant)
        if stored is None:
            return
        # A 👎 on a private answer stays as private as the answer until its asker shares it.
        private = self.state.answer_is_private(answer_id)
        # The passages the judged answer stood on; an abstention's are its closest ones.
        cited = stored.get("citations") or [hit.get("citation", {}) for hit in stored.get("closest", [])]
        closest = [_citation(citation) for citation in cited[:CLOSEST_KEPT]]
        question = stored.get("standalone_question") or stored.get("question", "")
        with self.state._write() as connection:
            connection.execute(
                "INSERT INTO gaps (kind, platform, channel_id, user_id, answer_id, question, refused_by, scope, "
                "closest_json, created_at, tenant, private) VALUES (?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?) "
                "ON CONFLICT(answer_id, platform, user_id) WHERE kind = 'downvoted' DO UPDATE SET "
                "created_at=excluded.created_at, channel_id=excluded.channel_id",
                (
                    DOWNVOTED,
                    asker.platform,
                    asker.channel_id,
                    asker.user_id,
                    answer_id,
                    question,
                    stored.get("refused_by", ""),
                    json.dumps(closest),
                    utc_now(),
                    asker.tenant,
                    int(private),
                ),
            )

    def since(self, moment: datetime, tenant: str | None = None) -> list[Gap]:
        """Gaps since ``moment``: of one tenant, or (``None``, the operator) of all. A private
        question is in no report until its asker shares the answer."""
        query = (
            "SELECT id, kind, platform, channel_id, user_id, answer_id, question, refused_by, scope, "
            "closest_json, created_at, tenant FROM gaps WHERE created_at >= ? AND private = 0"
        )
        args: tuple[str, ...] = (stamp(moment),)
        if tenant is not None:
            query, args = query + " AND tenant = ?", (*args, tenant)
        rows = self.state._connect().execute(query + " ORDER BY created_at, id", args).fetchall()
        return [
            Gap(
                id=row[0],
                kind=row[1],
                platform=row[2],
                channel_id=row[3],
                user_id=row[4],
                answer_id=row[5],
                question=row[6],
                refused_by=row[7],
                scope=row[8],
                closest=json.loads(row[9]),
                created_at=row[10],
                tenant=row[11],
            )
            for row in rows
        ]

    def votes(self, moment: datetime | None = None, tenant: str | None = None) -> list[dict[str, Any]]:
        """Every vote (newest last) with the answer it judges, as ``byline feedback --json`` prints it:
        of one tenant's answers, or (``None``, the operator) of all; never on a private answer."""
        query = (
            "SELECT f.answer_id, f.platform, f.user_id, f.vote, f.updated_at, a.user_id, a.question, "
            "a.created_at, a.answer_json, a.tenant FROM feedback f JOIN answers a ON a.id = f.answer_id "
            "WHERE f.updated_at >= ? AND a.private = 0"
        )
        args: tuple[str, ...] = (stamp(moment) if moment else "",)
        if tenant is not None:
            query, args = query + " AND a.tenant = ?", (*args, tenant)
        rows = self.state._connect().execute(query + " ORDER BY f.updated_at, f.answer_id, f.user_id", args).fetchall()
        return [
            {
                "answer_id": row[0],
                "platform": row[1],
                "voter": row[2],
                "vote": "up" if row[3] > 0 else "down",
                "value": row[3],
                "voted_at": row[4],
                "asked_by": row[5],
                "question": row[6],
                "asked_at": row[7],
                "answer": json.loads(row[8]),
                "tenant": row[9],
            }
            for row in rows
        ]


def stamp(moment: datetime) -> str:
    """``moment`` as the stored UTC text, so that stamps compare as strings."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
