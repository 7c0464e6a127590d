"""The SQLite store: articles, passages, sentences (with their vectors) and quotes.

The store is the source of truth. FAISS and BM25 files are caches that can always be rebuilt
from it; ``generation`` goes up in the same transaction as every change, and each index file
records the generation it reflects, so a stale index is detected at start.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from retrieval.models import Article, ArticleDraft, Passage, Quote, Sentence
from retrieval.storage.database import Connection, Database, Row

_MIGRATIONS: list[str] = [
    """
    CREATE TABLE articles (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        content_hash TEXT NOT NULL,
        title TEXT NOT NULL,
        source TEXT NOT NULL DEFAULT '',
        url TEXT NOT NULL DEFAULT '',
        published TEXT NOT NULL DEFAULT '',
        author TEXT NOT NULL DEFAULT '',
        added_at TEXT NOT NULL,
        text TEXT NOT NULL
    );
    CREATE INDEX articles_hash ON articles(content_hash);
    CREATE INDEX articles_added ON articles(added_at);
    CREATE TABLE passages (
        id INTEGER PRIMARY KEY,
        article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
        paragraph_first INTEGER NOT NULL,
        paragraph_last INTEGER NOT NULL,
        start INTEGER NOT NULL,
        end INTEGER NOT NULL,
        text TEXT NOT NULL
    );
    CREATE INDEX passages_article ON passages(article_id);
    CREATE TABLE sentences (
        id INTEGER PRIMARY KEY,
        article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
        passage_id INTEGER NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
        paragraph INTEGER NOT NULL,
        start INTEGER NOT NULL,
        end INTEGER NOT NULL,
        text TEXT NOT NULL,
        vector BLOB NOT NULL
    );
    CREATE INDEX sentences_passage ON sentences(passage_id);
    CREATE INDEX sentences_article ON sentences(article_id);
    CREATE TABLE quotes (
        id INTEGER PRIMARY KEY,
        article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
        paragraph INTEGER NOT NULL,
        start INTEGER NOT NULL,
        end INTEGER NOT NULL,
        text TEXT NOT NULL,
        speaker TEXT NOT NULL,
        grp INTEGER NOT NULL,
        partial INTEGER NOT NULL
    );
    CREATE INDEX quotes_article ON quotes(article_id);
    CREATE INDEX quotes_speaker ON quotes(speaker);
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO meta VALUES ('generation', '0');
    """,
    # 2: feed subscriptions, the items seen in them, and validators of fetched pages.
    """
    CREATE TABLE feeds (
        id INTEGER PRIMARY KEY,
        url TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL DEFAULT '',
        added_at TEXT NOT NULL,
        etag TEXT NOT NULL DEFAULT '',
        last_modified TEXT NOT NULL DEFAULT '',
        last_fetch TEXT NOT NULL DEFAULT '',
        last_success TEXT NOT NULL DEFAULT '',
        last_error TEXT NOT NULL DEFAULT '',
        failures INTEGER NOT NULL DEFAULT 0,
        articles_added INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE feed_items (
        feed_id INTEGER NOT NULL REFERENCES feeds(id) ON DELETE CASCADE,
        guid TEXT NOT NULL,
        link TEXT NOT NULL DEFAULT '',
        updated TEXT NOT NULL DEFAULT '',
        article_key TEXT NOT NULL DEFAULT '',
        seen_at TEXT NOT NULL,
        PRIMARY KEY (feed_id, guid)
    );
    CREATE TABLE web_pages (
        url TEXT PRIMARY KEY,
        article_key TEXT NOT NULL DEFAULT '',
        etag TEXT NOT NULL DEFAULT '',
        last_modified TEXT NOT NULL DEFAULT '',
        fetched_at TEXT NOT NULL
    );
    """,
    # Each quote's sentences as an id range (sentence ids run in text order within an
    # article), so "what did X say" scores a speaker's quotes without a join per question.
    """
    ALTER TABLE quotes ADD COLUMN sentence_first INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE quotes ADD COLUMN sentence_last INTEGER NOT NULL DEFAULT 0;
    UPDATE quotes SET
        sentence_first = COALESCE((SELECT min(s.id) FROM sentences s WHERE s.article_id = quotes.article_id
                                   AND s.start < quotes.end AND s.end > quotes.start), 0),
        sentence_last = COALESCE((SELECT max(s.id) FROM sentences s WHERE s.article_id = quotes.article_id
                                  AND s.start < quotes.end AND s.end > quotes.start), 0);
    CREATE INDEX quotes_speaker_sentences ON quotes(speaker, id, sentence_first, sentence_last, partial);
    """,
    # The audit log of admin actions (removals): who, when, from where, and what, kept after
    # the articles themselves are gone (so no foreign key to them).
    """
    CREATE TABLE IF NOT EXISTS audit (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        article_key TEXT NOT NULL DEFAULT '',
        title TEXT NOT NULL DEFAULT '',
        detail TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX IF NOT EXISTS audit_at ON audit(at);
    """,
    # An article's tags (front matter ``tags:``, a feed item's categories), lower-cased, for the
    # ``tag:`` entries of a channel's scope (``scope.py``).
    """
    CREATE TABLE IF NOT EXISTS article_tags (
        article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        PRIMARY KEY (article_id, tag)
    );
    CREATE INDEX IF NOT EXISTS article_tags_tag ON article_tags(tag);
    """,
]


# Articles kept by ``Store.article`` (with their text: ~5 KB each, so ~3 MB at most).
ARTICLE_CACHE = 512

_SENTENCE_COLUMNS = "SELECT id, article_id, passage_id, paragraph, start, end, text FROM sentences"


@dataclass(frozen=True)
class SentenceRow:
    """A sentence to store, with its embedding."""

    passage_index: int
    paragraph: int
    start: int
    end: int
    vector: np.ndarray


@dataclass(frozen=True)
class PassageRow:
    paragraph_first: int
    paragraph_last: int
    start: int
    end: int


@dataclass(frozen=True)
class QuoteRow:
    paragraph: int
    start: int
    end: int
    speaker: str
    group: int
    partial: bool


@dataclass(frozen=True)
class StoredArticle:
    """What was written for one article: the ids the indexes need."""

    article_id: int
    passage_ids: list[int]
    sentence_ids: list[int]
    replaced: int | None


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Store(Database):
    """The article database; safe to share between threads (each thread gets a connection)."""

    def __init__(self, location: Path | str) -> None:
        # A path: the embedded SQLite file; a postgresql:// URL: the cluster backend's server.
        super().__init__(location, _MIGRATIONS, name="articles")
        # Articles read by id. A stored article never changes under its id (a new version gets
        # new ids), so only a deletion makes an entry stale: this process's deletions drop it,
        # another process's are forgotten with the rest when the library catches up
        # (``forget_articles``). An answer reads the same few articles many times over.
        self._article_cache: OrderedDict[tuple[int, bool], Article] = OrderedDict()
        self._article_cache_lock = threading.Lock()

    def forget_articles(self) -> None:
        """Drop the articles read so far (another process may have deleted some)."""
        with self._article_cache_lock:
            self._article_cache.clear()

    @contextmanager
    def transaction(self, reindex: bool = True) -> Iterator[Connection]:
        """One atomic write. ``reindex`` marks the index files stale (articles, passages,
        sentences or quotes changed); bookkeeping such as a feed's status leaves them alone."""
        with self._write() as connection:
            yield connection
            if reindex:
                connection.execute(
                    "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'generation'"
                )

    # -- reads ---------------------------------------------------------------------------

    def generation(self) -> int:
        return int(self.meta_value("generation") or 0)

    def meta_value(self, key: str) -> str | None:
        row = self._connect().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else None

    def set_meta(self, key: str, value: str) -> None:
        """Record ``meta[key]`` (bookkeeping: the index files are not made stale by it)."""
        with self.transaction(reindex=False) as connection:
            connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def article_texts(self) -> Iterator[tuple[int, str]]:
        """Every article's id and stored text, in id order."""
        cursor = self._connect().cursor()
        cursor.row_factory = None
        yield from cursor.execute("SELECT id, text FROM articles ORDER BY id")

    def replace_all_quotes(
        self, texts: Mapping[int, str], quotes: Mapping[int, Sequence[QuoteRow]], key: str, value: str
    ) -> None:
        """Replace every article's quotes (``quotes[article_id]``, found in ``texts[article_id]``)
        and set ``meta[key]`` in one write: an interrupted re-read leaves the old quotes and the
        old marker."""
        sentence_spans: dict[int, list[tuple[int, int, int]]] = {}
        for row in self._connect().execute("SELECT article_id, id, start, end FROM sentences ORDER BY id"):
            sentence_spans.setdefault(row[0], []).append((row[1], row[2], row[3]))
        with self.transaction(reindex=False) as connection:  # the FAISS and BM25 files hold no quotes
            ids = _FreshIds(connection)
            ids.load("quotes")  # before the delete, which would hide the highest id given
            connection.execute("DELETE FROM quotes")
            connection.executemany(
                _INSERT_QUOTE,
                [
                    _quote_values(
                        ids.next("quotes"), article_id, texts[article_id], q, sentence_spans.get(article_id, [])
                    )
                    for article_id, found in quotes.items()
                    for q in found
                ],
            )
            ids.record()
            connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def article_count(self) -> int:
        return int(self._connect().execute("SELECT count(*) FROM articles").fetchone()[0])

    def find_by_key(self, key: str) -> tuple[int, str] | None:
        row = self._connect().execute("SELECT id, content_hash FROM articles WHERE key=?", (key,)).fetchone()
        return (row["id"], row["content_hash"]) if row else None

    def find_by_hash(self, content_hash: str) -> int | None:
        row = self._connect().execute("SELECT id FROM articles WHERE content_hash=?", (content_hash,)).fetchone()
        return row["id"] if row else None

    def article(self, article_id: int, with_text: bool = False) -> Article | None:
        key = (article_id, with_text)
        with self._article_cache_lock:
            found = self._article_cache.get(key)
            if found is not None:
                self._article_cache.move_to_end(key)
                return found
        columns = "*" if with_text else "id, key, title, source, url, published, author, added_at"
        row = self._connect().execute(f"SELECT {columns} FROM articles WHERE id=?", (article_id,)).fetchone()
        if not row:
            return None
        article = _article(row)
        with self._article_cache_lock:
            self._article_cache[key] = article
            if len(self._article_cache) > ARTICLE_CACHE:
                self._article_cache.popitem(last=False)
        return article

    def articles(self, ids: Sequence[int]) -> dict[int, Article]:
        if not ids:
            return {}
        wanted, values = self._one_of("id", ids)
        rows = self._connect().execute(
            f"SELECT id, key, title, source, url, published, author, added_at FROM articles WHERE {wanted}", values
        )
        return {row["id"]: _article(row) for row in rows}

    def list_articles(self, offset: int = 0, limit: int = 10, since: str = "", until: str = "") -> list[Article]:
        """Articles newest first: by published date when known, else by when they were added."""
        rows = self._connect().execute(
            "SELECT id, key, title, source, url, published, author, added_at FROM articles "
            "WHERE added_at >= ? AND (? = '' OR added_at < ?) "
            "ORDER BY COALESCE(NULLIF(published, ''), added_at) DESC, id DESC LIMIT ? OFFSET ?",
            (since, until, until, limit, offset),
        )
        return [_article(row) for row in rows]

    def passages(self, ids: Sequence[int]) -> dict[int, Passage]:
        if not ids:
            return {}
        wanted, values = self._one_of("id", ids)
        rows = self._connect().execute(f"SELECT * FROM passages WHERE {wanted}", values)
        return {row["id"]: _passage(row) for row in rows}

    def _rows_where_in(self, sql: str, column: str, values: Sequence[object], order_by: str = "id") -> list[Row]:
        """``sql WHERE column IN (values) ORDER BY order_by``; nothing for no values."""
        if not values:
            return []
        wanted, parameters = self._one_of(column, values)
        return self._connect().execute(f"{sql} WHERE {wanted} ORDER BY {order_by}", parameters).fetchall()

    def _one_of(self, column: str, values: Sequence[object]) -> tuple[str, list[object]]:
        """``column IN (?, ?, …)`` and its parameters; on PostgreSQL ``column = ANY(?)`` with one
        array parameter instead, which its planner takes ~3x faster for the long id lists of an
        answer (bench/perf/bench_cluster_ask.py). The one place where the two engines' SQL differs."""
        if self.shared:
            return f"{column} = ANY(?)", [
                [value.item() if isinstance(value, np.generic) else value for value in values]
            ]
        return f"{column} IN ({','.join('?' * len(values))})", list(values)

    def sentences_of_passages(self, passage_ids: Sequence[int]) -> list[Sentence]:
        return [_sentence(row) for row in self._rows_where_in(_SENTENCE_COLUMNS, "passage_id", passage_ids)]

    def sentences_of_articles(self, article_ids: Sequence[int]) -> list[Sentence]:
        return [_sentence(row) for row in self._rows_where_in(_SENTENCE_COLUMNS, "article_id", article_ids)]

    def quotes_of_articles(self, article_ids: Sequence[int]) -> list[Quote]:
        return [_quote(row) for row in self._rows_where_in("SELECT * FROM quotes", "article_id", article_ids)]

    def quotes_by_speakers(self, speakers: Sequence[str]) -> list[Quote]:
        return [_quote(row) for row in self._rows_where_in("SELECT * FROM quotes", "speaker", speakers)]

    def speakers(self) -> dict[str, int]:
        rows = self._connect().execute("SELECT speaker, count(*) AS n FROM quotes WHERE speaker != '' GROUP BY speaker")
        return {row["speaker"]: row["n"] for row in rows}

    def titles(self) -> list[str]:
        return [row[0] for row in self._connect().execute("SELECT title FROM articles")]

    def iter_sentence_vectors(self, batch: int = 20000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(ids, vectors) of every stored sentence, in batches, for rebuilding FAISS."""
        last = 0
        connection = self._connect()
        while True:
            rows = connection.execute(
                "SELECT id, vector FROM sentences WHERE id > ? ORDER BY id LIMIT ?", (last, batch)
            ).fetchall()
            if not rows:
                return
            ids = np.fromiter((row["id"] for row in rows), dtype=np.int64, count=len(rows))
            vectors = np.frombuffer(b"".join(row["vector"] for row in rows), dtype=np.float16).reshape(len(rows), -1)
            yield ids, vectors.astype(np.float32)
            last = int(ids[-1])

    def sentence_vectors(self, ids: Sequence[int]) -> np.ndarray:
        """The stored vectors of these sentences, one row per id in the order given."""
        rows = {
            int(row["id"]): row["vector"] for row in self._rows_where_in("SELECT id, vector FROM sentences", "id", ids)
        }
        missing = [i for i in ids if i not in rows]
        if missing:
            raise KeyError(f"sentences {missing[:10]} are not in the store")
        data = b"".join(bytes(rows[i]) for i in ids)
        return np.frombuffer(data, dtype=np.float16).reshape(len(ids), -1).astype(np.float32)

    def iter_passage_texts(self) -> Iterator[tuple[int, str]]:
        for row in self._connect().execute("SELECT id, text FROM passages ORDER BY id"):
            yield row["id"], row["text"]

    def passage_texts_of_article(self, article_id: int) -> list[tuple[int, str]]:
        rows = self._connect().execute("SELECT id, text FROM passages WHERE article_id=? ORDER BY id", (article_id,))
        return [(row["id"], row["text"]) for row in rows]

    def sentence_ids_of_article(self, article_id: int) -> list[int]:
        rows = self._connect().execute("SELECT id FROM sentences WHERE article_id=?", (article_id,))
        return [row["id"] for row in rows]

    def sentence_ids(self) -> np.ndarray:
        """Every sentence id, sorted: what the vector index must hold."""
        return self._ids("sentences")

    def passage_ids(self) -> np.ndarray:
        """Every passage id, sorted: what the keyword index must hold."""
        return self._ids("passages")

    def _ids(self, table: str) -> np.ndarray:
        cursor = self._connect().cursor()
        cursor.row_factory = None
        rows = cursor.execute(f"SELECT id FROM {table} ORDER BY id").fetchall()
        return np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))

    def counts(self) -> dict[str, int]:
        connection = self._connect()
        return {
            table: int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in ("articles", "passages", "sentences", "quotes")
        }

    # -- writes --------------------------------------------------------------------------

    def put_article(
        self,
        draft: ArticleDraft,
        content_hash: str,
        passages: Sequence[PassageRow],
        sentences: Sequence[SentenceRow],
        quotes: Sequence[QuoteRow],
        replace_id: int | None,
    ) -> StoredArticle:
        """Store an article with everything derived from it, replacing an old version."""
        with self.transaction() as connection:
            if replace_id is not None:
                self.forget_articles()
                connection.execute("DELETE FROM articles WHERE id=?", (replace_id,))
            ids = _FreshIds(connection)
            cursor = connection.execute(
                "INSERT INTO articles (id, key, content_hash, title, source, url, published, author, added_at, text) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    ids.next("articles"),
                    draft.key,
                    content_hash,
                    draft.title,
                    draft.source,
                    draft.url,
                    draft.published,
                    draft.author,
                    utc_now(),
                    draft.text,
                ),
            )
            article_id = int(cursor.lastrowid or 0)
            connection.executemany(
                "INSERT OR IGNORE INTO article_tags VALUES (?, ?)", [(article_id, tag) for tag in draft.tags]
            )
            passage_ids: list[int] = []
            for passage in passages:
                cursor = connection.execute(
                    "INSERT INTO passages (id, article_id, paragraph_first, paragraph_last, start, end, text) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        ids.next("passages"),
                        article_id,
                        passage.paragraph_first,
                        passage.paragraph_last,
                        passage.start,
                        passage.end,
                        draft.text[passage.start : passage.end],
                    ),
                )
                passage_ids.append(int(cursor.lastrowid or 0))
            sentence_ids: list[int] = []
            for sentence in sentences:
                cursor = connection.execute(
                    "INSERT INTO sentences (id, article_id, passage_id, paragraph, start, end, text, vector) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        ids.next("sentences"),
                        article_id,
                        passage_ids[sentence.passage_index],
                        sentence.paragraph,
                        sentence.start,
                        sentence.end,
                        draft.text[sentence.start : sentence.end],
                        sentence.vector.astype(np.float16).tobytes(),
                    ),
                )
                sentence_ids.append(int(cursor.lastrowid or 0))
            spans = [(i, s.start, s.end) for i, s in zip(sentence_ids, sentences, strict=True)]
            connection.executemany(
                _INSERT_QUOTE, [_quote_values(ids.next("quotes"), article_id, draft.text, q, spans) for q in quotes]
            )
            ids.record()
        return StoredArticle(article_id, passage_ids, sentence_ids, replace_id)

    def speaker_quote_ranges(self, speakers: Sequence[str]) -> np.ndarray:
        """Rows of (quote id, first sentence id, last sentence id, partial, article id) for every
        quote of two words or more by these speakers; a numpy array, as a prolific speaker has
        thousands."""
        return self._quote_ranges("speaker", speakers)

    def article_quote_ranges(self, article_ids: Sequence[int]) -> np.ndarray:
        """The rows of ``speaker_quote_ranges`` for every attributed quote of these articles."""
        return self._quote_ranges("article_id", article_ids)

    def _quote_ranges(self, column: str, values: Sequence[object]) -> np.ndarray:
        """Attributed quotes of two words or more where ``column`` is one of ``values``."""
        if not values:
            return np.zeros((0, 5), dtype=np.int64)
        wanted, parameters = self._one_of(column, values)
        cursor = self._connect().cursor()
        cursor.row_factory = None  # plain tuples: several times faster than named rows here
        rows = cursor.execute(
            f"SELECT id, sentence_first, sentence_last, partial, article_id FROM quotes WHERE {wanted} "
            "AND speaker != '' AND sentence_first > 0 AND instr(trim(text), ' ') > 0",
            parameters,
        ).fetchall()
        return np.array(rows, dtype=np.int64).reshape(-1, 5)

    def article_ids_of_passages(self, passage_ids: Sequence[int]) -> dict[int, int]:
        """Passage id -> its article id."""
        rows = self._rows_where_in("SELECT id, article_id FROM passages", "id", passage_ids)
        return {int(row["id"]): int(row["article_id"]) for row in rows}

    def quotes_by_ids(self, ids: Sequence[int]) -> dict[int, Quote]:
        return {row["id"]: _quote(row) for row in self._rows_where_in("SELECT * FROM quotes", "id", ids)}

    def sentences_by_ids(self, ids: Sequence[int]) -> dict[int, Sentence]:
        return {row["id"]: _sentence(row) for row in self._rows_where_in(_SENTENCE_COLUMNS, "id", ids)}

    def delete_article(self, article_id: int) -> None:
        self.forget_articles()
        with self.transaction() as connection:
            connection.execute("DELETE FROM articles WHERE id=?", (article_id,))

    # -- reads for ingest, ranking, removal and the benchmarks (their SQL, moved here) ---------

    def article_ids(self) -> np.ndarray:
        """Every article id, sorted."""
        return self._ids("articles")

    def recent_articles(self, limit: int) -> list[tuple[int, str, str]]:
        """(id, key, published) of the ``limit`` articles stored last, the last first."""
        rows = self._connect().execute("SELECT id, key, published FROM articles ORDER BY id DESC LIMIT ?", (limit,))
        return [(row["id"], row["key"], row["published"]) for row in rows]

    def sentence_passages(self, sentence_ids: Sequence[int]) -> dict[int, int]:
        """Sentence id -> the id of its passage."""
        if not sentence_ids:
            return {}
        wanted, values = self._one_of("id", sentence_ids)
        rows = self._connect().execute(f"SELECT id, passage_id FROM sentences WHERE {wanted}", values)
        return {row[0]: row[1] for row in rows}

    def article_id_by_key_or_url(self, reference: str) -> int | None:
        """The id of the (first stored) article whose key or URL is ``reference``."""
        row = (
            self._connect()
            .execute(
                "SELECT id FROM articles WHERE key=? OR (url<>'' AND url=?) ORDER BY id LIMIT 1", (reference, reference)
            )
            .fetchone()
        )
        return int(row["id"]) if row is not None else None


class _FreshIds:
    """Ids never used before in a table, even by deleted rows.

    SQLite reuses the highest rowid once its row is deleted, so a replaced article's new
    sentences could take the old ones' ids; an index file from before the replace would then
    look current by its ids, and a quote asked about by id could be another article's. The
    highest id ever given is kept in ``meta`` instead, for articles, passages, sentences and
    quotes alike (on PostgreSQL too, whose identity columns take the ids given).
    """

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.last: dict[str, int] = {}

    def load(self, table: str) -> None:
        """Reads the highest id ``table`` has given (``next`` does so on first use)."""
        row = self.connection.execute("SELECT value FROM meta WHERE key=?", (f"last_id:{table}",)).fetchone()
        highest = self.connection.execute(f"SELECT COALESCE(max(id), 0) FROM {table}").fetchone()[0]
        self.last[table] = max(int(row[0]) if row else 0, int(highest))

    def next(self, table: str) -> int:
        if table not in self.last:
            self.load(table)
        self.last[table] += 1
        return self.last[table]

    def record(self) -> None:
        self.connection.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", [(f"last_id:{t}", str(n)) for t, n in self.last.items()]
        )


def _article(row: Row) -> Article:
    keys = row.keys()
    return Article(
        id=row["id"],
        key=row["key"],
        title=row["title"],
        source=row["source"],
        url=row["url"],
        published=row["published"],
        author=row["author"],
        added_at=row["added_at"],
        text=row["text"] if "text" in keys else "",
    )


def _passage(row: Row) -> Passage:
    return Passage(
        row["id"],
        row["article_id"],
        row["paragraph_first"],
        row["paragraph_last"],
        row["start"],
        row["end"],
        row["text"],
    )


def _sentence(row: Row) -> Sentence:
    return Sentence(
        row["id"], row["article_id"], row["passage_id"], row["paragraph"], row["start"], row["end"], row["text"]
    )


def _quote(row: Row) -> Quote:
    return Quote(
        row["id"],
        row["article_id"],
        row["paragraph"],
        row["start"],
        row["end"],
        row["text"],
        row["speaker"],
        row["grp"],
        bool(row["partial"]),
    )


_INSERT_QUOTE = (
    "INSERT INTO quotes (id, article_id, paragraph, start, end, text, speaker, grp, partial, "
    "sentence_first, sentence_last) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _quote_values(
    quote_id: int, article_id: int, text: str, quote: QuoteRow, sentences: Sequence[tuple[int, int, int]]
) -> tuple[int | str, ...]:
    """A quotes row; ``sentences`` are the article's stored (id, start, end), in text order."""
    inside = [sentence_id for sentence_id, start, end in sentences if start < quote.end and end > quote.start]
    first, last = (inside[0], inside[-1]) if inside else (0, 0)  # the sentences the quote overlaps
    return (
        quote_id,
        article_id,
        quote.paragraph,
        quote.start,
        quote.end,
        text[quote.start : quote.end],
        quote.speaker,
        quote.group,
        int(quote.partial),
        first,
        last,
    )
