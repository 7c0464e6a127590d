"""BM25 over passages, updated in place as articles come and go.

bm25s builds immutable indexes (every new article would mean a full rebuild), so Byline keeps
its own small inverted index: per term, the passages that contain it and how often. Scoring a
query touches only the postings of its terms.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections import Counter

import numpy as np

from retrieval.errors import IndexFileOutOfStep, OldIndexFormat
from retrieval.ports import IdSet

# v2: accents folded in search tokens. v3: an .npz of integer arrays and a JSON header, not a
# pickle. A file of an older version is rebuilt from the store.
_FORMAT = "byline-bm25-v3"


class SparseIndex:
    """Okapi BM25 (k1=1.2, b=0.75) over stemmed content words.

    The embedded backend of the ``ports.KeywordIndex`` port, saved as a file (``ports.FileKeywordIndex``).
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._postings: dict[str, dict[int, int]] = {}
        self._lengths: dict[int, int] = {}
        self._total_length = 0
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._sorted_terms: list[str] | None = None
        # Passage lengths by passage id, for vectorised scoring.
        self._length_array = np.zeros(1024, dtype=np.float32)

    def count(self) -> int:
        return len(self._lengths)

    def ids(self) -> np.ndarray:
        """Every passage id held, sorted."""
        return np.sort(np.fromiter(self._lengths, dtype=np.int64, count=len(self._lengths)))

    def add(self, doc_id: int, tokens: list[str]) -> None:
        if doc_id in self._lengths:
            self.remove(doc_id, tokens)
        self._sorted_terms = None
        for term, frequency in Counter(tokens).items():
            self._postings.setdefault(term, {})[doc_id] = frequency
            self._arrays.pop(term, None)
        self._lengths[doc_id] = len(tokens)
        self._total_length += len(tokens)
        self._set_length(doc_id, len(tokens))

    def _set_length(self, doc_id: int, length: int) -> None:
        if doc_id >= len(self._length_array):
            grown = np.zeros(max(doc_id + 1, 2 * len(self._length_array)), dtype=np.float32)
            grown[: len(self._length_array)] = self._length_array
            self._length_array = grown
        self._length_array[doc_id] = length

    def remove(self, doc_id: int, tokens: list[str]) -> None:
        if doc_id not in self._lengths:
            return
        self._sorted_terms = None
        for term in set(tokens):
            postings = self._postings.get(term)
            if postings is not None:
                postings.pop(doc_id, None)
                self._arrays.pop(term, None)
                if not postings:
                    del self._postings[term]
        self._total_length -= self._lengths.pop(doc_id)
        self._set_length(doc_id, 0)

    def sorted_terms(self) -> list[str]:
        """Every indexed term in order (for spelling look-ups); cached until the index changes."""
        if self._sorted_terms is None:
            self._sorted_terms = sorted(self._postings)
        return self._sorted_terms

    def _term_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        cached = self._arrays.get(term)
        if cached is None:
            postings = self._postings.get(term, {})
            cached = (
                np.fromiter(postings.keys(), dtype=np.int64, count=len(postings)),
                np.fromiter(postings.values(), dtype=np.float32, count=len(postings)),
            )
            self._arrays[term] = cached
        return cached

    def search(self, tokens: list[str], k: int, within: IdSet | None = None) -> list[tuple[int, float]]:
        """The ``k`` best passages for the query terms, best first; with ``within``, the ``k``
        best of those passages (masked before the top k is taken; IDF and lengths stay the
        whole library's, so a passage scores the same in a scope as outside it)."""
        if not tokens or not self._lengths or (within is not None and not len(within)):
            return []
        count = len(self._lengths)
        average = self._total_length / count
        scores = np.zeros(len(self._length_array), dtype=np.float32)
        touched = []
        for term in set(tokens):
            ids, frequencies = self._term_arrays(term)
            if not len(ids):
                continue
            idf = math.log(1 + (count - len(ids) + 0.5) / (len(ids) + 0.5))
            lengths = self._length_array[ids]
            scores[ids] += (
                idf * frequencies * (self.k1 + 1) / (frequencies + self.k1 * (1 - self.b + self.b * lengths / average))
            )
            touched.append(ids)
        if not touched:
            return []
        if within is not None:
            scores *= within.mask(len(scores))
        # Every passage with a query term has a positive score (idf > 0), so the non-zero
        # entries are the candidates; cheaper than de-duplicating the postings.
        candidates = np.flatnonzero(scores)
        candidate_scores = scores[candidates]
        if len(candidates) > k:
            top = np.argpartition(-candidate_scores, k)[:k]
            candidates, candidate_scores = candidates[top], candidate_scores[top]
        order = np.argsort(-candidate_scores)
        return [(int(candidates[i]), float(candidate_scores[i])) for i in order]

    def max_idf(self, tokens: list[str]) -> dict[str, float]:
        """How rare each query term is (0 for a term no passage has)."""
        count = max(1, len(self._lengths))
        rarity = {}
        for term in set(tokens):
            n = len(self._postings.get(term, {}))
            rarity[term] = math.log(1 + (count - n + 0.5) / (n + 0.5)) if n else 0.0
        return rarity

    def to_bytes(self) -> bytes:
        """The index as an ``.npz`` of plain integer arrays plus a JSON header: a format whose
        reading runs no code (unlike a pickle), so a file planted in the data directory can at
        worst be rejected and rebuilt."""
        terms = sorted(self._postings)
        sizes = np.fromiter((len(self._postings[t]) for t in terms), dtype=np.int64, count=len(terms))
        offsets = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        total = int(offsets[-1])
        doc_ids = np.fromiter((d for t in terms for d in self._postings[t]), dtype=np.int64, count=total)
        frequencies = np.fromiter((f for t in terms for f in self._postings[t].values()), dtype=np.int64, count=total)
        header = json.dumps({"format": _FORMAT, "terms": terms}).encode()
        buffer = io.BytesIO()
        np.savez(
            buffer,
            header=np.frombuffer(header, dtype=np.uint8),
            offsets=offsets,
            doc_ids=doc_ids,
            frequencies=frequencies,
            length_ids=np.fromiter(self._lengths.keys(), dtype=np.int64, count=len(self._lengths)),
            lengths=np.fromiter(self._lengths.values(), dtype=np.int64, count=len(self._lengths)),
        )
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, passage_ids: np.ndarray | None = None) -> SparseIndex:
        """Read ``to_bytes``'s output; raises ``ValueError`` saying why for anything else, or when
        the passages it holds are not exactly ``passage_ids`` (checked before anything is built,
        so a planted file cannot make Byline allocate a length array for absurd ids)."""
        if data[:1] == b"\x80":
            raise OldIndexFormat("was in the old pickle format (not read: loading a pickle can run code)")
        if not data.startswith(b"PK"):
            raise ValueError("not a Byline keyword index")
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                header = json.loads(_integers(arrays["header"]).astype(np.uint8).tobytes())
                columns = {name: _integers(arrays[name]) for name in _COLUMNS}
        except (OSError, KeyError, EOFError, zipfile.BadZipFile, UnicodeDecodeError) as error:
            raise ValueError(str(error) or type(error).__name__) from None
        written_by = header.get("format") if isinstance(header, dict) else None
        if isinstance(written_by, str) and written_by.startswith("byline-bm25-") and written_by != _FORMAT:
            raise OldIndexFormat("was out of date")  # an older version's: rebuilt, as when stale
        if written_by != _FORMAT:
            raise ValueError("not a Byline keyword index")
        terms = header.get("terms")
        if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
            raise ValueError("malformed term list")
        _check_shapes(len(terms), columns)
        if passage_ids is not None and not np.array_equal(np.sort(columns["length_ids"]), np.sort(passage_ids)):
            raise IndexFileOutOfStep("held other passages than the store")
        index = cls()
        offsets, doc_ids, frequencies = columns["offsets"], columns["doc_ids"].tolist(), columns["frequencies"].tolist()
        for number, term in enumerate(terms):
            first, last = int(offsets[number]), int(offsets[number + 1])
            index._postings[term] = dict(zip(doc_ids[first:last], frequencies[first:last], strict=True))
        index._lengths = dict(zip(columns["length_ids"].tolist(), columns["lengths"].tolist(), strict=True))
        index._total_length = sum(index._lengths.values())
        for doc_id, length in index._lengths.items():
            index._set_length(doc_id, length)
        return index


_COLUMNS = ("offsets", "doc_ids", "frequencies", "length_ids", "lengths")


def _integers(array: np.ndarray) -> np.ndarray:
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise ValueError(f"{array.dtype} values of shape {array.shape} where integers belong")
    return array.astype(np.int64)


def _check_shapes(term_count: int, columns: dict[str, np.ndarray]) -> None:
    """The arrays describe a consistent index, so building it cannot fail half-way."""
    offsets, doc_ids, frequencies = columns["offsets"], columns["doc_ids"], columns["frequencies"]
    length_ids, lengths = columns["length_ids"], columns["lengths"]
    if len(offsets) != term_count + 1 or (len(offsets) and offsets[0] != 0) or np.any(np.diff(offsets) <= 0):
        raise ValueError("malformed term offsets")
    if int(offsets[-1]) != len(doc_ids) or len(doc_ids) != len(frequencies) or len(length_ids) != len(lengths):
        raise ValueError("arrays of mismatched lengths")
    if np.any(frequencies <= 0) or np.any(lengths < 0):
        raise ValueError("counts of zero or less")
    if np.any(length_ids < 0) or len(np.unique(length_ids)) != len(length_ids):
        raise ValueError("negative or repeated passage ids")
    if not np.all(np.isin(doc_ids, length_ids)):
        raise ValueError("postings for passages it does not hold")
