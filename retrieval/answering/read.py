"""The answer path's reading stage: the reader scores the candidates retrieval proposes.

Retrieval (hybrid ranking, the speaker constraint) proposes; the reader reads the best
``MAX_CANDIDATES`` of them, each in its context, in one batch, and gives each the probability
that it answers. The stage returns the candidates in the reader's order, their score replaced
by that probability (so the chosen spans' margin and the shown score are the reader's), and the
best probability, which the pipeline holds against the reader's threshold.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from retrieval.answering import checks
from retrieval.answering.reader import MAX_CANDIDATES, Reader, reader_mode, shared_reader
from retrieval.answering.reader_input import candidate_text, neighbours
from retrieval.answering.speaker import RankedQuote
from retrieval.models import Sentence
from retrieval.ranking import Tuning, _Scored

if TYPE_CHECKING:
    from retrieval.ports import Corpus

T = TypeVar("T", _Scored, RankedQuote)


@dataclass(frozen=True)
class Reading:
    """The candidates in the reader's order, and the reader's verdict on the best of them."""

    items: list[_Scored] | list[RankedQuote]
    best: float
    threshold: float

    @property
    def answers(self) -> bool:
        return self.best >= self.threshold


def active_reader(tuning: Tuning) -> Reader | None:
    """The reader, when the settings and the tuning let the answer path read with it."""
    if not checks.READER.on(tuning) or reader_mode() == "off":
        return None
    return shared_reader()


def candidate_texts(library: Corpus, sentences: list[Sentence]) -> list[str]:
    """Each sentence as the reader reads it: with its speaker, headline and neighbours."""
    article_ids = sorted({s.article_id for s in sentences})
    by_article: dict[int, list[Sentence]] = defaultdict(list)
    for sentence in library.store.sentences_of_articles(article_ids):
        by_article[sentence.article_id].append(sentence)
    for items in by_article.values():
        items.sort(key=lambda s: s.start)
    quotes = [q for q in library.store.quotes_of_articles(article_ids) if q.speaker]
    titles = {article_id: article.title for article_id, article in library.store.articles(article_ids).items()}
    texts = []
    for sentence in sentences:
        ordered = by_article.get(sentence.article_id, [])
        index = next((i for i, s in enumerate(ordered) if s.id == sentence.id), None)
        before, after = neighbours(ordered, index) if index is not None else ("", "")
        speaker = next(
            (
                q.speaker
                for q in quotes
                if q.article_id == sentence.article_id and q.start < sentence.end and sentence.start < q.end
            ),
            "",
        )
        texts.append(candidate_text(sentence.text, speaker, titles.get(sentence.article_id, ""), before, after))
    return texts


def _reorder(items: list[T], probabilities: list[float]) -> list[T]:
    """The read items by probability (score := probability), then the unread ones below them."""
    read: list[T] = [replace(item, score=p) for item, p in zip(items, probabilities, strict=False)]
    read.sort(key=lambda item: -item.score)
    floor = min(probabilities) - 1.0
    unread: list[T] = [replace(item, score=floor - n * 1e-3) for n, item in enumerate(items[len(probabilities) :])]
    return read + unread


def read_sentences(library: Corpus, reader: Reader, question: str, scored: list[_Scored]) -> Reading:
    """The fact path's sentences, read (see the module docstring)."""
    top = scored[:MAX_CANDIDATES]
    probabilities = reader.probabilities(question, candidate_texts(library, [s.sentence for s in top])).tolist()
    return Reading(_reorder(scored, probabilities), max(probabilities, default=0.0), reader.threshold)


def read_quotes(library: Corpus, reader: Reader, question: str, ranked: list[RankedQuote]) -> Reading:
    """A speaker's quotes, each read through its sentence closest to the topic."""
    top = ranked[:MAX_CANDIDATES]
    probabilities = reader.probabilities(question, candidate_texts(library, [q.best for q in top])).tolist()
    return Reading(_reorder(ranked, probabilities), max(probabilities, default=0.0), reader.threshold)
