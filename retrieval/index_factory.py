"""Which vector backend to use: one setting, one rule, written here.

``BYLINE_VECTOR_BACKEND`` names the backend, ``faiss`` when unset:

- ``faiss``: the embedded default, ``dense.DenseIndex``, kept in a file of the data directory.
- ``qdrant``: ``qdrant_index.QdrantIndex``; on the server at ``BYLINE_QDRANT_URL`` when that is
  set (what several processes share), else in Qdrant's local mode in ``<data dir>/qdrant``
  (one process; for trying it out). Needs the ``cluster`` extra: ``pip install -e '.[cluster]'``.

Adding a backend is one entry in ``VECTOR_BACKENDS`` and one function here; nothing else changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from .dense import DenseIndex
from .errors import BylineError
from .ports import VectorIndex

BACKEND_VARIABLE = "BYLINE_VECTOR_BACKEND"
QDRANT_URL_VARIABLE = "BYLINE_QDRANT_URL"
QDRANT_API_KEY_VARIABLE = "BYLINE_QDRANT_API_KEY"
DEFAULT_BACKEND = "faiss"
# Local mode's folder inside the data directory.
QDRANT_FOLDER = "qdrant"


class UnknownBackend(BylineError):
    """A backend name that is not one of ``VECTOR_BACKENDS``, or one whose extra is missing."""


def _faiss(data_dir: Path, environ: Mapping[str, str]) -> VectorIndex:
    # Empty: the library fills it from its index file or, failing that, from the store.
    return DenseIndex()


def _qdrant(data_dir: Path, environ: Mapping[str, str]) -> VectorIndex:
    try:
        from .qdrant_index import QdrantIndex
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
    environ = os.environ if environ is None else environ
    name = environ.get(BACKEND_VARIABLE, "").strip().lower() or DEFAULT_BACKEND
    if name not in VECTOR_BACKENDS:
        known = ", ".join(VECTOR_BACKENDS)
        raise UnknownBackend(
            f"{BACKEND_VARIABLE}={environ.get(BACKEND_VARIABLE)!r} is not a vector backend: use one of {known} "
            f"(or unset it for {DEFAULT_BACKEND})."
        )
    return name


def open_vector_index(data_dir: Path, environ: Mapping[str, str] | None = None) -> VectorIndex:
    """The vector index the settings choose, for the data directory ``data_dir``."""
    environ = os.environ if environ is None else environ
    return VECTOR_BACKENDS[vector_backend_name(environ)](data_dir, environ)
