"""The answer path's reading stage: the reader scores the candidates retrieval proposes.

Retrieval (hybrid ranking, the speaker constraint) proposes; the reader reads the best
``MAX_CANDIDATES`` of them, each in its context, in one batch, and gives each the probability
that it answers. The stage returns the candidates in the order of the question kind's blend of
that probability with the rules' score (``reader.Blend``), and the best probability with the
kind's threshold, which the pipeline holds it against.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from retrieval.answering import checks
from retrieval.answering.reader import MAX_CANDIDATES, Blend, Reader, reader_mode, shared_reader
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


def _blended(items: list[T], probabilities: list[float], blend: Blend) -> list[T]:
    """The read items in the blend's order, then the unread ones; every item keeps its rules'
    score, lowered where needed so the scores never rise down the list (the margins the later
    stages draw, between the first candidate and the next, are in the rules' scale)."""
    head: list[T] = items[: len(probabilities)]
    if not math.isinf(blend.rules_weight):
        clipped = np.clip(np.asarray(probabilities, dtype=np.float64), 1e-6, 1 - 1e-6)
        blended = np.log(clipped / (1 - clipped)) + blend.rules_weight * np.asarray([item.score for item in head])
        head = [head[i] for i in np.argsort(-blended, kind="stable")]
    every = head + items[len(probabilities) :]
    ceilings: list[float] = np.minimum.accumulate([item.score for item in every]).tolist() if every else []
    return [item if item.score <= c else replace(item, score=c) for item, c in zip(every, ceilings, strict=True)]


def _read(
    library: Corpus, reader: Reader, question: str, items: list[T], sentences: list[Sentence], kind: str
) -> Reading:
    blend = reader.calibration.blend(kind)
    if blend.reads_nothing:
        return Reading(items, 1.0, 0.0)  # the kind keeps the rules' order and never refuses: no time spent reading
    probabilities = reader.probabilities(question, candidate_texts(library, sentences)).tolist()
    return Reading(_blended(items, probabilities, blend), max(probabilities, default=0.0), blend.threshold)


def read_sentences(library: Corpus, reader: Reader, question: str, scored: list[_Scored], kind: str) -> Reading:
    """The fact path's sentences, read (see the module docstring); ``kind`` picks the blend
    (``who_said`` or ``fact``)."""
    return _read(library, reader, question, scored, [s.sentence for s in scored[:MAX_CANDIDATES]], kind)


def read_quotes(library: Corpus, reader: Reader, question: str, ranked: list[RankedQuote]) -> Reading:
    """A speaker's quotes, each read through its sentence closest to the topic."""
    return _read(library, reader, question, ranked, [q.best for q in ranked[:MAX_CANDIDATES]], "speaker")
