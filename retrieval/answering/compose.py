"""Turning chosen evidence into an ``Answer``: spans, citations, the honest "not found"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from retrieval.answering.checks import Refusal
from retrieval.answering.question import Question
from retrieval.citations import CitationNumbers, citation_of
from retrieval.models import Answer, AnswerSpan, Citation, Passage, SearchHit
from retrieval.ranking import Tuning, _rank_passages
from retrieval.render import render_plain
from retrieval.scope import articles_phrase

if TYPE_CHECKING:
    from retrieval.ports import Corpus
    from retrieval.scope import ResolvedScope


def abstain(
    library: Corpus,
    question: Question,
    refusal: Refusal,
    vector: np.ndarray | None,
    tokens: list[str],
    tuning: Tuning,
    ranked: list[tuple[int, float]] | None = None,
    closest: list[SearchHit] | None = None,
    scope: ResolvedScope | None = None,
) -> Answer:
    """The honest "not found" answer, with the closest passages (reusing a ranking if given);
    in a scoped channel the passages are the scope's and the message names the scope."""
    if closest is None:
        if ranked is None and vector is not None and library.dense.count():
            ranked = _rank_passages(library, vector, tokens, tuning, scope)
        closest = hits(library, ranked[:3]) if ranked else []
    count = scope.article_count if scope is not None else library.article_count()
    answer = Answer(
        question=question.text,
        answered=False,
        spans=[],
        citations=[],
        message=refusal.message or f"I couldn't find that in {articles_phrase(library.store, scope)}.",
        closest=closest,
        article_count=count,
        standalone_question=question.standalone,
        refused_by=refusal.check.name,
    )
    answer.text = render_plain(answer)
    return answer


def hits(library: Corpus, ranked: Sequence[tuple[int, float]]) -> list[SearchHit]:
    """Passages with the citation each would get, numbered in the given order."""
    passages = library.store.passages([pid for pid, _ in ranked])
    articles = library.store.articles(sorted({p.article_id for p in passages.values()}))
    found = []
    for n, (pid, score) in enumerate(ranked, start=1):
        passage = passages.get(pid)
        if passage is not None and passage.article_id in articles:
            citation = citation_of(articles[passage.article_id], passage.paragraph_first, n, passage.id)
            found.append(SearchHit(passage, citation, score))
    return found


def finish(
    library: Corpus, question: Question, spans: list[AnswerSpan], citations: CitationNumbers, message: str = ""
) -> Answer:
    answer = Answer(
        question=question.text,
        answered=True,
        spans=spans,
        citations=citations.citations,
        message=message,
        article_count=library.article_count(),
        interpreted_as=_interpretation(question),
        standalone_question=question.standalone,
    )
    answer.text = render_plain(answer)
    return answer


def _interpretation(question: Question) -> str:
    if question.kind == "speaker":
        return f"what {question.who} said" + (f" about {question.topic}" if question.topic else "")
    return ""


def passages_for(library: Corpus, answer: Answer) -> list[tuple[Citation, Passage]]:
    """The cited passages of an answer, for "Show passages"."""
    passages = library.store.passages([c.passage_id for c in answer.citations])
    return [(c, passages[c.passage_id]) for c in answer.citations if c.passage_id in passages]
