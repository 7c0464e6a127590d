"""Ports: what the core calls on its search indexes, so a backend can stand behind each.

These are structural (``typing.Protocol``): FAISS's ``DenseIndex`` and the own BM25
``SparseIndex`` satisfy them without inheriting anything, and a new backend (Qdrant, in
``qdrant_index.py``) is a class with the same methods. The contract each port promises is
written down as tests, run against every backend: ``tests/test_vector_index_contract.py`` and
``tests/test_keyword_index_contract.py``.

The method names are the ones ``ranking.py`` and ``answering/`` call today. Persistence is a
separate, narrower port: the embedded backends are kept in checksummed files of the data
directory (``index_files.py``), while an engine such as Qdrant persists its points itself and
has no bytes to hand over.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

_Form = TypeVar("_Form")


class IdSet:
    """The ids a search may return (a channel's scope: ``scope.py``), given to ``search`` as
    ``within`` so that the index filters while it searches, not after its top k (a filter after
    the top k returns nothing for a scope that holds 1% of the library).

    Each backend turns the ids into its own form once (a FAISS bitmap selector, a boolean mask,
    a Qdrant filter) and keeps it here: the set is built once per library generation and
    reused by every question of the channel, so the form is too.
    """

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = np.unique(np.asarray(ids, dtype=np.int64))  # sorted, no repeats
        self._forms: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, int | np.integer):
            return False
        position = int(np.searchsorted(self.ids, item))
        return position < len(self.ids) and int(self.ids[position]) == int(item)

    def mask(self, size: int) -> np.ndarray:
        """A boolean array of ``size`` entries, True at the ids (ids beyond it are left out)."""

        def build() -> np.ndarray:
            mask = np.zeros(size, dtype=bool)
            mask[self.ids[self.ids < size]] = True
            return mask

        return self.form(f"mask:{size}", build)

    def form(self, key: str, build: Callable[[], _Form]) -> _Form:
        """The backend form named ``key``, built on first use."""
        if key not in self._forms:
            self._forms[key] = build()
        return self._forms[key]  # type: ignore[no-any-return]


@runtime_checkable
class VectorIndex(Protocol):
    """Sentence vectors by sentence id, searched by cosine similarity.

    Vectors are unit length (``embedder.DIMENSION`` of them per sentence), so cosine and inner
    product are the same number; a search score is that cosine, in [-1, 1].
    """

    @property
    def kind(self) -> str:
        """The index layout, for ``index.json`` and the logs ("flat", "ivf", "qdrant")."""
        ...

    def count(self) -> int:
        """How many sentences the index holds."""
        ...

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Index ``vectors`` (one row per id) under new sentence ``ids``: re-adding an id it
        holds is not part of the contract (FAISS keeps both, Qdrant replaces), so callers remove
        an article's sentences before adding its new version, as ``Library`` does."""
        ...

    def remove(self, ids: list[int]) -> None:
        """Forget these sentences; ids the index does not hold are ignored."""
        ...

    def search(self, vector: np.ndarray, k: int, within: IdSet | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, cosine scores) of at most ``k`` nearest sentences, nearest first; with
        ``within``, the ``k`` nearest of those sentences only (filtered during the search)."""
        ...

    def vectors(self, ids: list[int]) -> np.ndarray:
        """The stored vectors of these sentences, one row per id in the order given (for
        exact re-scoring of candidates); an id it does not hold raises ``LookupError`` or
        ``RuntimeError`` (FAISS's own)."""
        ...

    def ids(self) -> np.ndarray:
        """Every sentence id held, sorted (to check the index against the store)."""
        ...

    def needs_new_type(self) -> bool:
        """True when the corpus has outgrown this layout and the index should be rebuilt
        from the store (an engine that manages its own layout always says False)."""
        ...


@runtime_checkable
class KeywordIndex(Protocol):
    """Passages by passage id, searched by BM25 over Byline's own search tokens
    (``text.search_tokens``); also the document frequencies and the vocabulary that the
    term-rarity and spelling checks read."""

    def count(self) -> int:
        """How many passages the index holds."""
        ...

    def add(self, doc_id: int, tokens: list[str]) -> None:
        """Index a passage's tokens under a new ``doc_id``: as for vectors, callers remove a
        passage (with the tokens it was indexed with) before adding it again."""
        ...

    def remove(self, doc_id: int, tokens: list[str]) -> None:
        """Forget a passage, given the tokens it was indexed with; unknown ids are ignored."""
        ...

    def search(self, tokens: list[str], k: int, within: IdSet | None = None) -> list[tuple[int, float]]:
        """(passage id, BM25 score) of at most ``k`` passages with a query term, best first; with
        ``within``, the ``k`` best of those passages only (term statistics stay the library's)."""
        ...

    def max_idf(self, tokens: list[str]) -> dict[str, float]:
        """Each query term's inverse document frequency (how rare it is); 0.0 for a term no
        passage has."""
        ...

    def sorted_terms(self) -> list[str]:
        """Every indexed term, sorted (the vocabulary spelling suggestions are drawn from)."""
        ...

    def ids(self) -> np.ndarray:
        """Every passage id held, sorted (to check or reconcile the index with the store)."""
        ...


@runtime_checkable
class SavedToFile(Protocol):
    """An index kept as one file of the data directory, written and checksummed by
    ``index_files.write_indexes``; each class reads its own bytes back with ``from_bytes``."""

    def to_bytes(self) -> bytes: ...


class FileVectorIndex(VectorIndex, SavedToFile, Protocol):
    """The embedded vector index: searched in memory, saved as a file (FAISS)."""


class FileKeywordIndex(KeywordIndex, SavedToFile, Protocol):
    """The embedded keyword index: searched in memory, saved as a file (the own BM25)."""
