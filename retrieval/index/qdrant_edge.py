"""Qdrant's engine in this process (qdrant-edge-py): both index ports over ``EdgeShard`` folders.

Why a third Qdrant module: no Qdrant server binary can be run here, and qdrant-client's local
mode searches in pure Python (~130 ms a keyword search at 6k passages), so it cannot tell what a
server would cost. qdrant-edge-py is Qdrant's own Rust segment code (HNSW graphs, the sparse
inverted index with the IDF modifier, id filters) as a library: what a server runs behind its
HTTP API, without the API. It stands in for a server in ``bench/perf/bench_cluster_ask.py`` and
checks the engine's behaviour in the port contract tests.

The layout is the server one, so that the same requests are made: ``EdgeVectorIndex`` is
``qdrant_index.py``'s collection (point id = sentence id, the unit vector compared by cosine),
``EdgeKeywordIndex`` is ``qdrant_keywords.py``'s two collections (``passages`` with the ``bm25``
sparse vector and its payload; ``terms`` with each term's df and the statistics point), and the
BM25 arithmetic (term hashing, tf saturation, re-encoding on drift, exact re-scoring) is
imported from there, not repeated. A search makes the calls a server request would (the term
statistics, then the query), minus the network round trip: a server adds one HTTP round trip
per call to what is measured with these.

What a server does and a shard in process does not: several processes on several machines
sharing it (a folder is opened by one process), and building HNSW graphs in the background.
Here ``optimize()`` builds them, blocking; until then a search scans its segments exactly.
qdrant-edge-py is a bench and test dependency, not a runtime one.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, cast

import numpy as np
import qdrant_edge as edge

from retrieval.index.embedder import DIMENSION
from retrieval.index.qdrant import UPSERT_BATCH, QdrantUnavailable
from retrieval.index.qdrant_keywords import (
    EMPTY_STATS,
    STATS_ID,
    VECTOR,
    Okapi,
    candidates,
    passage_payload,
    query_indices,
    stats_after_add,
    stats_after_remove,
    term_id,
)
from retrieval.ports import IdSet

SCROLL_PAGE = 2048
# Search threads per shard: one, for the reason FAISS gets one (``dense.SEARCH_THREADS``): one
# query at a time from each of a few workers, where a pool's hand-offs cost more than they save
# (measured at 60k sentences on 2 cores: a vector search 0.54 ms with one, 0.77 ms with the
# default pool of one per core). None: the engine's default.
SEARCH_THREADS = 1
# A shard needs at least one vector; the terms shard's points carry none, only payloads.
_NO_VECTOR = "none"
_RESCORE_FIELDS = ["length", "terms", "counts"]


def _open_shard(path: Path, config: edge.EdgeConfig, what: str) -> edge.EdgeShard:
    """The shard in ``path``, created there if the folder holds none; ``QdrantUnavailable`` if
    it holds another kind of shard or cannot be opened."""
    try:
        if (path / "edge_config.json").is_file():
            return edge.EdgeShard.load(str(path), config)  # with a config: checked against the segments
        path.mkdir(parents=True, exist_ok=True)
        return edge.EdgeShard.create(str(path), config)
    except Exception as error:  # the bindings raise plain Exception, with the engine's reason
        raise QdrantUnavailable(
            f"Could not open the Qdrant shard {path} as {what} ({error}): give Byline a folder of its own."
        ) from None


def _scroll(shard: edge.EdgeShard, payload: bool | list[str]) -> Iterator[edge.Record]:
    """Every point of ``shard``, a page at a time."""
    offset: Any = None
    while True:
        points, offset = shard.scroll(edge.ScrollRequest(offset=offset, limit=SCROLL_PAGE, with_payload=payload))
        yield from points
        if offset is None:
            return


def _points(shard: edge.EdgeShard) -> int:
    # The shard's own tally of live points: an exact ``CountRequest`` visits every point (3 ms
    # at 60k sentences, measured), and ``ask`` reads both counts on every question.
    return int(shard.info().points_count)


def _upsert(shard: edge.EdgeShard, points: list[edge.Point]) -> None:
    for first in range(0, len(points), UPSERT_BATCH):
        shard.update(edge.UpdateOperation.upsert_points(points[first : first + UPSERT_BATCH]))


def _has_ids(within: IdSet) -> edge.Filter:
    # Point ids are the sentence (or passage) ids: the filter names them, built once per id set.
    return edge.Filter(must=[edge.HasIdCondition(set(within.ids.tolist()))])


class _Folder:
    """Where an index's shards live: a given folder, or a temporary one removed at ``close``."""

    def __init__(self, path: Path | None) -> None:
        self._temporary = tempfile.TemporaryDirectory(prefix="byline-edge-") if path is None else None
        self.path: Path = Path(self._temporary.name) if self._temporary is not None else path  # type: ignore[assignment]

    def close(self) -> None:
        if self._temporary is not None:
            self._temporary.cleanup()


class EdgeVectorIndex:
    """Sentence vectors by sentence id in an in-process Qdrant shard, searched by cosine."""

    def __init__(self, path: Path | None = None, max_search_threads: int | None = SEARCH_THREADS) -> None:
        """The shard in the folder ``path`` (created if missing), or in a temporary folder."""
        self._folder = _Folder(path)
        self.path = self._folder.path  # where the shard lives (another object can open it after ``close``)
        config = edge.EdgeConfig(
            vectors=edge.EdgeVectorParams(size=DIMENSION, distance=edge.Distance.Cosine),
            max_search_threads=max_search_threads,
        )
        self.shard = _open_shard(self._folder.path, config, f"{DIMENSION}-d cosine sentence vectors")

    @property
    def kind(self) -> str:
        return "qdrant-edge"

    def needs_new_type(self) -> bool:
        return False  # the engine grows and rebuilds its own graphs

    def optimize(self) -> None:
        """Build the HNSW graphs of the segments that need them (a server does it in the
        background); blocks until done."""
        self.shard.optimize()

    def close(self) -> None:
        self.shard.close()
        self._folder.close()

    def count(self) -> int:
        return _points(self.shard)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        id_list = np.asarray(ids, dtype=np.int64).tolist()
        rows = np.asarray(vectors, dtype=np.float32).tolist()
        _upsert(self.shard, [edge.Point(i, row) for i, row in zip(id_list, rows, strict=True)])

    def remove(self, ids: list[int]) -> None:
        if ids:
            self.shard.update(edge.UpdateOperation.delete_points([int(i) for i in ids]))

    def search(self, vector: np.ndarray, k: int, within: IdSet | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, cosine scores) of the ``k`` nearest sentences, best first; with ``within``, of
        those sentences only, filtered by the engine during its search."""
        if k <= 0 or (within is not None and not len(within)):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        query = edge.Query.Nearest(np.asarray(vector, dtype=np.float32).reshape(-1).tolist())
        wanted = None if within is None else within.form("qdrant-edge-filter", partial(_has_ids, within))
        points = self.shard.query(edge.QueryRequest(limit=k, query=query, filter=wanted, with_payload=False))
        return (
            np.fromiter((int(p.id) for p in points), dtype=np.int64, count=len(points)),
            np.fromiter((p.score for p in points), dtype=np.float32, count=len(points)),
        )

    def vectors(self, ids: list[int]) -> np.ndarray:
        if not ids:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        wanted = [int(i) for i in ids]
        # The engine returns the points it has, in no promised order, and drops unknown ids.
        by_id = {int(p.id): p.vector for p in self.shard.retrieve(cast("list[edge.PointId]", wanted), False, True)}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise KeyError(f"sentences {missing[:10]} are not in the Qdrant shard {self.path}")
        return np.asarray([by_id[i] for i in wanted], dtype=np.float32)

    def ids(self) -> np.ndarray:
        found = [int(p.id) for p in _scroll(self.shard, payload=False)]
        return np.sort(np.asarray(found, dtype=np.int64))


class EdgeKeywordIndex:
    """Okapi BM25 over passages in an in-process Qdrant shard: ``qdrant_keywords.py``'s layout
    and arithmetic, on the engine itself."""

    def __init__(
        self,
        path: Path | None = None,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        drift: float = 0.1,
        rescore: bool = True,
        max_search_threads: int | None = SEARCH_THREADS,
    ) -> None:
        """The shards in the folder ``path`` (``passages`` and ``terms``, created if missing), or
        in a temporary folder; the options are ``QdrantKeywordIndex``'s."""
        self._folder = _Folder(path)
        self.path = self._folder.path  # where the shards live (another object can open them after ``close``)
        self.okapi = Okapi(k1, b)
        self.drift = drift
        self.rescore = rescore
        sparse = {VECTOR: edge.EdgeSparseVectorParams(modifier=edge.Modifier.Idf)}
        self.passages = _open_shard(
            self.path / "passages",
            edge.EdgeConfig(sparse_vectors=sparse, max_search_threads=max_search_threads),
            f"passages with a sparse vector {VECTOR!r} under the IDF modifier",
        )
        try:
            self.terms = _open_shard(
                self.path / "terms",
                edge.EdgeConfig(sparse_vectors={_NO_VECTOR: edge.EdgeSparseVectorParams()}),
                "term statistics",
            )
        except QdrantUnavailable:
            self.passages.close()
            raise
        self._vocabulary: tuple[int, list[str]] | None = None  # (stats version, terms)

    def close(self) -> None:
        self.passages.close()
        self.terms.close()
        self._folder.close()

    # Statistics -------------------------------------------------------------------------

    def _records(self, terms: Iterable[str]) -> tuple[dict[str, Any], dict[str, int]]:
        """The statistics point's payload and each term's df (0 when unknown), in one call."""
        wanted = sorted(set(terms))
        found = self.terms.retrieve([STATS_ID, *map(term_id, wanted)], True, False)
        by_id = {str(p.id): p.payload or {} for p in found}
        stats = by_id.get(STATS_ID) or dict(EMPTY_STATS)
        return stats, {t: int(by_id.get(term_id(t), {}).get("df", 0)) for t in wanted}

    def count(self) -> int:
        return _points(self.passages)

    def ids(self) -> np.ndarray:
        found = [int(p.id) for p in _scroll(self.passages, payload=False)]
        return np.sort(np.asarray(found, dtype=np.int64))

    def max_idf(self, tokens: list[str]) -> dict[str, float]:
        stats, dfs = self._records(tokens)
        count = max(1, int(stats["passages"]))
        return {term: self.okapi.idf(count, df) for term, df in dfs.items()}

    def sorted_terms(self) -> list[str]:
        """Every indexed term in order; cached until the statistics' version changes."""
        stats, _ = self._records([])
        version = int(stats["version"])
        if self._vocabulary is None or self._vocabulary[0] != version:
            # The statistics point, also in ``terms``, has no "term".
            terms = [(p.payload or {}).get("term") for p in _scroll(self.terms, payload=["term"])]
            self._vocabulary = (version, sorted(str(t) for t in terms if t))
        return self._vocabulary[1]

    # Writes -----------------------------------------------------------------------------

    def _point(self, doc_id: int, counts: dict[str, int], length: int, average: float) -> edge.Point:
        values = self.okapi.encode(counts, length, average)
        vector: dict[str, edge.NamedVector] = {VECTOR: edge.SparseVector(list(values), list(values.values()))}
        return edge.Point(doc_id, vector, passage_payload(counts, length, average))

    def add(self, doc_id: int, tokens: list[str]) -> None:
        if self.passages.retrieve([doc_id], False, False):
            self.remove(doc_id, tokens)  # as sparse.py does; re-adding is not part of the contract
        counts = Counter(tokens)
        stats, dfs = self._records(counts)
        stats, average, reencode = stats_after_add(stats, dfs, counts, len(tokens), self.drift)
        _upsert(self.passages, [self._point(doc_id, counts, len(tokens), average)])
        records = [edge.Point(STATS_ID, {}, stats)]
        records += [edge.Point(term_id(t), {}, {"term": t, "df": dfs[t] + 1}) for t in counts]
        _upsert(self.terms, records)
        if reencode:
            self._reencode(average)

    def add_many(self, passages: Iterable[tuple[int, list[str]]], batch: int = 20_000) -> None:
        """Index many passages (a rebuild, a migration): what ``add`` of each would leave, in a
        few calls per ``batch`` passages rather than four per passage (the vectors encoded with
        the batch's average, which ``add`` may reach by another route: scores, re-computed
        exactly, are the same)."""
        pending: list[tuple[int, list[str]]] = []
        for item in passages:
            pending.append(item)
            if len(pending) >= batch:
                self._add_batch(pending)
                pending = []
        if pending:
            self._add_batch(pending)

    def _add_batch(self, passages: list[tuple[int, list[str]]]) -> None:
        ids: list[edge.PointId] = [doc_id for doc_id, _ in passages]
        for held in self.passages.retrieve(ids, False, False):  # re-added: as ``add`` does
            self.remove(int(held.id), [])
        counted = [(doc_id, Counter(tokens), len(tokens)) for doc_id, tokens in passages]
        new_dfs: Counter[str] = Counter()
        for _, counts, _ in counted:
            new_dfs.update(counts.keys())
        stats, dfs = self._records(new_dfs)
        length = sum(size for _, _, size in counted)
        stats, average, reencode = stats_after_add(stats, dfs, new_dfs, length, self.drift, added=len(counted))
        _upsert(self.passages, [self._point(doc_id, counts, size, average) for doc_id, counts, size in counted])
        records = [edge.Point(STATS_ID, {}, stats)]
        records += [edge.Point(term_id(t), {}, {"term": t, "df": dfs[t] + n}) for t, n in new_dfs.items()]
        _upsert(self.terms, records)
        if reencode:
            self._reencode(average)

    def remove(self, doc_id: int, tokens: list[str]) -> None:
        """Forget a passage; the terms whose df drops are the ones stored with it."""
        found = self.passages.retrieve([doc_id], ["length", "terms"], False)
        if not found:
            return
        payload = found[0].payload or {}
        length, terms = int(payload.get("length", len(tokens))), list(payload.get("terms", set(tokens)))
        self.passages.update(edge.UpdateOperation.delete_points([doc_id]))
        stats, dfs, gone = stats_after_remove(*self._records(terms), length)
        _upsert(
            self.terms,
            [
                edge.Point(STATS_ID, {}, stats),
                *(edge.Point(term_id(t), {}, {"term": t, "df": df}) for t, df in dfs.items()),
            ],
        )
        if gone:
            self.terms.update(edge.UpdateOperation.delete_points([term_id(t) for t in gone]))

    def _reencode(self, average: float) -> None:
        """Every passage's vector encoded with the new reference ``average``, from its terms
        (see ``QdrantKeywordIndex._reencode``)."""
        batch: list[edge.Point] = []
        for point in _scroll(self.passages, payload=True):
            payload = point.payload or {}
            if payload.get("average") == average:
                continue
            counts = dict(zip(payload["terms"], payload["counts"], strict=True))
            batch.append(self._point(int(point.id), counts, int(payload["length"]), average))
            if len(batch) >= UPSERT_BATCH:
                _upsert(self.passages, batch)
                batch = []
        _upsert(self.passages, batch)

    def optimize(self) -> None:
        """Merge and index the segments as a server's optimizers would; blocks until done."""
        self.passages.optimize()
        self.terms.optimize()

    # Search -----------------------------------------------------------------------------

    def search(self, tokens: list[str], k: int, within: IdSet | None = None) -> list[tuple[int, float]]:
        """The ``k`` best passages for the query terms, best first; with ``within``, the ``k``
        best of those passages (IDF and lengths stay the whole library's)."""
        terms = set(tokens)
        if not terms or k <= 0 or (within is not None and not len(within)):
            return []
        stats, dfs = self._records(terms)
        indices = query_indices(dfs)
        if not indices or not stats["passages"]:
            return []
        query = edge.Query.Nearest(edge.SparseVector(indices, [1.0] * len(indices)), using=VECTOR)
        wanted = None if within is None else within.form("qdrant-edge-filter", partial(_has_ids, within))
        points = self.passages.query(
            edge.QueryRequest(
                limit=candidates(k, self.rescore),
                query=query,
                filter=wanted,
                with_payload=_RESCORE_FIELDS if self.rescore else False,
            )
        )
        if not self.rescore:
            return [(int(p.id), float(p.score)) for p in points]
        return self.okapi.rescored(((int(p.id), p.payload or {}) for p in points), stats, dfs, k)
