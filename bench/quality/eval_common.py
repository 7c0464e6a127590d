"""Shared pieces of the evaluation harness: metrics, the split rule, and cached libraries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import faiss
import numpy as np

from retrieval.index.embedder import DIMENSION, Embedder
from retrieval.library import Library
from retrieval.models import Answer


def in_half(index: int, half: str) -> bool:
    """Questions with an even position fit thresholds ("fit"); odd ones are reported ("test")."""
    if half == "all":
        return True
    return (index % 2 == 0) == (half == "fit")


@dataclass
class Tally:
    """Running counts for one system on one question set."""

    answerable: int = 0
    impossible: int = 0
    at1: int = 0
    at5: int = 0
    reciprocal: float = 0.0
    hit: int = 0
    abstained_impossible: int = 0
    false_abstained: int = 0
    asked: int = 0
    abstained: int = 0
    seconds: list[float] = field(default_factory=list)

    def rank(self, ranked: Sequence[int], gold: int) -> None:
        top = list(dict.fromkeys(ranked))[:5]
        if top[:1] == [gold]:
            self.at1 += 1
        if gold in top:
            self.at5 += 1
            self.reciprocal += 1.0 / (top.index(gold) + 1)


def ratio(part: float, whole: int) -> float:
    return part / whole if whole else float("nan")


def ranked_articles(library: Library, answer: Answer, query: str) -> list[int]:
    """Article ids in the order a user sees them: the answer's citations, then closest/search."""
    ranked = [c.article_id for c in answer.citations]
    ranked += [hit.passage.article_id for hit in answer.closest]
    if len(dict.fromkeys(ranked)) < 5:
        ranked += [hit.passage.article_id for hit in library.search(query, 8)]
    return ranked


def verbatim_spans(library: Library, answer: Answer) -> tuple[int, int]:
    """(spans checked, spans equal to their article text at their offsets)."""
    good = 0
    for span in answer.spans:
        article = library.store.article(span.article_id, with_text=True)
        if article is not None and article.text[span.start : span.end] == span.text:
            good += 1
    return len(answer.spans), good


class DenseBaseline:
    """Plain FAISS top-k over the stored sentence vectors of the same model: no BM25, no rules.

    A passage's score is its best sentence's cosine; the answer is the top sentence. It
    abstains below one cosine threshold, fitted like ours on the fit half.
    """

    def __init__(self, library: Library, embedder: Embedder) -> None:
        self.embedder = embedder
        self.index = faiss.IndexIDMap2(faiss.IndexFlatIP(DIMENSION))
        for ids, vectors in library.store.iter_sentence_vectors():
            self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids.astype(np.int64))
        article_ids = library.store.article_ids().tolist()
        self.sentence: dict[int, tuple[int, str]] = {}
        for start in range(0, len(article_ids), 500):  # a few hundred "?" per query, on any engine
            for sentence in library.store.sentences_of_articles(article_ids[start : start + 500]):
                self.sentence[sentence.id] = (sentence.article_id, sentence.text)

    def ask(self, question: str, k: int = 50) -> tuple[list[int], str, float]:
        """(article ids best first, best sentence text, its cosine)."""
        vector = self.embedder.encode_one(question).reshape(1, -1)
        scores, ids = self.index.search(vector, k)
        ranked = [self.sentence[int(i)][0] for i in ids[0] if i >= 0]
        if not ranked:
            return [], "", 0.0
        return ranked, self.sentence[int(ids[0][0])][1], float(scores[0][0])


def fit_threshold(cosines_answerable: list[float], max_false: float = 0.03) -> float:
    """The highest cosine threshold whose false abstention on answerable questions is <= max_false."""
    if not cosines_answerable:
        return 0.0
    ordered = sorted(cosines_answerable)
    allowed = int(max_false * len(ordered))
    return ordered[allowed] - 1e-6 if allowed < len(ordered) else 0.0


def open_cached(directory: Path, embedder: Embedder) -> Library:
    return Library.open(directory, embedder)
