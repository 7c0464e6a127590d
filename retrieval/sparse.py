"""BM25 over passages, updated in place as articles come and go.

bm25s builds immutable indexes (every new article would mean a full rebuild), so Byline keeps
its own small inverted index: per term, the passages that contain it and how often. Scoring a
query touches only the postings of its terms.
"""

from __future__ import annotations

import math
import pickle
from collections import Counter
from pathlib import Path

import numpy as np

from .atomic import write_atomically

# v2: accents folded in search tokens; a v1 file is rebuilt from the store.
_FORMAT = "byline-bm25-v2"


class SparseIndex:
    """Okapi BM25 (k1=1.2, b=0.75) over stemmed content words."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._postings: dict[str, dict[int, int]] = {}
        self._lengths: dict[int, int] = {}
        self._total_length = 0
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._sorted_terms: list[str] | None = None
        # Passage lengths by passage id, for vectorised scoring.
        self._length_array = np.zeros(1024, dtype=np.float32)

    def count(self) -> int:
        return len(self._lengths)

    def add(self, doc_id: int, tokens: list[str]) -> None:
        if doc_id in self._lengths:
            self.remove(doc_id, tokens)
        self._sorted_terms = None
        for term, frequency in Counter(tokens).items():
            self._postings.setdefault(term, {})[doc_id] = frequency
            self._arrays.pop(term, None)
        self._lengths[doc_id] = len(tokens)
        self._total_length += len(tokens)
        self._set_length(doc_id, len(tokens))

    def _set_length(self, doc_id: int, length: int) -> None:
        if doc_id >= len(self._length_array):
            grown = np.zeros(max(doc_id + 1, 2 * len(self._length_array)), dtype=np.float32)
            grown[: len(self._length_array)] = self._length_array
            self._length_array = grown
        self._length_array[doc_id] = length

    def remove(self, doc_id: int, tokens: list[str]) -> None:
        if doc_id not in self._lengths:
            return
        self._sorted_terms = None
        for term in set(tokens):
            postings = self._postings.get(term)
            if postings is not None:
                postings.pop(doc_id, None)
                self._arrays.pop(term, None)
                if not postings:
                    del self._postings[term]
        self._total_length -= self._lengths.pop(doc_id)
        self._set_length(doc_id, 0)

    def sorted_terms(self) -> list[str]:
        """Every indexed term in order (for spelling look-ups); cached until the index changes."""
        if self._sorted_terms is None:
            self._sorted_terms = sorted(self._postings)
        return self._sorted_terms

    def _term_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        cached = self._arrays.get(term)
        if cached is None:
            postings = self._postings.get(term, {})
            cached = (
                np.fromiter(postings.keys(), dtype=np.int64, count=len(postings)),
                np.fromiter(postings.values(), dtype=np.float32, count=len(postings)),
            )
            self._arrays[term] = cached
        return cached

    def search(self, tokens: list[str], k: int) -> list[tuple[int, float]]:
        """The ``k`` best passages for the query terms, best first."""
        if not tokens or not self._lengths:
            return []
        count = len(self._lengths)
        average = self._total_length / count
        scores = np.zeros(len(self._length_array), dtype=np.float32)
        touched = []
        for term in set(tokens):
            ids, frequencies = self._term_arrays(term)
            if not len(ids):
                continue
            idf = math.log(1 + (count - len(ids) + 0.5) / (len(ids) + 0.5))
            lengths = self._length_array[ids]
            scores[ids] += (
                idf * frequencies * (self.k1 + 1) / (frequencies + self.k1 * (1 - self.b + self.b * lengths / average))
            )
            touched.append(ids)
        if not touched:
            return []
        # Every passage with a query term has a positive score (idf > 0), so the non-zero
        # entries are the candidates; cheaper than de-duplicating the postings.
        candidates = np.flatnonzero(scores)
        candidate_scores = scores[candidates]
        if len(candidates) > k:
            top = np.argpartition(-candidate_scores, k)[:k]
            candidates, candidate_scores = candidates[top], candidate_scores[top]
        order = np.argsort(-candidate_scores)
        return [(int(candidates[i]), float(candidate_scores[i])) for i in order]

    def max_idf(self, tokens: list[str]) -> dict[str, float]:
        """How rare each query term is (0 for a term no passage has)."""
        count = max(1, len(self._lengths))
        rarity = {}
        for term in set(tokens):
            n = len(self._postings.get(term, {}))
            rarity[term] = math.log(1 + (count - n + 0.5) / (n + 0.5)) if n else 0.0
        return rarity

    def save(self, path: Path, generation: int) -> None:
        state = {"format": _FORMAT, "generation": generation, "postings": self._postings, "lengths": self._lengths}
        write_atomically(
            path, lambda temporary: temporary.write_bytes(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
        )

    @classmethod
    def load(cls, path: Path) -> tuple[SparseIndex, int]:
        """(index, generation); raises ``ValueError`` or ``OSError`` on a bad file."""
        try:
            # The file is Byline's own, written atomically in its data directory.
            state = pickle.loads(path.read_bytes())  # noqa: S301
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, TypeError) as error:
            raise ValueError(f"unreadable BM25 file: {error}") from None
        written_by = str(state.get("format", "")) if isinstance(state, dict) else ""
        if written_by.startswith("byline-bm25-") and written_by != _FORMAT:
            raise ValueError("out of date")  # an older version's: rebuilt, as when stale
        if not isinstance(state, dict) or state.get("format") != _FORMAT:
            raise ValueError("not a Byline BM25 file")
        index = cls()
        index._postings = state["postings"]
        index._lengths = state["lengths"]
        index._total_length = sum(index._lengths.values())
        for doc_id, length in index._lengths.items():
            index._set_length(doc_id, length)
        return index, int(state["generation"])
