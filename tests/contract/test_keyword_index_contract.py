"""The keyword-index port's contract (``retrieval.ports.KeywordIndex``), run against every backend.

Each test is parametrised by backend, as in ``test_vector_index_contract.py``: the own BM25
(``sparse.SparseIndex``) and Qdrant's sparse vectors with the IDF modifier
(``qdrant_keywords.QdrantKeywordIndex``, through qdrant-client's local mode); a new backend adds
one entry to ``BACKENDS`` and must pass the same tests. The scores are
checked against Okapi BM25 computed here from its definition (k1 = 1.2, b = 0.75, and
idf = ln(1 + (N - n + 0.5) / (n + 0.5)), the form Lucene and Qdrant use), so a backend cannot
drift from the numbers the ranking's weights were tuned on.
"""

from __future__ import annotations

import importlib.util
import math
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from retrieval.index.sparse import SparseIndex
from retrieval.ports import KeywordIndex

K1, B = 1.2, 0.75


def _bm25_round_trip(index: KeywordIndex) -> KeywordIndex:
    assert isinstance(index, SparseIndex)
    return SparseIndex.from_bytes(index.to_bytes())


def _qdrant_in_memory() -> KeywordIndex:
    from retrieval.index.qdrant_keywords import QdrantKeywordIndex

    return QdrantKeywordIndex.in_memory()


def _qdrant_new_client_view(index: KeywordIndex) -> KeywordIndex:
    # Everything lives in Qdrant, nothing in the object: a new object over the same client is
    # what another process sees of a shared server (folder persistence: test_qdrant_keywords.py).
    from retrieval.index.qdrant_keywords import QdrantKeywordIndex

    assert isinstance(index, QdrantKeywordIndex)
    return QdrantKeywordIndex(index.client, where=index.where)


# The edge shards' folders: one per index, all removed when the test process ends.
_EDGE_FOLDERS = tempfile.TemporaryDirectory(prefix="byline-edge-test-")


def _edge_in_folder() -> KeywordIndex:
    from retrieval.index.qdrant_edge import EdgeKeywordIndex

    return EdgeKeywordIndex(Path(tempfile.mkdtemp(dir=_EDGE_FOLDERS.name)))


def _edge_reopened(index: KeywordIndex) -> KeywordIndex:
    # What a new process loads from the flushed shards: one process opens a shard folder at a
    # time (its write-ahead log is locked) and the test reads the old index too, so a copy.
    from retrieval.index.qdrant_edge import EdgeKeywordIndex

    assert isinstance(index, EdgeKeywordIndex)
    index.passages.flush()
    index.terms.flush()
    copy = Path(tempfile.mkdtemp(dir=_EDGE_FOLDERS.name)) / "copy"
    shutil.copytree(index.path, copy)
    return EdgeKeywordIndex(copy)


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

# name -> (a new empty index, the same index as a new process reads it back)
BACKENDS: dict[str, tuple[Callable[[], KeywordIndex], Callable[[KeywordIndex], KeywordIndex]]] = {
    "bm25": (SparseIndex, _bm25_round_trip),
    "qdrant": (_qdrant_in_memory, _qdrant_new_client_view),
    "qdrant-edge": (_edge_in_folder, _edge_reopened),
}
_NEEDS = {"qdrant": (HAS_QDRANT, NO_QDRANT), "qdrant-edge": (HAS_EDGE, NO_EDGE)}


@pytest.fixture(
    params=[
        pytest.param(name, marks=pytest.mark.skipif(not _NEEDS[name][0], reason=_NEEDS[name][1]))
        if name in _NEEDS
        else name
        for name in sorted(BACKENDS)
    ]
)
def keyword_backend(request: pytest.FixtureRequest) -> str:
    # Not named ``backend``: conftest.py parametrises that name (the library's storage backend).
    return str(request.param)


@pytest.fixture
def index(keyword_backend: str) -> KeywordIndex:
    return BACKENDS[keyword_backend][0]()


# Passage ids as the store hands them out, with search tokens as text.search_tokens gives them.
PASSAGES: dict[int, list[str]] = {
    3: "mourinho referee decis mourinho angri".split(),
    8: "referee var review penalti".split(),
    21: "manag mourinho press confer".split(),
    40: "weather rain london".split(),
    41: "rain rain rain flood warn london".split(),
}


def fill(index: KeywordIndex, passages: dict[int, list[str]] = PASSAGES) -> None:
    for doc_id, tokens in passages.items():
        index.add(doc_id, tokens)


def idf(passages: dict[int, list[str]], term: str) -> float:
    n = sum(term in tokens for tokens in passages.values())
    return math.log(1 + (len(passages) - n + 0.5) / (n + 0.5)) if n else 0.0


def bm25(passages: dict[int, list[str]], query: list[str]) -> dict[int, float]:
    """Okapi BM25 of every passage with a query term, from the definition."""
    average = sum(map(len, passages.values())) / len(passages)
    scores: dict[int, float] = {}
    for doc_id, tokens in passages.items():
        counts = Counter(tokens)
        score = 0.0
        for term in set(query):
            f = counts[term]
            if f:
                score += idf(passages, term) * f * (K1 + 1) / (f + K1 * (1 - B + B * len(tokens) / average))
        if score > 0:
            scores[doc_id] = score
    return scores


def assert_ranked_like_bm25(found: list[tuple[int, float]], expected: dict[int, float], k: int) -> None:
    best = sorted(expected.values(), reverse=True)[:k]
    assert len(found) == len(best)
    scores = [score for _, score in found]
    assert scores == sorted(scores, reverse=True), "best first"
    np.testing.assert_allclose(scores, best, rtol=1e-5)
    for doc_id, score in found:  # the right passages, whatever order ties come in
        assert score == pytest.approx(expected[doc_id], rel=1e-5)


def test_satisfies_the_port(index: KeywordIndex) -> None:
    assert isinstance(index, KeywordIndex)


def test_an_empty_index_holds_and_finds_nothing(index: KeywordIndex) -> None:
    assert index.count() == 0
    assert index.search(["mourinho"], 5) == []
    assert index.max_idf(["mourinho"]) == {"mourinho": 0.0}
    assert index.sorted_terms() == []


def test_search_ranks_by_bm25_best_first(index: KeywordIndex) -> None:
    fill(index)
    assert index.count() == len(PASSAGES)
    for query in (["mourinho"], ["referee", "mourinho"], ["rain", "london", "flood"], ["var", "penalti", "review"]):
        found = index.search(query, 10)
        assert_ranked_like_bm25(found, bm25(PASSAGES, query), 10)
    assert index.search(["mourinho", "referee"], 10)[0][0] == 3  # both terms, one of them twice


def test_only_passages_with_a_query_term_are_found(index: KeywordIndex) -> None:
    fill(index)
    assert {doc_id for doc_id, _ in index.search(["london"], 10)} == {40, 41}
    assert index.search(["offsid"], 10) == []
    assert index.search([], 10) == []


def test_k_bounds_the_results(index: KeywordIndex) -> None:
    fill(index)
    query = ["mourinho", "referee", "rain"]
    found = index.search(query, 2)
    assert_ranked_like_bm25(found, bm25(PASSAGES, query), 2)


def test_document_frequencies_are_bm25_idf(index: KeywordIndex) -> None:
    fill(index)
    rarity = index.max_idf(["mourinho", "rain", "var", "offsid"])
    assert set(rarity) == {"mourinho", "rain", "var", "offsid"}
    for term in ("mourinho", "rain", "var"):
        assert rarity[term] == pytest.approx(idf(PASSAGES, term), rel=1e-6)
    assert rarity["offsid"] == 0.0
    assert rarity["var"] > rarity["mourinho"] > 0, "a term in fewer passages is rarer"


def test_the_vocabulary_is_every_term_sorted(index: KeywordIndex) -> None:
    fill(index)
    assert index.sorted_terms() == sorted({t for tokens in PASSAGES.values() for t in tokens})
    index.add(50, ["zebra", "aardvark"])
    assert index.sorted_terms()[0] == "aardvark" and index.sorted_terms()[-1] == "zebra"


def test_remove_forgets_a_passage_and_its_terms(index: KeywordIndex) -> None:
    fill(index)
    index.remove(8, PASSAGES[8])
    index.remove(999, ["mourinho"])  # not held: ignored
    left = {k: v for k, v in PASSAGES.items() if k != 8}
    assert index.count() == len(left)
    assert all(doc_id != 8 for doc_id, _ in index.search(["referee", "var"], 10))
    assert "var" not in index.sorted_terms() and "penalti" not in index.sorted_terms()
    assert index.max_idf(["var"]) == {"var": 0.0}
    query = ["referee", "mourinho"]
    assert_ranked_like_bm25(index.search(query, 10), bm25(left, query), 10)


def test_remove_then_add_again_is_a_new_version(index: KeywordIndex) -> None:
    fill(index)
    index.remove(40, PASSAGES[40])
    index.add(40, ["snow", "london"])
    changed = {**PASSAGES, 40: ["snow", "london"]}
    assert index.count() == len(PASSAGES)
    assert index.search(["weather"], 10) == []
    assert [doc_id for doc_id, _ in index.search(["snow"], 10)] == [40]
    assert_ranked_like_bm25(index.search(["london"], 10), bm25(changed, ["london"]), 10)


def test_many_random_passages_rank_like_bm25(index: KeywordIndex) -> None:
    rng = np.random.default_rng(7)
    vocabulary = [f"t{n}" for n in range(60)]
    # Zipf-like: a few common terms, many rare ones, passages of 5 to 40 tokens.
    weights = 1 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    passages = {
        int(doc_id): [str(t) for t in rng.choice(vocabulary, size=int(rng.integers(5, 41)), p=weights)]
        for doc_id in rng.choice(5_000, size=300, replace=False)
    }
    fill(index, passages)
    for _ in range(20):
        query = [str(t) for t in rng.choice(vocabulary, size=int(rng.integers(1, 5)))]
        assert_ranked_like_bm25(index.search(query, 10), bm25(passages, query), 10)


def test_contents_survive_a_save_and_reopen(keyword_backend: str) -> None:
    make, reopen = BACKENDS[keyword_backend]
    index = make()
    fill(index)
    index.remove(21, PASSAGES[21])
    query = ["mourinho", "rain", "referee"]
    before = index.search(query, 10)
    again = reopen(index)
    assert again.count() == len(PASSAGES) - 1
    after = again.search(query, 10)
    assert [doc_id for doc_id, _ in after] == [doc_id for doc_id, _ in before]
    np.testing.assert_allclose([score for _, score in after], [score for _, score in before], rtol=1e-6)
    assert again.max_idf(query) == pytest.approx(index.max_idf(query))
    assert again.sorted_terms() == index.sorted_terms()
