"""A follow-up keeps the previous question's speaker: "What did Bill Gates say?" then "and
about spam?" asks for Gates's words on spam, never someone else's quote."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.limits import LimitSettings
from bot.platforms.terminal.chat import render
from bot.replies import AnswerReply
from bot.service import Asker, Service
from bot.state.store import STATE_FILE, BotState
from retrieval.answering.question import parse, with_context
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from tests.conftest import BBC


@pytest.mark.parametrize("follow_up", ["and about spam?", "what about spam?", "And about spam", "how about on spam?"])
def test_a_topic_follow_up_after_a_speaker_question_keeps_the_speaker(follow_up: str) -> None:
    question = with_context(parse(follow_up), ["What did Bill Gates say?"])
    assert (question.kind, question.who, question.topic) == ("speaker", "Bill Gates", "spam")
    assert question.standalone == "what did Bill Gates say about spam?"


def test_other_follow_ups_are_unchanged() -> None:
    # A new speaker after "what about" still switches speaker, keeping the topic.
    switched = with_context(parse("what about Guardiola?"), ["what did Mourinho say about the referee?"])
    assert (switched.who, switched.topic) == ("Guardiola", "the referee")
    # After a question that is not about a speaker, "and about spam?" is not given one.
    assert with_context(parse("and about spam?"), ["Who won the league?"]).kind == "general"


@pytest.fixture
def tech_service(tmp_path: Path, embedder: Embedder) -> Iterator[Service]:
    if not (BBC / "tech" / "134.txt").exists():
        pytest.skip("BBC corpus not present")
    folder = tmp_path / "tech"
    folder.mkdir()
    # Stories quoting Bill Gates, and stories about spam that quote other people.
    for name in ("020.txt", "052.txt", "134.txt", "026.txt", "027.txt", "055.txt", "077.txt"):
        shutil.copy(BBC / "tech" / name, folder / name)
    library = Library.open(tmp_path / "data", embedder)
    library.ingest([folder])
    service = Service(library, BotState(tmp_path / "data" / STATE_FILE), LimitSettings(user_burst=100))
    yield service
    service.close()


def test_and_about_spam_never_quotes_someone_else(tech_service: Service) -> None:
    asker = Asker("terminal", "local", "terminal", conversation="chat")
    first = tech_service.ask("What did Bill Gates say?", asker)
    assert isinstance(first, AnswerReply) and first.answer.answered
    follow = tech_service.ask("and about spam?", asker)
    assert isinstance(follow, AnswerReply)
    answer = follow.answer
    assert answer.standalone_question == "what did Bill Gates say about spam?"
    quotes = [span for span in answer.spans if span.kind == "quote"]
    assert all("Gates" in span.speaker for span in quotes), [(s.speaker, s.text[:60]) for s in quotes]
    # The chat shows how the follow-up was read.
    assert render(follow).startswith("(Read as: what did Bill Gates say about spam?)")
