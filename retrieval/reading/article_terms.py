"""The search terms of whole articles, cached: the answer checks ("is every word of the topic in
this quote's article?") ask about the same few articles again and again, and stemming a long
article costs about a millisecond."""

from __future__ import annotations

import threading
from collections import OrderedDict

from retrieval.reading.text import search_tokens
from retrieval.storage.store import Store

# About 15 KB per article (a few hundred distinct stems): 1,024 articles is ~15 MB.
CACHED_ARTICLES = 1024


class ArticleTerms:
    """Stemmed search terms of an article's title and text, hyphenated words also split into
    their parts ("norman-arab" gives "norman" and "arab"). Cleared whenever articles change."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._cache: OrderedDict[int, frozenset[str]] = OrderedDict()
        self._titles: frozenset[str] | None = None
        self._lock = threading.Lock()

    def of(self, article_id: int) -> frozenset[str]:
        with self._lock:
            if article_id in self._cache:
                self._cache.move_to_end(article_id)
                return self._cache[article_id]
        article = self.store.article(article_id, with_text=True)
        tokens = search_tokens(f"{article.title}\n{article.text}") if article else []
        terms = frozenset(tokens) | {part for token in tokens for part in token.split("-") if part}
        with self._lock:
            self._cache[article_id] = terms
            while len(self._cache) > CACHED_ARTICLES:
                self._cache.popitem(last=False)
        return terms

    def in_titles(self) -> frozenset[str]:
        """The search terms of every article's title: passages are indexed without their
        titles, so a word only a headline has ("Sundance") is not in the keyword index."""
        with self._lock:
            if self._titles is None:
                self._titles = frozenset(t for title in self.store.titles() for t in search_tokens(title))
            return self._titles

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()
            self._titles = None
