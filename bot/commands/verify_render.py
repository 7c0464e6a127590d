"""What every platform shows for a quote check, before its own escaping and markup.

The words of a verdict are the same on Slack, Discord and the terminal: a heading, the real
words with the ones that differ marked, the differences listed, a note, the citation. This module
writes them once; names and words from articles or users are wrapped with ``untrusted`` (each
renderer shows them inert: ``render_marked``), and the real words are cut into segments that
each platform marks its own way (bold on Slack and Discord, brackets on the terminal).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.output import plural
from bot.replies import render_marked, untrusted
from retrieval.features.quote_check import QuoteCheck
from retrieval.models import AnswerSpan
from retrieval.render import citation_line

# At most this many differences are listed; a quote with more is reported by count.
DIFFERENCES_SHOWN = 8
# Words of an asked quote echoed back in a heading.
ASKED_SHOWN = 300


@dataclass(frozen=True)
class Segment:
    """A piece of a real span: ``differs`` when the asked quote has other words here."""

    text: str
    differs: bool


def heading(check: QuoteCheck) -> str:
    """The verdict in a line, with the speaker (marked untrusted)."""
    speaker = untrusted(check.speaker) if check.speaker else ""
    asked = untrusted(check.asked.speaker) if check.asked.speaker else ""
    if check.verdict == "verbatim":
        return f"✅ Verbatim — said by {speaker}" if speaker else "✅ Verbatim — in the article word for word"
    if check.verdict == "altered" and check.joined_apart:
        return "✏️ Altered — real words, but joined from different quotes"
    if check.verdict == "altered":
        count = plural(check.changed_words, "word") + (" differs" if check.changed_words == 1 else " differ")
        return f"✏️ Altered — {count} from what {speaker} said" if speaker else f"✏️ Altered — {count}"
    if check.verdict == "misattributed" and not check.quoted:
        return f"👤 Not a quote — the article says these words itself; it does not quote {asked} saying them"
    if check.verdict == "misattributed":
        real = f"{speaker}, not {asked}" if speaker else f"someone other than {asked}"
        return f"👤 Said by someone else — the words are real, but said by {real}"
    return f"❌ Not found — no quote like it in {plural(check.articles_searched, 'article')}"


def asked_line(check: QuoteCheck) -> str:
    """What was checked, as the user gave it (marked untrusted)."""
    text = check.asked.text if len(check.asked.text) <= ASKED_SHOWN else check.asked.text[: ASKED_SHOWN - 1] + "…"
    who = f" — {untrusted(check.asked.speaker)}" if check.asked.speaker else ""
    return f"Checked: “{untrusted(text)}”{who}"


def difference_lines(check: QuoteCheck) -> list[str]:
    """One line per difference: what the user has, and what the article says."""
    lines = []
    for difference in check.differences[:DIFFERENCES_SHOWN]:
        asked, real = untrusted(difference.asked), untrusted(difference.real)
        if difference.asked and difference.real:
            lines.append(f"“{asked}” — the article says “{real}”")
        elif difference.asked:
            lines.append(f"“{asked}” — not in the article's words")
        else:
            lines.append(f"“{real}” — left out")
    hidden = len(check.differences) - DIFFERENCES_SHOWN
    if hidden > 0:
        lines.append(f"and {plural(hidden, 'more difference')}")
    return lines


def note_line(check: QuoteCheck) -> str:
    """Why the verdict is what it is, when the heading does not say it all ("" when it does)."""
    asked = untrusted(check.asked.speaker) if check.asked.speaker else ""
    if check.verdict == "verbatim" and check.named_nearby:
        return f"The article does not say outright who said this; {asked} is named just before it."
    if check.verdict == "verbatim" and not check.quoted:
        return "These words are the article's own text, not in quote marks: nobody is quoted saying them."
    if check.verdict == "misattributed" and check.quoted and not check.speaker:
        return f"The article does not say who said this, and does not name {asked} near it."
    if check.verdict == "altered" and check.note:
        return f"The real quote is {untrusted(check.speaker)}'s, not {asked}'s."
    return ""


def segments(check: QuoteCheck, span: AnswerSpan) -> list[Segment]:
    """The span's text cut where the asked quote differs from it (the real words that differ)."""
    marks = sorted(
        (d.real_start, d.real_end)
        for d in check.differences
        if d.real_start >= 0 and span.start <= d.real_start and d.real_end <= span.end
    )
    found: list[Segment] = []
    position = span.start
    for start, end in marks:
        if start < position:
            continue
        if start > position:
            found.append(Segment(span.text[position - span.start : start - span.start], False))
        found.append(Segment(span.text[start - span.start : end - span.start], True))
        position = end
    if position < span.end:
        found.append(Segment(span.text[position - span.start :], False))
    return found


def plain_text(check: QuoteCheck) -> str:
    """The verdict as plain text (the terminal, ``byline verify``): the words that differ in [brackets]."""
    lines = [heading(check)]
    for span in check.spans:
        words = "".join(f"[{s.text}]" if s.differs else s.text for s in segments(check, span))
        lines.append(f"  “{' '.join(words.split())}” [{span.citation}]")
    lines += [f"  {line}" for line in (*difference_lines(check), note_line(check)) if line]
    if check.closest:
        lines.append("Closest quotes:")
        for span in check.closest:
            who = f"{span.speaker}: " if span.speaker else ""
            lines.append(f"  {who}“{' '.join(span.text.split())}” [{span.citation}]")
    lines += [citation_line(c) for c in check.citations]
    return render_marked("\n".join(lines), str, str)
