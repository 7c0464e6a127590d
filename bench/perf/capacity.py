"""Capacity model: what serving ``--articles`` articles at ``--qps`` questions/s takes.

    .venv/bin/python -m bench.perf.capacity --library /tmp/byline-eval/bbc --ivf /tmp/byline-ivf-cache/ivf-results.json

Measured here, in small runs (about two minutes on 2 cores):

* per question, on a warm built library (``--library``, as ``bench_ask_latency`` uses it): the
  whole ``Library.ask``, and its parts that the model scales separately (query embedding,
  dense search, BM25 search);
* BM25 search again on a small library ingested here, so its growth is fitted from two sizes;
* per article ingest (``Library.add_drafts`` of ``--ingest-articles`` BBC articles, into a fresh
  directory) and the raw model encode rate on the same sentences;
* sentences and passages per article, over the whole corpus (segmentation only);
* memory: bytes per vector of the IVF index Byline builds (serialised), the SQLite bytes per
  sentence row (float16 vector included), process RSS with the model, and RSS per passage
  once a library is loaded;
* the single-thread FAISS scan rate (seconds per vector compared), which sets IVF latency.

Read from ``bench_ivf_recall``'s results (``--ivf``) when present: the nprobe that reaches
recall@10 >= 0.98, and measured IVF latencies to check the scan model against. Everything
else is an assumption, printed as one.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np

from bench.paths import SHARED_DATA
from bench.perf.bench_core import sentence_texts
from bench.perf.scale_corpus import SECTIONS, article_sentences
from bench.quality.eval_natural import dev_questions
from retrieval.index.dense import DenseIndex, choose_cells
from retrieval.index.embedder import DIMENSION
from retrieval.library import Library
from retrieval.ranking import TUNING
from retrieval.reading.loader import iter_article_files, read_article_file
from retrieval.reading.text import search_tokens

GIB = 1024**3


@dataclass
class QuestionCost:
    passages: int
    vectors: int
    ask_ms: float
    ask_p95_ms: float
    embed_ms: float
    dense_ms: float
    sparse_ms: float
    rss_loaded_mb: float
    ask_wall_ms: float


@dataclass
class Measured:
    sentences_per_article: float
    passages_per_article: float
    ingest_s_per_article: float
    ingest_rate: float  # sentences per CPU second through add_drafts
    encode_rate: float  # sentences per CPU second of the raw model on the same sentences
    ingest_wall_rate: float  # sentences/s of wall time (on the shared machine)
    base_rss_mb: float  # a process with the model loaded and traced, no library
    big: QuestionCost
    small: QuestionCost
    ivf_bytes_per_vector: float
    sqlite_bytes_per_sentence: float
    sqlite_bytes_per_article: float
    rss_bytes_per_passage: float  # loaded RSS beyond the FAISS vectors, per passage
    scan_s_per_vector: float


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def question_cost(library: Library, questions: list[str], rounds: int, rss_loaded_mb: float) -> QuestionCost:
    for question in questions[:20]:  # caches warm, as in a running bot
        library.ask(question)
    vectors = {q: library.embedder.encode_one(q) for q in questions}
    tokens = {q: search_tokens(q) for q in questions}
    parts: dict[str, Callable[[str], object]] = {
        "ask": library.ask,
        "embed": library.embedder.encode_one,
        "dense": lambda q: library.dense.search(vectors[q], TUNING.dense_candidates),
        "sparse": lambda q: library.sparse.search(tokens[q], TUNING.sparse_candidates),
    }
    # The parts are timed one after another on each question, so that a change in the shared
    # machine's load falls on all of them alike (their differences are what the model uses).
    # CPU time (of all the process's threads) is what a worker spends on a question, and unlike
    # wall time it barely moves when other processes share the cores; wall time is kept too.
    times: dict[str, list[float]] = {name: [] for name in parts}
    walls: list[float] = []
    for _ in range(rounds):
        for question in questions:
            for name, action in parts.items():
                started, wall = time.process_time(), time.perf_counter()
                action(question)
                times[name].append(1000 * (time.process_time() - started))
                if name == "ask":
                    walls.append(1000 * (time.perf_counter() - wall))
    ask = sorted(times["ask"])
    counts = library.store.counts()
    return QuestionCost(
        counts["passages"],
        library.dense.count(),
        statistics.median(ask),
        ask[int(0.95 * (len(ask) - 1))],
        statistics.median(times["embed"]),
        statistics.median(times["dense"]),
        statistics.median(times["sparse"]),
        rss_loaded_mb,
        statistics.median(walls),
    )


def sqlite_bytes(path: Path) -> tuple[int, int]:
    """(bytes of the sentences table, bytes of the whole file) of a library's SQLite store."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        table = connection.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'sentences'").fetchone()[0]
    except sqlite3.OperationalError:  # an SQLite built without dbstat: the whole file counts
        table = None
    finally:
        connection.close()
    whole = path.stat().st_size
    return int(table or whole), whole


def scan_rate(vectors: int = 200_000, queries: int = 50) -> float:
    """Seconds per vector of one single-thread exact inner-product scan (Byline searches with
    one FAISS thread); the content of the vectors does not matter to the speed."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((vectors, DIMENSION), dtype=np.float32)
    flat = faiss.IndexFlatIP(DIMENSION)
    flat.add(data)
    faiss.omp_set_num_threads(1)
    times = []
    for query in data[:queries]:
        started = time.process_time()
        flat.search(query.reshape(1, -1), TUNING.dense_candidates)
        times.append(time.process_time() - started)
    faiss.omp_set_num_threads(2)
    return statistics.median(times) / vectors


def ivf_bytes_per_vector(count: int = 60_000) -> float:
    """Serialised size per vector of the IVF index ``DenseIndex.build`` makes (vector, id, map)."""
    rng = np.random.default_rng(1)
    data = rng.standard_normal((count, DIMENSION), dtype=np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    dense = DenseIndex.build(np.arange(count, dtype=np.int64), data)
    # Serialised bytes hold the vectors and ids; the direct map (a hash table id -> list
    # position) is rebuilt in memory: count it at 16 bytes per entry.
    return (len(dense.to_bytes()) - choose_cells(count) * DIMENSION * 4) / count + 16


def measure(args: argparse.Namespace, workdir: Path) -> Measured:
    articles = article_sentences(args.bbc)
    sentence_count = sum(len(paragraph) for article in articles for paragraph in article)
    questions = [q.text for q in dev_questions(args.questions)]

    big_dir = workdir / "big"
    shutil.copytree(args.library, big_dir)  # asked from a copy: a run never touches the original
    probe = Library.open(workdir / "empty")
    probe.warm_up()
    base_rss = rss_mb()
    probe.close()
    before = rss_mb()
    big = Library.open(big_dir, probe.embedder)
    loaded = rss_mb() - before
    big_cost = question_cost(big, questions, args.rounds, loaded)
    passages_per_article = big_cost.passages / max(1, big.store.counts()["articles"])
    big.close()
    table, whole = sqlite_bytes(big_dir / "byline.sqlite3")
    big_articles = big_cost.vectors / max(1.0, sentence_count / len(articles))

    drafts = [read_article_file(p) for p in iter_article_files([args.bbc / section for section in SECTIONS])]
    sample = random.Random(1).sample(drafts, min(args.ingest_articles, len(drafts)))
    small = Library.open(workdir / "small", probe.embedder)
    started, wall = time.process_time(), time.perf_counter()
    small.add_drafts(sample)
    ingest_s, ingest_wall = time.process_time() - started, time.perf_counter() - wall
    ingested = small.store.counts()
    texts = sentence_texts(sample)
    started = time.process_time()
    probe.embedder.encode(texts)
    encode_s = time.process_time() - started
    small_cost = question_cost(small, questions, args.rounds, 0.0)
    small.close()

    flat_bytes = big_cost.vectors * (DIMENSION * 4 + 16)  # vector + id map entries of IndexIDMap2
    return Measured(
        sentences_per_article=sentence_count / len(articles),
        passages_per_article=passages_per_article,
        ingest_s_per_article=ingest_s / len(sample),  # CPU seconds
        ingest_rate=ingested["sentences"] / ingest_s,
        encode_rate=len(texts) / encode_s,
        ingest_wall_rate=ingested["sentences"] / ingest_wall,
        base_rss_mb=base_rss,
        big=big_cost,
        small=small_cost,
        ivf_bytes_per_vector=ivf_bytes_per_vector(),
        sqlite_bytes_per_sentence=table / max(1, big_cost.vectors),
        sqlite_bytes_per_article=whole / max(1.0, big_articles),
        rss_bytes_per_passage=max(0.0, (loaded * 1024**2 - flat_bytes) / max(1, big_cost.passages)),
        scan_s_per_vector=scan_rate(),
    )


def recall_nprobe(path: Path) -> tuple[int | None, list[dict[str, object]]]:
    """The largest of the nprobes that reached the target at the sizes measured (the control
    set aside), and all results."""
    if not path.is_file():
        return None, []
    results = json.loads(path.read_text())["results"]
    found = [int(r["smallest_nprobe"]) for r in results if "control" not in r["label"] and r["smallest_nprobe"]]
    return (max(found) if found else None), results


def byline_nprobe(cells: int) -> int:
    """The nprobe Byline's IVF index searches with (``retrieval.index.dense``)."""
    from retrieval.index.dense import _nprobe

    return _nprobe(cells)


def dense_ms(m: Measured, vectors: float, nprobe_rule: str, recall_probe: int | None) -> float:
    """Search time: the flat scan below the IVF threshold, else the coarse scan of the cells
    plus ``nprobe`` cells of ``vectors / nlist`` vectors each."""
    cells = choose_cells(int(vectors))
    if cells == 0:
        return 1000 * m.scan_s_per_vector * vectors
    nprobe = byline_nprobe(cells) if nprobe_rule == "byline" else (recall_probe or byline_nprobe(cells))
    return 1000 * m.scan_s_per_vector * (cells + min(nprobe, cells) * vectors / cells)


def sparse_ms(m: Measured, passages: float) -> float:
    """BM25 time, a straight line through the two sizes measured (postings grow with passages)."""
    slope = (m.big.sparse_ms - m.small.sparse_ms) / max(1, m.big.passages - m.small.passages)
    return max(m.small.sparse_ms, m.small.sparse_ms + max(0.0, slope) * (passages - m.small.passages))


def fixed_ms(m: Measured) -> float:
    """The rest of an ask (embedding, rescoring, quotes, rendering), as measured on the big library."""
    return m.big.ask_ms - m.big.dense_ms - m.big.sparse_ms


def print_measured(m: Measured) -> None:
    b, s = m.big, m.small
    print("MEASURED")
    print(
        f"  ask on {b.passages} passages / {b.vectors} vectors, CPU time: p50 {b.ask_ms:.1f} ms, p95 "
        f"{b.ask_p95_ms:.1f} ms (wall p50 {b.ask_wall_ms:.1f} ms); of which query embedding {b.embed_ms:.1f}, "
        f"dense {b.dense_ms:.2f}, BM25 {b.sparse_ms:.2f} ms"
    )
    print(f"  ask on {s.passages} passages (ingested here), CPU: p50 {s.ask_ms:.1f} ms, BM25 {s.sparse_ms:.2f} ms")
    print(
        f"  ingest, CPU time: {m.ingest_s_per_article * 1000:.0f} ms/article, {m.ingest_rate:.0f} sentences per CPU s "
        f"(wall {m.ingest_wall_rate:.0f}/s; raw encode {m.encode_rate:.0f}/CPU s: embedding is "
        f"{m.ingest_rate / m.encode_rate:.0%} of ingest); "
        f"{m.sentences_per_article:.1f} sentences and {m.passages_per_article:.2f} passages per article"
    )
    print(
        f"  memory: IVF {m.ivf_bytes_per_vector:.0f} B/vector in RAM; SQLite {m.sqlite_bytes_per_sentence:.0f} "
        f"B/sentence row (768 of it the float16 vector), {m.sqlite_bytes_per_article / 1024:.1f} KiB/article "
        f"on disk in all; process with model {m.base_rss_mb:.0f} MB; loaded library "
        f"{b.rss_loaded_mb:.0f} MB = {m.rss_bytes_per_passage:.0f} B/passage beyond the vectors"
    )
    print(f"  FAISS scan, one thread: {m.scan_s_per_vector * 1e9:.2f} ns per vector compared")


def check_scan_model(m: Measured, results: list[dict[str, object]]) -> None:
    for result in results:
        vectors, nlist = int(str(result["vectors"])), int(str(result["nlist"]))
        measured = result.get("cpu_ms", result["latency_ms"])
        latency = {int(k): float(v) for k, v in dict(measured).items()}  # type: ignore[call-overload]
        probe = int(str(result["byline_nprobe"]))
        predicted = 1000 * m.scan_s_per_vector * (nlist + probe * vectors / nlist)
        print(
            f"  scan model vs bench_ivf_recall ({result['label']}, nprobe {probe}): predicted "
            f"{predicted:.2f} ms, measured {latency[probe]:.2f} ms CPU (k=10)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bbc", type=Path, default=SHARED_DATA / "bbc-news")
    parser.add_argument("--library", type=Path, default=Path("/tmp/byline-eval/bbc"), help="a built BBC library")
    parser.add_argument("--ivf", type=Path, default=Path("/tmp/byline-ivf-cache/ivf-results.json"))
    parser.add_argument("--questions", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ingest-articles", type=int, default=100)
    parser.add_argument("--articles", type=int, default=1_000_000)
    parser.add_argument("--qps", type=float, default=50.0)
    parser.add_argument("--worker-cores", type=int, default=4)
    parser.add_argument("--worker-ram-gb", type=float, default=32.0)
    parser.add_argument("--utilisation", type=float, default=0.6, help="busy share a worker is sized for")
    parser.add_argument("--backfill-hours", type=float, default=24.0)
    parser.add_argument("--articles-per-day", type=float, default=20_000.0)
    args = parser.parse_args(argv)
    if not (args.library / "byline.sqlite3").is_file():
        print(f"No library at {args.library}: build one first (python -m bench.eval --cache ...).")
        return 1
    started, load_before = time.perf_counter(), os.getloadavg()[0]
    workdir = Path(tempfile.mkdtemp(prefix="byline-capacity-"))
    try:
        m = measure(args, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    recall_probe, results = recall_nprobe(args.ivf)
    print_measured(m)
    check_scan_model(m, results)
    print(
        f"  (measurements took {time.perf_counter() - started:.0f} s; load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores: the machine is shared)"
    )
    print_assumptions(args, recall_probe)
    print_growth(m, args, recall_probe)
    print_plan(m, args, recall_probe)
    return 0


def print_assumptions(args: argparse.Namespace, recall_probe: int | None) -> None:
    print("ASSUMED")
    print(
        f"  a question worker: {args.worker_cores} cores, {args.worker_ram_gb:.0f} GiB; sized to be busy "
        f"{args.utilisation:.0%} of the time (queues stay short); one question uses one core for its whole ask"
    )
    print("  the embedded backend: each question process loads its own copy of the index (as Byline does today)")
    print("  the rest of an ask (embedding, rescoring 64 + 32 candidates, quotes) does not grow with the library")
    print("  BM25 time grows in a straight line with passages (postings of common terms grow with the corpus)")
    print("  CPU time is what a question or a sentence costs a core (measured as CPU time: the machine is shared)")
    print("  embedding throughput = cores x sentences per CPU second; ingest is embedding-bound")
    if recall_probe is None:
        print("  no bench_ivf_recall results: the 'recall' rule uses Byline's nprobe")
    else:
        print(f"  nprobe for recall@10 >= 0.98 stays {recall_probe} (the most any measured size needed) as nlist grows")
    print(
        f"  backfill of {args.articles:,} articles in {args.backfill_hours:.0f} h; "
        f"then {args.articles_per_day:,.0f} new articles/day"
    )


def ask_ms(m: Measured, articles: float, rule: str, recall_probe: int | None) -> float:
    vectors, passages = articles * m.sentences_per_article, articles * m.passages_per_article
    return fixed_ms(m) + dense_ms(m, vectors, rule, recall_probe) + sparse_ms(m, passages)


def process_gib(m: Measured, articles: float) -> float:
    vectors, passages = articles * m.sentences_per_article, articles * m.passages_per_article
    return (m.base_rss_mb * 1024**2 + vectors * m.ivf_bytes_per_vector + passages * m.rss_bytes_per_passage) / GIB


def print_growth(m: Measured, args: argparse.Namespace, recall_probe: int | None) -> None:
    print("GROWTH (model; one question, one core)")
    print(
        f"  {'articles':>10} {'vectors':>11} {'nlist':>6} {'nprobe':>6} {'dense ms':>9} {'dense@0.98':>10} "
        f"{'BM25 ms':>8} {'ask ms':>7} {'RAM GiB':>8} {'disk GiB':>8} {'ingest h':>8}"
    )
    for articles in (1_713, 10_000, 100_000, 1_000_000, 10_000_000):
        vectors = articles * m.sentences_per_article
        cells = choose_cells(int(vectors))
        nprobe = byline_nprobe(cells) if cells else 0
        byline, recall = dense_ms(m, vectors, "byline", recall_probe), dense_ms(m, vectors, "recall", recall_probe)
        bm25, ask = sparse_ms(m, articles * m.passages_per_article), ask_ms(m, articles, "byline", recall_probe)
        print(
            f"  {articles:>10,} {vectors:>11,.0f} {cells:>6} {nprobe:>6} {byline:>9.2f} {recall:>10.2f} "
            f"{bm25:>8.2f} {ask:>7.1f} "
            f"{process_gib(m, articles):>8.2f} {articles * m.sqlite_bytes_per_article / GIB:>8.2f} "
            f"{articles * m.sentences_per_article / m.ingest_rate / 3600:>8.1f}"
        )
    print("  dense: Byline's nprobe (cells/12, at most 128) and the fixed nprobe for 0.98 (dense@0.98) both grow")
    print("  with sqrt(n) once capped (4*sqrt(n) cells to compare + nprobe cells of sqrt(n)/4 vectors)")


def print_plan(m: Measured, args: argparse.Namespace, recall_probe: int | None) -> None:
    articles = args.articles
    ram = process_gib(m, articles)
    print(f"PLAN for {articles:,} articles at {args.qps:g} questions/s")
    print(
        f"  one question process holds {ram:.1f} GiB ({articles * m.sentences_per_article:,.0f} vectors, "
        f"{articles * m.passages_per_article:,.0f} passages, the model)"
    )
    for rule, name in (("byline", "Byline's nprobe"), ("recall", "nprobe for recall@10 0.98")):
        seconds = ask_ms(m, articles, rule, recall_probe) / 1000
        cores = args.qps * seconds / args.utilisation
        per_worker = min(args.worker_cores, math.floor(0.9 * args.worker_ram_gb / ram))
        if per_worker < 1:
            # Sharded: each shard process holds 1/S of the index; a question visits every shard,
            # and its CPU time in all is taken as unchanged (the scans split across shards).
            base = m.base_rss_mb / 1024
            shards = math.ceil((ram - base) / (0.9 * args.worker_ram_gb - base))
            shard_ram = base + (ram - base) / shards
            per_worker = min(args.worker_cores, math.floor(0.9 * args.worker_ram_gb / shard_ram))
            workers = shards * math.ceil(cores / (per_worker * shards))
            print(
                f"  {name}: {1000 * seconds:.0f} ms/question -> {cores:.1f} cores; one copy of the index does not fit "
                f"a {args.worker_ram_gb:.0f} GiB worker: {shards} shards of {shard_ram:.1f} GiB, {per_worker} shard "
                f"process(es) per worker -> {workers} question workers (or the cluster backend)"
            )
            continue
        workers = math.ceil(cores / per_worker)
        print(
            f"  {name}: {1000 * seconds:.0f} ms/question -> {cores:.1f} cores -> {workers} question workers "
            f"({per_worker} processes each, RAM allows {math.floor(0.9 * args.worker_ram_gb / ram)})"
        )
    sentences = articles * m.sentences_per_article
    worker_rate = m.ingest_rate * args.worker_cores
    backfill = math.ceil(sentences / (worker_rate * args.backfill_hours * 3600))
    steady = math.ceil(args.articles_per_day * m.sentences_per_article / 86_400 / worker_rate)
    print(
        f"  embedding workers ({args.worker_cores} cores, {worker_rate:.0f} sentences/s each): {backfill} for the "
        f"backfill ({sentences / worker_rate / 3600:,.0f} worker-hours), {steady} for the steady feed"
    )


if __name__ == "__main__":
    raise SystemExit(main())
