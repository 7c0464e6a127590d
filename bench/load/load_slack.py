"""Load test: the real slack-bolt HTTP app, signed requests over real HTTP, against the fake Slack.

    .venv/bin/python bench/load/load_slack.py [--questions 200] [--users 50] [--seconds 10] [--rounds 2]

Mentions are matched to replies by ``thread_ts`` (the answer, or the ephemeral notice, is posted
in the question's thread); slash commands by their response URL. Latency runs from the moment
the request is sent to the moment the final reply reaches the fake.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from anywhere

from bench.load.load_common import (  # noqa: E402
    Delivery,
    LoadReport,
    Question,
    classify,
    fire,
    load_main,
    plan,
    report,
    rss_mb,
    settle,
    wait_until,
)
from bot.platforms.slack.app import SlackAdapter  # noqa: E402
from bot.service import Service  # noqa: E402
from bot.settings import Settings  # noqa: E402
from tests.fakes.slack_fake import BOT_USER, FakeSlack  # noqa: E402

SECRET = "load-signing-secret"


@contextmanager
def served(service: Service) -> Iterator[tuple[FakeSlack, str]]:
    """The fake Slack and the bolt app's events URL on 127.0.0.1."""
    fake = FakeSlack()
    settings = Settings(
        data_dir=Path("unused"),
        seeds_dir=Path("unused"),
        slack_bot_token="xoxb-load-token",
        slack_signing_secret=SECRET,
        slack_mode="http",
        slack_api_url=fake.api_url,
    )
    adapter = SlackAdapter(service, settings)
    server = adapter.start_http("127.0.0.1", 0)
    try:
        yield fake, f"http://127.0.0.1:{server.server_port}/slack/events"
    finally:
        server.shutdown()
        server.server_close()
        adapter.close()
        fake.close()


def signed_post(url: str, body: str, content_type: str) -> int:
    ts = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    headers = {"Content-Type": content_type, "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}
    request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


def thread_ts(question: Question, tag: str) -> str:
    return f"1800000{tag}.{question.index:06d}"


def send(url: str, fake: FakeSlack, question: Question, tag: str) -> None:
    # Users and channels are new each round, so a round's buckets start full like the first's.
    user, channel = f"U{tag}L{question.user:03d}", f"C{tag}L{question.channel:02d}"
    if question.slash:
        form = {
            "token": "legacy", "team_id": "T0001", "channel_id": channel, "user_id": user, "command": "/ask",
            "text": question.text, "response_url": fake.response_url(f"q{tag}-{question.index}"),
            "trigger_id": f"trig{question.index}",
        }  # fmt: skip
        status = signed_post(url, urlencode(form), "application/x-www-form-urlencoded")
    else:
        ts = thread_ts(question, tag)
        event = {
            "type": "app_mention", "user": user, "text": f"<@{BOT_USER}> {question.text}", "ts": ts,
            "channel": channel, "event_ts": ts,
        }  # fmt: skip
        body = {
            "token": "legacy", "team_id": "T0001", "api_app_id": "A0001", "type": "event_callback",
            "event_id": f"Ev{tag}{question.index:05d}", "event_time": int(time.time()), "event": event,
        }  # fmt: skip
        status = signed_post(url, json.dumps(body), "application/json")
    if status != 200:
        raise RuntimeError(f"the bolt app answered HTTP {status} to question {question.index}")


def deliveries(fake: FakeSlack, questions: list[Question], tag: str) -> dict[int, Delivery]:
    """Every message that reached the fake for each question, classified."""
    by_thread = {thread_ts(q, tag): q.index for q in questions if not q.slash}
    by_response = {f"response:q{tag}-{q.index}": q.index for q in questions if q.slash}
    found: dict[int, Delivery] = {}
    for call in list(fake.calls):
        if call.status != 200:
            continue
        if call.method in {"chat.postMessage", "chat.postEphemeral"}:
            index = by_thread.get(str(call.params.get("thread_ts", "")))
        else:
            index = by_response.get(call.method)
        if index is not None:
            found.setdefault(index, Delivery()).messages.append((classify(str(call.params.get("text", ""))), call.at))
    return found


def run_round(
    service: Service, questions: int, users: int, seconds: float, tag: str = "0", timeout: float = 180.0
) -> LoadReport:
    """One load round on a fresh fake and adapter; ``tag`` keeps users and ids apart between rounds."""
    asked = plan(questions, users, seconds, channels=10)
    rss_before = rss_mb()
    with served(service) as (fake, url):
        sent = fire(asked, lambda q: send(url, fake, q, tag))
        wait_until(
            lambda: len([d for d in deliveries(fake, asked, tag).values() if d.finals]) == len(asked),
            timeout,
            "a final reply to every question",
        )
        settle(service)
        found = deliveries(fake, asked, tag)
        retried = len([c for c in fake.calls if c.status != 200])
    return report("Slack (HTTP)", asked, users, seconds, sent, found, rss_before, {"platform errors seen": retried})


def main() -> None:
    load_main(__doc__.split("\n\n")[0], run_round)


if __name__ == "__main__":
    main()
