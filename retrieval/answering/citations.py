"""Citation numbers, decided once for an answer: renderers never renumber."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..models import Citation

if TYPE_CHECKING:
    from ..library import Library


class Citations:
    """Citation numbers, decided once here: one per (article, paragraph), in answer order."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self.numbers: dict[tuple[int, int], int] = {}
        self.items: list[Citation] = []

    def number(self, article_id: int, paragraph: int, passage_id: int) -> int:
        key = (article_id, paragraph)
        if key not in self.numbers:
            article = self.library.store.article(article_id)
            assert article is not None
            n = len(self.items) + 1
            self.items.append(
                Citation(
                    n, article.id, article.title, article.source, article.url, article.published, paragraph, passage_id
                )
            )
            self.numbers[key] = n
        return self.numbers[key]
