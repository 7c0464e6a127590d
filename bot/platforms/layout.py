"""What every renderer shares: the reply-kind dispatch, the three-message rule and how an
over-long unit is cut. Each platform keeps its own limits and escaping; only the rules that were
written out three times (Slack, Discord, the terminal) live here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar, assert_never

from bot.replies import (
    AnswerReply,
    DigestReply,
    PassagesReply,
    Reply,
    SearchReply,
    SourcesReply,
    TextReply,
    VerifyReply,
)

# One question never floods a channel: whatever the articles say, a reply is at most 3 messages.
MAX_MESSAGES = 3
CUT_NOTE = "Cut short: too long for three messages."

M = TypeVar("M")


@dataclass(frozen=True)
class ReplyRenderers(Generic[M]):
    """One renderer per reply kind; calling it renders any reply. A new kind of ``Reply`` is a
    type error here (``assert_never``) until every platform can render it."""

    answer: Callable[[AnswerReply], M]
    search: Callable[[SearchReply], M]
    sources: Callable[[SourcesReply], M]
    passages: Callable[[PassagesReply], M]
    digest: Callable[[DigestReply], M]
    text: Callable[[TextReply], M]
    verify: Callable[[VerifyReply], M]

    def __call__(self, reply: Reply) -> M:
        if isinstance(reply, AnswerReply):
            return self.answer(reply)
        if isinstance(reply, SearchReply):
            return self.search(reply)
        if isinstance(reply, SourcesReply):
            return self.sources(reply)
        if isinstance(reply, PassagesReply):
            return self.passages(reply)
        if isinstance(reply, DigestReply):
            return self.digest(reply)
        if isinstance(reply, TextReply):
            return self.text(reply)
        if isinstance(reply, VerifyReply):
            return self.verify(reply)
        assert_never(reply)


def split_long(text: str, limit: int, safe_cut: Callable[[str, int], int] | None = None) -> list[str]:
    """Cut one unit longer than ``limit`` at spaces into pieces of at most ``limit`` characters:
    a cut piece ends " …" and the next starts "… ", and a trailing ``[n]`` citation marker stays
    whole with the last piece. ``safe_cut(rest, cut)`` may move a cut earlier (Slack: never
    inside an ``&amp;`` escape)."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = rest.rfind(" ", 0, limit - 2)
        if safe_cut is not None:
            cut = safe_cut(rest, cut)
        if cut <= 0:
            cut = limit - 2
        pieces.append(rest[:cut] + " …")
        rest = "… " + rest[cut:].lstrip()
    pieces.append(rest)
    return pieces
