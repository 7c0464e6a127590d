"""Hostile input: whatever the question or the file, Byline answers or refuses clearly, never crashes."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.platforms.terminal.chat import render
from bot.replies import AnswerReply, TextReply
from bot.service import Asker, Service
from retrieval.library import Library
from retrieval.reading.loader import decode_text

ASKER = Asker("test", "U1", "C1")
NASTY = st.sampled_from(
    [
        "\u202e",
        "\u200b",
        "\u200f",
        "\ufeff",
        "\x00",
        "\x1b[31m",
        "\r",
        "@everyone",
        "<!channel>",
        "<@U123>",
        "\ud7ff",
        "𝕏",
        "שלום",
        "مرحبا",
    ]
)
QUESTIONS = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(NASTY, st.text(max_size=20)), max_size=30).map("".join),
    st.text(alphabet="a ", min_size=1900, max_size=2100),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(question=QUESTIONS)
def test_any_question_gets_an_answer_or_a_clear_message(seed_service: Service, question: str) -> None:
    reply = seed_service.ask(question, ASKER)
    assert isinstance(reply, AnswerReply | TextReply)
    text = render(reply)
    assert text and "Traceback" not in text
    if isinstance(reply, AnswerReply):
        for span in reply.answer.spans:
            article = seed_service.library.store.article(span.article_id, with_text=True)
            assert article is not None and article.text[span.start : span.end] == span.text


@settings(max_examples=25, deadline=None)
@given(raw=st.binary(max_size=4000))
def test_any_bytes_decode_or_are_refused(raw: bytes) -> None:
    try:
        text = decode_text(raw, "upload.txt")
    except Exception as error:  # noqa: BLE001 - the assertion is on the type
        assert type(error).__name__ == "UnreadableArticle" and str(error).startswith("upload.txt: ")
    else:
        assert isinstance(text, str)


def test_hostile_files_never_crash_ingest(library: Library, tmp_path: Path) -> None:
    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "invalid-utf8.txt").write_bytes(b"Headline\n\nCaf\xe9 prices \xff\xfe rose.\n")
    (folder / "nested.html").write_text("<div>" * 20_000 + "deep text" + "</div>" * 20_000)
    (folder / "controls.txt").write_text(
        "Weird \u202eheadline\u200b\n\nText with \u200b zero-width and \u202e RTL marks, said Ann Lee.\n"
    )
    (folder / "one-line.md").write_text("Huge line\n\n" + "The quick brown fox jumps over the lazy dog " * 2_000)
    (folder / "megabyte.txt").write_text("Megabyte paragraph\n\n" + ("Lorem ipsum dolor sit amet. " * 40_000))
    report = library.ingest([folder])
    failed = dict(report.failed)
    assert "not UTF-8" in failed[str(folder / "invalid-utf8.txt")]
    assert {title for _, title in report.added} >= {"Huge line", "Weird \u202eheadline\u200b"}
    assert "the limit is 300,000" in failed[str(folder / "megabyte.txt")]
    counts = library.store.counts()
    assert library.dense.count() == counts["sentences"] and library.sparse.count() == counts["passages"]
    answer = library.ask("what does the quick brown fox jump over?")
    assert answer.answered and "lazy dog" in answer.spans[0].text
    assert len(answer.spans[0].text.split()) <= 150, "a run-on paragraph is quoted in model-sized pieces"


MENTIONY = st.lists(
    st.one_of(
        st.sampled_from(["<!channel>", "<!here>", "<!everyone>", "<@U123>", "<#C1>", "@everyone", "&", "<", ">"]),
        st.text(max_size=40),
    ),
    max_size=12,
).map("".join)


def _answer_with(text: str, title: str) -> AnswerReply:
    from retrieval.models import Answer, AnswerSpan, Citation

    spans = [
        AnswerSpan(text or "x", "quote", "Ann <!here> Lee", 1, 1, 3, 0, len(text or "x")),
        AnswerSpan(text[::-1] or "y", "sentence", "", 2, 1, 4, 0, 1),
    ]
    citations = [
        Citation(n, 1, title, "<!channel> News", "https://example.org/<@U1>", "2024-01-02", n + 2) for n in (1, 2)
    ]
    return AnswerReply(Answer("q <!channel>", True, spans, citations, text="plain"), "abc123")


@settings(max_examples=80, deadline=None)
@given(text=MENTIONY, title=MENTIONY)
def test_slack_rendering_never_produces_a_live_mention(text: str, title: str) -> None:
    import json
    import re

    from bot.platforms.slack.render import render as render_slack

    for message in render_slack(_answer_with(text, title)):
        payload = json.dumps([message.text, message.blocks])
        # The only "<" Byline itself emits opens a link to an http(s) URL.
        assert not re.search(r"<(?!https?://)", json.loads(json.dumps(payload))), payload


@settings(max_examples=80, deadline=None)
@given(text=MENTIONY, title=MENTIONY)
def test_discord_rendering_stays_within_limits(text: str, title: str) -> None:
    from bot.platforms.discord.render import render as render_discord

    for message in render_discord(_answer_with(text, title)):
        assert len(message.content) <= 2000 and len(message.embeds) <= 10
        assert sum(len(e) for e in message.embeds) <= 6000
        assert all(len(e.description or "") <= 4096 for e in message.embeds)
