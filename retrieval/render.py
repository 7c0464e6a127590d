"""Plain-text rendering of an ``Answer``: the terminal's, and the fallback text of every platform."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date

from .models import Answer, AnswerSpan, Citation

OPEN_QUOTE, CLOSE_QUOTE = "“", "”"


def format_date(published: str) -> str:
    """ "2017-12-11" -> "11 Dec 2017"; anything unparseable is shown as written."""
    try:
        parsed = date.fromisoformat(published[:10])
    except ValueError:
        return published
    return f"{parsed.day} {parsed.strftime('%b %Y')}"


def citation_line(citation: Citation) -> str:
    """ "[1] Headline — Outlet, 11 Dec 2017, ¶12"."""
    details = [part for part in (citation.source, format_date(citation.published)) if part]
    where = ", ".join([*details, f"¶{citation.paragraph}"])
    return f"[{citation.n}] {citation.title} — {where}"


def span_text(span: AnswerSpan) -> str:
    """A span as shown: quotes in quote marks (the words inside them are verbatim)."""
    if span.kind == "quote":
        return f"{OPEN_QUOTE}{span.text}{CLOSE_QUOTE} [{span.citation}]"
    return f"{span.text} [{span.citation}]"


def with_speaker_headings(spans: Iterable[AnswerSpan]) -> Iterator[tuple[str | None, AnswerSpan]]:
    """Each span with the speaker heading that goes before it: quotes are grouped under their
    speaker ("Jose Mourinho said:"), so the heading comes with the first quote of each run and
    is ``None`` otherwise. Every renderer lays answers out this way."""
    current: str | None = None
    for span in spans:
        if span.kind != "quote":
            current = None
            yield None, span
            continue
        heading = None
        if span.speaker != current:
            current = span.speaker
            heading = span.speaker or "Unattributed"
        yield heading, span


def answer_lines(answer: Answer) -> list[str]:
    """The answer body, one line per span, quotes indented under their speaker."""
    lines: list[str] = []
    for heading, span in with_speaker_headings(answer.spans):
        if heading is not None:
            lines.append(f"{heading} said:")
        lines.append(f"  {span_text(span)}" if span.kind == "quote" else span_text(span))
    return lines


def render_plain(answer: Answer) -> str:
    lines: list[str] = []
    if answer.message:
        lines.append(answer.message)
    lines.extend(answer_lines(answer))
    if answer.citations:
        lines.append("")
        lines.append("Sources:")
        lines.extend(citation_line(c) for c in answer.citations)
    if not answer.answered and answer.closest:
        lines.append("")
        lines.append("Closest passages:")
        for hit in answer.closest:
            text = " ".join(hit.passage.text.split())
            snippet = text if len(text) <= 200 else text[:200].rsplit(" ", 1)[0] + " …"
            lines.append(f"- {snippet} ({citation_line(hit.citation)[4:]})")
    return "\n".join(lines)
