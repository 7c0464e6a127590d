"""What the Qdrant keyword index does beyond the port's contract: its statistics live in Qdrant
(another object, another process, sees them), its vectors are re-encoded when the average length
drifts, a hash collision cannot make a passage match a term it lacks, ``within`` filters, a folder
survives a reopen, and a collection that is not Byline's is refused."""

from __future__ import annotations

import importlib.util
import math
from itertools import count
from pathlib import Path

import numpy as np
import pytest

from retrieval.index.sparse import SparseIndex
from retrieval.ports import IdSet

if importlib.util.find_spec("qdrant_client") is None:  # a failure, not a silent skip
    pytest.fail("qdrant-client is not installed: install the test extra (pip install -e '.[test]')", pytrace=False)

from qdrant_client import QdrantClient, models  # noqa: E402

from retrieval.index.qdrant import QdrantUnavailable  # noqa: E402
from retrieval.index.qdrant_keywords import QdrantKeywordIndex, term_index  # noqa: E402

PASSAGES = {
    1: "mourinho referee decis mourinho angri".split(),
    2: "referee var review penalti".split(),
    3: "weather rain london".split(),
}


def fill(index: QdrantKeywordIndex | SparseIndex, passages: dict[int, list[str]]) -> None:
    for doc_id, tokens in passages.items():
        index.add(doc_id, tokens)


def same_results(found: list[tuple[int, float]], expected: list[tuple[int, float]]) -> None:
    """The same scores best first, and each passage its BM25 score (tied ones in any order)."""
    assert [score for _, score in found] == pytest.approx([score for _, score in expected], rel=1e-5)
    scores = dict(expected)
    for doc_id, score in found:
        assert score == pytest.approx(scores.get(doc_id, math.nan), rel=1e-5), doc_id


def colliding_terms() -> tuple[str, str]:
    """Two different terms with the same 32-bit index (found by the birthday bound, ~2^16 tries)."""
    seen: dict[int, str] = {}
    for number in count():
        term = f"w{number}"
        other = seen.setdefault(term_index(term), term)
        if other != term:
            return other, term
    raise AssertionError("unreachable")


def test_a_second_object_over_the_same_qdrant_sees_the_statistics_and_new_terms() -> None:
    writer = QdrantKeywordIndex.in_memory()
    reader = QdrantKeywordIndex(writer.client)
    fill(writer, PASSAGES)
    assert reader.sorted_terms() == writer.sorted_terms()  # the reader caches its vocabulary ...
    writer.add(4, ["zebra"])
    assert "zebra" in reader.sorted_terms()  # ... until the writer's new term bumps the version
    writer.remove(4, ["zebra"])
    assert "zebra" not in reader.sorted_terms()
    assert reader.max_idf(["rain", "zebra"]) == pytest.approx(writer.max_idf(["rain", "zebra"]))
    assert reader.max_idf(["zebra"]) == {"zebra": 0.0}


def test_vectors_are_re_encoded_when_the_average_length_drifts() -> None:
    index = QdrantKeywordIndex.in_memory()
    bm25 = SparseIndex()
    short = {n: ["rain", f"t{n}"] for n in range(10)}
    long = {100 + n: ["rain", "london", *(f"u{n}x{i}" for i in range(30))] for n in range(10)}
    fill(index, short)
    fill(bm25, short)
    assert index._records([])[0]["average"] == pytest.approx(2.0)
    fill(index, long)
    fill(bm25, long)
    stats = index._records([])[0]
    assert stats["average"] == pytest.approx(stats["tokens"] / stats["passages"], rel=index.drift)
    assert stats["average"] > 10, "the reference followed the longer passages"
    # Qdrant's own scores now come from vectors encoded near the true average ...
    raw = QdrantKeywordIndex(index.client, rescore=False)
    # ("rain" is in every passage: the short ones, tied, come first, as in BM25.)
    ranked = [doc_id for doc_id, _ in raw.search(["rain"], 20)]
    assert set(ranked[:10]) == set(short) and set(ranked[10:]) == set(long)
    # ... and the search's re-scored ones are BM25's exactly.
    same_results(index.search(["rain", "london"], 20), bm25.search(["rain", "london"], 20))


def test_a_hash_collision_does_not_match_the_other_term() -> None:
    first, second = colliding_terms()
    index = QdrantKeywordIndex.in_memory()
    bm25 = SparseIndex()
    passages = {1: [first, "rain"], 2: [second, "snow"], 3: [first, second, "hail"]}
    fill(index, passages)
    fill(bm25, passages)
    assert [doc_id for doc_id, _ in index.search([first], 10)] == [d for d, _ in bm25.search([first], 10)]
    same_results(index.search([second, "snow"], 10), bm25.search([second, "snow"], 10))
    assert index.max_idf([first, second]) == pytest.approx(bm25.max_idf([first, second]))


def test_within_filters_during_the_search_with_the_library_statistics() -> None:
    index = QdrantKeywordIndex.in_memory()
    bm25 = SparseIndex()
    passages = {n: ["rain", *(["london"] * (n % 3 + 1)), f"t{n}"] for n in range(200)}
    fill(index, passages)
    fill(bm25, passages)
    scope = IdSet(np.array([7, 8, 150, 151, 999]))  # 999: no such passage
    found = index.search(["london"], 3, within=scope)
    same_results(found, bm25.search(["london"], 3, within=scope))
    assert {doc_id for doc_id, _ in found} <= {7, 8, 150, 151}
    assert index.search(["london"], 3, within=IdSet(np.array([], dtype=np.int64))) == []


def test_a_folder_survives_close_and_reopen(tmp_path: Path) -> None:
    index = QdrantKeywordIndex.open(path=tmp_path / "kw")
    fill(index, PASSAGES)
    before = index.search(["referee", "mourinho"], 10)
    index.close()
    again = QdrantKeywordIndex.open(path=tmp_path / "kw")
    try:
        assert again.count() == len(PASSAGES)
        same_results(again.search(["referee", "mourinho"], 10), before)
        assert again.sorted_terms() == sorted({t for tokens in PASSAGES.values() for t in tokens})
    finally:
        again.close()


def test_a_passages_collection_without_idf_sparse_vectors_is_refused(tmp_path: Path) -> None:
    client = QdrantClient(path=str(tmp_path / "q"))
    client.create_collection("passages", vectors_config=models.VectorParams(size=4, distance=models.Distance.DOT))
    client.close()
    with pytest.raises(QdrantUnavailable) as raised:
        QdrantKeywordIndex.open(path=tmp_path / "q")
    assert "not Byline's keyword index" in str(raised.value) and "'passages'" in str(raised.value)
    QdrantClient(path=str(tmp_path / "q")).close()  # the refusal let go of the folder


def test_never_re_anchoring_keeps_the_first_estimate() -> None:
    index = QdrantKeywordIndex.in_memory(drift=math.inf)
    fill(index, {1: ["a"], 2: ["b", "c", "d", "e", "f", "g"]})
    assert index._records([])[0]["average"] == 1.0
    # The search still re-scores with the true average, so its scores are BM25's.
    bm25 = SparseIndex()
    fill(bm25, {1: ["a"], 2: ["b", "c", "d", "e", "f", "g"]})
    same_results(index.search(["a", "b"], 5), bm25.search(["a", "b"], 5))
