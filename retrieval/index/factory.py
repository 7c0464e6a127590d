"""Which vector and keyword backends to use: one setting each, one rule, written here.

``BYLINE_VECTOR_BACKEND`` names the vector backend, ``faiss`` when unset:

- ``faiss``: the embedded default, ``dense.DenseIndex``, kept in a file of the data directory.
- ``qdrant``: ``qdrant_index.QdrantIndex``; on the server at ``BYLINE_QDRANT_URL`` when that is
  set (what several processes share), else in Qdrant's local mode in ``<data dir>/qdrant``
  (one process; for trying it out). Needs the ``cluster`` extra: ``pip install -e '.[cluster]'``.

``BYLINE_KEYWORD_BACKEND`` names the keyword backend, ``bm25`` when unset:

- ``bm25``: the embedded default, ``sparse.SparseIndex``, kept in a file of the data directory.
- ``qdrant``: ``qdrant_keywords.QdrantKeywordIndex``, on the same server as the vectors when
  ``BYLINE_QDRANT_URL`` is set, else in local mode in ``<data dir>/qdrant-keywords``: a
  folder of its own, because local mode lets one client at a time open a folder and the vector
  index may hold ``qdrant``.

- ``qdrant-edge`` (vectors and keywords): Qdrant's engine in this process
  (``qdrant_edge.py``), in ``<data dir>/qdrant-edge`` (or ``-keywords``); a bench and test
  stand-in for a server, which needs the ``test`` extra (qdrant-edge-py).

Both functions are pure (the environment in, an index out), so a switch that sets several
backends at once only has to build the environment it passes.

This is the one module that names the engines (the import contract "only the factory names
engines" in pyproject.toml keeps it so): the running library gets its embedded indexes
(``new_*``, ``*_from_file``, ``vector_index_of``) and the cluster's shared ones
(``open_shared_indexes``) from here too. Adding a backend is its module, one entry in
``VECTOR_BACKENDS`` or ``KEYWORD_BACKENDS`` with its function here, and its line in the port
contract tests (``tests/contract/test_vector_index_contract.py``, ``tests/contract/test_keyword_index_contract.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from retrieval.errors import BylineError
from retrieval.index.dense import DenseIndex
from retrieval.index.sparse import SparseIndex
from retrieval.ports import FileKeywordIndex, FileVectorIndex, KeywordIndex, VectorIndex

BACKEND_VARIABLE = "BYLINE_VECTOR_BACKEND"
KEYWORD_BACKEND_VARIABLE = "BYLINE_KEYWORD_BACKEND"
QDRANT_URL_VARIABLE = "BYLINE_QDRANT_URL"
QDRANT_API_KEY_VARIABLE = "BYLINE_QDRANT_API_KEY"
DEFAULT_BACKEND = "faiss"
DEFAULT_KEYWORD_BACKEND = "bm25"
# Local mode's folders inside the data directory (one client per folder, so one per index).
QDRANT_FOLDER = "qdrant"
QDRANT_KEYWORD_FOLDER = "qdrant-keywords"
EDGE_FOLDER = "qdrant-edge"
EDGE_KEYWORD_FOLDER = "qdrant-edge-keywords"


class UnknownBackend(BylineError):
    """A backend name that is not one of ``VECTOR_BACKENDS`` (or ``KEYWORD_BACKENDS``), or one
    whose extra is missing."""


def _faiss(data_dir: Path, environ: Mapping[str, str]) -> VectorIndex:
    # Empty: the library fills it from its index file or, failing that, from the store.
    return DenseIndex()


def _qdrant(data_dir: Path, environ: Mapping[str, str]) -> VectorIndex:
    try:
        # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
        from retrieval.index.qdrant import QdrantIndex
    except ImportError:
        raise _no_qdrant_client(BACKEND_VARIABLE, "FAISS") from None
    return QdrantIndex.open(**_qdrant_place(data_dir, environ, QDRANT_FOLDER))


def _no_qdrant_client(variable: str, embedded: str) -> UnknownBackend:
    return UnknownBackend(
        f"{variable}=qdrant needs qdrant-client, which is not installed: "
        f"run `pip install -e '.[cluster]'`, or unset it to use the embedded {embedded} index."
    )


def _qdrant_place(data_dir: Path, environ: Mapping[str, str], folder: str) -> dict[str, Any]:
    """Where a Qdrant index opens: on the server at ``BYLINE_QDRANT_URL`` when that is set, else
    in local mode in ``folder`` of the data directory."""
    url = environ.get(QDRANT_URL_VARIABLE, "").strip()
    if url:
        return {"url": url, "api_key": environ.get(QDRANT_API_KEY_VARIABLE) or None}
    return {"path": data_dir / folder}


def _edge_module():  # type: ignore[no-untyped-def]
    """``qdrant_edge.py``, imported only when named: qdrant-edge-py is a test dependency."""
    try:
        # the engine module loads only when it is named (its package may be missing).
        from retrieval.index import qdrant_edge
    except ImportError:
        raise UnknownBackend(
            "qdrant-edge needs qdrant-edge-py, which is not installed: run `pip install -e '.[test]'`."
        ) from None
    return qdrant_edge


def _qdrant_edge(data_dir: Path, environ: Mapping[str, str]) -> VectorIndex:
    index: VectorIndex = _edge_module().EdgeVectorIndex(data_dir / EDGE_FOLDER)
    return index


VECTOR_BACKENDS: dict[str, Callable[[Path, Mapping[str, str]], VectorIndex]] = {
    "faiss": _faiss,
    "qdrant": _qdrant,
    "qdrant-edge": _qdrant_edge,
}


def vector_backend_name(environ: Mapping[str, str] | None = None) -> str:
    """The backend ``BYLINE_VECTOR_BACKEND`` names (``faiss`` when unset or empty)."""
    return _backend_name(environ, BACKEND_VARIABLE, VECTOR_BACKENDS, DEFAULT_BACKEND, "a vector backend")


def _backend_name(
    environ: Mapping[str, str] | None, variable: str, known: Mapping[str, object], default: str, what: str
) -> str:
    """The name ``variable`` gives (``default`` when unset or empty), one of ``known``."""
    environ = os.environ if environ is None else environ
    name = environ.get(variable, "").strip().lower() or default
    if name not in known:
        raise UnknownBackend(
            f"{variable}={environ.get(variable)!r} is not {what}: use one of {', '.join(known)} "
            f"(or unset it for {default})."
        )
    return name


def open_vector_index(data_dir: Path, environ: Mapping[str, str] | None = None) -> VectorIndex:
    """The vector index the settings choose, for the data directory ``data_dir``."""
    environ = os.environ if environ is None else environ
    return VECTOR_BACKENDS[vector_backend_name(environ)](data_dir, environ)


def _bm25(data_dir: Path, environ: Mapping[str, str]) -> KeywordIndex:
    # Empty: the library fills it from its index file or, failing that, from the store.
    return SparseIndex()


def _qdrant_keywords(data_dir: Path, environ: Mapping[str, str]) -> KeywordIndex:
    try:
        # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
        from retrieval.index.qdrant_keywords import QdrantKeywordIndex
    except ImportError:
        raise _no_qdrant_client(KEYWORD_BACKEND_VARIABLE, "BM25") from None
    return QdrantKeywordIndex.open(**_qdrant_place(data_dir, environ, QDRANT_KEYWORD_FOLDER))


def _qdrant_edge_keywords(data_dir: Path, environ: Mapping[str, str]) -> KeywordIndex:
    index: KeywordIndex = _edge_module().EdgeKeywordIndex(data_dir / EDGE_KEYWORD_FOLDER)
    return index


KEYWORD_BACKENDS: dict[str, Callable[[Path, Mapping[str, str]], KeywordIndex]] = {
    "bm25": _bm25,
    "qdrant": _qdrant_keywords,
    "qdrant-edge": _qdrant_edge_keywords,
}


def keyword_backend_name(environ: Mapping[str, str] | None = None) -> str:
    """The backend ``BYLINE_KEYWORD_BACKEND`` names (``bm25`` when unset or empty)."""
    return _backend_name(
        environ, KEYWORD_BACKEND_VARIABLE, KEYWORD_BACKENDS, DEFAULT_KEYWORD_BACKEND, "a keyword backend"
    )


def open_keyword_index(data_dir: Path, environ: Mapping[str, str] | None = None) -> KeywordIndex:
    """The keyword index the settings choose, for the data directory ``data_dir``."""
    environ = os.environ if environ is None else environ
    return KEYWORD_BACKENDS[keyword_backend_name(environ)](data_dir, environ)


# -- the embedded engines a library runs on: FAISS and the own BM25, saved as files ----------


def new_vector_index() -> VectorIndex:
    """An empty embedded vector index (the library fills it from its file or its store)."""
    return DenseIndex()


def new_keyword_index() -> KeywordIndex:
    """An empty embedded keyword index."""
    return SparseIndex()


def vector_index_of(ids: np.ndarray, vectors: np.ndarray) -> VectorIndex:
    """An embedded vector index holding these sentences' vectors (built at once, not added to)."""
    if not len(ids):
        return DenseIndex()
    return DenseIndex.build(ids, vectors)


def vector_index_from_file(data: bytes) -> FileVectorIndex:
    """The embedded vector index saved as ``data``; ``ValueError``/``RuntimeError`` if unreadable."""
    return DenseIndex.from_bytes(data)


def keyword_index_from_file(data: bytes, passage_ids: np.ndarray) -> FileKeywordIndex:
    """The embedded keyword index saved as ``data``, which must hold exactly ``passage_ids``."""
    return SparseIndex.from_bytes(data, passage_ids)


# -- the cluster's shared engines ------------------------------------------------------------

# ":memory:NAME" locations: one pair of in-memory collections per name, for this process.
_SHARED_IN_MEMORY: dict[str, tuple[VectorIndex, KeywordIndex]] = {}


def open_shared_indexes(location: str, api_key: str | None) -> tuple[VectorIndex, KeywordIndex]:
    """The cluster's vector and keyword collections in Qdrant at ``location``: a server's URL, a
    folder (local mode: one folder per collection, as its client locks its folder), ``:memory:``
    (nothing kept) or ``:memory:NAME`` (shared by every library of this process that names it:
    what tests of several workers in one process need). ``ImportError`` without qdrant-client."""
    # imported only where it is used: the cluster extra (PostgreSQL, Redis, Qdrant) is optional.
    from retrieval.index.qdrant import QdrantIndex
    from retrieval.index.qdrant_keywords import QdrantKeywordIndex

    if location == ":memory:":
        return QdrantIndex.in_memory(), QdrantKeywordIndex.in_memory()
    if location.startswith(":memory:"):
        if location not in _SHARED_IN_MEMORY:
            _SHARED_IN_MEMORY[location] = (QdrantIndex.in_memory(), QdrantKeywordIndex.in_memory())
        return _SHARED_IN_MEMORY[location]
    if location.startswith(("http://", "https://")):
        return QdrantIndex.open(url=location, api_key=api_key), QdrantKeywordIndex.open(url=location, api_key=api_key)
    return QdrantIndex.open(path=Path(location) / "sentences"), QdrantKeywordIndex.open(
        path=Path(location) / "passages"
    )
