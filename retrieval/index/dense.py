"""Dense vector search over sentence embeddings with FAISS.

The index type follows the corpus size, by one rule written here: exact inner-product search
(Flat) while there are fewer than ``FLAT_LIMIT`` vectors, an IVF index with ``4 * sqrt(n)``
cells above that. Both keep a direct map so that the vectors of any sentence can be read back
for exact re-scoring.
"""

from __future__ import annotations

import math

import faiss
import numpy as np

from retrieval.index.embedder import DIMENSION
from retrieval.ports import IdSet

# One FAISS thread per search: Byline searches one query at a time from each of a few
# retrieval workers, and OpenMP's thread start-up costs more than it saves on one query
# (measured on BBC: 17.6 ms per search with two threads, 4.0 ms with one, on 2 cores). It is
# set around each search, not globally: torch shares the OpenMP runtime, and batch embedding
# at ingest does want every core.
SEARCH_THREADS = 1

FLAT_LIMIT = 50_000
# Retrain an IVF index when the corpus has grown this much past what it was trained on.
RETRAIN_GROWTH = 4.0


def choose_cells(count: int) -> int:
    """IVF cells for ``count`` vectors, or 0 for a flat index."""
    return 0 if count < FLAT_LIMIT else int(4 * math.sqrt(count))


class DenseIndex:
    """Sentence vectors searchable by inner product (cosine, as vectors are unit length).

    The embedded backend of the ``ports.VectorIndex`` port, saved as a file (``ports.FileVectorIndex``).
    """

    def __init__(self, index: faiss.Index | None = None, trained_for: int = 0) -> None:
        self.index = index if index is not None else _flat()
        self.trained_for = trained_for

    @classmethod
    def build(cls, ids: np.ndarray, vectors: np.ndarray) -> DenseIndex:
        """A fresh index of the right type for this many vectors."""
        cells = choose_cells(len(ids))
        if cells == 0:
            dense = cls()
        else:
            quantizer = faiss.IndexFlatIP(DIMENSION)
            ivf = faiss.IndexIVFFlat(quantizer, DIMENSION, cells, faiss.METRIC_INNER_PRODUCT)
            sample = vectors[
                np.random.default_rng(0).choice(len(vectors), min(len(vectors), cells * 40), replace=False)
            ]
            ivf.train(sample)
            ivf.set_direct_map_type(faiss.DirectMap.Hashtable)  # type: ignore[attr-defined]
            ivf.nprobe = _nprobe(cells)
            dense = cls(ivf, trained_for=len(ids))
        dense.add(ids, vectors)
        return dense

    @property
    def kind(self) -> str:
        return "ivf" if isinstance(self.index, faiss.IndexIVF) else "flat"

    def count(self) -> int:
        return int(self.index.ntotal)

    def needs_new_type(self) -> bool:
        """True when the corpus has outgrown this index type (flat too big, IVF undertrained)."""
        count = self.count()
        if self.kind == "flat":
            return choose_cells(count) > 0
        return count > self.trained_for * RETRAIN_GROWTH

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        if len(ids):
            self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), np.asarray(ids, dtype=np.int64))

    def remove(self, ids: list[int]) -> None:
        if ids:
            self.index.remove_ids(np.asarray(ids, dtype=np.int64))  # type: ignore[arg-type]

    def search(self, vector: np.ndarray, k: int, within: IdSet | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, scores) of the ``k`` nearest sentences, best first; with ``within``, of those
        sentences only, by FAISS's search-time ID selector (so a narrow scope still gets ``k``)."""
        if self.count() == 0 or (within is not None and not len(within)):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        params = None if within is None else self._selected(within)
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(SEARCH_THREADS)
        try:
            query = vector.reshape(1, -1).astype(np.float32)
            scores, ids = self.index.search(query, min(k, self.count()), params=params)
        finally:
            faiss.omp_set_num_threads(threads)
        keep = ids[0] >= 0
        return ids[0][keep], scores[0][keep]

    def _selected(self, within: IdSet) -> faiss.SearchParameters:
        """Search parameters that keep only ``within``'s ids: a bitmap selector (one bit per id
        up to the largest, so membership is one lookup), built once per id set."""

        def selector() -> tuple[faiss.IDSelectorBitmap, np.ndarray]:
            bits = np.packbits(within.mask(int(within.ids[-1]) + 1), bitorder="little")
            # The selector's size is in bytes (an id past them is not a member), and it points
            # into ``bits``: both are kept together in the id set.
            return faiss.IDSelectorBitmap(len(bits), faiss.swig_ptr(bits)), bits

        chosen, _ = within.form("faiss-bitmap", selector)
        if not isinstance(self.index, faiss.IndexIVF):
            params = faiss.SearchParameters()
            params.sel = chosen
            return params
        # An IVF search visits only ``nprobe`` cells: for a scope of a small share of the library
        # those cells may hold none of it. Visit more cells the narrower the scope (every cell
        # once the scope is under about 1/24 of the library), so a scope finds its nearest sentences as the whole
        # library finds its own; the selector skips the other vectors before any distance.
        share = min(1.0, len(within) / max(1, self.count()))
        nprobe = min(self.index.nlist, math.ceil(self.index.nprobe / share))
        ivf_params = faiss.SearchParametersIVF()
        ivf_params.sel, ivf_params.nprobe = chosen, nprobe
        return ivf_params

    def vectors(self, ids: list[int]) -> np.ndarray:
        if not ids:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        return np.asarray(self.index.reconstruct_batch(np.asarray(ids, dtype=np.int64)), dtype=np.float32)

    def ids(self) -> np.ndarray:
        """Every sentence id in the index, sorted (to check it against the store)."""
        if isinstance(self.index, faiss.IndexIDMap):
            found = faiss.vector_to_array(self.index.id_map)
        else:
            lists = faiss.extract_index_ivf(self.index).invlists
            assert lists is not None  # every IVF index has its lists
            parts = [
                faiss.rev_swig_ptr(lists.get_ids(number), lists.list_size(number)).copy()
                for number in range(lists.nlist)
                if lists.list_size(number)
            ]
            found = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return np.sort(np.asarray(found, dtype=np.int64))

    def to_bytes(self) -> bytes:
        # Serialised in memory and written with Python, so a full disk raises OSError (FAISS's
        # own writer reports it as a generic RuntimeError), and the bytes can be checksummed.
        return bytes(faiss.serialize_index(self.index).tobytes())

    @classmethod
    def from_bytes(cls, data: bytes) -> DenseIndex:
        """Raises ``RuntimeError`` when the bytes are not a FAISS index of sentence vectors.

        Read only bytes whose checksum matched: FAISS trusts the sizes a file states.
        """
        index = faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8))
        if index.d != DIMENSION:
            raise RuntimeError(f"index has {index.d} dimensions, expected {DIMENSION}")
        if not isinstance(index, faiss.IndexIDMap | faiss.IndexIVF):
            raise RuntimeError(f"a {type(index).__name__}, not a Byline index")
        trained_for = 0
        if isinstance(index, faiss.IndexIVF):
            # nprobe is a search setting, not part of the file.
            index.nprobe = _nprobe(index.nlist)
            trained_for = int(index.ntotal)
        return cls(index, trained_for=trained_for)


# Cells probed per search. Measured on real BBC sentence embeddings (bench/perf/bench_ivf_recall.py):
# recall@10 against exact search reaches 0.98 at 61-101 probes at 100k vectors (1,264 cells) and
# at ~31 at 500k, so a twelfth of the cells, capped at 128, holds 0.98 and keeps the cost flat
# as the library grows (cells // 24 missed it at 100k: 0.977).
MAX_NPROBE = 128


def _nprobe(cells: int) -> int:
    return max(8, min(cells // 12, MAX_NPROBE))


def _flat() -> faiss.Index:
    return faiss.IndexIDMap2(faiss.IndexFlatIP(DIMENSION))
