"""What the service hands back to an adapter; each adapter has one renderer per kind."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from retrieval.features.quote_check import QuoteCheck
from retrieval.models import Answer, Article, Citation, Digest, Passage, SearchHit


@dataclass
class AnswerReply:
    """A cited answer. ``answer_id`` keys the buttons (passages, feedback, share, related) under
    it; ``asked_by`` is the asker's user id when a private answer was shared with the channel, or
    when they clicked a related question (``follow_up``: the attribution then shows the question,
    which nobody typed where the answer appears)."""

    answer: Answer
    answer_id: str
    private: bool = False
    asked_by: str = ""
    follow_up: bool = False


@dataclass
class SearchReply:
    query: str
    hits: list[SearchHit]
    private: bool = False


@dataclass
class SourcesReply:
    articles: list[Article]
    page: int
    pages: int
    total: int
    private: bool = False


@dataclass
class PassagesReply:
    """The passages an answer cites; ``expired`` when the answer is no longer known."""

    passages: list[tuple[Citation, Passage]] = field(default_factory=list)
    expired: bool = False
    private: bool = True


# Text Byline did not write (a user's question, an article's headline) inside a ``TextReply``,
# between two control characters that ``clean_input`` never lets through: each renderer shows it
# inert (Discord escapes its Markdown, so "[Reset](https://evil)" is no masked link; Slack swaps
# its mrkdwn; the terminal drops the marks with every other control character).
_OPEN, _CLOSE = "\x02", "\x03"
_MARKED = re.compile("\x02([^\x02\x03]*)\x03")


def untrusted(text: str) -> str:
    """``text`` marked as not Byline's own, for a ``TextReply``."""
    return _OPEN + text.replace(_OPEN, "").replace(_CLOSE, "") + _CLOSE


def render_marked(text: str, own: Callable[[str], str], theirs: Callable[[str], str]) -> str:
    """``text`` with Byline's own parts through ``own`` and the ``untrusted`` parts through ``theirs``."""
    parts: list[str] = []
    position = 0
    for match in _MARKED.finditer(text):
        parts += [own(text[position : match.start()]), theirs(match.group(1))]
        position = match.end()
    parts.append(own(text[position:]))
    return "".join(parts).replace(_OPEN, "").replace(_CLOSE, "")


@dataclass
class TextReply:
    """A short notice: help, usage, an error the user can act on, a rate-limit notice."""

    text: str
    private: bool = False
    error: bool = False


@dataclass
class DigestReply:
    """A digest to post; ``digest.stories`` is empty when nothing is new."""

    digest: Digest
    private: bool = False


@dataclass
class VerifyReply:
    """A quote check's verdict (``/verify``): the real words, the differences, the citation."""

    check: QuoteCheck
    private: bool = False


Reply = AnswerReply | SearchReply | SourcesReply | PassagesReply | TextReply | DigestReply | VerifyReply
