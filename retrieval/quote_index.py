"""An index of the words inside quote marks, by runs of three words, for the quote check.

The keyword index ranks passages by their rarer words, so a short piece of a quote made of
common ones ("are in government is to get on with the") does not bring up its article. Three
words in a row, stopwords and all, do: every stored quote's runs of three comparable words
(``quote_text.words_of``) are hashed into one sorted numpy array, and a pasted quote's own runs
find the articles that quote the same words, changed words and all but the runs they touch.

Built from the store's quotes on first use and again when the library changes (its generation
moves); about a third of a second for 7,000 quotes, a few megabytes.
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from collections.abc import Sequence

import numpy as np

from .library import Library
from .quote_text import Word, words_of

RUN = 3


def _runs(words: Sequence[str]) -> list[int]:
    """Hashes of every run of ``RUN`` words (a shorter text: the whole of it)."""
    if len(words) < RUN:
        return [hash(tuple(words))] if words else []
    return [hash(tuple(words[i : i + RUN])) for i in range(len(words) - RUN + 1)]


class QuoteIndex:
    """Runs of three words of every stored quote, each with the article it stands in."""

    def __init__(self, hashes: np.ndarray, articles: np.ndarray) -> None:
        order = np.argsort(hashes, kind="stable")
        self.hashes = hashes[order]
        self.articles = articles[order]

    @classmethod
    def build(cls, library: Library) -> QuoteIndex:
        ids = [int(i) for i in library.store.article_ids()]
        hashes: list[int] = []
        articles: list[int] = []
        for quote in library.store.quotes_of_articles(ids):
            runs = _runs([w.norm for w in words_of(quote.text)])
            hashes += runs
            articles += [quote.article_id] * len(runs)
        return cls(np.asarray(hashes, dtype=np.int64), np.asarray(articles, dtype=np.int64))

    def articles_sharing(self, pieces: Sequence[Sequence[Word]], limit: int) -> list[int]:
        """The articles whose quotes share most runs of words with the pieces, best first."""
        wanted = np.asarray([h for piece in pieces for h in _runs([w.norm for w in piece])], dtype=np.int64)
        if not len(wanted) or not len(self.hashes):
            return []
        low = np.searchsorted(self.hashes, wanted, side="left")
        high = np.searchsorted(self.hashes, wanted, side="right")
        counts: Counter[int] = Counter()
        for lo, hi in zip(low.tolist(), high.tolist(), strict=True):
            # A run that many articles share ("we are going") says little: each article once per run.
            counts.update(set(self.articles[lo:hi].tolist()))
        return [article for article, _ in counts.most_common(limit)]


_built: weakref.WeakKeyDictionary[Library, tuple[int, QuoteIndex]] = weakref.WeakKeyDictionary()
_building = threading.Lock()


def quote_index(library: Library) -> QuoteIndex:
    """The library's quote index, built again when its articles changed since the last one."""
    with _building:
        generation = library.indexed_generation
        found = _built.get(library)
        if found is None or found[0] != generation:
            found = (generation, QuoteIndex.build(library))
            _built[library] = found
        return found[1]
