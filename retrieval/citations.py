"""Citation numbers: the one numbering that answers, digests, timelines, reactions and alerts
share. A number is decided once, the first time a paragraph is cited, and renderers never
renumber: [1] is the same paragraph in the text, the sources list and the JSON."""

from __future__ import annotations

from collections.abc import Callable

from retrieval.models import Article, Citation


def citation_of(article: Article, paragraph: int, n: int, passage_id: int = 0) -> Citation:
    """The citation ``n`` of ``paragraph`` of ``article`` (``passage_id`` 0 when none is known)."""
    return Citation(n, article.id, article.title, article.source, article.url, article.published, paragraph, passage_id)


class CitationNumbers:
    """Citations numbered in the order they are first cited: one per (article, paragraph)."""

    def __init__(self) -> None:
        self.citations: list[Citation] = []
        self._numbers: dict[tuple[int, int], int] = {}

    def number(self, article: Article, paragraph: int, passage_id: int = 0) -> int:
        key = (article.id, paragraph)
        if key not in self._numbers:
            self._numbers[key] = len(self.citations) + 1
            self.citations.append(citation_of(article, paragraph, self._numbers[key], passage_id))
        return self._numbers[key]

    def number_by_id(
        self, article_id: int, paragraph: int, passage_id: int, lookup: Callable[[int], Article | None]
    ) -> int:
        """``number`` for an article known by id: ``lookup`` (the store's) runs only for a new one."""
        known = self._numbers.get((article_id, paragraph))
        if known is not None:
            return known
        article = lookup(article_id)
        if article is None:
            raise LookupError(f"article {article_id} is not in the store")
        return self.number(article, paragraph, passage_id)
