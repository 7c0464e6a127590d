"""What Byline couldn't answer: abstentions and 👎 kept in the state store, grouped by similar
question, listed by `/byline gaps` (Slack), `/gaps` (Discord) and `byline gaps`; votes exported
by `byline feedback --json`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.commands.gaps import gap_groups
from bot.gap_groups import group_gaps, normalise
from bot.replies import AnswerReply, TextReply
from bot.service import Asker, Service
from bot.state.gaps import Gap, GapStore
from bot.state.store import STATE_FILE, BotState
from retrieval.index.embedder import Embedder
from tests.fakes.discord_fake import GUILD_ID, DiscordFake, running_fake
from tests.platform_helpers import Bolt, checked_bolt

SLACK = Asker("slack", "U1", "C1", tenant="slack:T0001")
# Three wordings of one question the seed article (a Manchester derby) cannot answer, and another.
SAME = [
    "Who won the Champions League in 2005?",
    "who won the champions league in 2005",
    "Which team won the 2005 Champions League final?",
]
OTHER = "What is the price of bitcoin today?"
ANSWERABLE = "what did Mourinho say about the referee?"


def week_ago() -> datetime:
    return datetime.now(UTC) - timedelta(days=7)


def ask(service: Service, question: str, asker: Asker = SLACK) -> AnswerReply:
    reply = service.ask(question, asker)
    assert isinstance(reply, AnswerReply), reply
    return reply


def test_every_abstention_is_kept_with_its_channel_check_and_closest_passages(seed_service: Service) -> None:
    reply = ask(seed_service, OTHER, Asker("discord", "42", "900"))
    assert not reply.answer.answered and reply.answer.refused_by
    assert ask(seed_service, ANSWERABLE).answer.answered  # an answer is not a gap
    gaps = GapStore(seed_service.state).since(week_ago())
    assert len(gaps) == 1
    gap = gaps[0]
    assert (gap.kind, gap.platform, gap.channel_id, gap.user_id) == ("abstained", "discord", "900", "42")
    assert gap.question == OTHER and gap.answer_id == reply.answer_id
    assert gap.refused_by == reply.answer.refused_by
    assert [c["paragraph"] for c in gap.closest] == [hit.citation.paragraph for hit in reply.answer.closest][:3]
    assert gap.closest[0]["title"].startswith("Mourinho")
    # Kept in the state file: a fresh process sees it.
    reopened = BotState(seed_service.state.location)
    try:
        assert [g.question for g in GapStore(reopened).since(week_ago())] == [OTHER]
    finally:
        reopened.close()


def test_a_thumbs_down_is_a_gap_until_the_vote_is_changed(seed_service: Service) -> None:
    reply = ask(seed_service, ANSWERABLE)
    voter = Asker("slack", "U7", "C9", tenant="slack:T0001")
    seed_service.feedback(reply.answer_id, voter, -1)
    seed_service.feedback(reply.answer_id, voter, -1)  # clicked twice: still one gap
    gaps = GapStore(seed_service.state).since(week_ago())
    assert [(g.kind, g.user_id, g.channel_id, g.question) for g in gaps] == [("downvoted", "U7", "C9", ANSWERABLE)]
    # For a 👎 the passages kept are the ones the judged answer cited.
    assert [c["paragraph"] for c in gaps[0].closest] == [c.paragraph for c in reply.answer.citations][:3]
    seed_service.feedback(reply.answer_id, voter, 1)
    assert GapStore(seed_service.state).since(week_ago()) == []


def test_gaps_are_grouped_by_similar_question_most_frequent_first(seed_service: Service) -> None:
    ask(seed_service, OTHER)
    for question in SAME:
        ask(seed_service, question)
    groups = gap_groups(seed_service, week_ago())
    assert [group.count for group in groups] == [3, 1]
    assert groups[0].question == SAME[0] and groups[0].variants() == [SAME[2]]  # SAME[1] is SAME[0] normalised
    assert groups[1].question == OTHER
    assert groups[0].refused_by().most_common(1)[0][1] == 3


def test_grouping_by_text_alone_and_by_embedding(embedder: Embedder) -> None:
    def gap(n: int, question: str) -> Gap:
        return Gap(
            n,
            "abstained",
            "slack",
            "C1",
            "U1",
            f"a{n}",
            question,
            "names_absent",
            "",
            [],
            f"2026-01-0{n}T00:00:00.000000Z",
        )

    gaps = [gap(1, "What did Guardiola say?"), gap(2, "what did guardiola say"), gap(3, "What did Pep Guardiola say?")]
    gaps.append(gap(4, "Who won the 2005 final?"))
    assert normalise("What did  Guardiola say?!") == "what did guardiola say"
    by_text = group_gaps(gaps)
    assert [g.count for g in by_text] == [2, 1, 1]
    by_meaning = group_gaps(gaps, embedder.encode)
    assert [g.count for g in by_meaning] == [3, 1]
    assert by_meaning[1].question == "Who won the 2005 final?"
    # Ties in size: the most recent group first.
    assert [g.question for g in group_gaps([gap(1, "a b c?"), gap(2, "x y z?")])] == ["x y z?", "a b c?"]


@pytest.fixture
def slack_bolt(seed_service: Service, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[Bolt]:
    with checked_bolt(seed_service, tmp_path, caplog) as served:
        yield served


def test_slack_byline_gaps_is_for_admins_and_lists_the_groups(slack_bolt: Bolt, seed_service: Service) -> None:
    for question in [*SAME, OTHER]:
        ask(seed_service, question)
    refused = slack_bolt.response(slack_bolt.command("/byline", "gaps", user="U1"))
    assert refused["response_type"] == "ephemeral" and "admins can" in refused["text"]
    listed = slack_bolt.response(slack_bolt.command("/byline", "gaps 30d", user="UADMIN"))
    text = json.dumps(listed["blocks"], ensure_ascii=False)
    assert listed["response_type"] == "ephemeral"
    assert "4 questions in 2 groups" in text and "1. 3× “Who won the Champions League in 2005?”" in text
    assert "names_absent 3" in text and "also asked as: “Which team won the 2005 Champions League final?”" in text
    assert text.index("3×") < text.index("1× “What is the price of bitcoin")
    bad = slack_bolt.response(slack_bolt.command("/byline", "gaps forever", user="UADMIN"))
    assert "/byline gaps [TIME]" in bad["text"]


def test_discord_gaps_command_is_for_admins(seed_service: Service) -> None:
    from tests.bot.test_discord import callback, followups, start_bot, text_of

    for question in SAME:
        ask(seed_service, question, Asker("discord", "42", "900", tenant=f"discord:{GUILD_ID}"))
    fake: DiscordFake
    with running_fake() as fake:
        bot = start_bot(fake, seed_service)
        try:
            denied = fake.command("gaps", [])
            fake.dispatch("INTERACTION_CREATE", denied)
            assert callback(fake, denied)["data"]["flags"] & 64
            assert "admins can" in text_of(followups(fake, denied)[0])
            admin = fake.command("gaps", [{"name": "since", "type": 3, "value": "7d"}], permissions=1024 | 2048 | 16)
            fake.dispatch("INTERACTION_CREATE", admin)
            body = followups(fake, admin)[0]
            assert body["flags"] & 64 and "3× “Who won the Champions League in 2005?”" in text_of(body)
            assert body["allowed_mentions"]["parse"] == []
        finally:
            bot.close()


def run_cli(data_dir: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    monkeypatch.setenv("BYLINE_DATA_DIR", str(data_dir))
    monkeypatch.chdir(data_dir)  # no .env from the project folder
    for name in ("SLACK_BOT_TOKEN", "DISCORD_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return main(list(args)), ""


@pytest.mark.backends("embedded")  # the CLI reads the data directory
def test_byline_gaps_and_feedback_in_the_terminal(
    seed_service: Service, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for question in SAME:
        ask(seed_service, question)
    answered = ask(seed_service, ANSWERABLE)
    seed_service.feedback(answered.answer_id, Asker("slack", "U7", "C1", tenant="slack:T0001"), -1)
    abstained = ask(seed_service, OTHER)
    seed_service.feedback(abstained.answer_id, Asker("slack", "U8", "C1", tenant="slack:T0001"), 1)
    data_dir = seed_service.library.data_dir
    assert (data_dir / STATE_FILE).exists()
    capsys.readouterr()

    code, _ = run_cli(data_dir, monkeypatch, "gaps", "--since", "7d", "--json")
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["total"] == 5 and report["similarity"] == 0.8
    first = report["groups"][0]
    assert (first["question"], first["count"], first["abstained"], first["refused_by"]) == (
        SAME[0],
        3,
        3,
        {"names_absent": 3},
    )
    assert first["channels"] == [{"platform": "slack", "channel_id": "C1", "count": 3}]
    assert first["closest"] and first["closest"][0]["title"].startswith("Mourinho")
    downvoted = next(g for g in report["groups"] if g["downvoted"])
    assert downvoted["question"] == ANSWERABLE and downvoted["gaps"][0]["user_id"] == "U7"

    code, _ = run_cli(data_dir, monkeypatch, "gaps")
    text = capsys.readouterr().out
    assert code == 0 and "5 questions in 3 groups" in text and "1 👎" in text

    code, _ = run_cli(data_dir, monkeypatch, "gaps", "--since", "soon", "--json")
    assert code == 2 and "error" in json.loads(capsys.readouterr().out)

    code, _ = run_cli(data_dir, monkeypatch, "feedback", "--json")
    exported = json.loads(capsys.readouterr().out)
    assert code == 0 and exported["count"] == 2
    down, up = sorted(exported["votes"], key=lambda v: v["value"])
    assert (down["vote"], down["voter"], down["question"], down["asked_by"]) == ("down", "U7", ANSWERABLE, "U1")
    assert down["answer"]["answered"] and down["answer"]["citations"] and down["answer"]["spans"]
    assert (up["vote"], up["answer"]["answered"]) == ("up", False)
    assert up["answer"]["refused_by"] == abstained.answer.refused_by != ""

    code, _ = run_cli(data_dir, monkeypatch, "feedback")
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and len(lines) == 2 and any(line.startswith("👎") and ANSWERABLE in line for line in lines)


def test_an_empty_report_says_so(seed_service: Service) -> None:
    reply = seed_service.run_command("/gaps", Asker("slack", "UADMIN", "C1", is_admin=True))
    assert isinstance(reply, TextReply) and reply.text.startswith("Nothing unanswered since")


# The same tests over the embedded library and the cluster backend (PostgreSQL + Qdrant).
pytestmark = pytest.mark.backends("embedded", "cluster")
