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

from retrieval.features.quote_text import Word, words_of
from retrieval.ports import Corpus

RUN = 3


def _runs(words: Sequence[str]) -> list[int]:
    """Hashes of every run of ``RUN`` words (a shorter text: the whole of it)."""
    if len(words) < RUN:
        return [hash(tuple(words))] if words else []
    return [hash(tuple(words[i : i + RUN])) for i in range(len(words) - RUN + 1)]


# Articles whose quotes hold every run of a piece are all read, up to this many.
MAX_HOLDING = 50


class QuoteIndex:
    """Runs of three words of every stored quote, each with the quote and article it stands in."""

    def __init__(self, hashes: np.ndarray, quotes: np.ndarray, articles: np.ndarray) -> None:
        order = np.argsort(hashes, kind="stable")
        self.hashes = hashes[order]
        self.quotes = quotes[order]
        self.articles = articles[order]

    @classmethod
    def build(cls, library: Corpus) -> QuoteIndex:
        ids = [int(i) for i in library.store.article_ids()]
        hashes: list[int] = []
        quotes: list[int] = []
        articles: list[int] = []
        for quote in library.store.quotes_of_articles(ids):
            runs = _runs([w.norm for w in words_of(quote.text)])
            hashes += runs
            quotes += [quote.id] * len(runs)
            articles += [quote.article_id] * len(runs)
        return cls(*(np.asarray(values, dtype=np.int64) for values in (hashes, quotes, articles)))

    def _rows(self, runs: list[int]) -> list[tuple[int, int]]:
        wanted = np.asarray(runs, dtype=np.int64)
        low = np.searchsorted(self.hashes, wanted, side="left")
        high = np.searchsorted(self.hashes, wanted, side="right")
        return list(zip(low.tolist(), high.tolist(), strict=True))

    def articles_sharing(self, pieces: Sequence[Sequence[Word]], limit: int) -> list[int]:
        """The articles with a quote holding every run of a piece (a piece quoted exactly, however
        common its words), then those whose quotes share most runs with the pieces, best first."""
        if not len(self.hashes):
            return []
        holding: list[int] = []
        counts: Counter[int] = Counter()
        for piece in pieces:
            runs = _runs([w.norm for w in piece])
            if not runs:
                continue
            rows = self._rows(runs)
            common: set[int] | None = None
            for lo, hi in rows:
                # A run that many articles share ("we are going") says little: each article once per run.
                counts.update(set(self.articles[lo:hi].tolist()))
                found = set(self.quotes[lo:hi].tolist())
                common = found if common is None else common & found
            if common:
                quote_rows = np.isin(self.quotes, np.fromiter(common, dtype=np.int64))
                holding += [a for a in dict.fromkeys(self.articles[quote_rows].tolist()) if a not in holding]
        ranked = [article for article, _ in counts.most_common(limit + len(holding)) if article not in holding]
        return holding[:MAX_HOLDING] + ranked[:limit]


_built: weakref.WeakKeyDictionary[Corpus, tuple[int, QuoteIndex]] = weakref.WeakKeyDictionary()
_building = threading.Lock()


def quote_index(library: Corpus) -> QuoteIndex:
    """The library's quote index, built again when its articles changed since the last one."""
    with _building:
        generation = library.indexed_generation
        found = _built.get(library)
        if found is None or found[0] != generation:
            found = (generation, QuoteIndex.build(library))
            _built[library] = found
        return found[1]
