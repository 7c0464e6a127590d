"""Near-duplicate detection: a republished story with small edits is stored once.

Canonical URLs catch the same page reached by two links; they miss a story republished under
a new URL with a corrected sentence. For that we compare texts: each text becomes a MinHash
signature over its 5-word shingles, and two signatures that agree on at least
``NEAR_DUPLICATE`` of their slots estimate a Jaccard similarity at least that high.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from retrieval.models import ArticleDraft
from retrieval.storage.store import Store

NEAR_DUPLICATE = 0.9
SHINGLE_WORDS = 5
PERMUTATIONS = 128
RECENT_ARTICLES = 500

_WORD = re.compile(r"\w+")
_MERSENNE = np.uint64((1 << 61) - 1)
_rng = np.random.default_rng(20240601)  # fixed, so signatures are comparable across runs
_A = _rng.integers(1, (1 << 61) - 1, PERMUTATIONS, dtype=np.uint64)
_B = _rng.integers(0, (1 << 61) - 1, PERMUTATIONS, dtype=np.uint64)


def shingles(text: str) -> np.ndarray:
    """64-bit hashes of the overlapping word 5-grams of a text (lowercased)."""
    words = _WORD.findall(text.lower())
    if len(words) < SHINGLE_WORDS:
        words = words + [""] * (SHINGLE_WORDS - len(words))
    grams = {" ".join(words[i : i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)}
    return np.fromiter(
        (int.from_bytes(hashlib.blake2b(g.encode(), digest_size=8).digest(), "little") for g in grams),
        dtype=np.uint64,
        count=len(grams),
    )


def signature(text: str) -> np.ndarray:
    """The MinHash signature of a text: the minimum of each of 128 hash permutations."""
    values = shingles(text) % _MERSENNE
    # (a*x + b) mod p, computed in 64 bits: wraps, but consistently, which is all MinHash needs.
    hashed = (values[None, :] * _A[:, None] + _B[:, None]) % _MERSENNE
    return hashed.min(axis=1)


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Estimated Jaccard similarity of two texts from their signatures."""
    return float(np.mean(a == b))


@dataclass(frozen=True)
class Match:
    """A stored article that a new draft nearly duplicates."""

    article_id: int
    key: str
    published: str
    score: float


class NearDuplicates:
    """Signatures of recently added articles, cached by article id (texts never change in place)."""

    def __init__(self, store: Store, recent: int = RECENT_ARTICLES) -> None:
        self.store = store
        self.recent = recent
        self._cache: dict[int, np.ndarray] = {}

    def find(self, draft: ArticleDraft) -> Match | None:
        recent = self.store.recent_articles(self.recent)
        candidates = [row for row in recent if row[1] != draft.key]  # same key: the library replaces it
        known: list[np.ndarray] = []
        for row in list(candidates):
            article_id = row[0]
            cached = self._cache.get(article_id)
            if cached is None:
                article = self.store.article(article_id, with_text=True)
                if article is None:
                    candidates.remove(row)
                    continue
                cached = self._cache[article_id] = signature(article.text)
            known.append(cached)
        if not known:
            return None
        # One comparison of the draft against every recent signature at once: a folder of
        # hundreds of files is checked against hundreds of stored articles in milliseconds.
        scores = similarities(signature(draft.text), np.stack(known))
        best = int(np.argmax(scores))
        if scores[best] < NEAR_DUPLICATE:
            return None
        article_id, key, published = candidates[best]
        return Match(article_id, key, published, float(scores[best]))


def similarities(one: np.ndarray, many: np.ndarray) -> np.ndarray:
    """``similarity`` of one signature against each row of a matrix of signatures."""
    if not len(many):
        return np.zeros(0)
    return np.mean(many == one[None, :], axis=1)


def merge_near_duplicates(
    drafts: Sequence[ArticleDraft], index: NearDuplicates
) -> tuple[list[ArticleDraft], list[tuple[str, str]]]:
    """Drafts to add, with near-duplicates of stored articles re-keyed to replace them.

    Taking over the old article's key (rather than deleting it and adding the new one) lets
    the library swap the versions in one transaction: a crash leaves one version, never none.
    A draft older (by published date) than the stored version it matches is skipped, and of
    near-duplicates within one batch only the last is kept. Returns (drafts, skipped) where
    skipped holds (key, reason).
    """
    kept: list[ArticleDraft] = []
    # Row i is the signature of kept[i]; filled as drafts are kept, compared in one go.
    signatures = np.zeros((len(drafts), PERMUTATIONS), dtype=np.uint64)
    skipped: list[tuple[str, str]] = []
    by_key: dict[str, int] = {}
    for draft in drafts:
        mine = signature(draft.text)
        twin = by_key.get(draft.key)
        if twin is None and kept:
            scores = similarities(mine, signatures[: len(kept)])
            first = int(np.argmax(scores))
            twin = first if scores[first] >= NEAR_DUPLICATE else None
        if twin is not None:
            skipped.append((kept[twin].key, f"a near-duplicate of {draft.key} in the same batch"))
            kept[twin], signatures[twin] = draft, mine
            by_key[draft.key] = twin
            continue
        by_key[draft.key] = len(kept)
        signatures[len(kept)] = mine
        kept.append(draft)
    result: list[ArticleDraft] = []
    for draft in kept:
        match = index.find(draft)
        if match is None:
            result.append(draft)
            continue
        if match.published and draft.published and draft.published[:19] < match.published[:19]:
            skipped.append((draft.key, f"an older version of the stored article {match.key}"))
            continue
        if any(other.key == match.key for other in kept):
            result.append(draft)  # its twin is in this batch under that key; keep both apart
            continue
        draft.key = match.key
        result.append(draft)
    return result, skipped
