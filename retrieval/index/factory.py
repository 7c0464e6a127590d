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

Both functions are pure (the environment in, an index out), so a switch that sets several
backends at once only has to build the environment it passes. Adding a backend is one entry in
``VECTOR_BACKENDS`` or ``KEYWORD_BACKENDS`` and one function here; nothing else changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from retrieval.errors import BylineError
from retrieval.index.dense import DenseIndex
from retrieval.index.sparse import SparseIndex
from retrieval.ports import KeywordIndex, VectorIndex

BACKEND_VARIABLE = "BYLINE_VECTOR_BACKEND"
KEYWORD_BACKEND_VARIABLE = "BYLINE_KEYWORD_BACKEND"
QDRANT_URL_VARIABLE = "BYLINE_QDRANT_URL"
QDRANT_API_KEY_VARIABLE = "BYLINE_QDRANT_API_KEY"
DEFAULT_BACKEND = "faiss"
DEFAULT_KEYWORD_BACKEND = "bm25"
# Local mode's folders inside the data directory (one client per folder, so one per index).
QDRANT_FOLDER = "qdrant"
QDRANT_KEYWORD_FOLDER = "qdrant-keywords"


class UnknownBackend(BylineError):
    """A backend name that is not one of ``VECTOR_BACKENDS`` (or ``KEYWORD_BACKENDS``), or one
    whose extra is missing."""


def _faiss(data_dir: Path, environ: Mapping[str, str]) -> VectorIndex:
    # Empty: the library fills it from its index file or, failing that, from the store.
    return DenseIndex()


def _qdrant(data_dir: Path, environ: Mapping[str, str]) -> VectorIndex:
    try:
        from retrieval.index.qdrant import QdrantIndex
    except ImportError:
        raise UnknownBackend(
            f"{BACKEND_VARIABLE}=qdrant needs qdrant-client, which is not installed: "
            "run `pip install -e '.[cluster]'`, or unset it to use the embedded FAISS index."
        ) from None
    url = environ.get(QDRANT_URL_VARIABLE, "").strip()
    if url:
        return QdrantIndex.open(url=url, api_key=environ.get(QDRANT_API_KEY_VARIABLE) or None)
    return QdrantIndex.open(path=data_dir / QDRANT_FOLDER)


VECTOR_BACKENDS: dict[str, Callable[[Path, Mapping[str, str]], VectorIndex]] = {
    "faiss": _faiss,
    "qdrant": _qdrant,
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
        from retrieval.index.qdrant_keywords import QdrantKeywordIndex
    except ImportError:
        raise UnknownBackend(
            f"{KEYWORD_BACKEND_VARIABLE}=qdrant needs qdrant-client, which is not installed: "
            "run `pip install -e '.[cluster]'`, or unset it to use the embedded BM25 index."
        ) from None
    url = environ.get(QDRANT_URL_VARIABLE, "").strip()
    if url:
        return QdrantKeywordIndex.open(url=url, api_key=environ.get(QDRANT_API_KEY_VARIABLE) or None)
    return QdrantKeywordIndex.open(path=data_dir / QDRANT_KEYWORD_FOLDER)


KEYWORD_BACKENDS: dict[str, Callable[[Path, Mapping[str, str]], KeywordIndex]] = {
    "bm25": _bm25,
    "qdrant": _qdrant_keywords,
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
