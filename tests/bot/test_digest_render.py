"""Digests rendered for Slack and Discord stay within each platform's limits, never cutting
inside a citation or a quote, and an empty digest says so in the channel's own time."""

from __future__ import annotations

import json
from typing import Literal

from bot.platforms.discord.render import render as render_discord
from bot.platforms.slack.render import render as render_slack
from bot.replies import DigestReply
from retrieval.models import AnswerSpan, Article, Citation, Digest, DigestStory


def big_digest(stories: int = 40, repeat: int = 40) -> Digest:
    citations: list[Citation] = []
    built = []
    for number in range(stories):
        article = Article(number + 1, f"k{number}", f"Story {number} headline", "The Courier", "", "2024-01-02", "", "")
        spans = []
        for line in range(3):
            n = len(citations) + 1
            citations.append(Citation(n, article.id, article.title, article.source, "", article.published, line + 1))
            kind: Literal["quote", "sentence"] = "quote" if line == 2 else "sentence"
            text = f"Sentence {line} of story {number} " + "with many words " * repeat + "end."
            spans.append(
                AnswerSpan(text, kind, "Ann Lee" if kind == "quote" else "", n, article.id, line + 1, 0, len(text))
            )
        built.append(DigestStory(article.title, [article], spans, spans[0].citation))
    return Digest(
        "#news", "2024-01-01T09:00:00Z", "2024-01-02T09:00:00Z", stories, built, citations, "since Mon 1 Jan, 09:00"
    )


def test_slack_digest_respects_block_and_section_limits() -> None:
    digest = big_digest()
    messages = render_slack(DigestReply(digest))
    assert len(messages) > 1
    everything = ""
    for message in messages:
        assert len(message.blocks) <= 50
        for block in message.blocks:
            text = block.get("text", {}).get("text", "") if isinstance(block.get("text"), dict) else ""
            assert len(text) <= 3000
            for element in block.get("elements", []):
                assert len(element.get("text", "")) <= 3000
        everything += json.dumps(message.blocks)
    for story in digest.stories:
        for span in story.spans:
            assert span.text in json.loads(json.dumps(everything)), "every line arrives whole"


def test_discord_digest_respects_embed_limits() -> None:
    # The largest digest the builder makes (12 stories, lines under 320 characters) fits in the
    # three messages a reply may use, every line whole; tests/hostile/test_hostile_render.py covers more.
    digest = big_digest(stories=12, repeat=17)
    messages = render_discord(DigestReply(digest))
    assert 1 < len(messages) <= 3
    descriptions = ""
    for message in messages:
        assert len(message.embeds) <= 10 and len(message.content) <= 2000
        assert sum(len(embed) for embed in message.embeds) <= 6000
        for embed in message.embeds:
            assert len(embed.description or "") <= 4096
            descriptions += (embed.description or "") + "\n"
    for story in digest.stories:
        for span in story.spans:
            assert span.text in descriptions


def test_empty_digest_says_nothing_new_in_the_channel_time() -> None:
    empty = Digest("#news", "2024-01-01T09:00:00Z", "2024-01-02T09:00:00Z", 0, [], [], "since Mon 1 Jan, 09:00")
    empty.text = "Nothing new since Mon 1 Jan, 09:00 — #news"
    slack_text = json.dumps([m.blocks for m in render_slack(DigestReply(empty))])
    assert "Nothing new since Mon 1 Jan, 09:00" in slack_text
    discord_text = " ".join(e.description or "" for m in render_discord(DigestReply(empty)) for e in m.embeds)
    assert "Nothing new since Mon 1 Jan, 09:00" in discord_text and "T09:00" not in discord_text
