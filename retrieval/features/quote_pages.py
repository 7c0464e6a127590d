"""A speaker timeline as the platforms show it: one page at a time, as a ``Digest`` (stories of
cited quotes, rendered by every adapter's digest renderer), and as rows for ``--json`` and
``--format csv``.

Citations are numbered once per page here, in the core: one number per cited paragraph, as in
answers and digests. A page holds ``PAGE_SIZE`` quotes; a story cut by a page boundary goes on
on the next page under its headline again.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from retrieval.citations import CitationNumbers
from retrieval.features.digest import render_digest
from retrieval.features.quote_timeline import Timeline, TimelineQuote, article_date
from retrieval.models import AnswerSpan, Digest, DigestStory
from retrieval.render import field_text, format_date, lookalike

PAGE_SIZE = 8


def quote_span(item: TimelineQuote, numbers: CitationNumbers) -> AnswerSpan:
    """A timeline quote as an answer span: its verbatim words, speaker, offsets and citation."""
    quote = item.quote
    return AnswerSpan(
        text=quote.text,
        kind="quote",
        speaker=quote.speaker,
        citation=numbers.number(item.article, quote.paragraph),
        article_id=quote.article_id,
        paragraph=quote.paragraph,
        start=quote.start,
        end=quote.end,
        score=item.topic.score if item.topic is not None else 0.0,
    )


def user_words(text: str, limit: int = 80) -> str:
    """Words a user typed, as a header shows them: on one line, short, with no formatting
    characters any platform would act on (they become look-alikes)."""
    return lookalike(field_text(" ".join(text.split()), limit))


def page_count(timeline: Timeline, size: int = PAGE_SIZE) -> int:
    return max(1, math.ceil(len(timeline.quotes) / size))


def who_phrase(timeline: Timeline) -> str:
    """ "Mark Oaten" (the person found), or what was asked when nobody was."""
    names = [s for s in timeline.speakers if " " in s] or timeline.speakers
    return user_words(names[0] if names else timeline.asked)


def timeline_page(timeline: Timeline, page: int = 1, size: int = PAGE_SIZE, command: str = "") -> Digest:
    """One page of the timeline as a digest; ``command`` is how to ask for the next page
    ("/quotes speaker:Oaten page:2"), shown in the header when there is one."""
    pages = page_count(timeline, size)
    page = min(max(1, page), pages)
    quotes = timeline.quotes
    shown = quotes[(page - 1) * size : page * size]
    numbers = CitationNumbers()
    stories: list[DigestStory] = []
    for story in timeline.stories:
        mine = [q for q in story.quotes if any(q is s for s in shown)]
        if not mine:
            continue
        spans = [quote_span(q, numbers) for q in mine]
        lead = mine[0].article
        headline = f"{lead.title} ({format_date(article_date(lead))})"
        stories.append(DigestStory(headline, list(story.articles), spans, spans[0].citation))
    who = who_phrase(timeline)
    about = f" on “{user_words(timeline.topic)}”" if timeline.topic else ""
    since = f" since {format_date(timeline.since)}" if timeline.since else ""
    count = len(quotes)
    if count:
        header = (
            f"{who}{about}{since}: {count} quote{'s' if count != 1 else ''} in {len(timeline.stories)} "
            f"stor{'ies' if len(timeline.stories) != 1 else 'y'}, newest first"
        )
        reprints = sum(len(q.reprinted_in) for q in quotes)
        if reprints:
            header += f" ({reprints} repeat{'s' if reprints != 1 else ''} in older articles shown once)"
        if pages > 1:
            header += f" — page {page} of {pages}" + (
                f"; next: {command} page:{page + 1}" if command and page < pages else ""
            )
    else:
        header = empty_message(timeline)
    if timeline.also_named:
        others = ", ".join(user_words(name) for name in timeline.also_named[:3])
        header = f"{header.rstrip('.')}. Also quoted by that name: {others} (ask by full name)"
    digest = Digest("", timeline.since, "", len({q.article.id for q in shown}), stories, numbers.citations, header)
    digest.text = render_digest(digest)
    return digest


def empty_message(timeline: Timeline) -> str:
    """Why the timeline is empty, in words a user can act on."""
    articles = f"{timeline.article_count} article{'s' if timeline.article_count != 1 else ''}"
    if not timeline.speakers:
        return f"Nobody called “{user_words(timeline.asked)}” is quoted in the {articles} Byline has."
    who = who_phrase(timeline)
    if not timeline.total_quotes:
        return f"{who} is named but never quoted in the {articles} Byline has."
    about = f" on “{user_words(timeline.topic)}”" if timeline.topic else ""
    since = f" since {format_date(timeline.since)}" if timeline.since else ""
    return (
        f"None of {who}'s {timeline.total_quotes} quote{'s' if timeline.total_quotes != 1 else ''} is{about}{since}. "
        "Try other words for the topic, or leave it out to see everything they said."
    )


@dataclass(frozen=True)
class QuoteRow:
    """One quote as a spreadsheet row or a JSON object."""

    date: str
    speaker: str
    quote: str
    title: str
    source: str
    url: str
    paragraph: int
    article_id: int
    start: int
    end: int
    story: int
    topic_score: float | None
    # Other articles that print the same words (shown once, in the newest).
    reprinted_in: int = 0


def timeline_rows(timeline: Timeline) -> list[QuoteRow]:
    """Every quote of the timeline in order; ``story`` numbers the story groups from 1."""
    rows = []
    for number, story in enumerate(timeline.stories, start=1):
        for item in story.quotes:
            article, quote = item.article, item.quote
            rows.append(
                QuoteRow(
                    article_date(article),
                    quote.speaker,
                    quote.text,
                    article.title,
                    article.source,
                    article.url,
                    quote.paragraph,
                    article.id,
                    quote.start,
                    quote.end,
                    number,
                    round(item.topic.score, 4) if item.topic is not None else None,
                    len(item.reprinted_in),
                )
            )
    return rows


def timeline_json(timeline: Timeline) -> dict[str, Any]:
    """The JSON of ``byline quotes --json``: who was matched, and every quote with its citation."""
    return {
        "asked": timeline.asked,
        "speakers": timeline.speakers,
        "topic": timeline.topic,
        "since": timeline.since,
        "total_quotes_of_speaker": timeline.total_quotes,
        "article_count": timeline.article_count,
        "stories": len(timeline.stories),
        "also_named": timeline.also_named,
        "quotes": [asdict(row) for row in timeline_rows(timeline)],
        "message": "" if timeline.quotes else empty_message(timeline),
    }
