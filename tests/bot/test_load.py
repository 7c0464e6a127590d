"""The load tests of ``bench/load_*.py`` at CI scale: real bolt over HTTP and the real discord.py
client against the local fakes; every question gets exactly one final reply, none lost or doubled."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from bench.load import load_discord, load_slack
from bench.load.load_common import BUSY, IN_LINE, LoadReport
from bot.limits import LimitSettings
from bot.service import Service
from bot.state.store import STATE_FILE, BotState
from retrieval.library import Library

ServiceFactory = Callable[[LimitSettings], Service]
RunRound = Callable[..., LoadReport]
PLATFORMS = pytest.mark.parametrize(
    "run_round", [load_slack.run_round, load_discord.run_round], ids=["slack", "discord"]
)


@pytest.fixture
def service_with(seed_library: Library) -> Iterator[ServiceFactory]:
    """Services over the seed corpus with the given limits (the defaults, unlike ``seed_service``)."""
    made: list[Service] = []

    def make(limits: LimitSettings) -> Service:
        made.append(Service(seed_library, BotState(seed_library.data_dir / STATE_FILE), limits))
        return made[-1]

    yield make
    for service in made:
        service.pool.shutdown()
        service.state.close()


def assert_exactly_once(result: LoadReport) -> None:
    assert not result.lost, f"questions without a reply: {result.lost}"
    assert not result.duplicated, f"questions answered twice: {result.duplicated}"
    assert not result.extra_notices, f"questions told their place in line twice: {result.extra_notices}"
    finals = sum(n for kind, n in result.outcomes.items() if kind != IN_LINE)
    assert finals == result.questions


@PLATFORMS
def test_forty_questions_from_ten_users_in_three_seconds(run_round: RunRound, service_with: ServiceFactory) -> None:
    result = run_round(service_with(LimitSettings()), questions=40, users=10, seconds=3.0, timeout=60)
    assert_exactly_once(result)
    # The fast asker (8 questions, burst 5) is told to slow down; everyone else is answered.
    assert result.outcomes.get("rate-limited", 0) >= 1
    assert result.outcomes.get("answer", 0) >= 30
    if run_round is load_discord.run_round:
        assert result.extra["IDENTIFY / RESUME"] == "1 / 0"
        beats = result.extra["heartbeats during the run"]
        assert isinstance(beats, int) and beats >= 2  # one a second, none missed behind retrieval


@PLATFORMS
def test_a_burst_queues_with_place_in_line_notices_and_still_answers_once(
    run_round: RunRound, service_with: ServiceFactory
) -> None:
    # One retrieval worker and 30 questions in a tenth of a second: most must wait their turn.
    service = service_with(LimitSettings(workers=1))
    result = run_round(service, questions=30, users=10, seconds=0.1, timeout=60)
    assert_exactly_once(result)
    assert result.outcomes.get(IN_LINE, 0) >= 1


@PLATFORMS
def test_a_full_queue_refuses_with_a_busy_notice_once_per_question(
    run_round: RunRound, service_with: ServiceFactory
) -> None:
    # A queue of two: the adapters' threads must let the overflow reach the pool to be refused.
    service = service_with(LimitSettings(workers=1, queue_limit=2))
    result = run_round(service, questions=30, users=10, seconds=0.1, timeout=60)
    assert_exactly_once(result)
    assert result.outcomes.get(BUSY, 0) >= 1
