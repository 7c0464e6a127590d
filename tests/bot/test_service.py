"""The platform-neutral service: commands, rate limits, the retrieval queue, buttons' state."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from bot.limits import LimitSettings, RateLimiter, RetrievalPool
from bot.replies import AnswerReply, PassagesReply, SearchReply, SourcesReply, TextReply
from bot.service import Asker, Service
from bot.state.store import STATE_FILE, BotState
from retrieval.library import Library

ASKER = Asker("test", "U1", "C1", conversation="test:C1:1")


def test_commands_and_usage(seed_service: Service) -> None:
    assert isinstance(seed_service.run_command("/ask what did Mourinho say about the referee?", ASKER), AnswerReply)
    private = seed_service.run_command("/ask private who was cut above the eyebrow?", ASKER)
    assert isinstance(private, AnswerReply) and private.private
    assert isinstance(seed_service.run_command("/search Kompany", ASKER), SearchReply)
    sources = seed_service.run_command("/sources", ASKER)
    assert isinstance(sources, SourcesReply) and sources.total == 1
    for line, expected in [
        ("/ask", "Usage"),
        ("/search", "Usage"),
        ("/sources x", "Usage"),
        ("/frobnicate", "Unknown command"),
    ]:
        reply = seed_service.run_command(line, ASKER)
        assert isinstance(reply, TextReply) and expected in reply.text and reply.private
    assert "/ask" in seed_service.help().text


def test_follow_up_uses_the_conversation(seed_service: Service) -> None:
    seed_service.ask("what did Mourinho say about the referee?", ASKER)
    reply = seed_service.ask("and what did Guardiola say?", ASKER)
    assert isinstance(reply, AnswerReply) and reply.answer.spans[0].speaker == "Pep Guardiola"


def test_follow_ups_chain_through_the_conversation(seed_service: Service) -> None:
    asker = Asker("test", "U2", "C2", conversation="test:C2:chain")
    seed_service.ask("What did Guardiola say about Kompany?", asker)
    seed_service.ask("and Mourinho?", asker)
    reply = seed_service.ask("what else did he say?", asker)
    assert isinstance(reply, AnswerReply)
    assert reply.answer.spans and all(s.speaker == "Jose Mourinho" for s in reply.answer.spans)
    assert seed_service.state.history("test:C2:chain")[1].startswith("what did Mourinho say")


def test_buttons_state_survives_a_restart(seed_library: Library) -> None:
    state = BotState(seed_library.data_dir / STATE_FILE)
    service = Service(seed_library, state)
    reply = service.ask("what did Mourinho say about the referee?", ASKER)
    assert isinstance(reply, AnswerReply)
    service.feedback(reply.answer_id, ASKER, 1)
    service.feedback(reply.answer_id, ASKER, -1)  # a changed vote, not a second one
    state.close()

    restarted = Service(seed_library, BotState(seed_library.data_dir / STATE_FILE))
    assert restarted.state.votes(reply.answer_id) == {"U1": -1}
    passages = restarted.passages(reply.answer_id)
    assert not passages.expired and "Michael Oliver" in passages.passages[0][1].text
    assert restarted.passages("no-such-answer") == PassagesReply(expired=True)
    assert "expired" in restarted.feedback("no-such-answer", ASKER, 1).text
    restarted.state.close()


def test_rate_limit_answers_with_a_notice() -> None:
    now = [0.0]
    limiter = RateLimiter(LimitSettings(user_per_minute=12, user_burst=2), clock=lambda: now[0])
    assert limiter.check("u", "c") == 0 and limiter.check("u", "c") == 0
    wait = limiter.check("u", "c")
    assert 4.9 < wait <= 5.0  # one token per 5 s
    assert limiter.check("other", "c") == 0, "another user is not held up"
    now[0] += 5.0
    assert limiter.check("u", "c") == 0


def test_rate_limited_question_gets_try_again(seed_library: Library, tmp_path: Path) -> None:
    service = Service(seed_library, BotState(tmp_path / "s.sqlite3"), LimitSettings(user_burst=1, user_per_minute=6))
    assert isinstance(service.ask("who was cut above the eyebrow?", ASKER), AnswerReply)
    notice = service.ask("who was cut above the eyebrow?", ASKER)
    assert isinstance(notice, TextReply) and "You're asking fast — try again in 10 s" in notice.text
    service.close()


def test_pool_reports_place_in_line() -> None:
    pool = RetrievalPool(workers=1, queue_limit=2)
    gate = threading.Event()
    positions: list[int] = []
    results: list[str] = []
    first = threading.Thread(target=lambda: results.append(pool.run(lambda: (gate.wait(5), "a")[1])))
    first.start()
    while pool.outstanding < 1:
        pass
    second = threading.Thread(target=lambda: results.append(pool.run(lambda: "b", positions.append)))
    second.start()
    while pool.outstanding < 2:
        pass
    third = threading.Thread(target=lambda: results.append(pool.run(lambda: "c", positions.append)))
    third.start()
    while pool.outstanding < 3:
        pass
    from bot.limits import QueueFull

    try:
        pool.run(lambda: "d")
        raise AssertionError("the queue should be full")
    except QueueFull:
        pass
    gate.set()
    for thread in (first, second, third):
        thread.join(5)
    assert sorted(results) == ["a", "b", "c"] and sorted(positions) == [1, 2]
    pool.shutdown()


# The same tests over the embedded library and the cluster backend (PostgreSQL + Qdrant).
pytestmark = pytest.mark.backends("embedded", "cluster")
