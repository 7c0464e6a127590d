"""Block Kit renderers: one function per reply kind, each returning the Slack messages to send.

Slack checks none of its own limits for us, so they are kept here: a section's text is at
most 3,000 characters and a message at most 50 blocks. A long answer is split into several
sections and, when needed, several messages; a split only ever falls between two answer
spans, so a quote and its ``[n]`` citation marker always stay together, and one reply is at most
three messages. All article and user text is escaped (``&``, ``<``, ``>``) so that ``<!channel>``
in an article is shown, never sent as a mention. Article text is data, never markup: mrkdwn has
no escape for ``*``, ``_``, ``~`` and backticks, so in article text they become look-alike
characters, and a line-leading ``>`` gets an invisible soft hyphen so it cannot open a quote.
The only links are Byline's citation links to an article's own URL, made safe by ``safe_url``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bot.commands import verify_render
from bot.platforms import layout
from bot.replies import (
    AnswerReply,
    DigestReply,
    PassagesReply,
    Reply,
    SearchReply,
    SourcesReply,
    TextReply,
    VerifyReply,
    render_marked,
)
from retrieval.features.digest import ALSO_IN_SHOWN, also_in_label
from retrieval.models import Answer, AnswerSpan, Citation, Digest, DigestStory, Passage, SearchHit
from retrieval.render import (
    CLOSE_QUOTE,
    OPEN_QUOTE,
    field_text,
    format_date,
    lookalike,
    render_plain,
    safe_url,
    with_speaker_headings,
)

SECTION_LIMIT = 3000
BLOCK_LIMIT = 50
CONTEXT_ELEMENTS = 10
FALLBACK_LIMIT = 3000
SEARCH_SNIPPET = 700
MAX_MESSAGES = layout.MAX_MESSAGES
CUT_NOTE = f"_{layout.CUT_NOTE}_"
# Slack reads "&gt;" (and the fullwidth "＞") at the start of a line as a block quote.
_LEADING_QUOTE = re.compile(r"(?m)^(\s*)(&gt;|\uff1e)")

ACTION_PASSAGES = "byline_passages"
ACTION_VOTE_UP = "byline_vote_up"
ACTION_VOTE_DOWN = "byline_vote_down"
ACTION_SHARE = "byline_share"
# One action id per related question (Slack wants them unique within a block); the value is
# "ANSWER_ID:N", so the question itself is read back from the stored answer.
ACTION_RELATED = "byline_related_"
RELATED_ACTIONS = re.compile(r"^byline_related_[0-9]$")
# A Slack user id, the only thing put inside Byline's own "<@…>" attribution markup.
_USER_ID = re.compile(r"[UW][A-Z0-9]{1,20}")

Block = dict[str, Any]


@dataclass
class SlackMessage:
    """One message to send: the blocks and the notification/fallback ``text``, both escaped."""

    text: str
    blocks: list[Block] = field(default_factory=list)
    ephemeral: bool = False


def escape(text: str) -> str:
    """Slack's three control characters, escaped so article text can never become markup."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def data(text: str) -> str:
    """Article text for mrkdwn: escaped, its formatting characters swapped for look-alikes, and a
    line-leading ">" (which would open a block quote) preceded by an invisible soft hyphen."""
    return _LEADING_QUOTE.sub("\\1\u00ad\\2", lookalike(escape(text)))


def data_field(text: str) -> str:
    """A title, outlet, author, speaker or date for mrkdwn: on one line, capped, and data."""
    return data(field_text(text))


def _link(url: str, label: str) -> str:
    """``<url|label>`` for safe http(s) URLs only; the label is data, the URL cannot break out."""
    target = safe_url(url)
    if not target:
        return data_field(label)
    # safe_url percent-encodes "<", ">" and "|"; "&" is one of Slack's escapes.
    return f"<{target.replace('&', '&amp;')}|{data_field(label).replace('|', '¦')}>"


def _mrkdwn(text: str) -> Block:
    # verbatim: Slack must not turn bare URLs or channel names in article text into links.
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def section(text: str) -> Block:
    return {"type": "section", "text": _mrkdwn(_clip(text, SECTION_LIMIT))}


def context(lines: list[str]) -> list[Block]:
    """Context blocks holding ``lines`` (at most 10 elements per block, Slack's rule)."""
    blocks = []
    for first in range(0, len(lines), CONTEXT_ELEMENTS):
        chunk = lines[first : first + CONTEXT_ELEMENTS]
        blocks.append({"type": "context", "elements": [_mrkdwn(_clip(line, SECTION_LIMIT)) for line in chunk]})
    return blocks


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    # Never leave half an escape sequence such as "&am" at the cut.
    amp = cut.rfind("&")
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    return cut + "…"


def pack_sections(units: list[str], limit: int = SECTION_LIMIT) -> list[Block]:
    """Sections made of whole units (lines), each section's text at most ``limit`` chars.

    A unit is never split unless it alone is over the limit (a quote of 3,000 characters);
    then it is cut between words, and its citation marker, which ends the unit, stays whole.
    """
    sections: list[str] = []
    current = ""
    for unit in units:
        for piece in _split_unit(unit, limit):
            candidate = f"{current}\n{piece}" if current else piece
            if len(candidate) <= limit:
                current = candidate
            else:
                sections.append(current)
                current = piece
    if current:
        sections.append(current)
    return [section(text) for text in sections]


def _split_unit(unit: str, limit: int) -> list[str]:
    return layout.split_long(unit, limit, _outside_escape)


def _outside_escape(text: str, cut: int) -> int:
    # Never leave half an escape sequence such as "&am" at the cut.
    amp = text.rfind("&", 0, cut)
    return amp if amp != -1 and ";" not in text[amp:cut] else cut


def split_messages(blocks: list[Block], text: str, ephemeral: bool = False) -> list[SlackMessage]:
    """Messages of at most 50 blocks; the fallback text goes with the first, "(continued)" after."""
    if not blocks:
        return [SlackMessage(text, [], ephemeral)]
    if len(blocks) > MAX_MESSAGES * BLOCK_LIMIT:
        blocks = [*blocks[: MAX_MESSAGES * BLOCK_LIMIT - 1], *context([CUT_NOTE])]
    messages = []
    for first in range(0, len(blocks), BLOCK_LIMIT):
        label = text if first == 0 else "(continued)"
        messages.append(SlackMessage(label, blocks[first : first + BLOCK_LIMIT], ephemeral))
    return messages


def _fallback(plain: str, article: bool = True) -> str:
    """Notification text; ``article`` when it holds article text (answers, digests)."""
    return _clip(data(plain) if article else escape(plain), FALLBACK_LIMIT)


# -- answers -------------------------------------------------------------------------------


def span_unit(span: AnswerSpan) -> str:
    """One span as an escaped line: quotes in quote marks, then its ``[n]`` marker."""
    if span.kind == "quote":
        return f"{OPEN_QUOTE}{data(span.text)}{CLOSE_QUOTE} [{span.citation}]"
    return f"{data(span.text)} [{span.citation}]"


def answer_units(spans: list[AnswerSpan]) -> list[str]:
    """Escaped lines of an answer body; a speaker's name heads the first of their quotes."""
    return [
        (f"*{data_field(heading)} said:*\n" if heading is not None else "") + span_unit(span)
        for heading, span in with_speaker_headings(spans)
    ]


def citation_mrkdwn(citation: Citation) -> str:
    """A citation line ("[1] Headline — Outlet, 11 Dec 2017, ¶12"), the headline linked when it has a URL."""
    details = [part for part in (data_field(citation.source), data_field(format_date(citation.published))) if part]
    where = ", ".join([*details, f"¶{citation.paragraph}"])
    return f"[{citation.n}] {_link(citation.url, citation.title)} — {where}"


def answer_buttons(answer_id: str, with_passages: bool, shareable: bool = False) -> Block:
    elements: list[Block] = []
    if shareable:
        # Under a private answer only: posts the same answer in the channel, attributed to the asker.
        elements.append(_button("Share with channel", ACTION_SHARE, answer_id) | {"style": "primary"})
    if with_passages:
        elements.append(_button("Show passages", ACTION_PASSAGES, answer_id))
    elements.append(_button("👍", ACTION_VOTE_UP, answer_id))
    elements.append(_button("👎", ACTION_VOTE_DOWN, answer_id))
    return {"type": "actions", "block_id": f"byline_answer_{answer_id}", "elements": elements}


def related_blocks(answer_id: str, related: list[str]) -> list[Block]:
    """ "Related questions" and one button each, under the answer's own buttons. Button text is
    ``plain_text``, which Slack never reads as markup or mentions (and the questions were built
    without "@", "<" or ">" in the first place)."""
    if not related:
        return []
    buttons = [_button(question, f"{ACTION_RELATED}{n}", f"{answer_id}:{n}") for n, question in enumerate(related)]
    label = {**context(["_Related questions:_"])[0], "block_id": f"byline_related_label_{answer_id}"}
    return [label, {"type": "actions", "block_id": f"byline_related_{answer_id}", "elements": buttons}]


def _button(label: str, action_id: str, value: str) -> Block:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": label, "emoji": True},
        "action_id": action_id,
        "value": value,
    }


def render_answer(reply: AnswerReply) -> list[SlackMessage]:
    answer: Answer = reply.answer
    blocks: list[Block] = []
    if reply.asked_by:
        asker = f"<@{reply.asked_by}>" if _USER_ID.fullmatch(reply.asked_by) else escape(reply.asked_by)
        # A clicked related question was typed by nobody: the attribution says what was asked.
        asked = f": {OPEN_QUOTE}{escape(answer.question)}{CLOSE_QUOTE}" if reply.follow_up else ""
        blocks += context([f"Asked by {asker}{asked}"])
    if answer.interpreted_as:
        blocks += context([f"_Read as:_ {escape(answer.interpreted_as)}"])
    units = [escape(answer.message)] if answer.message else []
    units += answer_units(answer.spans)
    if not answer.answered and answer.closest:
        units.append("*Closest passages:*")
        units += [_hit_line(hit) for hit in answer.closest]
    blocks += pack_sections(units or ["_No answer._"])
    if answer.citations:
        blocks += context([citation_mrkdwn(c) for c in answer.citations])
    if reply.answer_id:
        blocks.append(answer_buttons(reply.answer_id, bool(answer.citations), shareable=reply.private))
        blocks += related_blocks(reply.answer_id, answer.related)
    return _keep_tail_together(blocks, _fallback(answer.text or render_plain(answer)), reply.private)


def _hit_line(hit: SearchHit) -> str:
    return f"• {data(_clip(' '.join(hit.passage.text.split()), SEARCH_SNIPPET))} ({citation_mrkdwn(hit.citation)[4:]})"


def _keep_tail_together(blocks: list[Block], text: str, ephemeral: bool) -> list[SlackMessage]:
    """Split into messages, moving the sources and buttons after a split so they stay together."""
    tail_start = len(blocks)
    while tail_start > 0 and blocks[tail_start - 1]["type"] in {"context", "actions"}:
        tail_start -= 1
    tail = blocks[tail_start:]
    body = blocks[:tail_start]
    if len(tail) >= BLOCK_LIMIT:
        return split_messages(blocks, text, ephemeral)
    room = MAX_MESSAGES * BLOCK_LIMIT - len(tail)
    if len(body) > room:
        # At most three messages: the body is cut, the sources and buttons are kept.
        body = [*body[: room - 1], *context([CUT_NOTE])]
        blocks = body + tail
    if len(blocks) <= BLOCK_LIMIT:
        return split_messages(blocks, text, ephemeral)
    messages = split_messages(body, text, ephemeral)
    last = messages[-1]
    if len(last.blocks) + len(tail) <= BLOCK_LIMIT:
        last.blocks.extend(tail)
    else:
        messages.append(SlackMessage("(continued)", tail, ephemeral))
    return messages


# -- the other replies ---------------------------------------------------------------------


def render_search(reply: SearchReply) -> list[SlackMessage]:
    if not reply.hits:
        text = f"No passages match “{escape(reply.query)}”."
        return [SlackMessage(text, [section(text)], reply.private)]
    blocks: list[Block] = [section(f"*Top passages for “{escape(reply.query)}”*")]
    for hit in reply.hits:
        blocks += pack_sections([data(_clip(" ".join(hit.passage.text.split()), SECTION_LIMIT))])
        blocks += context([citation_mrkdwn(hit.citation)])
    return split_messages(blocks, f"Top passages for “{escape(reply.query)}”", reply.private)


def render_sources(reply: SourcesReply) -> list[SlackMessage]:
    if not reply.total:
        text = "No articles yet. Add some with `byline ingest PATH`."
        return [SlackMessage(text, [section(text)], reply.private)]
    heading = f"*Articles, newest first* (page {reply.page} of {reply.pages}, {reply.total} in all)"
    lines = []
    for article in reply.articles:
        details = ", ".join(data_field(p) for p in (article.source, format_date(article.published)) if p)
        lines.append(f"• {_link(article.url, article.title)}" + (f" — {details}" if details else ""))
    blocks = [section(heading), *pack_sections(lines)]
    if reply.page < reply.pages:
        blocks += context([f"More: `/sources {reply.page + 1}`"])
    return split_messages(blocks, f"Articles Byline knows (page {reply.page} of {reply.pages})", reply.private)


def render_passages(reply: PassagesReply) -> list[SlackMessage]:
    if reply.expired or not reply.passages:
        text = "That answer has expired; ask again." if reply.expired else "That answer cites no passages."
        return [SlackMessage(text, [section(text)], True)]
    blocks: list[Block] = []
    for citation, passage in reply.passages:
        blocks += context([citation_mrkdwn(citation)])
        blocks += pack_sections(_passage_units(passage))
    return split_messages(blocks, "The passages this answer cites", reply.private)


def _passage_units(passage: Passage) -> list[str]:
    return [data(paragraph) for paragraph in passage.text.split("\n") if paragraph.strip()]


def render_text(reply: TextReply) -> list[SlackMessage]:
    text = render_marked(reply.text, escape, data)
    prefix = "⚠️ " if reply.error else ""
    return split_messages(
        pack_sections([prefix + line for line in text.split("\n\n")]),
        _fallback(render_marked(reply.text, str, str), article=False),
        reply.private,
    )


def render_digest(reply: DigestReply) -> list[SlackMessage]:
    digest: Digest = reply.digest
    since, until = format_date(digest.since), format_date(digest.until)
    header = digest.header or f"Byline digest: {since} – {until}"
    blocks: list[Block] = [section(f"*{escape(header)}*")]
    if digest.late:
        blocks += context(["_This digest is late: Byline was offline at its scheduled time._"])
    if not digest.stories:
        # The builder's text says "Nothing new since Mon 30 Nov, 09:00" in the channel's time.
        blocks.append(section(escape(digest.text or f"Nothing new since {since}.")))
        return split_messages(blocks, _fallback(digest.text or header, article=False), reply.private)
    for story in digest.stories:
        units = [f"*{data_field(story.headline)}*", *answer_units(story.spans)]
        blocks += pack_sections(units)
        blocks += context([_also_in(story)])
    if digest.citations:
        blocks += context([citation_mrkdwn(c) for c in digest.citations])
    return _keep_tail_together(blocks, _fallback(digest.text or header), reply.private)


def _also_in(story: DigestStory) -> str:
    """ "also in: <Inquiry ordered…|link> (Northern Times); Ashworth Gazette": a story's other articles."""
    lead, others = story.articles[0], story.articles[1:]
    if not others:
        return f"1 article — {data_field(lead.source)}" if lead.source.strip() else "1 article"
    shown = [_link(a.url, also_in_label(a, lead)) for a in others[:ALSO_IN_SHOWN]]
    more = len(others) - ALSO_IN_SHOWN
    return "also in: " + "; ".join(shown) + (f" and {more} more" if more > 0 else "")


def render_verify(reply: VerifyReply) -> list[SlackMessage]:
    """A quote check: the verdict, the real words (the ones that differ in bold), the
    differences, the citation; for "not found", the closest quotes."""
    check = reply.check

    def marked(text: str) -> str:
        return render_marked(text, escape, data_field)

    units = [f"*{marked(verify_render.heading(check))}*"]
    for span in check.spans:
        words = "".join(f"*{data(s.text)}*" if s.differs else data(s.text) for s in verify_render.segments(check, span))
        units.append(f"{OPEN_QUOTE}{words}{CLOSE_QUOTE} [{span.citation}]")
    units += [marked(line) for line in (*verify_render.difference_lines(check), verify_render.note_line(check)) if line]
    if check.closest:
        units.append("*Closest quotes*")
        units += [(f"{data_field(s.speaker)}: " if s.speaker else "") + span_unit(s) for s in check.closest]
    blocks = [*pack_sections(units), *context([marked(verify_render.asked_line(check))])]
    if check.citations:
        blocks += context([citation_mrkdwn(c) for c in check.citations])
    fallback = _clip(render_marked(verify_render.heading(check), escape, data_field), FALLBACK_LIMIT)
    return _keep_tail_together(blocks, fallback, reply.private)


_RENDERERS = layout.ReplyRenderers(
    answer=render_answer,
    search=render_search,
    sources=render_sources,
    passages=render_passages,
    digest=render_digest,
    text=render_text,
    verify=render_verify,
)


def render(reply: Reply) -> list[SlackMessage]:
    """The Slack messages for any reply the service hands back."""
    return _RENDERERS(reply)
