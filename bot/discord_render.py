"""Discord renderers: every ``Reply`` becomes one or more messages of content and embeds.

Discord's limits are Byline's own job (discord.py does not check them): content 2,000 chars,
embed title 256, description 4,096, 25 fields, 6,000 characters across one message's embeds,
10 embeds a message. A reply is built from *blocks* (one answer span, one source line, one
passage) that are never split, then packed into embeds and messages; only a single block
longer than a whole embed (a paragraph-sized quote over 4,000 characters) is cut, at a space,
keeping its ``[n]`` marker whole.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import discord
from discord.utils import escape_markdown

from retrieval.models import Answer, AnswerSpan, Citation, Digest
from retrieval.render import CLOSE_QUOTE, OPEN_QUOTE, format_date, with_speaker_headings

from .replies import AnswerReply, DigestReply, PassagesReply, Reply, SearchReply, SourcesReply, TextReply

CONTENT_LIMIT = 2000
TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELDS_LIMIT = 25
MESSAGE_EMBED_LIMIT = 6000
EMBEDS_PER_MESSAGE = 10

BRAND = discord.Colour(0x2F6FEB)
WARNING = discord.Colour(0xD29922)
ERROR = discord.Colour(0xCF222E)


@dataclass
class DiscordMessage:
    """One message to send: content and embeds already within Discord's limits."""

    content: str = ""
    embeds: list[discord.Embed] = field(default_factory=list)


def clean(text: str) -> str:
    """Article text shown as written: Discord markdown in it is escaped, never interpreted."""
    return escape_markdown(" ".join(text.split()))


def citation_text(citation: Citation) -> str:
    """ "[1] [Headline](url) — Outlet, 11 Dec 2017, ¶12" (linked when the article has a URL)."""
    title = clean(citation.title) or "Untitled"
    if citation.url.startswith(("http://", "https://")):
        # Square brackets in a headline would end the link text early.
        title = f"[{title.replace('[', '(').replace(']', ')')}]({citation.url})"
    details = [part for part in (clean(citation.source), format_date(citation.published)) if part]
    return f"`[{citation.n}]` {title} — {', '.join([*details, f'¶{citation.paragraph}'])}"


def span_block(span: AnswerSpan) -> str:
    if span.kind == "quote":
        return f"> {OPEN_QUOTE}{clean(span.text)}{CLOSE_QUOTE} **[{span.citation}]**"
    return f"{clean(span.text)} **[{span.citation}]**"


def answer_blocks(spans: Iterable[AnswerSpan]) -> list[str]:
    """Answer body blocks: quotes grouped under their speaker, like the terminal renderer."""
    blocks: list[str] = []
    for heading, span in with_speaker_headings(spans):
        # The speaker line travels with its first quote, so a split never orphans it.
        prefix = f"**{clean(heading)}** said:\n" if heading is not None else ""
        blocks.append(prefix + span_block(span))
    return blocks


def split_block(block: str, limit: int) -> list[str]:
    """Cut one over-long block at spaces; a trailing ``[n]`` marker stays with the last piece."""
    pieces: list[str] = []
    rest = block
    while len(rest) > limit:
        cut = rest.rfind(" ", 0, limit - 2)
        if cut <= 0:
            cut = limit - 2
        pieces.append(rest[:cut] + " …")
        rest = "… " + rest[cut:].lstrip()
    pieces.append(rest)
    return pieces


def pack(
    blocks: list[str],
    *,
    title: str = "",
    colour: discord.Colour = BRAND,
    footer: str = "",
    content: str = "",
) -> list[DiscordMessage]:
    """Pack blocks into embeds and messages within every limit; blocks are never split apart.

    The title goes on the first embed, the footer on the last; ``content`` on the first message.
    """
    title = title[: TITLE_LIMIT - 1] + "…" if len(title) > TITLE_LIMIT else title
    footer = footer[:2000]
    # Leave room for the footer on whichever embed ends up last.
    budget_desc = DESCRIPTION_LIMIT
    budget_message = MESSAGE_EMBED_LIMIT - len(footer) - len(title)
    pieces: list[str] = []
    for block in blocks:
        pieces.extend(
            split_block(block, min(budget_desc, budget_message) - 2) if len(block) > budget_desc - 2 else [block]
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
    if title:
        messages[0].embeds[0].title = title
    if footer:
        messages[-1].embeds[-1].set_footer(text=footer)
    if content:
        messages[0].content = content[:CONTENT_LIMIT]
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


def render_answer(answer: Answer) -> list[DiscordMessage]:
    blocks: list[str] = []
    if answer.message:
        blocks.append(f"*{escape_markdown(answer.message)}*")
    blocks.extend(answer_blocks(answer.spans))
    if answer.citations:
        blocks.append("\n**Sources**")
        blocks.extend(citation_text(c) for c in answer.citations)
    if not answer.answered and answer.closest:
        blocks.append("\n**Closest passages**")
        for hit in answer.closest:
            snippet = clean(hit.passage.text)
            if len(snippet) > 300:
                snippet = snippet[:300].rsplit(" ", 1)[0] + " …"
            blocks.append(f"{snippet}\n{citation_text(hit.citation)}")
    if not blocks:
        blocks.append("I could not find an answer to that in the articles I have.")
    footer = f"Interpreted as: {answer.interpreted_as}" if answer.interpreted_as else ""
    question = " ".join(answer.question.split())
    return pack(blocks, title=question, colour=BRAND if answer.answered else WARNING, footer=footer)


def render_search(reply: SearchReply) -> list[DiscordMessage]:
    if not reply.hits:
        return pack([f"No passages match “{clean(reply.query)}”."], colour=WARNING)
    blocks = [f"{citation_text(hit.citation)}\n{clean(hit.passage.text)}\n" for hit in reply.hits]
    return pack(blocks, title=f"Top passages for “{' '.join(reply.query.split())}”")


def render_sources(reply: SourcesReply) -> list[DiscordMessage]:
    if not reply.total:
        return pack(
            ["No articles yet. Add some with `byline ingest PATH` or `/ingest`."], title="Sources", colour=WARNING
        )
    blocks = []
    for article in reply.articles:
        title = clean(article.title) or "Untitled"
        if article.url.startswith(("http://", "https://")):
            title = f"[{title.replace('[', '(').replace(']', ')')}]({article.url})"
        details = ", ".join(p for p in (clean(article.source), format_date(article.published)) if p)
        blocks.append(f"• {title}" + (f" — {details}" if details else ""))
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
    blocks = [f"{citation_text(citation)}\n{clean(passage.text)}\n" for citation, passage in reply.passages]
    return pack(blocks, title="Cited passages")


def render_digest(digest: Digest) -> list[DiscordMessage]:
    title = digest.header or "News digest"
    if not digest.stories:
        # The builder's text says "Nothing new since Mon 30 Nov, 09:00" in the channel's time.
        fallback = f"Nothing new since {format_date(digest.since)}." if digest.since else "Nothing new."
        return pack([clean(digest.text or fallback)], title=title, colour=WARNING)
    blocks: list[str] = []
    if digest.late:
        blocks.append("*This digest is late: Byline was offline when it was due.*")
    for story in digest.stories:
        lines = answer_blocks(story.spans)
        # A story's headline leads its first line so the two never land in different embeds.
        head = f"\n**{clean(story.headline)}** [{story.lead_citation}]"
        blocks.append(head + ("\n" + lines[0] if lines else ""))
        blocks.extend(lines[1:])
    if digest.citations:
        blocks.append("\n**Sources**")
        blocks.extend(citation_text(c) for c in digest.citations)
    count, stories = digest.article_count, len(digest.stories)
    footer = f"{count} article{'s' if count != 1 else ''} · {stories} stor{'ies' if stories != 1 else 'y'}"
    return pack(blocks, title=title, footer=footer)


def render_text(reply: TextReply) -> list[DiscordMessage]:
    text = f"⚠️ {reply.text}" if reply.error else reply.text
    return [DiscordMessage(content=chunk) for chunk in split_text(text)]


def render(reply: Reply) -> list[DiscordMessage]:
    """Every reply kind, as messages ready to send (buttons are added by the adapter)."""
    if isinstance(reply, AnswerReply):
        return render_answer(reply.answer)
    if isinstance(reply, SearchReply):
        return render_search(reply)
    if isinstance(reply, SourcesReply):
        return render_sources(reply)
    if isinstance(reply, PassagesReply):
        return render_passages(reply)
    if isinstance(reply, DigestReply):
        return render_digest(reply.digest)
    return render_text(reply)


def message_size(message: DiscordMessage) -> int:
    """Characters Discord counts against the 6,000 limit (what tests check)."""
    return sum(len(embed) for embed in message.embeds)
