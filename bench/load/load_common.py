"""What the Slack and Discord load tests share: the question plan, pacing, outcome checks, figures.

A plan is N questions from U simulated users, spread evenly over S seconds. One user is a fast
asker (a tenth of all questions) so that the per-user token bucket is exercised; the rest ask a
few each. Every question must end in exactly one *final* reply (an answer, a rate-limit notice or
a "very busy" notice); a "You're #n in line" notice may come before it, at most once.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
if str(PROJECT) not in sys.path:
    sys.path.insert(0, str(PROJECT))

from bot.limits import LimitSettings  # noqa: E402
from bot.service import Asker, Service  # noqa: E402
from bot.state.store import STATE_FILE, BotState  # noqa: E402
from retrieval.library import Library  # noqa: E402

# Questions a reader of the seed article (the Manchester derby bust-up) would ask.
QUESTIONS = (
    "what did Mourinho say about the referee?",
    "who threw milk at Mourinho?",
    "what happened to Mikel Arteta?",
    "who did Mourinho argue with?",
    "what was the score of the derby?",
    "why did Mourinho go to the City dressing room?",
    "was Mourinho hit with a bottle?",
    "what language were Mourinho and Ederson shouting in?",
    "what did Guardiola say?",
    "what is the Battle of the Buffet?",
    "who had to intervene in the melee?",
    "what were City players celebrating?",
)

ANSWER, RATE_LIMITED, BUSY, IN_LINE = "answer", "rate-limited", "busy", "in-line"


@dataclass(frozen=True)
class Question:
    index: int
    at: float  # seconds after the start of the run
    user: int
    channel: int
    text: str
    slash: bool  # a slash command rather than a mention


def plan(questions: int, users: int, seconds: float, channels: int, slash_every: int = 4) -> list[Question]:
    """``questions`` spread over ``seconds``; user 0 asks a tenth of them (at least 8), the others the rest in turn."""
    fast = max(8, questions // 10)
    owners = [0] * fast + [1 + i % max(1, users - 1) for i in range(questions - fast)]
    # A fixed permutation spreads the fast user's questions through the run, as a real one's would be.
    order = sorted(range(questions), key=lambda i: (i * 7919) % questions)
    step = seconds / questions
    return [
        Question(
            index=i,
            at=i * step,
            user=owners[order[i]],
            channel=owners[order[i]] % channels,
            text=QUESTIONS[i % len(QUESTIONS)],
            slash=i % slash_every == slash_every - 1,
        )
        for i in range(questions)
    ]


def fire(questions: list[Question], send: Callable[[Question], None], senders: int = 8) -> dict[int, float]:
    """Send each question at its planned time; returns when each was sent (monotonic seconds)."""
    sent: dict[int, float] = {}
    lock = threading.Lock()
    start = time.monotonic()

    def one(question: Question) -> None:
        delay = start + question.at - time.monotonic()
        if delay > 0:
            time.sleep(delay)  # pacing the load, not waiting for a result
        with lock:
            sent[question.index] = time.monotonic()
        send(question)

    with ThreadPoolExecutor(senders, thread_name_prefix="load-sender") as pool:
        for future in [pool.submit(one, q) for q in questions]:
            future.result()
    return sent


def classify(text: str) -> str:
    if "in line" in text and "You're #" in text:
        return IN_LINE
    if "asking fast" in text:
        return RATE_LIMITED
    if "very busy" in text:
        return BUSY
    return ANSWER


@dataclass
class Delivery:
    """What reached the fake for one question: (kind, monotonic time) per message."""

    messages: list[tuple[str, float]] = field(default_factory=list)

    @property
    def finals(self) -> list[tuple[str, float]]:
        return [m for m in self.messages if m[0] != IN_LINE]


@dataclass
class LoadReport:
    platform: str
    questions: int
    users: int
    seconds: float
    outcomes: dict[str, int]
    lost: list[int]
    duplicated: list[int]
    extra_notices: list[int]
    p50_s: float
    p95_s: float
    max_s: float
    throughput_qps: float
    rss_before_mb: float
    rss_after_mb: float
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def exactly_once(self) -> bool:
        return not (self.lost or self.duplicated or self.extra_notices)

    def lines(self) -> list[str]:
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        rows = [
            f"{self.platform}: {self.questions} questions from {self.users} users in {self.seconds:g} s",
            f"  outcomes: {outcomes}",
            f"  exactly once: {self.exactly_once} (lost {len(self.lost)}, duplicated {len(self.duplicated)}, "
            f"repeated queue notices {len(self.extra_notices)})",
            f"  latency (sent -> final reply at the fake): p50 {self.p50_s * 1000:.0f} ms, "
            f"p95 {self.p95_s * 1000:.0f} ms, max {self.max_s * 1000:.0f} ms",
            f"  throughput: {self.throughput_qps:.1f} final replies/s",
            f"  RSS: {self.rss_before_mb:.0f} MB before, {self.rss_after_mb:.0f} MB after",
        ]
        rows += [f"  {key}: {value}" for key, value in self.extra.items()]
        return rows


def report(
    platform: str,
    questions: list[Question],
    users: int,
    seconds: float,
    sent: dict[int, float],
    deliveries: dict[int, Delivery],
    rss_before: float,
    extra: dict[str, object] | None = None,
) -> LoadReport:
    outcomes: dict[str, int] = {}
    latencies = []
    for question in questions:
        delivery = deliveries.get(question.index, Delivery())
        for kind, _ in delivery.messages:
            outcomes[kind] = outcomes.get(kind, 0) + 1
        if delivery.finals:
            latencies.append(delivery.finals[0][1] - sent[question.index])
    final_times = [d.finals[0][1] for d in deliveries.values() if d.finals]
    span = max(final_times) - min(sent.values()) if final_times else 0.0
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99 or [0.0] * 99

    def count(kind: str, delivery: Delivery) -> int:
        return sum(1 for k, _ in delivery.messages if k == kind)

    return LoadReport(
        platform=platform,
        questions=len(questions),
        users=users,
        seconds=seconds,
        outcomes=outcomes,
        lost=[q.index for q in questions if not deliveries.get(q.index, Delivery()).finals],
        duplicated=[q.index for q in questions if len(deliveries.get(q.index, Delivery()).finals) > 1],
        extra_notices=[q.index for q in questions if count(IN_LINE, deliveries.get(q.index, Delivery())) > 1],
        p50_s=cuts[49],
        p95_s=cuts[94],
        max_s=max(latencies, default=0.0),
        throughput_qps=len(final_times) / span if span else 0.0,
        rss_before_mb=rss_before,
        rss_after_mb=rss_mb(),
        extra=extra or {},
    )


def rss_mb() -> float:
    """This process's resident memory now (the bot and the fake share it), after a collection."""
    gc.collect()
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


def settle(service: Service, timeout: float = 60.0) -> None:
    """Wait until the retrieval pool is idle, then a moment more for any late duplicate to land."""
    wait_until(lambda: service.pool.outstanding == 0, timeout, "the retrieval pool to drain")
    time.sleep(0.5)


@contextmanager
def seed_service(limits: LimitSettings | None = None) -> Iterator[Service]:
    """A service with the default limits over a fresh copy of the seed corpus."""
    directory = Path(tempfile.mkdtemp(prefix="byline-load-"))
    try:
        library = Library.open(directory / "data")
        library.ingest([PROJECT / "seeds"])
        service = Service(library, BotState(library.data_dir / STATE_FILE), limits or LimitSettings())
        try:
            yield service
        finally:
            service.close()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def load_main(description: str, run_round: Callable[..., LoadReport]) -> None:
    """The command line both load benches share: N rounds of Q questions from U users in S seconds."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2, help="repeat with new users, to see whether RSS grows")
    args = parser.parse_args()
    with seed_service() as service:
        service.ask("warm-up: what did Mourinho say?", Asker("warm-up", "W", "W"))
        for round_number in range(args.rounds):
            result = run_round(service, args.questions, args.users, args.seconds, tag=str(round_number))
            print(f"round {round_number + 1}:", *result.lines(), sep="\n")
            if not result.exactly_once:
                raise SystemExit(f"not exactly once: lost {result.lost}, duplicated {result.duplicated}")
