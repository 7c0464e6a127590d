"""What the service hands back to an adapter; each adapter has one renderer per kind."""

from __future__ import annotations

from dataclasses import dataclass, field

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


Reply = AnswerReply | SearchReply | SourcesReply | PassagesReply | TextReply | DigestReply
