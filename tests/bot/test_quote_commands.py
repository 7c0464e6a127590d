"""``/quotes``, ``/reactions`` and ``/alerts`` through the real adapters: the bolt app receiving
signed requests against the fake Slack, discord.py against the fake Discord, and the terminal
chat (issue 35)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.commands.quotes import QuoteCommands, QuoteQuery, parse_pairs
from bot.platforms.terminal.chat import chat
from bot.service import Service
from retrieval.index.embedder import Embedder
from tests.fakes.discord_fake import DiscordFake, running_fake
from tests.library_copies import ingested_data_dir, service_on_copy
from tests.platform_helpers import Bolt, checked_bolt
from tests.quote_fixtures import write_articles


@pytest.fixture(scope="module")
def commands_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    root = tmp_path_factory.mktemp("quote-commands")
    return ingested_data_dir(root, embedder, write_articles)


@pytest.fixture
def quote_service(commands_data_dir: Path, tmp_path: Path, embedder: Embedder) -> Iterator[Service]:
    service = service_on_copy(commands_data_dir, tmp_path, embedder)
    yield service
    service.close()


def quote_commands(service: Service) -> QuoteCommands:
    run = service.commands["quotes"].run
    owner = getattr(run, "__self__", None)
    assert isinstance(owner, QuoteCommands)
    return owner


def test_arguments_are_key_value_pairs_whose_values_hold_spaces() -> None:
    assert parse_pairs("speaker:Mark Oaten topic:terror suspects page:2") == {
        "speaker": "Mark Oaten",
        "topic": "terror suspects",
        "page": "2",
    }
    assert parse_pairs("Mourinho about:referees") == {"speaker": "Mourinho", "topic": "referees"}


@pytest.fixture
def slack_bolt(quote_service: Service, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[Bolt]:
    with checked_bolt(quote_service, tmp_path, caplog) as served:
        yield served


def _text(response: dict[str, Any]) -> str:
    return json.dumps(response, ensure_ascii=False)


def test_slack_quotes_reactions_and_alerts(slack_bolt: Bolt) -> None:
    quotes = slack_bolt.response(slack_bolt.command("/byline", "quotes speaker:Mourinho topic:referees"))
    text = _text(quotes)
    assert "Jose Mourinho on “referees”: 4 quotes" in text
    assert "The referee decided the game with that penalty" in text and "striker" not in text.lower()
    assert "Mourinho fumes at referee after derby defeat" in text  # cited, with its article

    bad = slack_bolt.response(slack_bolt.command("/byline", "quotes topic:referees"))
    assert bad["response_type"] == "ephemeral" and "Name the person" in bad["text"]

    roundup = _text(slack_bolt.response(slack_bolt.command("/byline", "reactions topic:the Budget")))
    assert "Reactions to “the Budget”" in roundup and "Tom Hale" in roundup and "Organisations" in roundup

    refused = slack_bolt.response(slack_bolt.command("/byline", "alerts add speaker:Mourinho", user="U1"))
    assert refused["response_type"] == "ephemeral" and "admins can" in refused["text"]
    added = slack_bolt.response(
        slack_bolt.command("/byline", "alerts add speaker:Mourinho topic:referees", user="UADMIN")
    )
    assert "Alert 1 added" in added["text"] and "Jose Mourinho" in added["text"]
    shown = slack_bolt.response(slack_bolt.command("/byline", "alerts show", user="U1"))
    assert "1. Mourinho on “referees”" in shown["text"]
    other_channel = slack_bolt.response(slack_bolt.command("/byline", "alerts show", channel="C2"))
    assert "no quote alerts" in other_channel["text"]
    removed = slack_bolt.response(slack_bolt.command("/byline", "alerts remove 1", user="UADMIN"))
    assert "Alert 1 removed" in removed["text"]
    stored = slack_bolt.adapter.service.state
    from bot.state.alerts import AlertStore

    assert AlertStore(stored).of_tenant("slack:T0001") == []


def test_slack_what_has_someone_said_about_a_topic_is_their_timeline(slack_bolt: Bolt) -> None:
    asked = _text(slack_bolt.response(slack_bolt.command("/byline", "ask What has Mourinho said about referees?")))
    assert "Jose Mourinho on “referees”: 4 quotes" in asked
    assert "The referee decided the game with that penalty" in asked and "striker" not in asked.lower()
    assert "/byline quotes speaker:Mourinho topic:referees" not in asked  # one page: no "next:"


def test_slack_article_text_never_pings(quote_service: Service, slack_bolt: Bolt, tmp_path: Path) -> None:
    article = tmp_path / "ping.md"
    article.write_text(
        "---\ntitle: Ping test\npublished: 2024-06-01\n---\nJose Mourinho spoke to reporters after training.\n\n"
        "\u201cTell <!channel> and *everyone* the referees <@U123> are a scandal,\u201d Mourinho said.\n",
        encoding="utf-8",
    )
    quote_service.library.ingest([article])
    response = slack_bolt.response(slack_bolt.command("/byline", "quotes speaker:Mourinho topic:referees"))
    text = _text(response)
    assert "<!channel>" not in text and "<@U123>" not in text and "&lt;!channel&gt;" in text


def test_discord_quotes_pages_reactions_and_alerts(quote_service: Service) -> None:
    from tests.bot.test_discord import assert_no_pings, callback, followups, start_bot, text_of

    quote_commands(quote_service).page_size = 3
    fake: DiscordFake
    with running_fake() as fake:
        bot = start_bot(fake, quote_service)
        try:
            first = fake.command("quotes", [{"name": "speaker", "type": 3, "value": "Mourinho"}])
            fake.dispatch("INTERACTION_CREATE", first)
            page_one = text_of(followups(fake, first)[0])
            assert "Jose Mourinho: 7 quotes" in page_one and "page 1 of 3" in page_one
            assert "next: /quotes speaker:Mourinho page:2" in page_one

            second = fake.command(
                "quotes",
                [{"name": "speaker", "type": 3, "value": "Mourinho"}, {"name": "page", "type": 4, "value": 3}],
            )
            fake.dispatch("INTERACTION_CREATE", second)
            page_three = text_of(followups(fake, second)[0])
            assert "page 3 of 3" in page_three and "next:" not in page_three
            assert "The referee decided" not in page_three  # page 3 holds the oldest quote only
            assert "I have never seen a decision like that" in page_three

            roundup = fake.command("reactions", [{"name": "topic", "type": 3, "value": "the Budget"}])
            fake.dispatch("INTERACTION_CREATE", roundup)
            assert "Tom Hale" in text_of(followups(fake, roundup)[0])

            add = [
                {
                    "name": "add",
                    "type": 1,
                    "options": [
                        {"name": "speaker", "type": 3, "value": "Mourinho"},
                        {"name": "topic", "type": 3, "value": "referees"},
                    ],
                }
            ]
            denied = fake.command("alerts", add)
            fake.dispatch("INTERACTION_CREATE", denied)
            assert "admins can" in text_of(followups(fake, denied)[0])
            allowed = fake.command("alerts", add, permissions=1 << 4)  # Manage Channels
            fake.dispatch("INTERACTION_CREATE", allowed)
            assert "Alert 1 added" in text_of(followups(fake, allowed)[0])
            show = fake.command("alerts", [{"name": "show", "type": 1, "options": []}])
            fake.dispatch("INTERACTION_CREATE", show)
            body = callback(fake, show)["data"]
            assert body["flags"] & 64 and "1. Mourinho on “referees”" in body["content"]
            remove = [{"name": "remove", "type": 1, "options": [{"name": "alert", "type": 4, "value": 1}]}]
            gone = fake.command("alerts", remove, permissions=1 << 4)
            fake.dispatch("INTERACTION_CREATE", gone)
            assert "Alert 1 removed" in callback(fake, gone)["data"]["content"]
            assert_no_pings(fake)
        finally:
            bot.close()


def test_timeline_questions_in_chat_and_what_stays_a_question(quote_service: Service) -> None:
    typed = io.StringIO(
        "What has Mourinho said about referees?\n"
        "everything Tom Hale has said on the Budget\n"
        "What did Mourinho say about the referee?\n"
        "What has Mourinho said about the price of fish?\n"
        "What has he said about referees?\n"
    )
    out = io.StringIO()
    chat(quote_service, typed, out, warm=False)
    shown = out.getvalue()
    assert "Jose Mourinho on “referees”: 4 quotes" in shown
    assert "Tom Hale on “the Budget”: 4 quotes" in shown
    # "What did … say" is answered as a question (one cited quote), not as the timeline; a topic
    # with nothing on it and a pronoun go to the question path too, which says what it found.
    assert shown.count("quotes in") == 2 and shown.count(": 4 quotes") == 2
    assert "The referee decided the game with that penalty" in shown.split("Tom Hale on")[1]


def test_timeline_question_forms() -> None:
    from bot.commands.quotes import timeline_question

    assert timeline_question("What has Mourinho said about referees?") == QuoteQuery("Mourinho", "referees")
    assert timeline_question("what's Jose Mourinho ever said on the referee") == QuoteQuery(
        "Jose Mourinho", "the referee"
    )
    assert timeline_question("Show me everything that Hewitt has said about maternity pay.") == QuoteQuery(
        "Hewitt", "maternity pay"
    )
    for question in (
        "What did Mourinho say about referees?",
        "What has he said about referees?",
        "What has happened to the referee?",
        "Who has said anything about referees?",
    ):
        assert timeline_question(question) is None, question


def test_terminal_chat_runs_the_commands(quote_service: Service) -> None:
    typed = io.StringIO("/quotes speaker:Tom Hale topic:the Budget\n/reactions the Budget\n/alerts add speaker:X\n")
    out = io.StringIO()
    chat(quote_service, typed, out, warm=False)
    shown = out.getvalue()
    assert "Tom Hale on “the Budget”: 4 quotes" in shown
    assert "Reactions to “the Budget”" in shown
    assert "byline alerts add --channel" in shown
