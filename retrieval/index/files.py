"""The index files of a data directory: written with their checksums, read only when they match.

``index.json`` records the store generation both index files reflect and the sha256 of each
file's bytes. A file is used only if that generation is the store's, its bytes hash to the
recorded value, and its ids are exactly the store's; anything else (stale, damaged, planted,
half-written by a crash or by another process) is reported and rebuilt from the store, which
is the source of truth.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from retrieval.errors import IndexFileOutOfStep, OldIndexFormat
from retrieval.index.factory import keyword_index_from_file, vector_index_from_file
from retrieval.ports import FileKeywordIndex, FileVectorIndex, KeywordIndex, VectorIndex
from retrieval.storage.atomic import write_bytes_atomically
from retrieval.storage.store import Store

DENSE_FILE = "sentences.faiss"
SPARSE_FILE = "passages.bm25"
INDEX_META_FILE = "index.json"
# Held by whoever changes the articles or writes the index files (see ``atomic.DirectoryLock``).
LOCK_FILE = "index.lock"
_META_FORMAT = 2


@dataclass
class LoadedIndexes:
    """What could be read: an index that could not be is ``None``, with the reason in ``problems``."""

    generation: int
    dense: VectorIndex | None = None
    sparse: KeywordIndex | None = None
    problems: dict[str, str] = field(default_factory=dict)  # "dense" / "sparse" -> "was missing", …


def read_indexes(data_dir: Path, store: Store) -> LoadedIndexes:
    generation = store.generation()
    loaded = LoadedIndexes(generation)
    meta = _read_meta(data_dir)
    files = meta.get("files") if meta.get("format") == _META_FORMAT else None
    if not isinstance(files, dict):
        # An index.json from before checksums (or none): the files cannot be trusted.
        loaded.problems = {"dense": _missing_or("had no checksum", data_dir / DENSE_FILE)}
        loaded.problems["sparse"] = _missing_or("had no checksum", data_dir / SPARSE_FILE)
        if (data_dir / SPARSE_FILE).is_file() and (data_dir / SPARSE_FILE).read_bytes()[:1] == b"\x80":
            loaded.problems["sparse"] = "was in the old pickle format (not read: loading a pickle can run code)"
        return loaded
    if meta.get("generation") != generation:
        loaded.problems = {"dense": "was out of date", "sparse": "was out of date"}
        return loaded
    try:
        data = _checked_bytes(data_dir / DENSE_FILE, files.get(DENSE_FILE))
        dense = vector_index_from_file(data)
        if not np.array_equal(dense.ids(), store.sentence_ids()):
            raise IndexFileOutOfStep("held other sentences than the store")
        loaded.dense = dense
    except (OSError, RuntimeError, ValueError) as error:
        loaded.problems["dense"] = _why(error)
    try:
        data = _checked_bytes(data_dir / SPARSE_FILE, files.get(SPARSE_FILE))
        loaded.sparse = keyword_index_from_file(data, store.passage_ids())
    except (OSError, ValueError) as error:
        loaded.problems["sparse"] = _why(error)
    return loaded


def write_indexes(data_dir: Path, dense: FileVectorIndex, sparse: FileKeywordIndex, generation: int) -> None:
    """Write both files, then ``index.json`` naming their checksums: a crash or a full disk part
    way leaves files that do not match ``index.json``, which the next reader rebuilds."""
    dense_bytes = dense.to_bytes()
    sparse_bytes = sparse.to_bytes()
    write_bytes_atomically(data_dir / DENSE_FILE, dense_bytes)
    write_bytes_atomically(data_dir / SPARSE_FILE, sparse_bytes)
    meta = {
        "format": _META_FORMAT,
        "generation": generation,
        "dense_kind": dense.kind,
        "files": {
            DENSE_FILE: {"sha256": hashlib.sha256(dense_bytes).hexdigest(), "count": dense.count()},
            SPARSE_FILE: {"sha256": hashlib.sha256(sparse_bytes).hexdigest(), "count": sparse.count()},
        },
    }
    write_bytes_atomically(data_dir / INDEX_META_FILE, json.dumps(meta, indent=1).encode())


class _Damaged(ValueError):
    pass


def _checked_bytes(path: Path, recorded: object) -> bytes:
    data = path.read_bytes()  # FileNotFoundError: "was missing"
    expected = recorded.get("sha256") if isinstance(recorded, dict) else None
    if not isinstance(expected, str) or hashlib.sha256(data).hexdigest() != expected:
        raise _Damaged("did not match its checksum in index.json (damaged on disk)")
    return data


def _read_meta(data_dir: Path) -> dict[str, object]:
    try:
        meta = json.loads((data_dir / INDEX_META_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _missing_or(reason: str, path: Path) -> str:
    return reason if path.is_file() else "was missing"


def _why(error: Exception) -> str:
    if isinstance(error, FileNotFoundError):
        return "was missing"
    if isinstance(error, _Damaged | OldIndexFormat | IndexFileOutOfStep):
        return str(error)
    if isinstance(error, OSError):
        return f"could not be read ({error.strerror or error})"
    return f"was unreadable ({error})"
