"""The library: stored articles plus their search indexes, kept in step.

This is the entry point for using ``retrieval/`` on its own::

    library = Library.open(Path("data"))
    library.ingest([Path("seeds")])
    answer = library.ask("what did Mourinho say about the referee?")
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from retrieval.answering import answer_question, search_passages
from retrieval.answering.reader import reader_mode, shared_reader
from retrieval.backend import STORE_FILE, Backend, FileIndexes, IndexKeeper
from retrieval.index.embedder import Embedder
from retrieval.index.factory import new_keyword_index, new_vector_index
from retrieval.index.files import DENSE_FILE, INDEX_META_FILE, SPARSE_FILE, LoadedIndexes
from retrieval.index.segment import build_passages
from retrieval.ingest.files import ingest_files
from retrieval.models import Answer, Article, ArticleDraft, IngestReport, Paragraph, Progress, SearchHit
from retrieval.ports import KeywordIndex, VectorIndex
from retrieval.reading.article_terms import ArticleTerms
from retrieval.reading.quotes import RULES_VERSION, extract_quotes
from retrieval.reading.text import paragraphs, search_tokens
from retrieval.scope import ResolvedScope, Scope, ScopeCache
from retrieval.storage.database import DATABASE_ERRORS
from retrieval.storage.sqlite import corrupt_database, is_corruption
from retrieval.storage.store import PassageRow, QuoteRow, SentenceRow, Store

log = logging.getLogger("byline.retrieval")

__all__ = [
    "DENSE_FILE",
    "INDEX_META_FILE",
    "MAX_ARTICLE_CHARS",
    "QUOTE_RULES_KEY",
    "SPARSE_FILE",
    "STORE_FILE",
    "IngestReport",
    "Library",
    "content_hash",
]
# The store's record of the quote rules (``quotes.RULES_VERSION``) its quotes were read with.
QUOTE_RULES_KEY = "quote_rules"

# What saving the indexes can raise: a full or read-only disk (files), or the database (cluster).
_SAVE_ERRORS: tuple[type[Exception], ...] = (OSError, *DATABASE_ERRORS)

# About 50,000 words, ten times a long feature; a bigger "article" is a dump, not a story,
# and would take minutes of embedding.
MAX_ARTICLE_CHARS = 300_000


# A new or changed draft: its content hash, and the id of the article it replaces (if any).
_Checked = tuple[ArticleDraft, str, int | None]


class _Reading(NamedTuple):
    passages: list[PassageRow]
    sentence_rows: list[tuple[int, int, int, int]]  # passage index, paragraph, start, end
    quotes: list[QuoteRow]
    paragraph_count: int


@dataclass
class _Prepared:
    draft: ArticleDraft
    content_hash: str
    replace_id: int | None
    reading: _Reading

    @property
    def sentence_rows(self) -> list[tuple[int, int, int, int]]:
        return self.reading.sentence_rows


def content_hash(draft: ArticleDraft) -> str:
    return hashlib.sha256(f"{draft.title}\n{draft.text}".encode()).hexdigest()


class Library:
    """Articles, passages, sentences and quotes in a store, searchable through a vector and a
    keyword index: SQLite, FAISS and BM25 files by default; PostgreSQL and Qdrant on the cluster
    backend (``backend.py``)."""

    def __init__(self, data_dir: Path, store: Store, embedder: Embedder, keeper: IndexKeeper | None = None) -> None:
        self.data_dir = data_dir
        self.store = store
        self.embedder = embedder
        # How the indexes persist and are kept level with the store (files, or shared collections).
        self.keeper = keeper or FileIndexes(data_dir)
        # Typed by their ports (``ports.py``): what the rest of the core may call on them.
        self.dense: VectorIndex = new_vector_index()
        self.sparse: KeywordIndex = new_keyword_index()
        # Searches read the indexes while ingest changes them; FAISS and the BM25 dicts are
        # not safe for that, so both take this lock (held for milliseconds at a time).
        self.lock = threading.RLock()
        self.speakers: dict[str, int] = {}
        self._article_count: int | None = None
        self.article_terms = ArticleTerms(store)
        # Channels' scopes resolved to id sets, reused until the articles change.
        self.scopes = ScopeCache()
        self.messages: list[str] = []
        # The store generation the in-memory indexes reflect. Another process may move the
        # store past it; ``catch_up`` (and every write, first) brings the indexes level again.
        self.indexed_generation = -1
        # Held across processes by every change to the articles and every index save, so two
        # processes never save indexes that miss each other's changes.
        self.writer = self.keeper.writer

    @classmethod
    def open(cls, data_dir: Path, embedder: Embedder | None = None, backend: Backend | None = None) -> Library:
        """Open (or create) a library, checking and if needed rebuilding its indexes. ``backend``
        defaults to what ``BYLINE_BACKEND`` says (the data directory's files when unset)."""
        backend = backend or Backend.from_environ()
        data_dir.mkdir(parents=True, exist_ok=True)
        store = Store(backend.store_location(data_dir))
        try:
            keeper = backend.index_keeper(data_dir, store)
        except BaseException:
            store.close()
            raise
        library = cls(data_dir, store, embedder or Embedder(), keeper)
        try:
            library._load_indexes()
        except sqlite3.DatabaseError as error:  # a file damaged past its first pages
            if not is_corruption(error):
                raise
            store.close()
            raise corrupt_database(store.path, error) from None
        return library

    def close(self) -> None:
        self.store.close()

    # -- index files ---------------------------------------------------------------------

    def _load_indexes(self) -> None:
        self._reread_old_quotes()
        loaded = self.keeper.read(self.store)
        if loaded.problems:
            # Rebuild under the writer lock, after reading again: another process may be part
            # way through an ingest, and will have saved current indexes when it lets go.
            with self.writer.hold():
                loaded = self.keeper.read(self.store)
                self._install(loaded, note=True)
                if loaded.problems:
                    self._save_indexes()
        else:
            self._install(loaded, note=False)
        self._articles_changed()

    def _install(self, loaded: LoadedIndexes, note: bool) -> None:
        """Use the indexes that were read, rebuilding the others from the store (whose
        generation is ``loaded.generation``: callers hold the writer lock when rebuilding)."""
        dense, sparse = loaded.dense, loaded.sparse
        if dense is None:
            if note:
                count = self.store.counts()["sentences"]
                self._note(f"Vector index {loaded.problems['dense']}: rebuilt it from the store ({count} sentences).")
            dense = self.keeper.rebuild_dense(self.store)
        if sparse is None:
            if note:
                count = self.store.counts()["passages"]
                self._note(f"Keyword index {loaded.problems['sparse']}: rebuilt it from the store ({count} passages).")
            sparse = self.keeper.rebuild_sparse(self.store)
        with self.lock:
            self.dense, self.sparse = dense, sparse
            self.indexed_generation = loaded.generation

    def catch_up(self) -> bool:
        """Bring the indexes level with a store another process has changed (a CLI ingest
        while ``serve`` runs): True when they were reloaded. One cheap query when nothing moved;
        skipped while another writer is busy (it saves current index files when done)."""
        if self.store.generation() == self.indexed_generation:
            return False
        with self.writer.hold(blocking=False) as held:
            if not held or self.store.generation() == self.indexed_generation:
                return False
            self._catch_up_held()
        return True

    def _catch_up_held(self) -> None:
        if self.store.generation() == self.indexed_generation:
            return
        loaded = self.keeper.read(self.store)
        self._install(loaded, note=False)
        if loaded.problems:
            self._save_indexes()
        self._articles_changed()
        log.info(
            "The articles changed in another process: search indexes brought up to date (%s).", self.store.counts()
        )

    def _reread_old_quotes(self) -> None:
        """Quotes stored under older attribution rules are read again from the stored text, so
        an upgrade fixes who said what without re-ingesting anything."""
        if self.store.meta_value(QUOTE_RULES_KEY) == str(RULES_VERSION):
            return
        count = self.store.article_count()
        if count:
            articles = f"{count} article{'s' if count != 1 else ''}"
            self._note(f"Re-reading the quotes of {articles} with updated attribution rules (once).")
        texts = dict(self.store.article_texts())
        quotes = {article_id: _quote_rows(text, paragraphs(text)) for article_id, text in texts.items()}
        try:
            self.store.replace_all_quotes(texts, quotes, QUOTE_RULES_KEY, str(RULES_VERSION))
        except DATABASE_ERRORS as error:  # a full disk, a read-only file: keep the old quotes
            message = f"Could not update the stored quotes ({error}): kept the old ones; will retry at the next start."
            log.error(message)
            self.messages.append(message)

    def _note(self, message: str) -> None:
        if self.store.article_count() == 0:
            return  # a new data directory: nothing to report
        log.warning(message)
        self.messages.append(message)

    def _save_indexes(self) -> bool:
        """Write both index files; on failure (disk full) keep the old files and say so.

        The store already holds every change, so nothing is lost: the in-memory indexes stay
        current for this process, and the next start sees the old files are stale and rebuilds.
        """
        with self.writer.hold(), self.lock:
            try:
                # Labelled with the generation the indexes reflect, not the store's now: saving
                # under a newer one would hide another process's changes from every reader.
                self.keeper.save(self.dense, self.sparse, self.indexed_generation)
            except _SAVE_ERRORS as error:
                reason = error.strerror if isinstance(error, OSError) and error.strerror else error
                message = (
                    f"Could not save the search index in {self.data_dir} ({reason}): "
                    "the previous index files are kept and will be rebuilt from the store at the next start."
                )
                log.error(message)
                self.messages.append(message)
                return False
        return True

    # -- ingest --------------------------------------------------------------------------

    def ingest(self, paths: Iterable[Path], progress: Progress | None = None) -> IngestReport:
        """Ingest article files and folders; bad files and near-duplicates are reported and
        skipped (see ``file_ingest``)."""
        return ingest_files(self, paths, progress)

    def add_drafts(
        self, drafts: Sequence[ArticleDraft], report: IngestReport | None = None, progress: Progress | None = None
    ) -> IngestReport:
        """Store articles (idempotently) and update both indexes in place. ``progress(done,
        total)`` is called as each article is stored: ``total`` counts the drafts handed in,
        and unchanged ones are passed over without a call."""
        report = report or IngestReport()
        if self.keeper.shared:
            return self._add_drafts_shared(drafts, report, progress)
        with self.writer.hold():
            # First take in what other processes stored, so the indexes saved below hold it.
            self._catch_up_held()
            stored = 0
            for embedded in self._embedded_batches(drafts, report):
                stored = self._store_batch(embedded, report, stored, len(drafts), progress)
            if stored:
                if self.dense.needs_new_type():
                    rebuilt = self.keeper.rebuild_dense(self.store)
                    with self.lock:
                        self.dense = rebuilt
                self._save_indexes()
                self._articles_changed()
        return report

    def _add_drafts_shared(
        self, drafts: Sequence[ArticleDraft], report: IngestReport, progress: Progress | None
    ) -> IngestReport:
        """The cluster: embed outside the cluster-wide writer lock, so that embedding workers run
        in parallel, and hold it only to store a batch and record the indexes level with it."""
        stored = 0
        for embedded in self._embedded_batches(drafts, report):
            with self.writer.hold():
                self._catch_up_held()
                # Another worker may have stored one of these while this one embedded it.
                fresh = [(item, vectors) for item, vectors in embedded if self._still_new(item, report)]
                stored = self._store_batch(fresh, report, stored, len(drafts), progress)
                self._save_indexes()
        if stored:
            self._articles_changed()
        return report

    def _embedded_batches(
        self, drafts: Sequence[ArticleDraft], report: IngestReport
    ) -> Iterator[list[tuple[_Prepared, np.ndarray]]]:
        """The new drafts, read and embedded, a batch at a time.

        Reading (paragraphs, sentences, quotes and their speakers: spaCy and the rules) runs in
        a second thread, one article ahead of the next, while this thread embeds what is read:
        the two stages cost about one to three, and side by side the reading is mostly hidden.
        The model lends one of its threads to the reader until the last article is read."""
        checked = self._checked(drafts, report)
        if not checked:
            return
        cores = self.embedder.sharing_a_core()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="byline-read") as reader, contextlib.closing(cores):
            readings = [reader.submit(read_article, draft) for draft, _, _ in checked]
            cores.lend()
            for batch in _embedding_batches(self._prepared(checked, readings, report)):
                if readings[-1].done():
                    cores.give_back()
                yield self._embedded(batch)

    def _checked(self, drafts: Sequence[ArticleDraft], report: IngestReport) -> list[_Checked]:
        """The drafts that are new or changed, each with its content hash and the id of the
        article it replaces; unchanged ones and repeats go to ``report.unchanged``."""
        seen: set[str] = set()
        checked = []
        for draft in drafts:
            digest = content_hash(draft)
            existing = self.store.find_by_key(draft.key)
            if (existing and existing[1] == digest) or digest in seen or self.store.find_by_hash(digest) is not None:
                report.unchanged.append(draft.key)
                continue
            seen.add(digest)
            checked.append((draft, digest, existing[0] if existing else None))
        return checked

    @staticmethod
    def _prepared(
        checked: list[_Checked],
        readings: list[Future[_Reading | str]],
        report: IngestReport,
    ) -> Iterator[_Prepared]:
        for (draft, digest, replace_id), reading in zip(checked, readings, strict=True):
            result = reading.result()
            if isinstance(result, str):
                report.failed.append((draft.key, result))
                continue
            yield _Prepared(draft, digest, replace_id, result)

    def _still_new(self, item: _Prepared, report: IngestReport) -> bool:
        existing = self.store.find_by_key(item.draft.key)
        if (existing and existing[1] == item.content_hash) or self.store.find_by_hash(item.content_hash) is not None:
            report.unchanged.append(item.draft.key)
            return False
        item.replace_id = existing[0] if existing else None
        return True

    def _embedded(self, batch: list[_Prepared]) -> list[tuple[_Prepared, np.ndarray]]:
        """Each article of the batch with its sentences' vectors, embedded in one call (the model
        is the bottleneck of ingest, and is fastest on large batches). A sentence repeated in the
        batch (a columnist's footer, a wire story's standard line) is embedded once."""
        texts = [item.draft.text[start:end] for item in batch for _, _, start, end in item.sentence_rows]
        unique = list(dict.fromkeys(texts))
        position = {text: index for index, text in enumerate(unique)}
        vectors = self.embedder.encode(unique)[[position[text] for text in texts]]
        pairs, offset = [], 0
        for item in batch:
            pairs.append((item, vectors[offset : offset + len(item.sentence_rows)]))
            offset += len(item.sentence_rows)
        return pairs

    def _store_batch(
        self,
        batch: list[tuple[_Prepared, np.ndarray]],
        report: IngestReport,
        done: int,
        total: int,
        progress: Progress | None,
    ) -> int:
        for item, vectors in batch:
            rows = [
                SentenceRow(passage_index, paragraph, start, end, vectors[i])
                for i, (passage_index, paragraph, start, end) in enumerate(item.sentence_rows)
            ]
            if item.replace_id is not None:
                # Drop the old version's vectors and terms; the store drops its rows in put_article.
                self.remove_from_indexes(item.replace_id)
            stored = self.store.put_article(
                item.draft, item.content_hash, item.reading.passages, rows, item.reading.quotes, item.replace_id
            )
            with self.lock:
                self.indexed_generation = self.store.generation()  # only this writer moves it now
                self.dense.add(
                    np.asarray(stored.sentence_ids, dtype=np.int64),
                    np.stack([r.vector for r in rows]) if rows else np.zeros((0, vectors.shape[1]), np.float32),
                )
                for passage_id, passage in zip(stored.passage_ids, item.reading.passages, strict=True):
                    self.sparse.add(passage_id, search_tokens(item.draft.text[passage.start : passage.end]))
            entry = (item.draft.key, item.draft.title)
            (report.replaced if item.replace_id else report.added).append(entry)
            report.article_ids.append(stored.article_id)
            report.quotes += len(item.reading.quotes)
            report.paragraphs += item.reading.paragraph_count
            done += 1
            if progress:
                progress(done, total)
        return done

    def remove_from_indexes(self, article_id: int) -> None:
        sentence_ids = self.store.sentence_ids_of_article(article_id)
        passages = self.store.passage_texts_of_article(article_id)
        with self.lock:
            self.dense.remove(sentence_ids)
            for passage_id, text in passages:
                self.sparse.remove(passage_id, search_tokens(text))

    def delete_article(self, article_id: int) -> None:
        with self.writer.hold():
            self._catch_up_held()
            self.remove_from_indexes(article_id)
            self.store.delete_article(article_id)
            self.indexed_generation = self.store.generation()
            self._save_indexes()
        self._articles_changed()

    def remove_articles(self, article_ids: Sequence[int]) -> None:
        """Delete articles from the store and both indexes, saving the indexes once."""
        with self.writer.hold():
            self._catch_up_held()
            for article_id in article_ids:
                self.remove_from_indexes(article_id)
                self.store.delete_article(article_id)
                with self.lock:
                    self.indexed_generation = self.store.generation()
            self._save_indexes()
        self._articles_changed()

    def article_count(self) -> int:
        """How many articles the library holds; read once per change, not per answer (a count
        is a table scan on PostgreSQL: 1.2 ms of every answer at 100k passages)."""
        count = self._article_count
        if count is None:
            count = self._article_count = self.store.article_count()
        return count

    def _articles_changed(self) -> None:
        self._article_count = None
        self.store.forget_articles()
        self.speakers = self.store.speakers()
        self.article_terms.clear()
        self.scopes.clear()

    # -- questions -----------------------------------------------------------------------

    def warm_up(self) -> None:
        """Load the model and trace the query encoder, so the first question is not slow (and,
        with ``BYLINE_READER=on``, load the reader)."""
        self.embedder.encode_one("warm up")
        if reader_mode() == "on":
            shared_reader()

    def resolve_scope(self, scope: Scope | None) -> ResolvedScope | None:
        """A channel's scope as the ids the indexes search within (None: the whole library);
        cached, so only the first question after a change reads the store."""
        if scope is None or scope.is_empty():
            return None
        return self.scopes.resolve(self.store, scope, self.indexed_generation)

    def ask(self, question: str, history: Sequence[str] = (), scope: Scope | None = None) -> Answer:
        """Answer from the whole library, or only from ``scope``'s articles."""
        return answer_question(self, question, history, scope=self.resolve_scope(scope))

    def search(self, query: str, k: int = 5, scope: Scope | None = None) -> list[SearchHit]:
        return search_passages(self, query, k, scope=self.resolve_scope(scope))

    def list_articles(self, offset: int = 0, limit: int = 10, scope: Scope | None = None) -> tuple[list[Article], int]:
        """A page of articles newest first, of the whole library or of ``scope``, and how many there are."""
        resolved = self.resolve_scope(scope)
        if resolved is None:
            return self.store.list_articles(offset=offset, limit=limit), self.store.article_count()
        page = resolved.article_ids[offset : offset + limit].tolist()
        found = self.store.articles(page)
        return [found[i] for i in page if i in found], resolved.article_count


# Sentences embedded per call. The model sorts a call's sentences by length and pads each of its
# batches to the longest, so large calls pad less (2,048 sentences a call embed ~10% faster than
# 512); but the first call waits for its articles to be read, so calls start small and double.
_FIRST_EMBED_SENTENCES = 256
_EMBED_BATCH_SENTENCES = 2048


def _embedding_batches(prepared: Iterable[_Prepared]) -> Iterator[list[_Prepared]]:
    batch: list[_Prepared] = []
    sentences, wanted = 0, _FIRST_EMBED_SENTENCES
    for item in prepared:
        batch.append(item)
        sentences += len(item.sentence_rows)
        if sentences >= wanted:
            yield batch
            batch, sentences, wanted = [], 0, min(wanted * 2, _EMBED_BATCH_SENTENCES)
    if batch:
        yield batch


def _quote_rows(text: str, found_paragraphs: list[Paragraph]) -> list[QuoteRow]:
    return [
        QuoteRow(q.paragraph, q.start, q.end, q.speaker, q.group, q.partial)
        for q in extract_quotes(text, found_paragraphs)
    ]


def read_article(draft: ArticleDraft) -> _Reading | str:
    """What ingest learns from one article (its passages, sentences and quotes with their
    speakers), or why it cannot be stored. Pure: it runs in ingest's reading thread."""
    if any("\x00" in value for value in (draft.text, draft.title, draft.key, draft.source, draft.url, draft.author)):
        # PostgreSQL cannot store it, and text with NUL bytes is a binary file, not a story.
        return "the text has NUL bytes: it is a binary file, not an article"
    if len(draft.text) > MAX_ARTICLE_CHARS:
        return (
            f"the article is {len(draft.text):,} characters long; the limit is {MAX_ARTICLE_CHARS:,}"
            " — split it into several articles"
        )
    found_paragraphs = paragraphs(draft.text)
    if not found_paragraphs:
        return "no paragraphs of text"
    passages = build_passages(draft.text, found_paragraphs)
    return _Reading(
        [PassageRow(p.paragraph_first, p.paragraph_last, p.start, p.end) for p in passages],
        [(index, s.paragraph, s.start, s.end) for index, passage in enumerate(passages) for s in passage.sentences],
        _quote_rows(draft.text, found_paragraphs),
        len(found_paragraphs),
    )
