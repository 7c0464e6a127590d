"""What Qdrant's engine in process (``retrieval/index/qdrant_edge.py``) adds to the port contracts:
the bulk keyword fill gives what one passage at a time gives, the HNSW graphs that
``optimize`` builds still find each stored vector, and a folder of another shard is refused.
The contracts themselves run over it in ``test_vector_index_contract.py`` and
``test_keyword_index_contract.py``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from retrieval.index.sparse import SparseIndex

if importlib.util.find_spec("qdrant_edge") is None:  # a failure, not a silent skip
    raise RuntimeError("qdrant-edge-py is not installed: pip install -e '.[test]'")

from retrieval.index.embedder import DIMENSION  # noqa: E402
from retrieval.index.qdrant import QdrantUnavailable  # noqa: E402
from retrieval.index.qdrant_edge import EdgeKeywordIndex, EdgeVectorIndex  # noqa: E402


def random_passages(count: int, seed: int) -> dict[int, list[str]]:
    rng = np.random.default_rng(seed)
    vocabulary = [f"t{n}" for n in range(80)]
    weights = 1 / np.arange(1, len(vocabulary) + 1)  # Zipf-like, as in the contract tests
    weights /= weights.sum()
    ids = rng.choice(10_000, size=count, replace=False)
    return {
        int(doc_id): [str(t) for t in rng.choice(vocabulary, size=int(rng.integers(3, 60)), p=weights)]
        for doc_id in ids
    }


def test_a_bulk_fill_ranks_and_counts_like_passages_added_one_at_a_time(tmp_path: Path) -> None:
    passages = random_passages(400, seed=3)
    items = list(passages.items())
    bulk = EdgeKeywordIndex(tmp_path / "bulk")
    one_by_one = EdgeKeywordIndex(tmp_path / "single")
    truth = SparseIndex()
    try:
        bulk.add(*items[0])  # a batch onto an index that already holds passages
        bulk.add_many(items[1:], batch=150)  # several batches
        bulk.add_many([items[5]])  # a passage it holds, added again, is replaced
        for doc_id, tokens in items:
            one_by_one.add(doc_id, tokens)
            truth.add(doc_id, tokens)
        assert bulk.count() == one_by_one.count() == len(passages)
        assert bulk.ids().tolist() == sorted(passages)
        assert bulk.sorted_terms() == one_by_one.sorted_terms() == truth.sorted_terms()
        rng = np.random.default_rng(9)
        for _ in range(25):
            query = [f"t{n}" for n in rng.integers(0, 90, size=int(rng.integers(1, 5)))]
            assert bulk.max_idf(query) == pytest.approx(truth.max_idf(query))
            found, expected = bulk.search(query, 10), truth.search(query, 10)
            np.testing.assert_allclose([s for _, s in found], [s for _, s in expected], rtol=1e-5)
            assert [s for _, s in found] == pytest.approx([s for _, s in one_by_one.search(query, 10)], rel=1e-5)
    finally:
        bulk.close()
        one_by_one.close()


def test_after_optimize_the_graph_finds_each_stored_vector(tmp_path: Path) -> None:
    # Past the engine's indexing threshold (~10 MB of vectors), so optimize builds HNSW graphs.
    vectors = np.random.default_rng(4).normal(size=(8_000, DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(10, 10 + len(vectors), dtype=np.int64)
    index = EdgeVectorIndex(tmp_path / "sentences")
    try:
        index.add(ids, vectors)
        index.optimize()
        assert index.shard.info().indexed_vectors_count > 0, "optimize built no graph"
        assert index.count() == len(ids)
        for row in (0, 1_234, 7_999):
            found, scores = index.search(vectors[row], 5)
            assert found[0] == ids[row] and scores[0] == pytest.approx(1.0, abs=1e-5)
        index.remove([int(ids[0])])
        assert index.count() == len(ids) - 1
        assert int(ids[0]) not in index.search(vectors[0], 5)[0].tolist()
    finally:
        index.close()


def test_a_folder_holding_another_shard_is_refused(tmp_path: Path) -> None:
    keywords = EdgeKeywordIndex(tmp_path / "keywords")
    keywords.add(1, ["rain"])
    keywords.close()
    with pytest.raises(QdrantUnavailable, match="give Byline a folder of its own"):
        EdgeVectorIndex(tmp_path / "keywords" / "passages")
