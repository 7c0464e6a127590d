"""Ports: what the core calls on its search indexes, so a backend can stand behind each.

These are structural (``typing.Protocol``): FAISS's ``DenseIndex`` and the own BM25
``SparseIndex`` satisfy them without inheriting anything, and a new backend (Qdrant, in
``qdrant_index.py``) is a class with the same methods. The contract each port promises is
written down as tests, run against every backend: ``tests/contract/test_vector_index_contract.py`` and
``tests/contract/test_keyword_index_contract.py``.

The method names are the ones ``ranking.py`` and ``answering/`` call today. Persistence is a
separate, narrower port: the embedded backends are kept in checksummed files of the data
directory (``index_files.py``), while an engine such as Qdrant persists its points itself and
has no bytes to hand over.

The two stores have their ports here too, ``ArticleStore`` and ``StateStore``, in the same
structural way: ``store.Store`` and ``bot.state.store.BotState`` satisfy them, and every SQL statement
of Byline lives behind them (``tests/project/test_store_boundary.py`` checks both).

And what the stages take of a library: the answer path and ranking take a ``Corpus`` (the
store, the two indexes, the ``Embedder``, the lock and the in-memory counts), ingest an
``IngestTarget`` (the store, and ``add_drafts``). ``library.Library`` satisfies both, so none of
the stages imports the library, and the library, above them, hands itself down.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import numpy as np

if TYPE_CHECKING:  # the store imports nothing from here; these names are for the signatures only
    import threading
    from datetime import datetime

    from retrieval.models import Article, ArticleDraft, IngestReport, Passage, Progress, Quote, Sentence
    from retrieval.reading.article_terms import ArticleTerms
    from retrieval.storage.store import PassageRow, QuoteRow, SentenceRow, Store, StoredArticle

_Form = TypeVar("_Form")


class IdSet:
    """The ids a search may return (a channel's scope: ``scope.py``), given to ``search`` as
    ``within`` so that the index filters while it searches, not after its top k (a filter after
    the top k returns nothing for a scope that holds 1% of the library).

    Each backend turns the ids into its own form once (a FAISS bitmap selector, a boolean mask,
    a Qdrant filter) and keeps it here: the set is built once per library generation and
    reused by every question of the channel, so the form is too.
    """

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = np.unique(np.asarray(ids, dtype=np.int64))  # sorted, no repeats
        self._forms: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, int | np.integer):
            return False
        position = int(np.searchsorted(self.ids, item))
        return position < len(self.ids) and int(self.ids[position]) == int(item)

    def mask(self, size: int) -> np.ndarray:
        """A boolean array of ``size`` entries, True at the ids (ids beyond it are left out)."""

        def build() -> np.ndarray:
            mask = np.zeros(size, dtype=bool)
            mask[self.ids[self.ids < size]] = True
            return mask

        return self.form(f"mask:{size}", build)

    def form(self, key: str, build: Callable[[], _Form]) -> _Form:
        """The backend form named ``key``, built on first use."""
        if key not in self._forms:
            self._forms[key] = build()
        return self._forms[key]  # type: ignore[no-any-return]


@runtime_checkable
class VectorIndex(Protocol):
    """Sentence vectors by sentence id, searched by cosine similarity.

    Vectors are unit length (``embedder.DIMENSION`` of them per sentence), so cosine and inner
    product are the same number; a search score is that cosine, in [-1, 1].
    """

    @property
    def kind(self) -> str:
        """The index layout, for ``index.json`` and the logs ("flat", "ivf", "qdrant")."""
        ...

    def count(self) -> int:
        """How many sentences the index holds."""
        ...

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Index ``vectors`` (one row per id) under new sentence ``ids``: re-adding an id it
        holds is not part of the contract (FAISS keeps both, Qdrant replaces), so callers remove
        an article's sentences before adding its new version, as ``Library`` does."""
        ...

    def remove(self, ids: list[int]) -> None:
        """Forget these sentences; ids the index does not hold are ignored."""
        ...

    def search(self, vector: np.ndarray, k: int, within: IdSet | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, cosine scores) of at most ``k`` nearest sentences, nearest first; with
        ``within``, the ``k`` nearest of those sentences only (filtered during the search)."""
        ...

    def vectors(self, ids: list[int]) -> np.ndarray:
        """The stored vectors of these sentences, one row per id in the order given (for
        exact re-scoring of candidates); an id it does not hold raises ``LookupError`` or
        ``RuntimeError`` (FAISS's own)."""
        ...

    def ids(self) -> np.ndarray:
        """Every sentence id held, sorted (to check the index against the store)."""
        ...

    def needs_new_type(self) -> bool:
        """True when the corpus has outgrown this layout and the index should be rebuilt
        from the store (an engine that manages its own layout always says False)."""
        ...


@runtime_checkable
class KeywordIndex(Protocol):
    """Passages by passage id, searched by BM25 over Byline's own search tokens
    (``text.search_tokens``); also the document frequencies and the vocabulary that the
    term-rarity and spelling checks read."""

    def count(self) -> int:
        """How many passages the index holds."""
        ...

    def add(self, doc_id: int, tokens: list[str]) -> None:
        """Index a passage's tokens under a new ``doc_id``: as for vectors, callers remove a
        passage (with the tokens it was indexed with) before adding it again."""
        ...

    def remove(self, doc_id: int, tokens: list[str]) -> None:
        """Forget a passage, given the tokens it was indexed with; unknown ids are ignored."""
        ...

    def search(self, tokens: list[str], k: int, within: IdSet | None = None) -> list[tuple[int, float]]:
        """(passage id, BM25 score) of at most ``k`` passages with a query term, best first; with
        ``within``, the ``k`` best of those passages only (term statistics stay the library's)."""
        ...

    def max_idf(self, tokens: list[str]) -> dict[str, float]:
        """Each query term's inverse document frequency (how rare it is); 0.0 for a term no
        passage has."""
        ...

    def sorted_terms(self) -> list[str]:
        """Every indexed term, sorted (the vocabulary spelling suggestions are drawn from)."""
        ...

    def ids(self) -> np.ndarray:
        """Every passage id held, sorted (to check or reconcile the index with the store)."""
        ...


@runtime_checkable
class SavedToFile(Protocol):
    """An index kept as one file of the data directory, written and checksummed by
    ``index_files.write_indexes``; each class reads its own bytes back with ``from_bytes``."""

    def to_bytes(self) -> bytes: ...


class FileVectorIndex(VectorIndex, SavedToFile, Protocol):
    """The embedded vector index: searched in memory, saved as a file (FAISS)."""


class FileKeywordIndex(KeywordIndex, SavedToFile, Protocol):
    """The embedded keyword index: searched in memory, saved as a file (the own BM25)."""


# -- stores ------------------------------------------------------------------------------------
#
# All SQL lives behind these two ports (and the companion stores named in their docstrings); no
# other module opens a connection: ``tests/project/test_store_boundary.py`` holds the line.


@runtime_checkable
class ArticleStore(Protocol):
    """The library's source of truth: articles with their passages, sentences (and their
    vectors), quotes and speakers, and the ``generation`` that goes up with every change the
    indexes must follow. ``store.Store`` is it, on SQLite or PostgreSQL.

    Ids are never reused, even after a delete, so an index file's ids always mean what they
    meant when it was written. Bookkeeping around the articles has companion stores over the
    same database: ``feed_store.FeedStore`` and ``WebPageStore`` (subscriptions, items seen,
    page validators), ``scope_store.ScopeStore`` (a channel's scope) and ``audit_store.AuditLog``.
    """

    # -- bookkeeping

    def generation(self) -> int:
        """How many changes to articles, passages, sentences or quotes were ever made."""
        ...

    def meta_value(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None:
        """Record ``meta[key]`` without making the index files stale."""
        ...

    def counts(self) -> dict[str, int]:
        """Rows in ``articles``, ``passages``, ``sentences`` and ``quotes``."""
        ...

    def close(self) -> None:
        """Close this thread's connection (other threads keep theirs)."""
        ...

    # -- articles

    def article_count(self) -> int: ...

    def article(self, article_id: int, with_text: bool = False) -> Article | None: ...

    def articles(self, ids: Sequence[int]) -> dict[int, Article]:
        """The articles (without their text) of these ids; unknown ids are left out."""
        ...

    def list_articles(self, offset: int = 0, limit: int = 10, since: str = "", until: str = "") -> list[Article]:
        """Articles newest first (by published date, else when added), added in [since, until)."""
        ...

    def find_by_key(self, key: str) -> tuple[int, str] | None:
        """(id, content hash) of the article stored under ``key``."""
        ...

    def find_by_hash(self, content_hash: str) -> int | None: ...

    def article_id_by_key_or_url(self, reference: str) -> int | None: ...

    def article_ids(self) -> np.ndarray:
        """Every article id, sorted."""
        ...

    def recent_articles(self, limit: int) -> list[tuple[int, str, str]]:
        """(id, key, published) of the ``limit`` articles stored last, the last first."""
        ...

    def article_texts(self) -> Iterator[tuple[int, str]]: ...

    def titles(self) -> list[str]: ...

    # -- passages and sentences

    def passages(self, ids: Sequence[int]) -> dict[int, Passage]: ...

    def passage_ids(self) -> np.ndarray:
        """Every passage id, sorted: what the keyword index must hold."""
        ...

    def iter_passage_texts(self) -> Iterator[tuple[int, str]]: ...

    def passage_texts_of_article(self, article_id: int) -> list[tuple[int, str]]: ...

    def article_ids_of_passages(self, passage_ids: Sequence[int]) -> dict[int, int]: ...

    def sentences_of_passages(self, passage_ids: Sequence[int]) -> list[Sentence]: ...

    def sentences_of_articles(self, article_ids: Sequence[int]) -> list[Sentence]: ...

    def sentences_by_ids(self, ids: Sequence[int]) -> dict[int, Sentence]: ...

    def sentence_ids(self) -> np.ndarray:
        """Every sentence id, sorted: what the vector index must hold."""
        ...

    def sentence_ids_of_article(self, article_id: int) -> list[int]: ...

    def sentence_passages(self, sentence_ids: Sequence[int]) -> dict[int, int]:
        """Sentence id -> the id of its passage."""
        ...

    def sentence_vectors(self, ids: Sequence[int]) -> np.ndarray:
        """The stored vectors, one row per id in the order given; ``KeyError`` for an unknown id."""
        ...

    def iter_sentence_vectors(self, batch: int = 20000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(ids, vectors) of every sentence, in batches: what a vector index is rebuilt from."""
        ...

    # -- quotes and speakers

    def quotes_of_articles(self, article_ids: Sequence[int]) -> list[Quote]: ...

    def quotes_by_speakers(self, speakers: Sequence[str]) -> list[Quote]: ...

    def quotes_by_ids(self, ids: Sequence[int]) -> dict[int, Quote]: ...

    def speakers(self) -> dict[str, int]:
        """Every named speaker and how many quotes they have."""
        ...

    def speaker_quote_ranges(self, speakers: Sequence[str]) -> np.ndarray:
        """Rows of (quote id, first sentence id, last sentence id, partial, article id)."""
        ...

    def article_quote_ranges(self, article_ids: Sequence[int]) -> np.ndarray:
        """The same rows, for every attributed quote of these articles."""
        ...

    def replace_all_quotes(
        self, texts: Mapping[int, str], quotes: Mapping[int, Sequence[QuoteRow]], key: str, value: str
    ) -> None:
        """Every article's quotes replaced, and ``meta[key]`` set, in one write."""
        ...

    # -- writes (each one transaction, raising the generation)

    def put_article(
        self,
        draft: ArticleDraft,
        content_hash: str,
        passages: Sequence[PassageRow],
        sentences: Sequence[SentenceRow],
        quotes: Sequence[QuoteRow],
        replace_id: int | None,
    ) -> StoredArticle:
        """Store an article with everything derived from it, replacing ``replace_id``."""
        ...

    def delete_article(self, article_id: int) -> None:
        """Delete an article; its passages, sentences, quotes and tags go with it."""
        ...


class Embedder(Protocol):
    """Turns text into unit vectors in the space the vector index searches
    (``index/embedder.py``: all-MiniLM-L6-v2, 384 dimensions)."""

    def encode(self, texts: list[str]) -> np.ndarray:
        """One float32 row per text, each of length 1."""
        ...

    def encode_one(self, text: str) -> np.ndarray:
        """One question's vector (the fast path for a single text)."""
        ...


class Corpus(Protocol):
    """What the answer path, ranking and ingest take of a library: the store, the two indexes,
    the embedder, and what the library keeps in memory beside them (the lock every search and
    change holds, who is quoted how often, each article's terms). ``library.Library`` is it;
    the stages receive these ports, not the facade, so none of them imports the library."""

    # Read-only here (properties), so that the library's concrete types satisfy them.
    @property
    def store(self) -> ArticleStore: ...

    @property
    def dense(self) -> VectorIndex: ...

    @property
    def sparse(self) -> KeywordIndex: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def lock(self) -> threading.RLock: ...

    @property
    def speakers(self) -> dict[str, int]: ...

    @property
    def article_terms(self) -> ArticleTerms: ...

    @property
    def indexed_generation(self) -> int:
        """The store generation the indexes hold: what a feature caches per library state by."""
        ...

    def article_count(self) -> int:
        """How many articles the library holds (kept in memory between changes)."""
        ...


class IngestTarget(Protocol):
    """What ingest (files, web pages, feeds) hands its articles to: ``library.Library``, which
    stores them and updates both indexes; ingest reads the store for what is already there.
    The store is the concrete one: the companion stores ingest keeps (feeds, web pages) share
    its database."""

    @property
    def store(self) -> Store: ...

    def add_drafts(
        self, drafts: Sequence[ArticleDraft], report: IngestReport | None = None, progress: Progress | None = None
    ) -> IngestReport:
        """Store articles (idempotently) and update both indexes in place."""
        ...


@runtime_checkable
class StateStore(Protocol):
    """The bot's own state: answers given (for the buttons under them, after a restart), votes,
    conversation history, question channels, shares and each channel's scope, with retention.
    ``bot.state.store.BotState`` is it, in its own SQLite file or the cluster's PostgreSQL.

    Its companions share its database: ``bot.state.digests.DigestStore`` (digests and their
    runs), ``bot.state.gaps.GapStore`` (what Byline couldn't answer) and
    ``bot.state.slack_installations`` (Slack workspaces). Seen Slack event ids and rate-limit buckets
    are kept in memory or Redis, behind ``bot.state.event_dedupe.EventDedupe`` and
    ``bot.limits.Limiter``, not here.
    """

    # Every tenant-owned row carries its tenant (bot/tenancy.py): a read with a tenant sees only
    # that tenant's rows (``None``, where allowed: the operator, every tenant).

    def save_answer(
        self,
        platform: str,
        user_id: str,
        question: str,
        answer: dict[str, Any],
        tenant: str = "",
        private: bool = False,
    ) -> str:
        """Keep an answer (as its JSON); returns its new id."""
        ...

    def answer(self, answer_id: str, tenant: str | None = None) -> dict[str, Any] | None: ...

    def answer_is_private(self, answer_id: str) -> bool: ...

    def answer_owner(self, answer_id: str, tenant: str | None = None) -> tuple[str, str] | None:
        """(platform, user id) of whoever asked."""
        ...

    def mark_shared(self, answer_id: str, platform: str, channel_id: str, user_id: str, tenant: str = "") -> bool:
        """Record a share; False when the answer was already shared (nothing recorded)."""
        ...

    def vote(self, answer_id: str, platform: str, user_id: str, vote: int, tenant: str | None = None) -> bool:
        """Record or change a 👍 (1) or 👎 (-1); False when the answer is unknown."""
        ...

    def votes(self, answer_id: str) -> dict[str, int]:
        """User id -> vote, for one answer."""
        ...

    def history(self, key: str, tenant: str = "") -> list[str]:
        """The last few questions of a conversation, oldest first."""
        ...

    def remember(self, key: str, question: str, tenant: str = "") -> None: ...

    def set_autoreply(self, platform: str, channel_id: str, on: bool, set_by: str, tenant: str = "") -> bool:
        """False when another tenant owns the channel's setting (nothing changed)."""
        ...

    def is_autoreply(self, platform: str, channel_id: str, tenant: str = "") -> bool: ...

    def set_channel_scope(
        self, platform: str, channel_id: str, scope_json: str | None, set_by: str, tenant: str = ""
    ) -> bool:
        """Store a channel's scope (``retrieval.scope.Scope`` as JSON); ``None`` clears it. False
        when another tenant owns the channel's scope (nothing changed)."""
        ...

    def channel_scope(self, platform: str, channel_id: str, tenant: str = "") -> tuple[str, str, str] | None:
        """(scope JSON, set by, updated at), or None when the channel has no scope."""
        ...

    def prune(self, days: int, now: datetime | None = None) -> int:
        """Forget questions, answers, votes and user ids older than ``days``; rows removed."""
        ...

    def close(self) -> None: ...
