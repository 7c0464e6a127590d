"""Domain objects shared by every part of Byline.

These are plain dataclasses so that the answer structure can be rendered by any adapter and
serialised to JSON without knowing how it was produced.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# Titles, outlets and authors come from feeds and pages anyone may write: a 200,000-character
# headline must not reach a chat message, so each is capped where an article is read.
FIELD_LIMIT = 300
_CAPPED_FIELDS = frozenset({"title", "source", "author"})


def cap_field(text: str, limit: int = FIELD_LIMIT) -> str:
    """``text`` at most ``limit`` characters: cut at a word (when one ends late enough) with "…"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


# More tags than this on one article are a keyword dump, not its sections.
MAX_TAGS = 20


def clean_tags(tags: Any) -> tuple[str, ...]:
    """Tags as stored: stripped, lower-cased, capped, without repeats or empties."""
    found = dict.fromkeys(cap_field(" ".join(str(t).split()).casefold()) for t in tags or ())
    return tuple(t for t in found if t)[:MAX_TAGS]


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of an article: its 1-based number and where it lies in the article text."""

    number: int
    start: int
    end: int


@dataclass
class ArticleDraft:
    """An article read from a file or a URL, before it is stored.

    ``text`` is the article body exactly as it will be stored; every offset in Byline points
    into it. ``key`` identifies the article's origin (a file path or canonical URL) so that a
    changed version replaces the old one instead of being stored twice.
    """

    key: str
    title: str
    text: str
    source: str = ""
    url: str = ""
    published: str = ""
    author: str = ""
    # Sections or tags (front matter ``tags:``, a feed item's categories): lower-cased, each
    # at most ``FIELD_LIMIT`` characters; a channel's scope can follow them (``scope.py``).
    tags: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        # Capped however the field is set: at construction, or when a feed fills it in later.
        if name in _CAPPED_FIELDS and isinstance(value, str):
            value = cap_field(value)
        if name == "tags":
            value = clean_tags(value)
        super().__setattr__(name, value)


@dataclass(frozen=True)
class Article:
    """A stored article."""

    id: int
    key: str
    title: str
    source: str
    url: str
    published: str
    author: str
    added_at: str
    text: str = ""


@dataclass(frozen=True)
class Passage:
    """A retrieval unit: one or more whole paragraphs, or part of a long paragraph."""

    id: int
    article_id: int
    paragraph_first: int
    paragraph_last: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Sentence:
    """A sentence of a passage, with offsets into the article text."""

    id: int
    article_id: int
    passage_id: int
    paragraph: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Quote:
    """The part of a direct quote that lies in one paragraph.

    A quote that runs on across paragraphs is stored as one ``Quote`` per paragraph sharing a
    ``group``; ``text`` is the words inside the quote marks, verbatim, and ``start``/``end``
    are its offsets in the article text.
    """

    id: int
    article_id: int
    paragraph: int
    start: int
    end: int
    text: str
    speaker: str
    group: int = 0
    partial: bool = False


@dataclass(frozen=True)
class Citation:
    """A numbered source of an answer: one paragraph of one article."""

    n: int
    article_id: int
    title: str
    source: str
    url: str
    published: str
    paragraph: int
    passage_id: int = 0


SpanKind = Literal["quote", "sentence"]


@dataclass(frozen=True)
class AnswerSpan:
    """One verbatim piece of an answer.

    ``text`` equals ``article.text[start:end]`` of the cited article: answers never contain
    words that are not in an article (apart from the attribution, which is ``speaker``).
    """

    text: str
    kind: SpanKind
    speaker: str
    citation: int
    article_id: int
    paragraph: int
    start: int
    end: int
    score: float = 0.0


@dataclass(frozen=True)
class SearchHit:
    """A passage found for a query, with the citation it would get in an answer."""

    passage: Passage
    citation: Citation
    score: float


@dataclass
class Answer:
    """The one structured answer type. Adapters render it; they never renumber citations."""

    question: str
    answered: bool
    spans: list[AnswerSpan]
    citations: list[Citation]
    text: str = ""
    message: str = ""
    closest: list[SearchHit] = field(default_factory=list)
    article_count: int = 0
    interpreted_as: str = ""
    # The question with its conversation folded in ("and Guardiola?" -> "what did Guardiola say
    # about the referee?"): what a follow-up to this answer builds on.
    standalone_question: str = ""
    # When not answered: the name of the check that refused ("names_absent", "topic_off", ...),
    # so that every abstention can be traced to one rule and measured (see retrieval/answering/).
    refused_by: str = ""
    # Follow-up questions checked to be answerable from the same articles (retrieval/features/related.py);
    # filled in by the service after the answer is composed, empty for ``Library.ask`` itself.
    related: list[str] = field(default_factory=list)

    def citation(self, n: int) -> Citation:
        return self.citations[n - 1]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["closest"] = [
            {
                "passage_id": hit.passage.id,
                "article_id": hit.passage.article_id,
                "text": hit.passage.text,
                "score": hit.score,
                "citation": asdict(hit.citation),
            }
            for hit in self.closest
        ]
        return data


@dataclass
class DigestStory:
    """One story of a digest: articles about the same event, with 1-2 verbatim key lines."""

    headline: str
    articles: list[Article]
    spans: list[AnswerSpan]
    lead_citation: int


@dataclass
class Digest:
    """A briefing of the articles added in a window, grouped by story, with citations."""

    channel: str
    since: str
    until: str
    article_count: int
    stories: list[DigestStory]
    citations: list[Citation]
    header: str = ""
    text: str = ""
    late: bool = False


# Called with (done, total) as an ingest goes.
Progress = Callable[[int, int], None]


@dataclass
class IngestReport:
    """What one ingest did, per file or page, so the user can see what was added and why not."""

    added: list[tuple[str, str]] = field(default_factory=list)
    replaced: list[tuple[str, str]] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    # (key, why): near-duplicates of another article of the batch or the library, not stored.
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    article_ids: list[int] = field(default_factory=list)
    quotes: int = 0
    paragraphs: int = 0

    def summary(self) -> str:
        parts = [f"{len(self.added)} added"]
        if self.replaced:
            parts.append(f"{len(self.replaced)} updated")
        if self.unchanged:
            parts.append(f"{len(self.unchanged)} already stored")
        if self.duplicates:
            parts.append(f"{len(self.duplicates)} near-duplicate{'s' if len(self.duplicates) != 1 else ''}")
        if self.failed:
            parts.append(f"{len(self.failed)} skipped")
        return ", ".join(parts)
