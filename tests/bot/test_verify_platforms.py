"""``/verify`` through the real adapters: the bolt app receiving signed requests against the fake
Slack, discord.py against the fake Discord, and the terminal chat; verdicts rendered per platform,
article and user text inert, within each platform's limits (issue 35, part 1)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.commands.verify import parse_verify
from bot.platforms.discord.render import DESCRIPTION_LIMIT, MESSAGE_EMBED_LIMIT, message_size
from bot.platforms.discord.render import render as discord_render
from bot.platforms.slack.render import BLOCK_LIMIT, SECTION_LIMIT
from bot.platforms.slack.render import render as slack_render
from bot.platforms.terminal.chat import chat
from bot.replies import TextReply, VerifyReply
from bot.service import Asker, Service
from retrieval.index.embedder import Embedder
from tests.fakes.discord_fake import running_fake
from tests.library_copies import ingested_data_dir, service_on_copy
from tests.platform_helpers import Bolt, checked_bolt
from tests.verify_fixtures import write_articles

ALTERED = "Mourinho: \u201cThe referee decided the match with that penalty\u201d"
MARKUP_QUOTE = "Tell <!channel> and *everyone* that @everyone pays more [click](https://evil.example) under this Budget"


@pytest.fixture(scope="module")
def platform_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    root = tmp_path_factory.mktemp("verify-platforms")
    return ingested_data_dir(root, embedder, write_articles)


@pytest.fixture
def verify_service(platform_data_dir: Path, tmp_path: Path, embedder: Embedder) -> Iterator[Service]:
    service = service_on_copy(platform_data_dir, tmp_path, embedder)
    yield service
    service.close()


def test_verify_arguments_take_the_speaker_before_or_after_the_quote() -> None:
    assert parse_verify('"We were robbed" speaker:Jose Mourinho') == ('"We were robbed"', "Jose Mourinho")
    assert parse_verify('speaker:Jose Mourinho "We were robbed"') == ('"We were robbed"', "Jose Mourinho")
    assert parse_verify("Mourinho: 'We were robbed'") == ("Mourinho: 'We were robbed'", "")


def test_service_verify_command(verify_service: Service) -> None:
    asker = Asker("terminal", "u1", "c1")
    reply = verify_service.run_command(f"/verify {ALTERED}", asker)
    assert isinstance(reply, VerifyReply) and reply.check.verdict == "altered"
    usage = verify_service.run_command("/verify", asker)
    assert isinstance(usage, TextReply) and usage.error and "Give the quote" in usage.text
    speaker_only = verify_service.run_command("/verify speaker:Mourinho", asker)
    assert isinstance(speaker_only, TextReply) and "as well as the speaker" in speaker_only.text
    assert "/verify" in verify_service.help().text


# -- Slack ---------------------------------------------------------------------------------


@pytest.fixture
def slack_bolt(verify_service: Service, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[Bolt]:
    with checked_bolt(verify_service, tmp_path, caplog) as served:
        yield served


def _text(response: dict[str, Any]) -> str:
    return json.dumps(response, ensure_ascii=False)


def test_slack_byline_verify_renders_each_verdict(slack_bolt: Bolt) -> None:
    altered = slack_bolt.response(slack_bolt.command("/byline", f"verify {ALTERED}"))
    text = _text(altered)
    assert "Altered — 1 word differs from what Jose Mourinho said" in text
    assert "The referee decided the *game* with that penalty" in text  # the real word, in bold
    assert "“match” — the article says “game”" in text
    assert "Mourinho fumes at referee after derby defeat" in text and "news.example.org/sport/derby" in text

    wrong = slack_bolt.response(
        slack_bolt.command("/byline", "verify \u201cgot the big calls right\u201d speaker:Jose Mourinho")
    )
    assert "Said by someone else" in _text(wrong) and "Pep Guardiola, not Jose Mourinho" in _text(wrong)

    missing = _text(slack_bolt.response(slack_bolt.command("/byline", "verify We were robbed by a blind referee")))
    assert "Not found — no quote like it in 2 articles" in missing

    usage = slack_bolt.response(slack_bolt.command("/byline", "verify"))
    assert usage["response_type"] == "ephemeral" and "Give the quote" in usage["text"]


def test_slack_verify_never_pings_or_formats_article_or_user_text(slack_bolt: Bolt) -> None:
    response = slack_bolt.response(slack_bolt.command("/byline", f"verify Sara Quinn: '{MARKUP_QUOTE}'"))
    text = _text(response)
    assert "Verbatim — said by Sara Quinn" in text
    assert "<!channel>" not in text and "&lt;!channel&gt;" in text
    assert "*everyone*" not in text  # mrkdwn characters swapped for look-alikes
    assert "<https://evil.example" not in text
    asked = slack_bolt.response(slack_bolt.command("/byline", "verify <!here> *bold* pays more speaker:<@U999>"))
    shown = _text(asked)
    assert "<!here>" not in shown and "<@U999>" not in shown


# -- Discord -------------------------------------------------------------------------------


def test_discord_verify_slash_command(verify_service: Service) -> None:
    from tests.bot.test_discord import assert_no_pings, followups, start_bot, text_of

    with running_fake() as fake:
        bot = start_bot(fake, verify_service)
        try:
            altered = fake.command(
                "verify",
                [
                    {"name": "quote", "type": 3, "value": "The referee decided the match with that penalty"},
                    {"name": "speaker", "type": 3, "value": "Mourinho"},
                ],
            )
            fake.dispatch("INTERACTION_CREATE", altered)
            body = followups(fake, altered)[0]
            shown = text_of(body)
            assert "Altered — 1 word differs from what Jose Mourinho said" in body["embeds"][0]["title"]
            assert "The referee decided the **game** with that penalty" in shown
            assert "[Mourinho fumes at referee after derby defeat](https://news.example.org/sport/derby)" in shown

            markup = fake.command(
                "verify",
                [{"name": "quote", "type": 3, "value": MARKUP_QUOTE}, {"name": "private", "type": 5, "value": True}],
            )
            fake.dispatch("INTERACTION_CREATE", markup)
            body = followups(fake, markup)[0]
            shown = text_of(body)
            assert body["flags"] & 64  # only the asker sees it
            assert "Verbatim — said by Sara Quinn" in shown
            assert "\\*everyone\\*" in shown and "\\[click\\]" in shown and "@\u200beveryone" in shown
            assert_no_pings(fake)
        finally:
            bot.close()


# -- the terminal --------------------------------------------------------------------------


def test_terminal_chat_verifies(verify_service: Service) -> None:
    typed = io.StringIO(f"/verify {ALTERED}\n/verify We will come back stronger next season speaker:Guardiola\n")
    out = io.StringIO()
    chat(verify_service, typed, out, warm=False)
    shown = out.getvalue()
    assert "Altered — 1 word differs from what Jose Mourinho said" in shown
    assert "decided the [game] with" in shown
    assert "said by Jose Mourinho, not Guardiola" in shown


# -- limits --------------------------------------------------------------------------------


def test_long_verdicts_stay_within_platform_limits(verify_service: Service) -> None:
    """A long pasted quote with many differences, and a not-found with its closest quotes."""
    asker = Asker("slack", "u1", "c1")
    long_quote = " ".join(["The referee decided the match with that penalty"] * 40)
    for line in (f"/verify {long_quote}", "/verify " + "and everybody in the stadium " * 60):
        reply = verify_service.run_command(line, asker)
        assert isinstance(reply, VerifyReply)
        for message in slack_render(reply):
            assert len(message.blocks) <= BLOCK_LIMIT
            for block in message.blocks:
                if block["type"] == "section":
                    assert len(block["text"]["text"]) <= SECTION_LIMIT
        for sent in discord_render(reply):
            assert message_size(sent) <= MESSAGE_EMBED_LIMIT
            assert all(len(embed.description or "") <= DESCRIPTION_LIMIT for embed in sent.embeds)
