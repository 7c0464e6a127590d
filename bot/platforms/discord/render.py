"""Discord renderers: every ``Reply`` becomes one or more messages of content and embeds.

Discord's limits are Byline's own job (discord.py does not check them): content 2,000 chars,
embed title 256, description 4,096, 25 fields, 6,000 characters across one message's embeds,
10 embeds a message. A reply is built from *blocks* (one answer span, one source line, one
passage) that are never split, then packed into embeds and at most three messages; only a
single block longer than a whole embed (a paragraph-sized quote over 4,000 characters) is cut,
at a space, keeping its ``[n]`` marker whole. A reply that would need more than three messages
has its article text shortened (with "…"), never its citations.

Article text is data, never markup: every Markdown character in it is backslash-escaped (Discord
hides the backslash), ``://`` is escaped so a bare URL is not a link, ``@everyone`` and
``@here`` are broken with a zero-width space, and the only links are Byline's own citation
links to an article's stored URL, made safe by ``safe_url``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import discord

from bot.commands import verify_render
from bot.platforms import layout
from bot.replies import PassagesReply, Reply, SearchReply, SourcesReply, TextReply, VerifyReply, render_marked
from retrieval.features.digest import ALSO_IN_SHOWN, also_in_label
from retrieval.models import Answer, AnswerSpan, Citation, Digest, DigestStory
from retrieval.render import (
    CLOSE_QUOTE,
    OPEN_QUOTE,
    field_text,
    format_date,
    lookalike,
    safe_url,
    with_speaker_headings,
)

CONTENT_LIMIT = 2000
TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELDS_LIMIT = 25
MESSAGE_EMBED_LIMIT = 6000
EMBEDS_PER_MESSAGE = 10
MAX_MESSAGES = layout.MAX_MESSAGES
CUT_NOTE = layout.CUT_NOTE

BRAND = discord.Colour(0x2F6FEB)
WARNING = discord.Colour(0xD29922)
ERROR = discord.Colour(0xCF222E)

# Everything Discord's Markdown reads anywhere in a line: emphasis, underline, strike, spoilers,
# code, masked links, and the "<" of mentions, channels, timestamps and <url> links.
_MARKUP = re.compile(r"[\\*_~|`\[\]<>]")
_SCHEME = re.compile(r"(?<=[A-Za-z0-9])://")
_MASS_MENTION = re.compile(r"@(everyone|here)")
_ORDERED_LIST = re.compile(r"\d+(?=[.)])")
# In a masked link's label Discord shows backslashes instead of honouring them, so the label's
# markup characters become look-alikes instead.
_LABEL_CHARS = str.maketrans({"[": "(", "]": ")", "|": "\u00a6", "\\": "\u29f5", "<": "\u2039", ">": "\u203a"})


@dataclass
class DiscordMessage:
    """One message to send: content and embeds already within Discord's limits."""

    content: str = ""
    embeds: list[discord.Embed] = field(default_factory=list)


@dataclass(frozen=True)
class Block:
    """One unit of a reply, never split from itself.

    ``head`` and ``tail`` are Byline's own (a speaker line, a citation, the ``[n]`` marker) and
    always arrive whole; ``body`` is article text, which is shortened when a reply would not
    otherwise fit in three messages.
    """

    head: str = ""
    body: str = ""
    tail: str = ""

    @property
    def text(self) -> str:
        return self.head + self.body + self.tail


def clean(text: str) -> str:
    """Article text shown as written, on one line, with every Markdown character escaped."""
    text = _MARKUP.sub(r"\\\g<0>", " ".join(text.split()))
    text = _SCHEME.sub(r"\\://", text)
    text = _MASS_MENTION.sub("@\u200b\\1", text)
    # Headings ("#", "-#"), list items ("-", "+", "1.") only count at the start of a line.
    if text[:1] in {"#", "-", "+"}:
        return "\\" + text
    ordered = _ORDERED_LIST.match(text)
    if ordered:
        return f"{text[: ordered.end()]}\\{text[ordered.end() :]}"
    return text


def clean_field(text: str) -> str:
    """A title, outlet, author, speaker or date: capped (300 characters) and escaped."""
    return clean(field_text(text))


def link_label(text: str) -> str:
    """A headline as a link's label: capped, with nothing in it Discord reads as markup."""
    label = lookalike(field_text(text)).translate(_LABEL_CHARS)
    return _MASS_MENTION.sub("@\u200b\\1", label.replace("://", ":\u200b//"))


def linked(title: str, url: str) -> str:
    """The headline linked to the article's own URL, or just the headline when the URL is unsafe."""
    target = safe_url(url)
    if not target:
        return clean_field(title) or "Untitled"
    return f"[{link_label(title) or 'Untitled'}]({target})"


def citation_text(citation: Citation) -> str:
    """ "[1] [Headline](url) — Outlet, 11 Dec 2017, ¶12" (linked when the article has a safe URL)."""
    details = [part for part in (clean_field(citation.source), clean(format_date(citation.published))) if part]
    return (
        f"`[{citation.n}]` {linked(citation.title, citation.url)} — {', '.join([*details, f'¶{citation.paragraph}'])}"
    )


def span_block(span: AnswerSpan, prefix: str = "") -> Block:
    if span.kind == "quote":
        return Block(f"{prefix}> {OPEN_QUOTE}", clean(span.text), f"{CLOSE_QUOTE} **[{span.citation}]**")
    return Block(prefix, clean(span.text), f" **[{span.citation}]**")


def answer_blocks(spans: Iterable[AnswerSpan]) -> list[Block]:
    """Answer body blocks: quotes grouped under their speaker, like the terminal renderer."""
    # The speaker line travels with its first quote, so a split never orphans it.
    return [
        span_block(span, f"**{clean_field(heading)}** said:\n" if heading is not None else "")
        for heading, span in with_speaker_headings(spans)
    ]


def shorten(body: str, limit: int) -> str:
    """Escaped article text cut to ``limit`` characters at a space, ending " …"."""
    if len(body) <= limit:
        return body
    if limit < 8:
        return "…"
    cut = body.rfind(" ", 0, limit - 2)
    if cut < limit // 2:
        cut = limit - 2
    piece = body[:cut].rstrip()
    # Never end on half an escape: a lone trailing backslash would escape the space after it.
    if (len(piece) - len(piece.rstrip("\\"))) % 2:
        piece = piece[:-1]
    return piece + " …"


def fit(blocks: list[Block], budget: int) -> list[str]:
    """Block texts totalling at most ``budget``: the longest bodies are shortened to one common
    length (the largest that fits), so short quotes and every citation stay whole."""
    if sum(len(block.text) + 1 for block in blocks) <= budget:
        return [block.text for block in blocks]
    room = max(0, budget - sum(len(block.head) + len(block.tail) + 1 for block in blocks))
    lengths = sorted(len(block.body) for block in blocks)
    level = lengths[-1] if lengths else 0
    for index, length in enumerate(lengths):
        others = len(lengths) - index
        if length * others > room:
            level = room // others
            break
        room -= length
    return [block.head + shorten(block.body, level) + block.tail for block in blocks]


def split_block(block: str, limit: int) -> list[str]:
    """Cut one over-long block at spaces; a trailing ``[n]`` marker stays with the last piece."""
    return layout.split_long(block, limit)


def _as_block(block: Block | str) -> Block:
    return block if isinstance(block, Block) else Block(block)


def pack(
    blocks: list[Block | str],
    *,
    title: str = "",
    colour: discord.Colour = BRAND,
    footer: str = "",
    content: str = "",
) -> list[DiscordMessage]:
    """Pack blocks into embeds and at most three messages within every limit; blocks are never
    split apart. A plain string is a block that is all Byline's own text.

    The title goes on the first embed, the footer on the last; ``content`` on the first message.
    """
    title = title[: TITLE_LIMIT - 1] + "…" if len(title) > TITLE_LIMIT else title
    footer = footer[:2000]
    parts = [_as_block(block) for block in blocks]
    # Room for the title, the footer and the cut note on every message: conservative, simple.
    budget = MAX_MESSAGES * (MESSAGE_EMBED_LIMIT - len(title) - len(footer) - len(CUT_NOTE) - 3)
    for _ in range(16):
        messages = _pack_texts(fit(parts, budget), colour, MESSAGE_EMBED_LIMIT - len(footer) - len(title))
        if len(messages) <= MAX_MESSAGES:
            break
        # Pieces that do not fill a message waste some of it: try again with less text.
        budget = budget * 4 // 5
    if len(messages) > MAX_MESSAGES:
        # Only Byline's own text is left and it is still too long (thousands of blocks).
        messages = messages[:MAX_MESSAGES]
        footer = f"{footer} · {CUT_NOTE}" if footer else CUT_NOTE
    if title:
        messages[0].embeds[0].title = title
    if footer:
        messages[-1].embeds[-1].set_footer(text=footer)
    if content:
        messages[0].content = content[:CONTENT_LIMIT]
    return messages


def _pack_texts(texts: list[str], colour: discord.Colour, budget_message: int) -> list[DiscordMessage]:
    budget_desc = DESCRIPTION_LIMIT
    pieces: list[str] = []
    for text in texts:
        pieces.extend(
            split_block(text, min(budget_desc, budget_message) - 2) if len(text) > budget_desc - 2 else [text]
        )

    messages: list[DiscordMessage] = []
    embeds: list[list[str]] = []  # descriptions of the current message, as lists of pieces
    message_chars = 0

    def flush() -> None:
        nonlocal embeds, message_chars
        if embeds:
            messages.append(
                DiscordMessage(embeds=[discord.Embed(description="\n".join(d), colour=colour) for d in embeds])
            )
        embeds, message_chars = [], 0

    for piece in pieces:
        cost = len(piece) + 1  # the joining newline
        if embeds and message_chars + cost > budget_message:
            flush()
        if not embeds or len("\n".join(embeds[-1])) + cost > budget_desc:
            if len(embeds) == EMBEDS_PER_MESSAGE:
                flush()
            embeds.append([])
        embeds[-1].append(piece)
        message_chars += cost
    flush()
    if not messages:
        messages.append(DiscordMessage(embeds=[discord.Embed(colour=colour)]))
    return messages


def split_text(text: str, limit: int = CONTENT_LIMIT) -> list[str]:
    """Plain content split at line breaks (then spaces) so each message fits ``limit``."""
    chunks: list[str] = []
    current = ""
    for line in text.split("\n"):
        for piece in split_block(line, limit) if len(line) > limit else [line]:
            if current and len(current) + 1 + len(piece) > limit:
                chunks.append(current)
                current = piece
            else:
                current = f"{current}\n{piece}" if current else piece
    if current or not chunks:
        chunks.append(current)
    return chunks


# -- one renderer per reply kind -----------------------------------------------------------


def render_answer(answer: Answer, asked_by: str = "") -> list[DiscordMessage]:
    """An answer's embeds; a shared one says who asked (a user mention, sent with no pings)."""
    blocks: list[Block | str] = []
    if answer.message:
        blocks.append(f"*{clean(answer.message)}*")
    blocks.extend(answer_blocks(answer.spans))
    if answer.citations:
        blocks.append("\n**Sources**")
        blocks.extend(citation_text(c) for c in answer.citations)
    if not answer.answered and answer.closest:
        blocks.append("\n**Closest passages**")
        for hit in answer.closest:
            blocks.append(Block("", shorten(clean(hit.passage.text), 302), "\n" + citation_text(hit.citation)))
    if not blocks:
        blocks.append("I could not find an answer to that in the articles I have.")
    footer = f"Interpreted as: {answer.interpreted_as}" if answer.interpreted_as else ""
    question = " ".join(answer.question.split())
    # A Discord user id is a snowflake; nothing else goes inside Byline's own "<@…>".
    content = f"Asked by <@{asked_by}>" if asked_by.isascii() and asked_by.isdigit() else ""
    return pack(blocks, title=question, colour=BRAND if answer.answered else WARNING, footer=footer, content=content)


def passage_block(citation: Citation, text: str) -> Block:
    return Block(citation_text(citation) + "\n", clean(text), "\n")


def render_search(reply: SearchReply) -> list[DiscordMessage]:
    if not reply.hits:
        return pack([f"No passages match “{clean(reply.query)}”."], colour=WARNING)
    blocks: list[Block | str] = [passage_block(hit.citation, hit.passage.text) for hit in reply.hits]
    return pack(blocks, title=f"Top passages for “{' '.join(reply.query.split())}”")


def render_sources(reply: SourcesReply) -> list[DiscordMessage]:
    if not reply.total:
        return pack(
            ["No articles yet. Add some with `byline ingest PATH` or `/ingest`."], title="Sources", colour=WARNING
        )
    blocks: list[Block | str] = []
    for article in reply.articles:
        details = ", ".join(p for p in (clean_field(article.source), clean(format_date(article.published))) if p)
        blocks.append(f"• {linked(article.title, article.url)}" + (f" — {details}" if details else ""))
    footer = f"Page {reply.page} of {reply.pages} · {reply.total} article{'s' if reply.total != 1 else ''}"
    return pack(blocks, title="Articles, newest first", footer=footer)


def render_passages(reply: PassagesReply) -> list[DiscordMessage]:
    if reply.expired:
        return [
            DiscordMessage(
                content="That answer has expired, so its passages are no longer known. Ask again for a fresh one."
            )
        ]
    if not reply.passages:
        return [DiscordMessage(content="That answer cites no passages.")]
    blocks: list[Block | str] = [passage_block(citation, passage.text) for citation, passage in reply.passages]
    return pack(blocks, title="Cited passages")


def render_digest(digest: Digest) -> list[DiscordMessage]:
    title = digest.header or "News digest"
    if not digest.stories:
        # The builder's text says "Nothing new since Mon 30 Nov, 09:00" in the channel's time.
        fallback = f"Nothing new since {format_date(digest.since)}." if digest.since else "Nothing new."
        return pack([clean(digest.text or fallback)], title=title, colour=WARNING)
    blocks: list[Block | str] = []
    if digest.late:
        blocks.append("*This digest is late: Byline was offline when it was due.*")
    for story in digest.stories:
        lines = answer_blocks(story.spans)
        # A story's headline leads its first line so the two never land in different embeds.
        head = f"\n**{clean_field(story.headline)}** [{story.lead_citation}]"
        if lines:
            first = lines[0]
            blocks.append(Block(f"{head}\n{first.head}", first.body, first.tail))
        else:
            blocks.append(head)
        blocks.extend(lines[1:])
        if len(story.articles) > 1:
            blocks.append(_also_in(story))
    if digest.citations:
        blocks.append("\n**Sources**")
        blocks.extend(citation_text(c) for c in digest.citations)
    count, stories = digest.article_count, len(digest.stories)
    footer = f"{count} article{'s' if count != 1 else ''} · {stories} stor{'ies' if stories != 1 else 'y'}"
    return pack(blocks, title=title, footer=footer)


def _also_in(story: DigestStory) -> str:
    """ "also in: [Inquiry ordered…](url) (Northern Times); Ashworth Gazette": the story's other articles."""
    lead, others = story.articles[0], story.articles[1:]
    shown = [linked(also_in_label(a, lead), a.url) for a in others[:ALSO_IN_SHOWN]]
    more = len(others) - ALSO_IN_SHOWN
    return "*also in:* " + "; ".join(shown) + (f" and {more} more" if more > 0 else "")


def render_text(reply: TextReply) -> list[DiscordMessage]:
    body = render_marked(reply.text, str, clean)
    text = f"⚠️ {body}" if reply.error else body
    chunks = split_text(text)
    if len(chunks) > MAX_MESSAGES:
        # Byline's own notices are short; a long one (a list of failures) is cut, not spread.
        chunks = chunks[:MAX_MESSAGES]
        chunks[-1] = shorten(chunks[-1], CONTENT_LIMIT - len(CUT_NOTE) - 1) + "\n" + CUT_NOTE
    return [DiscordMessage(content=chunk) for chunk in chunks]


# The embed colour of each verdict: green for verbatim, amber for altered or misattributed.
VERDICT_COLOURS = {
    "verbatim": discord.Colour(0x1A7F37),
    "altered": WARNING,
    "misattributed": WARNING,
    "not_found": ERROR,
}


def render_verify(reply: VerifyReply) -> list[DiscordMessage]:
    """A quote check: the verdict as the title, the real words (the ones that differ in bold),
    the differences, the citation; for "not found", the closest quotes."""
    check = reply.check

    def marked(text: str) -> str:
        return render_marked(text, str, clean_field)

    blocks: list[Block | str] = []
    for span in check.spans:
        # clean() trims each piece, so the spaces between the pieces are put back.
        words = "".join(
            (" " if s.text[:1].isspace() else "")
            + (f"**{clean(s.text)}**" if s.differs else clean(s.text))
            + (" " if s.text[-1:].isspace() else "")
            for s in verify_render.segments(check, span)
        )
        blocks.append(Block(f"> {OPEN_QUOTE}", words, f"{CLOSE_QUOTE} **[{span.citation}]**"))
    blocks += [
        marked(line) for line in (*verify_render.difference_lines(check), verify_render.note_line(check)) if line
    ]
    if check.closest:
        blocks.append("\n**Closest quotes**")
        blocks += [span_block(s, f"**{clean_field(s.speaker)}:**\n" if s.speaker else "") for s in check.closest]
    if check.citations:
        blocks.append("\n**Sources**")
        blocks += [citation_text(c) for c in check.citations]
    blocks.append(f"-# {marked(verify_render.asked_line(check))}")
    title = render_marked(verify_render.heading(check), str, field_text)
    return pack(blocks, title=title, colour=VERDICT_COLOURS[check.verdict])


_RENDERERS = layout.ReplyRenderers(
    answer=lambda reply: render_answer(reply.answer, reply.asked_by),
    search=render_search,
    sources=render_sources,
    passages=render_passages,
    digest=lambda reply: render_digest(reply.digest),
    text=render_text,
    verify=render_verify,
)


def render(reply: Reply) -> list[DiscordMessage]:
    """Every reply kind, as messages ready to send (buttons are added by the adapter)."""
    return _RENDERERS(reply)


def message_size(message: DiscordMessage) -> int:
    """Characters Discord counts against the 6,000 limit (what tests check)."""
    return sum(len(embed) for embed in message.embeds)
