"""The state store keeps tenants apart (issue 32, bot/tenancy.py), over SQLite and PostgreSQL.

Two tenants, a Slack workspace and a Discord server, each write every kind of row the bot keeps
for a tenant; then every read path is asked as each tenant: no row of one is visible to the
other, and private questions reach no report until their asker shares the answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.service import Asker
from bot.state.digests import DigestStore
from bot.state.gaps import GapStore
from bot.state.store import BotState
from retrieval.models import Answer

A = Asker("slack", "UA", "CA", tenant="slack:TA", conversation="slack:CA:1")
B = Asker("discord", "42", "900", tenant="discord:77", conversation="discord:900:1")
LONG_AGO = datetime.now(UTC) - timedelta(days=1)


@pytest.fixture(params=["sqlite", "postgres"])
def state(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BotState]:
    location = tmp_path / "state.sqlite3" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    opened = BotState(location)
    yield opened
    opened.close()


def abstention(question: str) -> Answer:
    return Answer(question=question, answered=False, spans=[], citations=[], refused_by="names_absent")


def write_everything(state: BotState, asker: Asker, word: str) -> str:
    """Every kind of tenant row: an answer and its gap, a vote, a conversation, a question
    channel, a scope, a digest subscription; returns the answer id."""
    answer = abstention(f"what about {word}?")
    answer_id = state.save_answer(asker.platform, asker.user_id, answer.question, answer.to_json(), asker.tenant)
    GapStore(state).record_abstention(asker, answer_id, answer)
    assert state.vote(answer_id, asker.platform, asker.user_id, -1, asker.tenant)
    GapStore(state).record_vote(answer_id, asker, -1)
    state.remember(asker.conversation, f"what about {word}?", asker.tenant)
    assert state.set_autoreply(asker.platform, asker.channel_id, True, asker.user_id, asker.tenant)
    assert state.set_channel_scope(asker.platform, asker.channel_id, '{"outlets": ["' + word + '"]}', "x", asker.tenant)
    subscribed = DigestStore(state).subscribe(
        asker.platform, asker.channel_id, "0 9 * * *", "UTC", False, asker.user_id, tenant=asker.tenant
    )
    assert subscribed is not None and subscribed.tenant == asker.tenant
    return answer_id


def test_no_row_of_one_tenant_is_visible_to_the_other(state: BotState) -> None:
    a_answer, b_answer = write_everything(state, A, "referees"), write_everything(state, B, "budgets")
    gaps = GapStore(state)
    for mine, other, my_answer, other_answer, word in (
        (A, B, a_answer, b_answer, "referees"),
        (B, A, b_answer, a_answer, "budgets"),
    ):
        assert state.answer(my_answer, mine.tenant) is not None
        assert state.answer(other_answer, mine.tenant) is None, "a button from another tenant finds nothing"
        assert state.answer_owner(other_answer, mine.tenant) is None
        assert not state.vote(other_answer, mine.platform, mine.user_id, 1, mine.tenant)
        assert state.history(mine.conversation, mine.tenant) == [f"what about {word}?"]
        assert state.history(other.conversation, mine.tenant) == []
        assert state.is_autoreply(mine.platform, mine.channel_id, mine.tenant)
        assert not state.is_autoreply(other.platform, other.channel_id, mine.tenant)
        assert state.channel_scope(other.platform, other.channel_id, mine.tenant) is None
        assert word in (state.channel_scope(mine.platform, mine.channel_id, mine.tenant) or ("",))[0]
        digests = DigestStore(state)
        assert digests.subscription(other.platform, other.channel_id, mine.tenant) is None
        assert not digests.unsubscribe(other.platform, other.channel_id, mine.tenant)
        seen = gaps.since(LONG_AGO, mine.tenant)
        assert {gap.tenant for gap in seen} == {mine.tenant} and len(seen) == 2  # the abstention and the 👎
        assert {vote["tenant"] for vote in gaps.votes(None, mine.tenant)} == {mine.tenant}
    # The operator (the CLI) sees every tenant's gaps.
    assert {gap.tenant for gap in gaps.since(LONG_AGO)} == {A.tenant, B.tenant}


def test_a_channel_set_by_one_tenant_cannot_be_taken_over_by_another(state: BotState) -> None:
    # A Slack Connect channel shared by two workspaces has one id in both.
    shared = Asker("slack", "UB", "CA", tenant="slack:TB")
    write_everything(state, A, "referees")
    assert not state.set_autoreply("slack", "CA", True, "UB", shared.tenant)
    assert not state.set_channel_scope("slack", "CA", '{"outlets": ["evil"]}', "UB", shared.tenant)
    assert DigestStore(state).subscribe("slack", "CA", "0 * * * *", "UTC", True, "UB", tenant=shared.tenant) is None
    state.set_autoreply("slack", "CA", False, "UB", shared.tenant)  # turning it off is refused too
    assert state.is_autoreply("slack", "CA", A.tenant)
    assert "referees" in (state.channel_scope("slack", "CA", A.tenant) or ("",))[0]
    assert DigestStore(state).subscription("slack", "CA", A.tenant) is not None


def test_rows_from_before_tenancy_are_claimed_by_their_channels_tenant(state: BotState) -> None:
    # "" is what migration 6 gives the rows stored before tenants existed.
    assert state.set_autoreply("discord", "900", True, "mod", "")
    assert state.is_autoreply("discord", "900", B.tenant)
    assert state.set_autoreply("discord", "900", True, "mod", B.tenant), "the channel's own tenant claims it"
    assert not state.set_autoreply("discord", "900", True, "x", "discord:other")


def test_private_questions_reach_no_report_until_shared(state: BotState) -> None:
    answer = abstention("what did my manager say about layoffs?")
    answer_id = state.save_answer("slack", "UA", answer.question, answer.to_json(), A.tenant, private=True)
    GapStore(state).record_abstention(A, answer_id, answer, private=True)
    assert state.vote(answer_id, "slack", "UA", -1, A.tenant)
    GapStore(state).record_vote(answer_id, A, -1)
    assert GapStore(state).since(LONG_AGO, A.tenant) == []
    assert GapStore(state).since(LONG_AGO) == [], "not even the operator sees it"
    assert GapStore(state).votes(None, A.tenant) == []
    assert state.mark_shared(answer_id, "slack", "CA", "UA", A.tenant)
    assert [gap.question for gap in GapStore(state).since(LONG_AGO, A.tenant)] == [answer.question] * 2
