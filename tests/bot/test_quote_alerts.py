"""Quote alerts (issue 35, part 4): a subscribed person's new quote is posted through the real
Slack poster to the fake Slack once, whatever happens after: another pass, a restart (a new store
and job on the same data directory), a second worker, the article removed and ingested again,
a copy of it from another outlet. Rate-limited per channel; every read filtered by tenant; the
sent log's keys hold on PostgreSQL too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from slack_sdk import WebClient

from bot.jobs.alerts import AlertJob
from bot.platforms.slack.app import SlackPoster
from bot.state.alerts import AlertStore, QuoteAlert, SentQuote
from bot.state.store import BotState, state_location
from retrieval.backend import Backend
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from tests.fakes.slack_fake import FakeSlack
from tests.library_copies import copied_data_dir, ingested_data_dir
from tests.quote_fixtures import LATE_ARTICLE, LATE_STRIKER, write_article, write_articles

TENANT = "slack:T0001"
CHANNEL = "C0ALERTS"


@pytest.fixture(scope="module")
def alerts_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    root = tmp_path_factory.mktemp("alerts")
    return ingested_data_dir(root, embedder, write_articles)


@pytest.fixture
def data_dir(alerts_data_dir: Path, tmp_path: Path) -> Path:
    return copied_data_dir(alerts_data_dir, tmp_path)


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    from tests.platform_helpers import running_slack

    with running_slack() as running:
        yield running


class Worker:
    """What one ``byline serve`` process holds for alerts: its library, state and job."""

    def __init__(self, data_dir: Path, embedder: Embedder, fake: FakeSlack, per_hour: int = 10) -> None:
        self.library = Library.open(data_dir, embedder)
        self.state = BotState(state_location(data_dir, Backend()))
        self.store = AlertStore(self.state)
        poster = SlackPoster(WebClient(token="xoxb-test", base_url=fake.api_url))
        self.clock_offset = timedelta()
        self.job = AlertJob(
            self.library, self.store, {"slack": poster}, clock=lambda: datetime.now(UTC) + self.clock_offset,
            per_hour=per_hour,
        )  # fmt: skip

    def close(self) -> None:
        self.state.close()
        self.library.close()


def posted(fake: FakeSlack) -> list[str]:
    return [json.dumps(call.params, ensure_ascii=False) for call in fake.calls_to("chat.postMessage")]


def subscribe(worker: Worker, topic: str = "referees") -> QuoteAlert:
    alert = worker.store.add(TENANT, "slack", CHANNEL, "Mourinho", topic, "slack:UADMIN")
    assert alert is not None
    return alert


def late_article(directory: Path, name: str = LATE_ARTICLE[0], title: str = LATE_ARTICLE[2]) -> Path:
    _, published, _, paragraphs = LATE_ARTICLE
    directory.mkdir(parents=True, exist_ok=True)
    return write_article(directory, name, published, title, paragraphs)


def test_a_new_quote_is_posted_once_across_passes_restarts_workers_and_reingest(
    data_dir: Path, tmp_path: Path, embedder: Embedder, fake: FakeSlack
) -> None:
    worker = Worker(data_dir, embedder, fake)
    subscribe(worker)
    assert worker.job.run_due() == []  # the articles stored before the subscription are not news
    path = late_article(tmp_path / "incoming")
    striker = write_article(tmp_path / "incoming", *LATE_STRIKER)
    worker.library.ingest([path, striker])
    outcomes = worker.job.run_due()
    assert [(o.channel_id, o.status, o.article_count) for o in outcomes] == [(CHANNEL, "sent", 1)]
    sent = posted(fake)
    assert len(sent) == 1
    assert "Every week the referees decide our matches" in sent[0] and "striker" not in sent[0]
    assert "Mourinho renews attack on referees after cup exit" in sent[0]  # the citation
    assert worker.job.run_due() == [] and len(posted(fake)) == 1

    # A second worker (or a new leader) on the same store finds it claimed.
    second = Worker(data_dir, embedder, fake)
    assert second.job.run_due() == [] and len(posted(fake)) == 1
    second.close()

    # A restart: a new process's store and job over the same data directory.
    worker.close()
    worker = Worker(data_dir, embedder, fake)
    assert worker.job.run_due() == [] and len(posted(fake)) == 1

    # The same article removed and ingested again (a new id, added after the subscription).
    old_id = worker.library.store.find_by_key(str(path.resolve()))
    assert old_id is not None
    worker.library.remove_articles([old_id[0]])
    worker.library.ingest([path])
    assert worker.library.store.find_by_key(str(path.resolve())) != old_id
    assert worker.job.run_due() == [] and len(posted(fake)) == 1

    # Another outlet's copy of the story, under another title: the same words are not news.
    copy = late_article(tmp_path / "other-outlet", "copy.md", "Cup exit: Mourinho blames officials again")
    worker.library.ingest([copy])
    assert worker.job.run_due() == [] and len(posted(fake)) == 1

    # Something new he says on the topic is.
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    worker.library.ingest(
        [
            write_article(
                fresh,
                "fresh.md",
                "2024-06-09",
                "Mourinho calls for referees to speak after matches",
                [
                    "Jose Mourinho called for referees to explain themselves after every match.",
                    "\u201cReferees should stand in front of the cameras after the game, just as managers do,\u201d "
                    "Mourinho said.",
                ],
            )
        ]
    )
    assert [o.status for o in worker.job.run_due()] == ["sent"]
    assert len(posted(fake)) == 2 and "stand in front of the cameras" in posted(fake)[1]
    worker.close()


def test_alerts_are_rate_limited_per_channel_and_the_rest_wait(
    data_dir: Path, tmp_path: Path, embedder: Embedder, fake: FakeSlack
) -> None:
    worker = Worker(data_dir, embedder, fake, per_hour=1)
    subscribe(worker, topic="")  # every quote: the two late articles have one each
    worker.library.ingest([late_article(tmp_path / "incoming"), write_article(tmp_path / "incoming", *LATE_STRIKER)])
    assert [o.article_count for o in worker.job.run_due()] == [1]
    assert worker.job.run_due() == [] and len(posted(fake)) == 1  # the hour is full
    worker.clock_offset = timedelta(minutes=61)
    assert [o.article_count for o in worker.job.run_due()] == [1]
    assert len(posted(fake)) == 2
    assert "Every week the referees" in posted(fake)[0] and "Our new striker" in posted(fake)[1]
    worker.close()


def test_every_read_is_by_tenant(data_dir: Path, embedder: Embedder, fake: FakeSlack) -> None:
    worker = Worker(data_dir, embedder, fake)
    mine = subscribe(worker)
    assert worker.store.of_channel("slack:T0002", "slack", CHANNEL) == []
    assert worker.store.of_tenant("slack:T0002") == []
    assert not worker.store.remove("slack:T0002", mine.id)
    assert worker.store.of_channel(TENANT, "slack", CHANNEL) == [mine]
    assert worker.store.add(TENANT, "slack", CHANNEL, "Mourinho", "referees", "slack:U2") is None  # no duplicate
    assert worker.store.remove(TENANT, mine.id, "slack", CHANNEL)
    worker.close()


@pytest.mark.parametrize("where", ["sqlite", "postgresql"])
def test_the_sent_log_keys_hold_on_both_databases(where: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    location = tmp_path / "state.sqlite3" if where == "sqlite" else request.getfixturevalue("postgres_url")
    state = BotState(location)
    try:
        store = AlertStore(state)
        alert = store.add(TENANT, "slack", CHANNEL, "Mourinho", "", "cli")
        assert alert is not None
        quote = SentQuote(7, "hash-a", 10, 40, "Every week the referees decide our matches")
        assert store.claim(alert, quote) and not store.claim(alert, quote)
        moved = SentQuote(9, "hash-b", 12, 42, "Every week the  Referees decide our matches")  # another copy
        assert store.already_sent(alert, moved) and not store.claim(alert, moved)
        store.finish(alert, quote, "sent")
        assert store.history(TENANT, alert.id) == {"sent": 1} and store.history("slack:T0002", alert.id) == {}
        assert store.sent_since("slack", CHANNEL, "2000-01-01") == 1
    finally:
        state.close()


def test_an_alert_reaches_discord_through_the_real_client_without_pinging(
    data_dir: Path, tmp_path: Path, embedder: Embedder
) -> None:
    from bot.app import add_features
    from bot.limits import LimitSettings
    from bot.service import Service
    from tests.bot.test_discord import bot_posts, start_bot
    from tests.fakes.discord_fake import CHANNEL_ID, GUILD_ID, running_fake

    library = Library.open(data_dir, embedder)
    service = add_features(Service(library, BotState(state_location(data_dir, Backend())), LimitSettings()))
    with running_fake() as fake:
        bot = start_bot(fake, service)
        try:
            store = AlertStore(service.state)
            assert store.add(f"discord:{GUILD_ID}", "discord", str(CHANNEL_ID), "Mourinho", "", "discord:1") is not None
            (tmp_path / "incoming").mkdir()
            article = write_article(
                tmp_path / "incoming",
                "everyone.md",
                "2024-06-04",
                "Mourinho's message to the fans",
                [
                    "Jose Mourinho sent a message to supporters before the final.",
                    "\u201cTell @everyone at the club that **we** will win this for them,\u201d Mourinho said.",
                ],
            )
            library.ingest([article])
            start = fake.mark()
            scheduler = service.scheduler
            assert scheduler is not None and "discord" in scheduler.posters
            outcomes = scheduler.run_due()  # the alerts job runs in the digest scheduler's pass
            assert [(o.platform, o.status) for o in outcomes] == [("discord", "sent")]
            posts = bot_posts(fake, start)
            assert len(posts) == 1 and posts[0]["allowed_mentions"]["parse"] == []
            body = json.dumps(posts[0], ensure_ascii=False)
            assert "New quote from Mourinho (alert 1)" in body and "@\u200beveryone" in body and "\\\\*\\\\*we" in body
            assert scheduler.run_due() == [] and len(bot_posts(fake, start)) == 1
        finally:
            bot.close()
            service.close()
