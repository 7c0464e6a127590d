"""All SQL lives behind the store ports: no module of ``retrieval/`` or ``bot/`` outside the storage
folders (``retrieval/storage/``, ``bot/state/``) and the cluster migration opens a connection,
writes through one, or holds an SQL statement.

The check reads the source with ``ast`` (so a comment or a word in a message does not count, and
an f-string's pieces do): a call of ``_connect(``, ``._write(`` or ``.transaction(``, or a string
literal with ``SELECT ``, ``INSERT ``, ``UPDATE `` or ``DELETE FROM``, anywhere but in those
folders, fails it with the file and line. The stores are then held to their ports: every method
of ``ports.ArticleStore`` and ``ports.StateStore`` exists on ``Store`` and ``BotState`` with the
same signature, and the reads moved into ``Store`` give the same rows on SQLite and PostgreSQL.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from bot.state.store import BotState
from retrieval.library import Library
from retrieval.ports import ArticleStore, StateStore
from retrieval.storage.store import Store
from tests.conftest import PROJECT
from tests.fixture_articles import article as fixture_article

# Where SQL may live: the storage folders (the two stores, their companions over the same
# database, the engines under them), and the migration that copies one backend's rows to another.
STORE_FOLDERS = ("retrieval/storage/", "bot/state/")
STORE_MODULES = {"retrieval/features/migrate.py"}
CONNECTION_CALLS = ("_connect", "_write", "transaction")
SQL_WORDS = ("SELECT ", "INSERT ", "UPDATE ", "DELETE FROM")


class _Scanner(ast.NodeVisitor):
    """Finds connection calls and SQL literals."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.found: list[str] = []

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr in CONNECTION_CALLS:
            self.found.append(f"{self.module}:{node.lineno}: calls .{node.func.attr}()")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            words = [word.strip() for word in SQL_WORDS if word in node.value]
            if words:
                self.found.append(f"{self.module}:{node.lineno}: SQL in a string ({', '.join(words)})")


def sql_outside_stores(module: str, source: str) -> list[str]:
    """Where ``source`` (the module at ``module``, relative to the project) touches SQL, unless
    it is in a storage folder or a store module."""
    if module in STORE_MODULES or module.startswith(STORE_FOLDERS):
        return []
    scanner = _Scanner(module)
    scanner.visit(ast.parse(source, filename=module))
    return scanner.found


def test_no_sql_outside_the_storage_folders() -> None:
    modules = sorted(path for folder in ("retrieval", "bot") for path in (PROJECT / folder).rglob("*.py"))
    assert len(modules) > 50, "the scan found too few modules to be looking in the right place"
    found = [
        line
        for path in modules
        for line in sql_outside_stores(path.relative_to(PROJECT).as_posix(), path.read_text(encoding="utf-8"))
    ]
    assert not found, "SQL outside the store modules (move it into a store method):\n" + "\n".join(found)


def test_the_scan_finds_what_it_looks_for() -> None:
    source = """
def count(store):
    return store._connect().execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0]

def forget(store):
    with store.transaction(reindex=False) as connection:
        connection.execute("DELETE FROM feeds")

class ServerLeaderLock:
    def try_acquire(self, session):
        return session.execute("SELECT pg_try_advisory_lock(1)")
"""
    found = sql_outside_stores("retrieval/example.py", source)
    assert [line.split(": ", 1)[1] for line in found] == [
        "calls ._connect()",
        "SQL in a string (SELECT)",
        "calls .transaction()",
        "SQL in a string (DELETE FROM)",
        "SQL in a string (SELECT)",
    ]
    assert sql_outside_stores("bot/state/leader.py", source) == []
    assert sql_outside_stores("retrieval/storage/store.py", source) == []
    # Words in prose or a comment are not SQL.
    assert sql_outside_stores("bot/x.py", '# SELECT * FROM x\nmessage = "Select an article to update"\n') == []


def _methods(protocol: type) -> list[str]:
    return [name for name, member in vars(protocol).items() if inspect.isfunction(member) and not name.startswith("_")]


@pytest.mark.parametrize(("protocol", "store"), [(ArticleStore, Store), (StateStore, BotState)])
def test_each_port_method_exists_on_its_store_with_the_same_signature(protocol: type, store: type) -> None:
    names = _methods(protocol)
    assert len(names) > 10
    for name in names:
        assert hasattr(store, name), f"{protocol.__name__}.{name} is not a method of {store.__name__}"
        promised, given = inspect.signature(getattr(protocol, name)), inspect.signature(getattr(store, name))
        assert promised == given, f"{store.__name__}.{name}{given} is not {protocol.__name__}.{name}{promised}"


def test_the_stores_satisfy_their_ports(tmp_path: Path) -> None:
    store, state = Store(tmp_path / "library.sqlite3"), BotState(tmp_path / "state.sqlite3")
    try:
        assert isinstance(store, ArticleStore) and isinstance(state, StateStore)
        assert not isinstance(state, ArticleStore) and not isinstance(store, StateStore)
    finally:
        store.close()
        state.close()


@pytest.mark.backends("embedded", "cluster")
def test_the_reads_moved_into_the_store(library: Library, tmp_path: Path) -> None:
    # Made-up articles: the test must pass on a machine without ../shared/data.
    files = []
    for number in (1, 2, 3):
        headline, paragraphs = fixture_article(number)
        path = tmp_path / f"article-{number}.txt"
        path.write_text(headline + "\n\n" + "\n\n".join(paragraphs))
        files.append(path)
    report = library.ingest(files)
    store = library.store
    ids = store.article_ids()
    assert ids.tolist() == sorted(report.article_ids) and len(ids) == 3
    newest = store.article(int(ids[-1]))
    assert newest is not None
    assert store.recent_articles(1) == [(newest.id, newest.key, newest.published)]
    assert [row[0] for row in store.recent_articles(10)] == ids.tolist()[::-1]
    sentences = store.sentences_of_articles(ids.tolist())
    assert store.sentence_passages([s.id for s in sentences]) == {s.id: s.passage_id for s in sentences}
    assert store.sentence_passages([]) == {}
    assert store.article_id_by_key_or_url(newest.key) == newest.id
    assert store.article_id_by_key_or_url("no such article") is None
