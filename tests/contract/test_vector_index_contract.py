"""The vector-index port's contract (``retrieval.ports.VectorIndex``), run against every backend.

The same test functions, parametrised by backend, in the manner of haystack's
``haystack/testing/document_store.py`` and txtai's ANN tests: FAISS (the embedded default) and
Qdrant through qdrant-client's local mode (the same client API a Qdrant server answers). Data
are small sets of random unit vectors of the real dimension, compared with exact cosines
computed here with numpy.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import pytest

from retrieval.index.dense import DenseIndex
from retrieval.index.embedder import DIMENSION
from retrieval.library import Library
from retrieval.ports import VectorIndex

HAS_QDRANT = importlib.util.find_spec("qdrant_client") is not None
NO_QDRANT = (
    "qdrant-client is not installed, so the Qdrant backend is not tested: install the test extra, "
    "which includes it (pip install -e '.[test]'), or the cluster extra"
)
HAS_EDGE = HAS_QDRANT and importlib.util.find_spec("qdrant_edge") is not None
NO_EDGE = (
    "qdrant-edge-py (or qdrant-client) is not installed, so Qdrant's engine in process is not tested: "
    "install the test extra, which includes them (pip install -e '.[test]')"
)


class Backend(Protocol):
    def make(self, saved: bool = False) -> VectorIndex:
        """A new, empty index; ``saved``: one that ``reopen`` can read back."""
        ...

    def reopen(self, index: VectorIndex) -> VectorIndex:
        """The index as a new process sees it after this one saved or closed it."""
        ...


@dataclass
class FaissBackend:
    def make(self, saved: bool = False) -> VectorIndex:
        return DenseIndex()

    def reopen(self, index: VectorIndex) -> VectorIndex:
        assert isinstance(index, DenseIndex)
        return DenseIndex.from_bytes(index.to_bytes())


@dataclass
class QdrantLocalBackend:
    folder: Path

    def make(self, saved: bool = False) -> VectorIndex:
        from retrieval.index.qdrant import QdrantIndex

        # In memory unless it must survive a reopen: local mode's folder commits every point
        # to SQLite on its own, 18 ms a point on this disk (the same code path otherwise).
        return QdrantIndex.open(path=self.folder) if saved else QdrantIndex.in_memory()

    def reopen(self, index: VectorIndex) -> VectorIndex:
        from retrieval.index.qdrant import QdrantIndex

        assert isinstance(index, QdrantIndex)
        index.close()
        return QdrantIndex.open(path=self.folder)


@dataclass
class QdrantEdgeBackend:
    """Qdrant's engine in process (qdrant-edge-py): a shard in a folder, reopened from it."""

    folder: Path

    def make(self, saved: bool = False) -> VectorIndex:
        from retrieval.index.qdrant_edge import EdgeVectorIndex

        return EdgeVectorIndex(self.folder)

    def reopen(self, index: VectorIndex) -> VectorIndex:
        from retrieval.index.qdrant_edge import EdgeVectorIndex

        assert isinstance(index, EdgeVectorIndex)
        index.close()
        return EdgeVectorIndex(self.folder)


@pytest.fixture(
    params=[
        "faiss",
        pytest.param("qdrant", marks=pytest.mark.skipif(not HAS_QDRANT, reason=NO_QDRANT)),
        pytest.param("qdrant-edge", marks=pytest.mark.skipif(not HAS_EDGE, reason=NO_EDGE)),
    ]
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "faiss":
        yield FaissBackend()
    elif request.param == "qdrant":
        yield QdrantLocalBackend(tmp_path / "qdrant")
    else:
        yield QdrantEdgeBackend(tmp_path / "qdrant-edge")


@pytest.fixture
def index(backend: Backend) -> Iterator[VectorIndex]:
    made = backend.make()
    yield made
    close = getattr(made, "close", None)
    if close is not None:
        close()


def unit_vectors(count: int, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(count, DIMENSION)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


# Sentence ids as the store hands them out: positive, neither contiguous nor in order.
IDS = np.array([7 + 13 * n for n in range(60)][::-1], dtype=np.int64)
VECTORS = unit_vectors(len(IDS))


def exact_top(query: np.ndarray, k: int, ids: np.ndarray = IDS, vectors: np.ndarray = VECTORS) -> list[int]:
    cosines = vectors @ query
    return [int(ids[i]) for i in np.argsort(-cosines)[:k]]


def nearby(row: int, seed: int = 1) -> np.ndarray:
    """A query close to the stored vector ``row`` but not equal to it."""
    query = VECTORS[row] + 0.3 * unit_vectors(1, seed)[0]
    return query / np.linalg.norm(query)


def test_satisfies_the_port(index: VectorIndex) -> None:
    assert isinstance(index, VectorIndex)
    assert isinstance(index.kind, str) and index.kind


def test_an_empty_index_holds_and_finds_nothing(index: VectorIndex) -> None:
    assert index.count() == 0
    found_ids, scores = index.search(unit_vectors(1)[0], 5)
    assert len(found_ids) == 0 and len(scores) == 0
    assert index.ids().tolist() == []
    assert index.vectors([]).shape == (0, DIMENSION)
    assert not index.needs_new_type()


def test_search_returns_the_nearest_first_with_cosine_scores(index: VectorIndex) -> None:
    index.add(IDS, VECTORS)
    assert index.count() == len(IDS)
    for row in (0, 17, 59):
        query = nearby(row)
        found_ids, scores = index.search(query, 10)
        assert found_ids.dtype.kind == "i"
        assert found_ids.tolist() == exact_top(query, 10)
        assert found_ids[0] == IDS[row]
        expected = VECTORS[[IDS.tolist().index(i) for i in found_ids.tolist()]] @ query
        np.testing.assert_allclose(scores, expected, atol=1e-5)
        assert np.all(np.diff(scores) <= 1e-6), "best first"


def test_a_stored_vector_is_its_own_nearest_at_cosine_one(index: VectorIndex) -> None:
    index.add(IDS, VECTORS)
    found_ids, scores = index.search(VECTORS[5], 1)
    assert found_ids.tolist() == [IDS[5]]
    assert scores[0] == pytest.approx(1.0, abs=1e-5)


def test_asking_for_more_than_it_holds_returns_everything(index: VectorIndex) -> None:
    index.add(IDS[:4], VECTORS[:4])
    found_ids, scores = index.search(VECTORS[0], 50)
    assert sorted(found_ids.tolist()) == sorted(IDS[:4].tolist())
    assert len(scores) == 4


def test_remove_forgets_those_ids_and_ignores_unknown_ones(index: VectorIndex) -> None:
    index.add(IDS, VECTORS)
    gone = [int(IDS[0]), int(IDS[1]), int(IDS[30])]
    index.remove([*gone, 999_999])
    index.remove([])
    assert index.count() == len(IDS) - 3
    assert not set(gone) & set(index.ids().tolist())
    found_ids, _ = index.search(VECTORS[0], len(IDS))
    assert not set(gone) & set(found_ids.tolist())
    kept = np.array([i not in gone for i in IDS.tolist()])
    query = nearby(0)
    assert index.search(query, 5)[0].tolist() == exact_top(query, 5, IDS[kept], VECTORS[kept])


def test_vectors_by_id_come_back_in_the_order_asked(index: VectorIndex) -> None:
    index.add(IDS, VECTORS)
    rows = [40, 2, 33, 2]
    vectors = index.vectors([int(IDS[r]) for r in rows])
    assert vectors.shape == (4, DIMENSION) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, VECTORS[rows], atol=1e-6)


def test_vectors_of_an_id_it_does_not_hold_is_an_error(index: VectorIndex) -> None:
    index.add(IDS[:3], VECTORS[:3])
    with pytest.raises((LookupError, RuntimeError)):
        index.vectors([int(IDS[0]), 424_242])


def test_ids_lists_every_sentence_sorted(index: VectorIndex) -> None:
    index.add(IDS, VECTORS)
    assert index.ids().tolist() == sorted(IDS.tolist())


def test_many_vectors_in_one_add(index: VectorIndex) -> None:
    # More than one upsert request's worth for Qdrant; well under local mode's 20k points.
    ids = np.arange(1, 1_301, dtype=np.int64)
    vectors = unit_vectors(len(ids), seed=3)
    index.add(ids, vectors)
    assert index.count() == len(ids)
    assert index.ids().tolist() == ids.tolist()
    assert index.search(vectors[1_234], 1)[0].tolist() == [1_235]


def test_contents_survive_a_save_and_reopen(backend: Backend) -> None:
    index = backend.make(saved=True)
    index.add(IDS, VECTORS)
    index.remove([int(IDS[3])])
    query = nearby(9)
    before = index.search(query, 8)
    reopened = backend.reopen(index)
    try:
        assert reopened.count() == len(IDS) - 1
        assert reopened.ids().tolist() == index_ids_without(IDS[3])
        after = reopened.search(query, 8)
        assert after[0].tolist() == before[0].tolist()
        np.testing.assert_allclose(after[1], before[1], atol=1e-6)
        np.testing.assert_allclose(reopened.vectors([int(IDS[9])]), VECTORS[[9]], atol=1e-6)
    finally:
        close = getattr(reopened, "close", None)
        if close is not None:
            close()


def index_ids_without(removed: np.int64) -> list[int]:
    return sorted(i for i in IDS.tolist() if i != int(removed))


QUESTIONS = (
    "what did Mourinho say about the referee?",
    "What did Guardiola say about Kompany?",
    "Who was cut above the eyebrow?",
    "Who won the Champions League in 2005?",
    "what happened at the end of the match?",
)


@pytest.mark.skipif(not HAS_QDRANT, reason=NO_QDRANT)
def test_the_seed_questions_get_the_same_answers_over_qdrant(seed_library: Library) -> None:
    """Through the real ranking and answering code, only the vector backend swapped: the
    store's sentence vectors go into Qdrant unchanged (nothing re-embedded)."""
    from retrieval.index.qdrant import QdrantIndex

    over_faiss = [seed_library.ask(question) for question in QUESTIONS]
    hits_faiss = seed_library.search("Mourinho referee", 5)
    qdrant = QdrantIndex.in_memory()
    for ids, vectors in seed_library.store.iter_sentence_vectors():
        qdrant.add(ids, vectors)
    assert qdrant.ids().tolist() == seed_library.dense.ids().tolist()
    faiss_index = seed_library.dense
    # Only searched here, never saved: the library's file-saved slot takes it for the test.
    seed_library.dense = qdrant  # type: ignore[assignment]
    try:
        over_qdrant = [seed_library.ask(question) for question in QUESTIONS]
        hits_qdrant = seed_library.search("Mourinho referee", 5)
    finally:
        seed_library.dense = faiss_index
        qdrant.close()
    assert any(answer.answered for answer in over_faiss) and not all(answer.answered for answer in over_faiss)
    for before, after in zip(over_faiss, over_qdrant, strict=True):
        assert (after.answered, after.text, after.message) == (before.answered, before.text, before.message)
        assert [(s.article_id, s.start, s.end) for s in after.spans] == [
            (s.article_id, s.start, s.end) for s in before.spans
        ]
        assert after.citations == before.citations
    assert [h.passage.id for h in hits_qdrant] == [h.passage.id for h in hits_faiss]
