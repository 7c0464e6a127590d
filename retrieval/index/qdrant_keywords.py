"""Passage keywords in Qdrant: the ``ports.KeywordIndex`` port over Qdrant's sparse vectors.

Why a second BM25: ``sparse.SparseIndex`` lives in one process's memory, and a cluster of
workers needs one index they all read. Qdrant scores sparse vectors by dot product and, with
the IDF modifier, multiplies each query term by ``ln(1 + (N - n + 0.5) / (n + 0.5))`` computed
server-side: the same IDF as ``sparse.py``. The rest of Okapi BM25 is put into the document
vectors here: each term's value is the saturated term frequency
``tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))``, with sparse.py's k1 and b.

Two collections:

- ``passages``: one point per passage (point id = passage id), the named sparse vector
  ``bm25`` and a payload ``{length, terms, counts, average}``: its token count, its terms with
  their frequencies, and the average its vector was encoded with. The terms are what a search
  re-scores and a re-encoding re-derives vectors from, exactly and whatever the hashing did.
- ``terms``: one point per term (id = a UUID of the term), payload ``{term, df}``, plus one
  statistics point ``{passages, tokens, average, version}``. Qdrant keeps document frequencies
  inside its sparse index but does not expose them, and ``max_idf`` and ``sorted_terms`` (the
  term-rarity and spelling checks) need them; kept here, every process shares them.

The average length is the one number that goes stale: it changes with every passage, and the
stored vectors were encoded with the average of their day. So the collection keeps a reference
average that every vector is encoded with, re-encodes every vector when the true average has
drifted more than ``drift`` (10%) from it (which, for a steady stream of news, stops happening
after the first few hundred passages), and a search re-scores Qdrant's best ``2k + 10``
candidates with the exact BM25 of now (true average, exact IDF). Scores are then sparse.py's
to float precision; what may differ is which passages make the candidate pool, and only for a
passage whose approximate score was more than ~10% off (``bench/perf/bench_keyword_agreement.py``
measures it).

Terms map to sparse indices by a 32-bit hash (blake2b) rather than a shared counter, so that
processes need no coordination to index a new term. Two terms may share an index: the expected
number of colliding pairs in a vocabulary of V terms is V^2 / 2^33 (about one at 90,000 terms).
Colliding terms share Qdrant's postings and IDF, which can only change the candidate pool: the
re-scoring reads each term's own frequency from the payload and its own df from ``terms``, so a
passage that holds only the other term scores 0 and is dropped.

Writes are read-modify-write on ``terms`` (Qdrant has no atomic increment): one writer at a
time (Library holds its lock around every index call; a cluster runs one ingest writer), any
number of readers.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from qdrant_client import QdrantClient, models

from retrieval.index.qdrant import QdrantUnavailable, ensure_or_close, open_client
from retrieval.ports import IdSet

PASSAGES = "passages"
TERMS = "terms"
VECTOR = "bm25"
# Points per upsert request, as for sentence vectors.
UPSERT_BATCH = 512
SCROLL_PAGE = 2048
# A fixed namespace, so that every process names a term's point the same way.
_NAMESPACE = uuid.UUID("5d1f3a52-8c1e-4f5b-9d0e-6b7a1c2e3f40")
STATS_ID = str(uuid.uuid5(_NAMESPACE, "\0statistics"))
# The statistics of an index that has never held a passage.
EMPTY_STATS: Mapping[str, Any] = {"passages": 0, "tokens": 0, "average": 0.0, "version": 0}


# The arithmetic below is shared with ``qdrant_edge.py`` (the same layout over Qdrant's engine in
# process), so that both keyword indexes encode, count and re-score alike.


def term_index(term: str) -> int:
    """The term's sparse-vector index: 32 bits of its blake2b hash (stable across processes,
    unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "big")


def term_id(term: str) -> str:
    """The id of the term's point in ``terms``."""
    return str(uuid.uuid5(_NAMESPACE, term))


@dataclass(frozen=True)
class Okapi:
    """Okapi BM25's constants and the per-passage arithmetic (sparse.py's k1 and b)."""

    k1: float = 1.2
    b: float = 0.75

    def idf(self, count: int, df: int) -> float:
        return math.log(1 + (count - df + 0.5) / (df + 0.5)) if df else 0.0

    def saturation(self, frequency: float, length: float, average: float) -> float:
        return frequency * (self.k1 + 1) / (frequency + self.k1 * (1 - self.b + self.b * length / average))

    def encode(self, counts: Mapping[str, int], length: int, average: float) -> dict[int, float]:
        """The passage's sparse vector (index -> value) for a reference ``average`` length."""
        values: dict[int, float] = {}
        for term, frequency in counts.items():
            # Colliding terms of one passage add up, as Qdrant would score the pair.
            index = term_index(term)
            values[index] = values.get(index, 0.0) + self.saturation(frequency, length, average)
        return values

    def exact(self, payload: Mapping[str, Any], idf: Mapping[str, float], average: float) -> float:
        """A passage's BM25 with the statistics of now, from the term frequencies it stores."""
        length = float(payload["length"])
        return sum(
            idf[term] * self.saturation(frequency, length, average)
            for term, frequency in zip(payload["terms"], payload["counts"], strict=True)
            if term in idf
        )

    def rescored(
        self, hits: Iterable[tuple[int, Mapping[str, Any]]], stats: Mapping[str, Any], dfs: Mapping[str, int], k: int
    ) -> list[tuple[int, float]]:
        """The ``k`` best of Qdrant's candidates (id, payload) by exact BM25, best first."""
        count, average = int(stats["passages"]), max(1.0, int(stats["tokens"]) / int(stats["passages"]))
        idf = {term: self.idf(count, df) for term, df in dfs.items() if df}
        scored = [(doc_id, self.exact(payload, idf, average)) for doc_id, payload in hits]
        scored.sort(key=lambda hit: -hit[1])
        return [hit for hit in scored[:k] if hit[1] > 0]


def passage_payload(counts: Mapping[str, int], length: int, average: float) -> dict[str, Any]:
    """What a passage's point stores besides its vector (see the module docstring)."""
    terms = sorted(counts)
    return {"length": length, "terms": terms, "counts": [counts[t] for t in terms], "average": average}


def stats_after_add(
    stats: Mapping[str, Any],
    dfs: Mapping[str, int],
    counts: Mapping[str, int],
    length: int,
    drift: float,
    added: int = 1,
) -> tuple[dict[str, Any], float, bool]:
    """(the statistics with a passage of ``length`` tokens and these term ``counts`` added, the
    reference average to encode with, whether every vector must be re-encoded with it). For
    ``added`` passages at once, ``length`` is their tokens in all and ``counts`` their terms."""
    passages, total = int(stats["passages"]) + added, int(stats["tokens"]) + length
    average = float(stats["average"]) or max(1.0, length / added)
    true_average = max(1.0, total / passages)
    reencode = abs(true_average / average - 1) > drift
    if reencode:
        average = true_average
    new_terms = any(not dfs[t] for t in counts)
    now = {"passages": passages, "tokens": total, "average": average, "version": int(stats["version"]) + new_terms}
    return now, average, reencode


def stats_after_remove(
    stats: Mapping[str, Any], dfs: Mapping[str, int], length: int
) -> tuple[dict[str, Any], dict[str, int], list[str]]:
    """(the statistics with a passage of ``length`` tokens removed, its terms' new dfs for those
    still held, the terms no passage holds any more)."""
    gone = [t for t, df in dfs.items() if df <= 1]
    kept = {t: df - 1 for t, df in dfs.items() if df > 1}
    removed = {
        **stats,
        "passages": max(0, int(stats["passages"]) - 1),
        "tokens": max(0, int(stats["tokens"]) - length),
        "version": int(stats["version"]) + bool(gone),
    }
    return removed, kept, gone


def query_indices(dfs: Mapping[str, int]) -> list[int]:
    """The sparse indices of the query terms some passage holds: a repeated query term counts
    once, as in sparse.py, and colliding terms share one index."""
    return sorted({term_index(term) for term, df in dfs.items() if df})


def candidates(k: int, rescore: bool) -> int:
    """How many of Qdrant's best a search asks for: when re-scoring, ``2k + 10``, room for
    passages whose stored vectors, encoded with an average up to ``drift`` off, rank them a
    little too low."""
    return 2 * k + 10 if rescore else k


class QdrantKeywordIndex:
    """Okapi BM25 (k1=1.2, b=0.75, sparse.py's) over passages in Qdrant sparse vectors."""

    def __init__(
        self,
        client: QdrantClient,
        *,
        where: str = "Qdrant",
        passages: str = PASSAGES,
        terms: str = TERMS,
        k1: float = 1.2,
        b: float = 0.75,
        drift: float = 0.1,
        rescore: bool = True,
    ) -> None:
        self.client = client
        self.where = where  # for messages: the folder or the server's URL
        self.passages = passages
        self.terms = terms
        self.k1 = k1
        self.b = b
        self.okapi = Okapi(k1, b)
        # How far the true average length may move from the encoding one before every vector
        # is re-encoded (math.inf: never, the first passages' average stays the estimate).
        self.drift = drift
        # False: Qdrant's own scores, unchecked (what the agreement benchmark compares).
        self.rescore = rescore
        self._vocabulary: tuple[int, list[str]] | None = None  # (stats version, terms)

    @classmethod
    def in_memory(cls, **options: Any) -> QdrantKeywordIndex:
        """Local mode with nothing written anywhere: for tests and trying things out."""
        index = cls(QdrantClient(":memory:"), where="an in-memory Qdrant", **options)
        index._ensure_collections()
        return index

    @classmethod
    def open(
        cls,
        *,
        path: Path | None = None,
        url: str | None = None,
        api_key: str | None = None,
        timeout: int = 10,
        **options: Any,
    ) -> QdrantKeywordIndex:
        """Open local mode in the folder ``path``, or the server at ``url`` (exactly one), and
        create the collections if missing. Raises ``QdrantUnavailable`` saying why."""
        client, where = open_client(path, url, api_key, timeout)
        index = cls(client, where=where, **options)
        ensure_or_close(client, where, url, index._ensure_collections)
        return index

    def _ensure_collections(self) -> None:
        if not self.client.collection_exists(self.passages):
            self.client.create_collection(
                self.passages,
                vectors_config={},
                sparse_vectors_config={VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            )
        else:
            sparse = self.client.get_collection(self.passages).config.params.sparse_vectors or {}
            params = sparse.get(VECTOR)
            if params is None or params.modifier != models.Modifier.IDF:
                raise QdrantUnavailable(
                    f"The collection {self.passages!r} in {self.where} has no sparse vector {VECTOR!r} with the IDF "
                    "modifier, so it is not Byline's keyword index: give Byline its own collection or delete that one."
                )
        if not self.client.collection_exists(self.terms):
            self.client.create_collection(self.terms, vectors_config={})

    def close(self) -> None:
        self.client.close()

    # Statistics -------------------------------------------------------------------------

    def _records(self, terms: Iterable[str]) -> tuple[dict[str, Any], dict[str, int]]:
        """The statistics point's payload and each term's df (0 when unknown), in one request."""
        wanted = sorted(set(terms))
        found = self.client.retrieve(self.terms, ids=[STATS_ID, *map(term_id, wanted)], with_payload=True)
        by_id = {str(p.id): p.payload or {} for p in found}
        stats = by_id.get(STATS_ID) or dict(EMPTY_STATS)
        return stats, {t: int(by_id.get(term_id(t), {}).get("df", 0)) for t in wanted}

    def count(self) -> int:
        return int(self.client.count(self.passages, exact=True).count)

    def ids(self) -> np.ndarray:
        """Every passage id held, sorted (to reconcile the collection with the store)."""
        found = [int(point.id) for point in self._scroll(self.passages, payload=False)]
        return np.sort(np.asarray(found, dtype=np.int64))

    def max_idf(self, tokens: list[str]) -> dict[str, float]:
        """How rare each query term is (0 for a term no passage has), by sparse.py's formula."""
        stats, dfs = self._records(tokens)
        count = max(1, int(stats["passages"]))
        return {term: self.okapi.idf(count, df) for term, df in dfs.items()}

    def sorted_terms(self) -> list[str]:
        """Every indexed term in order; cached until the statistics' version changes (any
        process's new or vanished term bumps it)."""
        stats, _ = self._records([])
        version = int(stats["version"])
        if self._vocabulary is None or self._vocabulary[0] != version:
            # The statistics point, also in ``terms``, has no "term".
            terms = [(p.payload or {}).get("term") for p in self._scroll(self.terms, payload=["term"])]
            self._vocabulary = (version, sorted(str(t) for t in terms if t))
        return self._vocabulary[1]

    # Writes -----------------------------------------------------------------------------

    def _point(self, doc_id: int, counts: dict[str, int], length: int, average: float) -> models.PointStruct:
        values = self.okapi.encode(counts, length, average)
        vector = models.SparseVector(indices=list(values), values=list(values.values()))
        return models.PointStruct(id=doc_id, vector={VECTOR: vector}, payload=passage_payload(counts, length, average))

    def add(self, doc_id: int, tokens: list[str]) -> None:
        if self.client.retrieve(self.passages, ids=[doc_id], with_payload=False):
            self.remove(doc_id, tokens)  # as sparse.py does; re-adding is not part of the contract
        counts = Counter(tokens)
        stats, dfs = self._records(counts)
        stats, average, reencode = stats_after_add(stats, dfs, counts, len(tokens), self.drift)
        self.client.upsert(self.passages, points=[self._point(doc_id, counts, len(tokens), average)], wait=True)
        records = [models.PointStruct(id=STATS_ID, vector={}, payload=stats)]
        records += [models.PointStruct(id=term_id(t), vector={}, payload={"term": t, "df": dfs[t] + 1}) for t in counts]
        self._upsert(self.terms, records)
        if reencode:
            self._reencode(average)

    def remove(self, doc_id: int, tokens: list[str]) -> None:
        """Forget a passage; the terms whose df drops are the ones stored with it (what its add
        counted), which are the ``tokens`` it was indexed with."""
        found = self.client.retrieve(self.passages, ids=[doc_id], with_payload=["length", "terms"])
        if not found:
            return
        payload = found[0].payload or {}
        length, terms = int(payload.get("length", len(tokens))), list(payload.get("terms", set(tokens)))
        self.client.delete(self.passages, points_selector=models.PointIdsList(points=[doc_id]), wait=True)
        stats, dfs = self._records(terms)
        stats, dfs, gone = stats_after_remove(stats, dfs, length)
        kept = [models.PointStruct(id=term_id(t), vector={}, payload={"term": t, "df": df}) for t, df in dfs.items()]
        self._upsert(self.terms, [models.PointStruct(id=STATS_ID, vector={}, payload=stats), *kept])
        if gone:
            self.client.delete(self.terms, points_selector=models.PointIdsList(points=[term_id(t) for t in gone]))

    def _reencode(self, average: float) -> None:
        """Encode every passage's vector with the new reference ``average``, from the terms it
        stores. One left half-way (a crash) costs nothing in scores, which are re-computed from
        the payloads; a vector encoded with an older average only ranks it less well as a
        candidate, until the next re-encoding."""
        batch: list[models.PointStruct] = []
        for point in self._scroll(self.passages, payload=True):
            payload = point.payload or {}
            if payload.get("average") == average:
                continue
            counts = dict(zip(payload["terms"], payload["counts"], strict=True))
            batch.append(self._point(int(point.id), counts, int(payload["length"]), average))
            if len(batch) >= UPSERT_BATCH:
                self._upsert(self.passages, batch)
                batch = []
        self._upsert(self.passages, batch)

    def _upsert(self, collection: str, points: list[models.PointStruct]) -> None:
        for first in range(0, len(points), UPSERT_BATCH):
            self.client.upsert(collection, points=points[first : first + UPSERT_BATCH], wait=True)

    def _scroll(self, collection: str, payload: bool | list[str]) -> Iterator[models.Record]:
        """Every point of ``collection``, a page at a time (a re-encoding never holds them all)."""
        offset: models.ExtendedPointId | None = None
        while True:
            points, offset = self.client.scroll(
                collection, limit=SCROLL_PAGE, offset=offset, with_payload=payload, with_vectors=False
            )
            yield from points
            if offset is None:
                return

    # Search -----------------------------------------------------------------------------

    def search(self, tokens: list[str], k: int, within: IdSet | None = None) -> list[tuple[int, float]]:
        """The ``k`` best passages for the query terms, best first; with ``within``, the ``k``
        best of those passages, by a ``has_id`` filter Qdrant applies during its search (IDF and
        lengths stay the whole library's)."""
        terms = set(tokens)
        if not terms or k <= 0 or (within is not None and not len(within)):
            return []
        stats, dfs = self._records(terms)
        indices = query_indices(dfs)
        if not indices or not stats["passages"]:
            return []
        query = models.SparseVector(indices=indices, values=[1.0] * len(indices))
        wanted = None if within is None else within.form("qdrant-filter", partial(_has_ids, within))
        points = self.client.query_points(
            self.passages,
            query=query,
            using=VECTOR,
            limit=candidates(k, self.rescore),
            query_filter=wanted,
            with_payload=["length", "terms", "counts"] if self.rescore else False,
        ).points
        if not self.rescore:
            return [(int(p.id), float(p.score)) for p in points]
        return self.okapi.rescored(((int(p.id), p.payload or {}) for p in points), stats, dfs, k)


def _has_ids(within: IdSet) -> models.Filter:
    # The point ids are the passage ids, so the filter names them (built once per id set).
    return models.Filter(must=[models.HasIdCondition(has_id=within.ids.tolist())])
