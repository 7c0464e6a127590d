"""The state store's contract (``retrieval.ports.StateStore``, ``bot/state/store.py``) and its companions
over the same database (``DigestStore``, ``GapStore``, ``AlertStore``, ``SlackInstallations``,
``OAuthStates``), over SQLite and PostgreSQL.

The same test functions run on the bot's own SQLite file and on a PostgreSQL database (the cluster
backend's state, ``state_location``); a new engine adds a location to ``location`` and must pass
the same list. Each write is read back, changed and deleted through the stores' own methods; bad
input that a table's constraints refuse is refused on both; and a second open of the same location
finds everything. Keeping tenants apart is ``test_tenant_state.py``'s; here every row is one
tenant's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from slack_sdk.oauth.installation_store import Installation

from bot.service import Asker
from bot.state.alerts import FAILED as ALERT_FAILED
from bot.state.alerts import SENDING as ALERT_SENDING
from bot.state.alerts import SENT as ALERT_SENT
from bot.state.alerts import AlertStore, QuoteAlert, SentQuote
from bot.state.digests import EMPTY, FAILED, SENDING, SENT, DigestStore
from bot.state.gaps import ABSTAINED, DOWNVOTED, GapStore
from bot.state.slack_installations import OAuthStates, SlackInstallations
from bot.state.store import HISTORY_TURNS, STATE_FILE, BotState, state_location
from bot.token_crypto import TokenCipher
from retrieval.backend import Backend
from retrieval.models import Answer, Citation, Passage, SearchHit
from retrieval.storage.database import DATABASE_ERRORS
from retrieval.storage.store import Store

TENANT = "slack:T1"
ASKER = Asker("slack", "U1", "C1", tenant=TENANT, conversation="slack:C1:1")
LONG_AGO = datetime.now(UTC) - timedelta(days=1)


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where the state lives: the bot's own file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / STATE_FILE
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def state(location: Path | str) -> Iterator[BotState]:
    opened = BotState(location)
    yield opened
    opened.close()


def hit(number: int) -> SearchHit:
    passage = Passage(number, 100 + number, number, number, 0, 10, f"passage {number}")
    citation = Citation(number, 100 + number, f"Title {number}", "Coast Gazette", f"https://x.example/{number}", "", 2)
    return SearchHit(passage, citation, 0.5)


def abstention(question: str, closest: int = 0, standalone: str = "") -> Answer:
    return Answer(
        question=question,
        answered=False,
        spans=[],
        citations=[],
        closest=[hit(n) for n in range(1, closest + 1)],
        standalone_question=standalone,
        refused_by="names_absent",
    )


def save(state: BotState, question: str = "what did the council say?", private: bool = False) -> str:
    return state.save_answer("slack", "U1", question, abstention(question).to_json(), TENANT, private=private)


# -- answers, shares and votes ------------------------------------------------------------------


def test_a_saved_answer_reads_back_as_its_json_with_its_asker(state: BotState) -> None:
    answer: dict[str, Any] = {
        "question": "Qu\u2019a dit Z\u00fcrich \U0001f389?",
        "answered": True,
        "spans": [{"text": "\u201cfine\u201d", "n": 1}],
        "score": 0.25,
        "nothing": None,
    }
    answer_id = state.save_answer("discord", "42", answer["question"], answer, "discord:7")
    assert len(answer_id) == 16 and all(c in "0123456789abcdef" for c in answer_id)
    assert state.answer(answer_id) == answer
    assert state.answer(answer_id, "discord:7") == answer
    assert state.answer_owner(answer_id) == ("discord", "42")
    assert not state.answer_is_private(answer_id)


def test_an_unknown_answer_is_none_everywhere(state: BotState) -> None:
    assert state.answer("0123456789abcdef") is None
    assert state.answer_owner("0123456789abcdef") is None
    assert not state.answer_is_private("0123456789abcdef")
    assert state.votes("0123456789abcdef") == {}


def test_each_saved_answer_gets_its_own_id(state: BotState) -> None:
    ids = [save(state, f"question {n}?") for n in range(20)]
    assert len(set(ids)) == 20
    assert [(state.answer(i) or {}).get("question") for i in ids] == [f"question {n}?" for n in range(20)]


def test_a_private_answer_is_public_once_shared_and_is_shared_only_once(state: BotState) -> None:
    answer_id = save(state, private=True)
    assert state.answer_is_private(answer_id)
    assert state.mark_shared(answer_id, "slack", "C1", "U1", TENANT)
    assert not state.answer_is_private(answer_id)
    assert not state.mark_shared(answer_id, "slack", "C2", "U1", TENANT), "a second click posts nothing"


def test_sharing_an_unknown_answer_is_refused(state: BotState) -> None:
    with pytest.raises(DATABASE_ERRORS):
        state.mark_shared("0123456789abcdef", "slack", "C1", "U1", TENANT)
    answer_id = save(state)
    assert state.mark_shared(answer_id, "slack", "C1", "U1", TENANT), "the store takes the next write"


def test_a_vote_is_recorded_and_changed_per_user(state: BotState) -> None:
    answer_id = save(state)
    assert state.vote(answer_id, "slack", "U1", 1, TENANT)
    assert state.vote(answer_id, "slack", "U2", -1, TENANT)
    assert state.vote(answer_id, "slack", "U1", -1, TENANT)
    assert state.votes(answer_id) == {"U1": -1, "U2": -1}


def test_a_vote_on_an_unknown_answer_is_false_and_keeps_nothing(state: BotState) -> None:
    assert not state.vote("0123456789abcdef", "slack", "U1", 1, TENANT)
    assert state.votes("0123456789abcdef") == {}


@pytest.mark.parametrize("bad", [0, 2, -5])
def test_a_vote_other_than_up_or_down_is_refused(state: BotState, bad: int) -> None:
    answer_id = save(state)
    assert state.vote(answer_id, "slack", "U1", 1, TENANT)
    with pytest.raises(DATABASE_ERRORS):
        state.vote(answer_id, "slack", "U1", bad, TENANT)
    assert state.votes(answer_id) == {"U1": 1}, "the refused vote changed nothing"


# -- conversations, question channels, scopes ---------------------------------------------------


def test_history_keeps_the_last_few_questions_oldest_first(state: BotState) -> None:
    for n in range(HISTORY_TURNS + 2):
        state.remember("slack:C1:1", f"question {n}?", TENANT)
    state.remember("slack:C1:2", "another thread?", TENANT)
    assert state.history("slack:C1:1", TENANT) == [f"question {n}?" for n in range(2, HISTORY_TURNS + 2)]
    assert state.history("slack:C1:2", TENANT) == ["another thread?"]
    assert state.history("slack:C9:1", TENANT) == []


def test_a_question_channel_is_turned_on_and_off(state: BotState) -> None:
    assert not state.is_autoreply("slack", "C1", TENANT)
    assert state.set_autoreply("slack", "C1", True, "U1", TENANT)
    assert state.set_autoreply("slack", "C1", True, "U2", TENANT), "turning it on again is no error"
    assert state.is_autoreply("slack", "C1", TENANT) and not state.is_autoreply("slack", "C2", TENANT)
    assert not state.is_autoreply("discord", "C1", TENANT), "a channel id is per platform"
    assert state.set_autoreply("slack", "C1", False, "U1", TENANT)
    assert not state.is_autoreply("slack", "C1", TENANT)
    assert state.set_autoreply("slack", "C1", False, "U1", TENANT), "turning it off again is no error"


def test_a_channel_scope_is_set_replaced_and_cleared(state: BotState) -> None:
    assert state.channel_scope("slack", "C1", TENANT) is None
    assert state.set_channel_scope("slack", "C1", '{"outlets": ["Coast Gazette"]}', "U1", TENANT)
    first = state.channel_scope("slack", "C1", TENANT)
    assert first is not None and first[:2] == ('{"outlets": ["Coast Gazette"]}', "U1")
    assert state.set_channel_scope("slack", "C1", '{"tags": ["sport"]}', "U2", TENANT)
    second = state.channel_scope("slack", "C1", TENANT)
    assert second is not None and second[:2] == ('{"tags": ["sport"]}', "U2") and second[2] >= first[2]
    assert state.channel_scope("slack", "C2", TENANT) is None
    assert state.set_channel_scope("slack", "C1", None, "U1", TENANT)
    assert state.channel_scope("slack", "C1", TENANT) is None


# -- retention ----------------------------------------------------------------------------------


def test_prune_forgets_questions_answers_votes_and_gaps_older_than_the_retention(state: BotState) -> None:
    voted, shared = save(state, "voted?"), save(state, "shared?")
    assert state.vote(voted, "slack", "U1", -1, TENANT) and state.vote(voted, "slack", "U2", 1, TENANT)
    assert state.mark_shared(shared, "slack", "C1", "U1", TENANT)
    state.remember("slack:C1:1", "voted?", TENANT)
    GapStore(state).record_abstention(ASKER, voted, abstention("voted?"))
    later = datetime.now(UTC) + timedelta(days=2)
    # 2 votes, 2 answers (the share goes with its answer), 1 question, 1 gap.
    assert state.prune(days=1, now=later) == 6
    assert state.answer(voted) is None and state.answer(shared) is None and state.votes(voted) == {}
    assert state.history("slack:C1:1", TENANT) == [] and GapStore(state).since(LONG_AGO) == []
    assert state.prune(days=1, now=later) == 0


def test_prune_keeps_what_is_recent_and_zero_days_keeps_everything(state: BotState) -> None:
    answer_id = save(state)
    state.remember("slack:C1:1", "kept?", TENANT)
    assert state.prune(days=30) == 0
    assert state.prune(days=0, now=datetime.now(UTC) + timedelta(days=999)) == 0
    assert state.answer(answer_id) is not None and state.history("slack:C1:1", TENANT) == ["kept?"]


# -- digests ------------------------------------------------------------------------------------


def test_a_channel_has_one_digest_subscription_replaced_on_resubscribing(state: BotState) -> None:
    digests = DigestStore(state)
    made = digests.subscribe("slack", "C1", "0 9 * * *", "Europe/London", False, "U1", tenant=TENANT)
    assert made is not None and digests.subscription("slack", "C1", TENANT) == made
    again = digests.subscribe(
        "slack", "C1", "0 18 * * 1", "UTC", True, "U2", now="2024-05-01T00:00:00.000000Z", tenant=TENANT
    )
    assert again is not None
    found = digests.subscription("slack", "C1")
    assert found == again
    assert (found.schedule, found.timezone, found.always, found.created_by) == ("0 18 * * 1", "UTC", True, "U2")
    assert found.updated_at == "2024-05-01T00:00:00.000000Z"
    digests.subscribe("discord", "900", "0 7 * * *", "UTC", False, "42", tenant="discord:7")
    digests.subscribe("slack", "A0", "0 7 * * *", "UTC", False, "U1", tenant=TENANT)
    assert [(s.platform, s.channel_id) for s in digests.subscriptions()] == [
        ("discord", "900"),
        ("slack", "A0"),
        ("slack", "C1"),
    ]


def test_unsubscribing_removes_a_digest_once(state: BotState) -> None:
    digests = DigestStore(state)
    digests.subscribe("slack", "C1", "0 9 * * *", "UTC", False, "U1", tenant=TENANT)
    assert digests.unsubscribe("slack", "C1", TENANT)
    assert not digests.unsubscribe("slack", "C1", TENANT)
    assert digests.subscription("slack", "C1") is None and digests.subscriptions() == []


def test_a_scheduled_digest_run_is_claimed_once_per_due_time(state: BotState) -> None:
    digests = DigestStore(state)
    window = ("2024-05-01T08:00:00.000000Z", "2024-05-02T08:00:00.000000Z")
    first = digests.claim("slack", "C1", "scheduled", "2024-05-02T08:00", *window)
    assert first is not None and first > 0
    assert digests.claim("slack", "C1", "scheduled", "2024-05-02T08:00", *window) is None
    assert digests.claim("slack", "C2", "scheduled", "2024-05-02T08:00", *window) is not None
    assert digests.claim("slack", "C1", "scheduled", "2024-05-03T08:00", *window) is not None
    on_demand = [digests.claim("slack", "C1", "on_demand", "2024-05-02T08:00", *window) for _ in range(2)]
    assert None not in on_demand and len(set(on_demand)) == 2, "on-demand digests may repeat"
    runs = digests.runs("slack", "C1")
    assert [r.id for r in runs] == sorted(r.id for r in runs) and len(runs) == 4
    assert {r.status for r in runs} == {SENDING}


def test_a_finished_digest_run_records_its_outcome(state: BotState) -> None:
    digests = DigestStore(state)
    sent = digests.claim("slack", "C1", "scheduled", "d1", "2024-05-01", "2024-05-02", late=True)
    empty = digests.claim("slack", "C1", "scheduled", "d2", "2024-05-02", "2024-05-03")
    failed = digests.claim("slack", "C1", "scheduled", "d3", "2024-05-03", "2024-05-04")
    assert sent is not None and empty is not None and failed is not None
    digests.finish(sent, SENT, article_count=4)
    digests.finish(empty, EMPTY)
    digests.finish(failed, FAILED, error="channel_not_found")
    first = digests.first_run("slack", "C1", "scheduled")
    assert first is not None and first.id == sent
    assert (first.status, first.article_count, first.late, first.error) == (SENT, 4, True, "")
    assert first.finished_at >= first.started_at != ""
    last = digests.last_run("slack", "C1")
    assert last is not None and (last.id, last.status, last.error) == (failed, FAILED, "channel_not_found")
    delivered = digests.last_delivered("slack", "C1", "scheduled")
    assert delivered is not None and (delivered.id, delivered.until) == (empty, "2024-05-03"), "a failure is not"
    only_sent = digests.last_delivered("slack", "C1", statuses=(SENT,))
    assert only_sent is not None and only_sent.id == sent
    assert digests.last_run("slack", "C1", "on_demand") is None and digests.last_run("slack", "C9") is None
    assert digests.first_run("slack", "C1", "on_demand") is None


def test_a_digest_run_of_an_unknown_kind_is_refused(state: BotState) -> None:
    digests = DigestStore(state)
    with pytest.raises(ValueError, match="scheduled or on_demand"):
        digests.claim("slack", "C1", "weekly", "d1", "2024-05-01", "2024-05-02")
    assert digests.runs("slack", "C1") == []


# -- gaps ---------------------------------------------------------------------------------------


def test_an_abstention_is_kept_as_a_gap_with_its_closest_passages(state: BotState) -> None:
    answer = abstention("and Guardiola?", closest=4, standalone="what did Guardiola say about the referee?")
    answer_id = state.save_answer("slack", "U1", answer.question, answer.to_json(), TENANT)
    GapStore(state).record_abstention(ASKER, answer_id, answer, scope="outlet:Coast Gazette")
    (gap,) = GapStore(state).since(LONG_AGO, TENANT)
    assert (gap.kind, gap.answer_id, gap.question, gap.refused_by, gap.scope) == (
        ABSTAINED,
        answer_id,
        "what did Guardiola say about the referee?",
        "names_absent",
        "outlet:Coast Gazette",
    )
    assert (gap.platform, gap.channel_id, gap.user_id, gap.tenant) == ("slack", "C1", "U1", TENANT)
    assert [c["article_id"] for c in gap.closest] == [101, 102, 103], "the three closest are kept"
    assert gap.closest[0] == {
        "article_id": 101,
        "title": "Title 1",
        "source": "Coast Gazette",
        "url": "https://x.example/1",
        "published": "",
        "paragraph": 2,
    }


def test_a_downvote_is_one_gap_per_voter_and_an_upvote_takes_it_back(state: BotState) -> None:
    gaps = GapStore(state)
    answer_id = save(state, "who won the derby?")
    other = Asker("slack", "U2", "C2", tenant=TENANT)
    gaps.record_vote(answer_id, ASKER, -1)
    gaps.record_vote(answer_id, ASKER, -1)
    gaps.record_vote(answer_id, other, -1)
    downvoted = gaps.since(LONG_AGO, TENANT)
    assert [(g.kind, g.user_id, g.question) for g in downvoted] == [
        (DOWNVOTED, "U1", "who won the derby?"),
        (DOWNVOTED, "U2", "who won the derby?"),
    ]
    gaps.record_vote(answer_id, ASKER, 1)
    assert [g.user_id for g in gaps.since(LONG_AGO, TENANT)] == ["U2"]
    gaps.record_vote("0123456789abcdef", ASKER, -1)  # an unknown (pruned) answer: nothing to keep
    assert len(gaps.since(LONG_AGO, TENANT)) == 1


def test_gaps_since_a_moment_leave_older_ones_out(state: BotState) -> None:
    answer_id = save(state)
    GapStore(state).record_abstention(ASKER, answer_id, abstention("what did the council say?"))
    assert len(GapStore(state).since(LONG_AGO)) == 1
    assert GapStore(state).since(datetime.now(UTC) + timedelta(minutes=1)) == []


def test_votes_list_every_vote_with_the_answer_it_judges(state: BotState) -> None:
    first, second = save(state, "first?"), save(state, "second?")
    assert state.vote(first, "slack", "U2", -1, TENANT)
    assert state.vote(second, "slack", "U3", 1, TENANT)
    votes = GapStore(state).votes(None, TENANT)
    assert [(v["answer_id"], v["voter"], v["vote"], v["value"]) for v in votes] == [
        (first, "U2", "down", -1),
        (second, "U3", "up", 1),
    ], "oldest first"
    assert (votes[0]["asked_by"], votes[0]["question"], votes[0]["tenant"]) == ("U1", "first?", TENANT)
    assert votes[0]["answer"] == abstention("first?").to_json()
    assert GapStore(state).votes(datetime.now(UTC) + timedelta(minutes=1)) == []


# -- quote alerts -------------------------------------------------------------------------------


def test_a_quote_alert_is_added_once_per_channel_speaker_and_topic(state: BotState) -> None:
    alerts = AlertStore(state)
    made = alerts.add(TENANT, "slack", "C1", "Jose Mourinho", "", "U1", now="2024-05-01T00:00:00.000000Z")
    assert made is not None
    assert (made.tenant, made.platform, made.channel_id, made.speaker, made.topic, made.created_by) == (
        TENANT,
        "slack",
        "C1",
        "Jose Mourinho",
        "",
        "U1",
    )
    assert made.created_at == "2024-05-01T00:00:00.000000Z"
    assert alerts.add(TENANT, "slack", "C1", "Jose Mourinho", "", "U2") is None
    on_topic = alerts.add(TENANT, "slack", "C1", "Jose Mourinho", "referees", "U1")
    elsewhere = alerts.add(TENANT, "slack", "C2", "Jose Mourinho", "", "U1")
    assert on_topic is not None and elsewhere is not None
    assert alerts.find(TENANT, "slack", "C1", "Jose Mourinho", "referees") == on_topic
    assert alerts.find(TENANT, "slack", "C1", "Pep Guardiola", "") is None
    assert alerts.of_channel(TENANT, "slack", "C1") == [made, on_topic]
    assert alerts.of_tenant(TENANT) == [made, on_topic, elsewhere] == alerts.every_alert()
    assert made.id < on_topic.id < elsewhere.id


def test_a_quote_alert_is_removed_only_by_its_tenant_and_channel(state: BotState) -> None:
    alerts = AlertStore(state)
    alert = alerts.add(TENANT, "slack", "C1", "Jose Mourinho", "", "U1")
    assert alert is not None
    assert not alerts.remove("slack:T2", alert.id)
    assert not alerts.remove(TENANT, alert.id, "slack", "C2")
    assert alerts.remove(TENANT, alert.id, "slack", "C1")
    assert not alerts.remove(TENANT, alert.id)
    assert alerts.every_alert() == []


def _alert(state: BotState, channel: str = "C1") -> QuoteAlert:
    alert = AlertStore(state).add(TENANT, "slack", channel, "Jose Mourinho", "", "U1")
    assert alert is not None
    return alert


QUOTE = SentQuote(7, "hash-a", 120, 180, "The referee decided the game with that penalty")


def test_a_quote_is_claimed_once_per_alert_by_its_span_or_its_words(state: BotState) -> None:
    alerts, alert = AlertStore(state), _alert(state)
    assert not alerts.already_sent(alert, QUOTE)
    assert alerts.claim(alert, QUOTE)
    assert alerts.already_sent(alert, QUOTE)
    assert not alerts.claim(alert, QUOTE), "the same span of the same article"
    reprint = SentQuote(8, "hash-b", 5, 65, "the  referee DECIDED the game with that penalty")
    assert alerts.already_sent(alert, reprint) and not alerts.claim(alert, reprint), "the same words elsewhere"
    assert alerts.claim(alert, SentQuote(7, "hash-a", 200, 240, "I have never seen a decision like that"))
    assert alerts.claim(_alert(state, "C2"), QUOTE), "another subscription is another log"


def test_a_claimed_quote_records_its_outcome_and_a_released_one_is_claimed_again(state: BotState) -> None:
    alerts, alert = AlertStore(state), _alert(state)
    other = SentQuote(9, "hash-c", 0, 40, "Every week the referees decide our matches")
    third = SentQuote(10, "hash-d", 0, 30, "Nobody asks them a single question")
    for quote in (QUOTE, other, third):
        assert alerts.claim(alert, quote)
    alerts.finish(alert, QUOTE, ALERT_SENT)
    alerts.finish(alert, other, ALERT_FAILED, error="x" * 600)
    assert alerts.history(TENANT, alert.id) == {ALERT_SENT: 1, ALERT_FAILED: 1, ALERT_SENDING: 1}
    assert alerts.history("slack:T2", alert.id) == {}
    assert alerts.sent_since("slack", "C1", "") == 2, "sent and sending count against the rate limit"
    assert alerts.sent_since("slack", "C1", "9999") == 0
    alerts.release(alert, other)
    assert alerts.history(TENANT, alert.id) == {ALERT_SENT: 1, ALERT_SENDING: 1}
    assert alerts.claim(alert, other), "a released claim can be tried again"


# -- Slack installations and OAuth states -------------------------------------------------------


def test_an_oauth_state_works_once_and_only_before_it_expires(state: BotState) -> None:
    states = OAuthStates(state)
    issued = states.issue()
    assert issued != states.issue()
    assert states.consume(issued)
    assert not states.consume(issued)
    assert not states.consume("never-issued") and not states.consume("")
    expired = OAuthStates(state, expiration_seconds=-1).issue()
    assert not states.consume(expired)


def _installation(team: str, user: str, bot_token: str | None, user_token: str | None = None) -> Installation:
    return Installation(
        app_id="A1",
        team_id=team,
        team_name=f"Team {team}",
        user_id=user,
        bot_token=bot_token,
        bot_id="B1" if bot_token else None,
        bot_user_id="UB" if bot_token else None,
        bot_scopes="chat:write,commands" if bot_token else "",
        user_token=user_token,
        installed_at=time.time(),
    )


def test_a_slack_installation_is_found_by_workspace_and_forgotten_on_uninstall(state: BotState) -> None:
    installations = SlackInstallations(state, TokenCipher(Fernet.generate_key().decode()), "client-1")
    installations.save(_installation("T1", "UADMIN", "xoxb-one", "xoxp-admin"))
    installations.save(_installation("T2", "UOTHER", "xoxb-two"))
    found = installations.find_installation(enterprise_id=None, team_id="T1")
    assert found is not None and (found.bot_token, found.user_token, found.team_name) == (
        "xoxb-one",
        "xoxp-admin",
        "Team T1",
    )
    bot = installations.find_bot(enterprise_id=None, team_id="T2")
    assert bot is not None and bot.bot_token == "xoxb-two"
    assert sorted(installations.teams()) == [("", "T1"), ("", "T2")]
    assert installations.is_installer("T1", "UADMIN") and not installations.is_installer("T1", "UOTHER")
    assert installations.check_key() == 2
    installations.note_channel("C1", None, "T2")
    channel_bot = installations.bot_for_channel("C1")
    assert channel_bot is not None and channel_bot.bot_token == "xoxb-two"
    assert installations.bot_for_channel("C9") is None
    installations.delete_all(enterprise_id=None, team_id="T2")
    assert installations.find_bot(enterprise_id=None, team_id="T2") is None
    assert installations.bot_for_channel("C1") is None and installations.teams() == [("", "T1")]


def test_a_revoked_bot_token_is_forgotten_and_the_installers_token_kept(state: BotState) -> None:
    installations = SlackInstallations(state, TokenCipher(Fernet.generate_key().decode()), "client-1")
    installations.save(_installation("T1", "UADMIN", "xoxb-one", "xoxp-admin"))
    installations.delete_bot(enterprise_id=None, team_id="T1")
    assert installations.find_bot(enterprise_id=None, team_id="T1") is None and installations.teams() == []
    kept = installations.find_installation(enterprise_id=None, team_id="T1")
    assert kept is not None and (kept.bot_token, kept.user_token) == (None, "xoxp-admin")
    installations.delete_installation(enterprise_id=None, team_id="T1", user_id="UADMIN")
    assert installations.find_installation(enterprise_id=None, team_id="T1") is None, "no token left: the row goes"


# -- a second open, two threads, the article store beside it -------------------------------------


def test_everything_kept_is_there_when_the_state_is_opened_again(state: BotState) -> None:
    answer_id = save(state, private=True)
    assert state.vote(answer_id, "slack", "U2", -1, TENANT)
    state.remember("slack:C1:1", "what did the council say?", TENANT)
    assert state.set_autoreply("slack", "C1", True, "U1", TENANT)
    assert state.set_channel_scope("slack", "C1", '{"tags": ["sport"]}', "U1", TENANT)
    GapStore(state).record_abstention(ASKER, answer_id, abstention("what did the council say?"), private=True)
    subscription = DigestStore(state).subscribe("slack", "C1", "0 9 * * *", "UTC", False, "U1", tenant=TENANT)
    run_id = DigestStore(state).claim("slack", "C1", "scheduled", "d1", "s", "u")
    alert = _alert(state)
    assert AlertStore(state).claim(alert, QUOTE)
    scope = state.channel_scope("slack", "C1", TENANT)
    state.close()

    again = BotState(state.location)
    try:
        assert again.answer(answer_id, TENANT) == abstention("what did the council say?").to_json()
        assert again.answer_is_private(answer_id) and again.votes(answer_id) == {"U2": -1}
        assert again.history("slack:C1:1", TENANT) == ["what did the council say?"]
        assert again.is_autoreply("slack", "C1", TENANT)
        assert again.channel_scope("slack", "C1", TENANT) == scope
        assert [g.answer_id for g in GapStore(again).since(LONG_AGO, TENANT)] == [], "still private"
        assert again.mark_shared(answer_id, "slack", "C1", "U1", TENANT)
        assert [g.answer_id for g in GapStore(again).since(LONG_AGO, TENANT)] == [answer_id]
        assert DigestStore(again).subscription("slack", "C1", TENANT) == subscription
        assert [r.id for r in DigestStore(again).runs("slack", "C1")] == [run_id]
        assert DigestStore(again).claim("slack", "C1", "scheduled", "d1", "s", "u") is None, "still claimed"
        assert AlertStore(again).every_alert() == [alert]
        assert not AlertStore(again).claim(alert, QUOTE), "still sent"
    finally:
        again.close()


def test_a_closed_state_opens_its_connection_again_on_the_next_use(state: BotState) -> None:
    answer_id = save(state)
    state.close()
    assert state.answer(answer_id) is not None
    state.remember("slack:C1:1", "after close?", TENANT)
    assert state.history("slack:C1:1", TENANT) == ["after close?"]


def test_votes_from_many_threads_all_land(state: BotState) -> None:
    answer_id = save(state)
    errors: list[BaseException] = []

    def voter(user: str) -> None:
        try:
            for vote in (1, -1, 1):
                state.vote(answer_id, "slack", user, vote, TENANT)
            state.remember(f"slack:C1:{user}", "asked?", TENANT)
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)
        finally:
            state.close()  # this thread's connection

    threads = [threading.Thread(target=voter, args=(f"U{n}",)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert state.votes(answer_id) == {f"U{n}": 1 for n in range(6)}
    assert all(state.history(f"slack:C1:U{n}", TENANT) == ["asked?"] for n in range(6))


def test_the_article_store_at_the_backends_location_keeps_to_its_own_tables(state: BotState, tmp_path: Path) -> None:
    # The cluster keeps both in one PostgreSQL database; the embedded backend in two files.
    backend = Backend("cluster", database_url=str(state.location)) if state.shared else Backend()
    assert state_location(tmp_path, backend) == (state.location if state.shared else tmp_path / STATE_FILE)
    articles = Store(backend.store_location(tmp_path / "library"))
    try:
        answer_id = save(state)
        articles.set_meta("index_generation", "1")
        assert articles.counts() == {"articles": 0, "passages": 0, "sentences": 0, "quotes": 0}
        assert state.answer(answer_id) is not None and articles.meta_value("index_generation") == "1"
        reopened = BotState(state.location)  # neither store's migrations disturb the other's
        try:
            assert reopened.answer(answer_id) is not None
        finally:
            reopened.close()
    finally:
        articles.close()
