"""Where a library keeps its articles and its search indexes: one setting, ``BYLINE_BACKEND``.

- ``embedded`` (the default): the articles in SQLite in the data directory, FAISS and the own
  BM25 searched in memory and saved as checksummed files beside it. One machine; the fastest
  stack measured.
- ``cluster``: the articles and the bot's state in PostgreSQL (``BYLINE_DATABASE_URL``), the
  sentence vectors and the BM25 passages in Qdrant (``BYLINE_QDRANT_URL``), so that any number
  of ``byline serve`` and ``byline worker`` processes on any number of machines share them.

Either way the store is the truth and the indexes can be rebuilt from it. What differs is how
the indexes are kept level with the store, which is the ``IndexKeeper`` here: files labelled
with the store generation they reflect (``FileIndexes``), or shared collections whose
generation is recorded in the store itself, brought level by reconciling ids (``SharedIndexes``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from retrieval.errors import BylineError
from retrieval.index.factory import new_keyword_index, new_vector_index, open_shared_indexes, vector_index_of
from retrieval.index.files import LOCK_FILE, LoadedIndexes, read_indexes, write_indexes
from retrieval.ports import IdSet, KeywordIndex, SavedToFile, VectorIndex
from retrieval.reading.text import search_tokens
from retrieval.storage.atomic import DirectoryLock

if TYPE_CHECKING:
    from retrieval.storage.store import Store

BACKEND_VARIABLE = "BYLINE_BACKEND"
DATABASE_URL_VARIABLE = "BYLINE_DATABASE_URL"
QDRANT_URL_VARIABLE = "BYLINE_QDRANT_URL"
QDRANT_API_KEY_VARIABLE = "BYLINE_QDRANT_API_KEY"
BACKENDS = ("embedded", "cluster")
STORE_FILE = "byline.sqlite3"
# The store's record of the generation the shared indexes reflect (the cluster's index.json).
INDEX_GENERATION_KEY = "index_generation"
# Sentences whose vectors are copied from the store per request when reconciling.
_RECONCILE_BATCH = 2048


class BackendError(BylineError):
    """A backend setting that cannot be used (an unknown name, a missing URL or extra)."""


class WriterLock(Protocol):
    """One writer at a time, across processes (and machines, for the cluster)."""

    def hold(self, blocking: bool = True) -> AbstractContextManager[bool]: ...


@dataclass(frozen=True)
class Backend:
    """The backend settings a library is opened with."""

    kind: str = "embedded"
    database_url: str = ""
    # A Qdrant server's URL; or a folder (Qdrant's local mode, one process), or ":memory:"
    # (nothing kept; ":memory:NAME" is shared by the libraries of one process naming it).
    qdrant_location: str = ""
    qdrant_api_key: str = ""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Backend:
        environ = os.environ if environ is None else environ
        kind = environ.get(BACKEND_VARIABLE, "").strip().lower() or "embedded"
        if kind not in BACKENDS:
            raise BackendError(
                f"{BACKEND_VARIABLE} must be embedded or cluster, not {environ.get(BACKEND_VARIABLE)!r}."
            )
        return cls(
            kind=kind,
            database_url=environ.get(DATABASE_URL_VARIABLE, "").strip(),
            qdrant_location=environ.get(QDRANT_URL_VARIABLE, "").strip(),
            qdrant_api_key=environ.get(QDRANT_API_KEY_VARIABLE, "").strip(),
        )

    @property
    def is_cluster(self) -> bool:
        return self.kind == "cluster"

    def store_location(self, data_dir: Path) -> Path | str:
        """The article store: the data directory's SQLite file, or the PostgreSQL URL."""
        if not self.is_cluster:
            return data_dir / STORE_FILE
        if not self.database_url:
            raise BackendError(
                f"{BACKEND_VARIABLE}=cluster needs {DATABASE_URL_VARIABLE} (a postgresql:// URL): set it, or unset "
                f"{BACKEND_VARIABLE} to keep everything in the data directory."
            )
        return self.database_url

    def index_keeper(self, data_dir: Path, store: Store) -> IndexKeeper:
        if not self.is_cluster:
            return FileIndexes(data_dir)
        return SharedIndexes.open(self, data_dir, store)


class IndexKeeper(Protocol):
    """How a library's indexes are read, rebuilt and recorded as level with the store."""

    writer: WriterLock
    # True when other processes share the indexes themselves (not only the store).
    shared: bool

    def read(self, store: Store) -> LoadedIndexes:
        """The indexes usable as they are; one that is not is ``None``, with the reason."""
        ...

    def rebuild_dense(self, store: Store) -> VectorIndex:
        """A vector index holding exactly the store's sentences."""
        ...

    def rebuild_sparse(self, store: Store) -> KeywordIndex:
        """A keyword index holding exactly the store's passages."""
        ...

    def save(self, dense: VectorIndex, sparse: KeywordIndex, generation: int) -> None:
        """Record that these indexes reflect the store at ``generation``; ``OSError`` if it cannot."""
        ...


class FileIndexes:
    """The embedded keeper: FAISS and BM25 in memory, saved as files of the data directory."""

    shared = False

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        # Held across processes by every change to the articles and every index save, so two
        # processes on one data directory never save indexes that miss each other's changes.
        self.writer: WriterLock = DirectoryLock(data_dir / LOCK_FILE)

    def read(self, store: Store) -> LoadedIndexes:
        return read_indexes(self.data_dir, store)

    def rebuild_dense(self, store: Store) -> VectorIndex:
        batches = list(store.iter_sentence_vectors())
        if not batches:
            return new_vector_index()
        return vector_index_of(np.concatenate([b[0] for b in batches]), np.concatenate([b[1] for b in batches]))

    def rebuild_sparse(self, store: Store) -> KeywordIndex:
        sparse = new_keyword_index()
        for passage_id, text in store.iter_passage_texts():
            sparse.add(passage_id, search_tokens(text))
        return sparse

    def save(self, dense: VectorIndex, sparse: KeywordIndex, generation: int) -> None:
        assert isinstance(dense, SavedToFile) and isinstance(sparse, SavedToFile)
        write_indexes(self.data_dir, dense, sparse, generation)


class SharedIndexes:
    """The cluster keeper: sentences and passages in Qdrant collections that every worker shares.

    Every writer holds the cluster-wide writer lock (a PostgreSQL advisory lock), changes the
    store, then the collections, then records the generation they reflect in the store. A worker
    that died half way leaves that record behind the store's generation; the next worker to
    start (or to write) reconciles the collections with the store by id, which touches only what
    differs, and records the generation again.
    """

    shared = True

    def __init__(self, store: Store, dense: VectorIndex, sparse: KeywordIndex) -> None:
        # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
        from retrieval.storage.postgres import PostgresEngine, ServerLock

        if not isinstance(store.engine, PostgresEngine):
            raise BackendError("the cluster backend keeps its articles in PostgreSQL: give it a postgresql:// URL")
        self.store = store
        self.dense: VectorIndex = StoreRescoredVectors(dense, store)
        self.sparse = sparse
        self.writer: WriterLock = ServerLock(store.engine, "library-writer")

    @classmethod
    def open(cls, backend: Backend, data_dir: Path, store: Store) -> SharedIndexes:
        location = backend.qdrant_location or str(data_dir / "qdrant")
        try:
            dense, sparse = open_shared_indexes(location, backend.qdrant_api_key or None)
        except ImportError:
            raise BackendError(
                f"{BACKEND_VARIABLE}=cluster needs the cluster extra (qdrant-client, psycopg, redis): "
                "run `pip install -e '.[cluster]'`."
            ) from None
        return cls(store, dense, sparse)

    def read(self, store: Store) -> LoadedIndexes:
        generation = store.generation()
        loaded = LoadedIndexes(generation)
        recorded = store.meta_value(INDEX_GENERATION_KEY)
        if recorded != str(generation):
            why = "was never filled" if recorded is None else "was behind the store (a worker stopped mid-write)"
            loaded.problems = {"dense": why, "sparse": why}
            return loaded
        counts = store.counts()
        if self.dense.count() != counts["sentences"]:
            loaded.problems["dense"] = "held another number of sentences than the store"
        else:
            loaded.dense = self.dense
        if self.sparse.count() != counts["passages"]:
            loaded.problems["sparse"] = "held another number of passages than the store"
        else:
            loaded.sparse = self.sparse
        return loaded

    def rebuild_dense(self, store: Store) -> VectorIndex:
        wanted = store.sentence_ids()
        held = self.dense.ids()
        extra = np.setdiff1d(held, wanted, assume_unique=True)
        missing = np.setdiff1d(wanted, held, assume_unique=True)
        self.dense.remove(extra.tolist())
        for first in range(0, len(missing), _RECONCILE_BATCH):
            ids = missing[first : first + _RECONCILE_BATCH]
            self.dense.add(ids, store.sentence_vectors(ids.tolist()))
        return self.dense

    def rebuild_sparse(self, store: Store) -> KeywordIndex:
        held = self.sparse.ids()
        wanted = store.passage_ids()
        for passage_id in np.setdiff1d(held, wanted, assume_unique=True).tolist():
            # The store no longer has its text; the Qdrant index forgets a passage by the
            # terms it stored with it, so no tokens are needed.
            self.sparse.remove(passage_id, [])
        missing = set(np.setdiff1d(wanted, held, assume_unique=True).tolist())
        for passage_id, text in _passage_texts(store, missing):
            self.sparse.add(passage_id, search_tokens(text))
        return self.sparse

    def save(self, dense: VectorIndex, sparse: KeywordIndex, generation: int) -> None:
        self.store.set_meta(INDEX_GENERATION_KEY, str(generation))


class StoreRescoredVectors:
    """A shared vector index whose stored vectors, for exact re-scoring, are read from the store.

    Searching goes to Qdrant; the candidates' own vectors (``vectors``) come from the store's
    copy in one SQL query, which at ~100k passages takes a fraction of fetching them from Qdrant
    as JSON lists (bench/perf/bench_cluster_ask.py). They are the float16 copy every index is rebuilt
    from, so the scores equal those of a FAISS index rebuilt from the same store.
    """

    def __init__(self, index: VectorIndex, store: Store) -> None:
        self.index = index
        self.store = store

    @property
    def kind(self) -> str:
        return self.index.kind

    def count(self) -> int:
        return self.index.count()

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        self.index.add(ids, vectors)

    def remove(self, ids: list[int]) -> None:
        self.index.remove(ids)

    def search(self, vector: np.ndarray, k: int, within: IdSet | None = None) -> tuple[np.ndarray, np.ndarray]:
        return self.index.search(vector, k, within)

    def vectors(self, ids: list[int]) -> np.ndarray:
        return self.store.sentence_vectors(ids)

    def ids(self) -> np.ndarray:
        return self.index.ids()

    def needs_new_type(self) -> bool:
        return self.index.needs_new_type()


def _passage_texts(store: Store, wanted: set[int]) -> Iterator[tuple[int, str]]:
    if not wanted:
        return
    for passage_id, text in store.iter_passage_texts():
        if passage_id in wanted:
            yield passage_id, text
