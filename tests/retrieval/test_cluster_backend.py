"""The cluster backend (PostgreSQL + Qdrant) against the embedded one, on real servers.

PostgreSQL is a real server (``tests/fakes/postgres_server.py``); Qdrant is qdrant-client's local mode
in memory, the same client code a server gets. The embedded library is the reference: the
cluster must give the same answers, keep itself level with the store after a worker dies half
way, share one library between workers, and take over an embedded library with
``byline migrate --to cluster`` without re-embedding anything.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from bench.quality.eval_natural import NATURAL_DIR, load_natural
from bot.cli.main import main
from bot.state.store import STATE_FILE, BotState
from retrieval.backend import INDEX_GENERATION_KEY, Backend, SharedIndexes
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from retrieval.models import Answer
from retrieval.storage.postgres import DatabaseUnavailable, Table, redacted, translate
from retrieval.storage.store import Store
from tests.conftest import BBC, SEEDS, needs_bbc

# The blind questions of one natural part, and the articles they were written about.
QUESTION_FILES = ("final5_business.tsv", "final5_politics.tsv")
_SHARED_NAMES = itertools.count(1)


def _shared_qdrant() -> str:
    """An in-memory Qdrant that every library of this test naming it shares (as workers share a server)."""
    return f":memory:cluster-test-{next(_SHARED_NAMES)}"


def _same(answer: Answer, reference: Answer) -> None:
    assert answer.text == reference.text, answer.question
    assert answer.refused_by == reference.refused_by, answer.question
    assert [(c.article_id, c.paragraph, c.passage_id) for c in answer.citations] == [
        (c.article_id, c.paragraph, c.passage_id) for c in reference.citations
    ], answer.question


def test_the_cluster_answers_the_blind_questions_exactly_as_the_embedded_library(
    tmp_path: Path, embedder: Embedder, postgres_url: str
) -> None:
    questions = [q for name in QUESTION_FILES for q in load_natural(NATURAL_DIR / name, split=False)]
    articles = sorted({BBC / q.article for q in questions if q.article})
    if not all(path.is_file() for path in articles):
        pytest.skip(f"the BBC articles these questions were written about are not at {BBC} (../shared/data)")
    assert len(questions) >= 45 and len(articles) >= 30
    embedded = Library.open(tmp_path / "embedded", embedder, Backend())
    cluster = Library.open(tmp_path / "cluster", embedder, Backend("cluster", postgres_url, ":memory:"))
    try:
        for library in (embedded, cluster):
            report = library.ingest(articles)
            assert len(report.article_ids) == len(articles), report.failed
        assert cluster.store.counts() == embedded.store.counts()
        assert (cluster.dense.kind, cluster.dense.count()) == ("qdrant", embedded.dense.count())
        for question in questions:
            _same(cluster.ask(question.text), embedded.ask(question.text))
    finally:
        embedded.close()
        cluster.close()


def test_a_worker_that_died_mid_write_is_reconciled_by_the_next_one(
    tmp_path: Path, embedder: Embedder, postgres_url: str
) -> None:
    backend = Backend("cluster", postgres_url, _shared_qdrant())
    first = Library.open(tmp_path / "one", embedder, backend)
    first.ingest([SEEDS, BBC / "politics/144.txt"])
    question = "what did Mourinho say about the referee?"
    before = first.ask(question)
    # What a worker killed between the store and Qdrant leaves: the store moved on, the
    # collections did not follow (sentences missing, a passage the store never had), and the
    # recorded index generation is behind.
    lost = first.store.sentence_ids()[:25].tolist()
    first.dense.remove(lost)
    first.sparse.add(999_999, ["ghost", "passage"])
    first.store.set_meta(INDEX_GENERATION_KEY, str(first.store.generation() - 1))
    first.close()

    second = Library.open(tmp_path / "two", embedder, backend)
    try:
        assert any("rebuilt it from the store" in message for message in second.messages)
        assert np.array_equal(second.dense.ids(), second.store.sentence_ids())
        assert np.array_equal(second.sparse.ids(), second.store.passage_ids())
        assert second.store.meta_value(INDEX_GENERATION_KEY) == str(second.store.generation())
        _same(second.ask(question), before)
    finally:
        second.close()


@needs_bbc
def test_workers_share_one_library_and_see_each_others_articles(
    tmp_path: Path, embedder: Embedder, postgres_url: str
) -> None:
    backend = Backend("cluster", postgres_url, _shared_qdrant())
    bot = Library.open(tmp_path / "bot", embedder, backend)
    ingester = Library.open(tmp_path / "ingester", embedder, backend)
    try:
        assert bot.store.article_count() == 0
        ingester.ingest([BBC / "business/348.txt"])
        assert bot.catch_up()  # the generation moved: caches refreshed, the shared indexes already hold it
        answer = bot.ask("How many passengers were left stranded?")
        assert answer.citations and answer.citations[0].article_id == ingester.store.list_articles()[0].id
        # Removing on one worker removes for every worker.
        ingester.remove_articles([answer.citations[0].article_id])
        bot.catch_up()
        assert bot.dense.count() == 0 and bot.sparse.count() == 0
        assert not bot.ask("How many passengers were left stranded?").citations
    finally:
        bot.close()
        ingester.close()


@needs_bbc
def test_migrate_to_cluster_copies_the_library_and_the_state_and_answers_the_same(
    tmp_path: Path,
    embedder: Embedder,
    postgres_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data_dir = tmp_path / "data"
    embedded = Library.open(data_dir, embedder, Backend())
    embedded.ingest([SEEDS, BBC / "politics/173.txt", BBC / "business/314.txt"])
    questions = ["what did Mourinho say about the referee?", "What did Ederson do?", "Who won the derby?"]
    before = [embedded.ask(q) for q in questions]
    counts = embedded.store.counts()
    embedded.close()
    state = BotState(data_dir / STATE_FILE)
    answer_id = state.save_answer("slack", "U1", questions[0], {"text": "kept"})
    state.vote(answer_id, "slack", "U1", 1)
    state.close()

    qdrant = _shared_qdrant()
    monkeypatch.setenv("BYLINE_DATA_DIR", str(data_dir))
    monkeypatch.setenv("BYLINE_DATABASE_URL", postgres_url)
    monkeypatch.setenv("BYLINE_QDRANT_URL", qdrant)
    monkeypatch.chdir(tmp_path)
    assert main(["migrate", "--to", "cluster"]) == 0
    printed = capsys.readouterr().out
    assert "Done and verified" in printed and f"sentences {counts['sentences']:,}" in printed

    cluster = Library.open(tmp_path / "elsewhere", embedder, Backend("cluster", postgres_url, qdrant))
    try:
        assert not cluster.messages  # nothing rebuilt: the migration recorded level indexes
        assert cluster.store.counts() == counts
        for question, reference in zip(questions, before, strict=True):
            _same(cluster.ask(question), reference)
        moved = BotState(postgres_url)
        assert moved.answer(answer_id) == {"text": "kept"} and moved.votes(answer_id) == {"U1": 1}
        # New rows are numbered after the copied ones.
        assert moved.save_answer("slack", "U2", "again?", {}) != answer_id
        moved.close()
        cluster.ingest([BBC / "tech/206.txt"])
        assert cluster.store.counts()["articles"] == counts["articles"] + 1
    finally:
        cluster.close()
    # A second migration into the same (now full) database is refused, and changes nothing.
    assert main(["migrate", "--to", "cluster"]) == 1
    assert "already holds" in capsys.readouterr().err
    assert Store(postgres_url).counts()["articles"] == counts["articles"] + 1


def test_an_unreachable_database_is_one_line_without_the_password(tmp_path: Path, embedder: Embedder) -> None:
    url = "postgresql://byline:s3cret-pw@127.0.0.1:1/byline"
    with pytest.raises(DatabaseUnavailable) as raised:
        Library.open(tmp_path / "data", embedder, Backend("cluster", url, ":memory:"))
    message = str(raised.value)
    assert "s3cret-pw" not in message and "127.0.0.1" in message and "BYLINE_DATABASE_URL" in message
    assert "\n" not in message
    assert redacted(url) == "postgresql://byline@127.0.0.1:1/byline"


def test_the_cluster_backend_needs_its_database_url(tmp_path: Path, embedder: Embedder) -> None:
    with pytest.raises(Exception, match="BYLINE_DATABASE_URL"):
        Library.open(tmp_path / "data", embedder, Backend("cluster", "", ":memory:"))
    assert Backend.from_environ({"BYLINE_BACKEND": " Cluster "}).is_cluster
    assert Backend.from_environ({}).kind == "embedded"
    with pytest.raises(Exception, match="embedded or cluster"):
        Backend.from_environ({"BYLINE_BACKEND": "mongo"})


@pytest.mark.parametrize(
    ("sqlite", "postgres"),
    [
        ("SELECT id FROM t WHERE a=? AND b LIKE '%x'", "SELECT id FROM t WHERE a=%s AND b LIKE '%%x'"),
        ("SELECT start, end FROM s WHERE s.end > ?", 'SELECT start, "end" FROM s WHERE s."end" > %s'),
        ("SELECT CASE WHEN ?='' THEN a ELSE ? END FROM t", "SELECT CASE WHEN %s='' THEN a ELSE %s END FROM t"),
        ("INSERT OR IGNORE INTO tags VALUES (?, ?)", "INSERT INTO tags VALUES (%s, %s) ON CONFLICT DO NOTHING"),
        (
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            "INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        ),
        ("INSERT INTO feeds (url) VALUES (?)", "INSERT INTO feeds (url) VALUES (%s) RETURNING id"),
        ("SELECT instr(trim(text), ' ') FROM q ORDER BY rowid", "SELECT strpos(trim(text), ' ') FROM q ORDER BY ctid"),
    ],
)
def test_sqlite_statements_are_translated_for_postgresql(sqlite: str, postgres: str) -> None:
    tables = {
        "meta": Table(("key", "value"), ("key",), False),
        "tags": Table(("article_id", "tag"), ("article_id", "tag"), False),
        "feeds": Table(("id", "url"), ("id",), True),
    }
    assert translate(sqlite, tables)[0] == postgres


def test_shared_indexes_refuse_a_sqlite_store(tmp_path: Path) -> None:
    store = Store(tmp_path / "byline.sqlite3")
    try:
        with pytest.raises(Exception, match="PostgreSQL"):
            SharedIndexes(store, None, None)  # type: ignore[arg-type]
    finally:
        store.close()
