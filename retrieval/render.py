"""Plain-text rendering of an ``Answer``: the terminal's, and the fallback text of every platform."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import date
from urllib.parse import quote, urlsplit

from retrieval.models import FIELD_LIMIT, Answer, AnswerSpan, Citation, cap_field

OPEN_QUOTE, CLOSE_QUOTE = "“", "”"

# A link longer than this is not shown as a link: no real article URL is that long.
URL_LIMIT = 2000
# A host name (or address) and port, nothing else: no user name ("https://bank.example@evil"),
# no IPv6 brackets, no characters that chat markup reads.
_HOST = re.compile(r"[A-Za-z0-9.-]+(?::[0-9]{1,5})?")
# What may stay as written in a link's path, query and fragment; the rest is percent-encoded,
# so ")", "]", "[", "|", "<", ">", "*", spaces and quotes can never end a link or start markup.
_URL_SAFE = "/%:@!$&+,;=-._~?#"
# C0 and C1 control characters (not tab or newline): a terminal would act on ESC sequences
# (colours, cursor moves, OSC 8 hyperlinks) in article text instead of showing them.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Characters that Slack's mrkdwn (and a Discord link's label, where escapes are not honoured)
# read as formatting, swapped for look-alikes that are only text.
_LOOKALIKES = str.maketrans(
    {
        "*": "\u2217",  # asterisk operator
        "\uff0a": "\ufe61",  # fullwidth asterisk -> small asterisk
        "_": "\u02cd",  # modifier letter low macron
        "\uff3f": "\u2e0f",  # fullwidth low line -> paragraphos
        "`": "\u02cb",  # modifier letter grave accent
        "\uff40": "\u02cb",
        "~": "\u223c",  # tilde operator
    }
)


def field_text(text: str, limit: int = FIELD_LIMIT) -> str:
    """A title, outlet, author or speaker as shown: on one line and at most ``limit`` characters."""
    return cap_field(" ".join(text.split()), limit)


def safe_url(url: str) -> str:
    """``url`` made safe to use as a link target, or "" when it should not be a link at all.

    Only http(s) URLs with a plain host qualify; every character that could close a Markdown or
    mrkdwn link (or open a new one) is percent-encoded, so a stored URL such as
    ``https://news.example.org/a)[Verify your account](https://evil.example/phish`` stays one
    link to news.example.org and never becomes a second, attacker-labelled one.
    """
    url = url.strip()
    if len(url) > URL_LIMIT:
        return ""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    if parts.scheme.lower() not in {"http", "https"} or not _HOST.fullmatch(parts.netloc):
        return ""
    if not url.lower().startswith(f"{parts.scheme.lower()}://"):
        return ""
    rest = quote(parts.path, safe=_URL_SAFE)
    if parts.query:
        rest += "?" + quote(parts.query, safe=_URL_SAFE)
    if parts.fragment:
        rest += "#" + quote(parts.fragment, safe=_URL_SAFE)
    return f"{parts.scheme.lower()}://{parts.netloc}{rest}"


def lookalike(text: str) -> str:
    """``text`` with mrkdwn's formatting characters replaced by look-alikes (Slack has no escape)."""
    return text.translate(_LOOKALIKES)


def plain(text: str) -> str:
    """Text safe to print on a terminal: control characters (ESC, NUL, …) are dropped."""
    return _CONTROLS.sub("", text)


def format_date(published: str) -> str:
    """ "2017-12-11" -> "11 Dec 2017"; anything unparseable is shown as written (on one line, short)."""
    try:
        parsed = date.fromisoformat(published[:10])
    except ValueError:
        return field_text(published, 60)
    return f"{parsed.day} {parsed.strftime('%b %Y')}"


def citation_line(citation: Citation) -> str:
    """ "[1] Headline — Outlet, 11 Dec 2017, ¶12"."""
    details = [part for part in (field_text(citation.source), format_date(citation.published)) if part]
    where = ", ".join([*details, f"¶{citation.paragraph}"])
    return f"[{citation.n}] {field_text(citation.title)} — {where}"


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
            heading = field_text(span.speaker) or "Unattributed"
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
    return plain("\n".join(lines))
