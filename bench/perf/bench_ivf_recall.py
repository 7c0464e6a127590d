"""Recall@10 of the IVF index Byline builds, against exact search, on real sentence embeddings.

    .venv/bin/python -m bench.perf.bench_ivf_recall --cache /tmp/byline-ivf-cache

``retrieval/index/dense.py`` switches from exact (Flat) search to IVF at 50k vectors, with
``4 * sqrt(n)`` cells and ``nprobe = max(8, min(cells // 12, 128))``. This bench builds that very index
(``DenseIndex.build``) at each ``--sizes`` and sweeps nprobe: recall@10 against exact
inner-product search on the same vectors, the median latency of one query through
``DenseIndex.search`` (Byline's search path: one FAISS thread), the build time (train + add,
FAISS limited to 2 threads), and the smallest nprobe with recall@10 >= ``--target``.

Vectors: see ``bench/perf/scale_corpus.py``. Up to ``--real`` every vector is the embedding of real
BBC text (sentences, then two-sentence windows over articles with shuffled paragraphs); a size
beyond that is completed with ``normalize(a + b)`` pairs of the same article and labelled
"extended". A control at the first size (real sentences + pairs instead of real windows) shows
what the extension does to recall. Queries: ``--queries`` natural questions
(``bench/data/natural``) embedded by the same model. The embeddings are cached under
``--cache``; a first run embeds for at most ``--embed-minutes`` (12: ~80k texts on 2 busy
cores), a rerun with ``--embed-minutes 0`` reads them in seconds. Results also go to
``ivf-results.json`` there, which ``bench/perf/capacity.py`` reads.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import faiss
import numpy as np

from bench.paths import SHARED_DATA
from bench.perf.scale_corpus import EmbeddingCache, natural_queries, pair_means, real_pool, window_check
from retrieval.index.dense import DenseIndex

K = 10
# Scores this close to the 10th best count as ties (float32 inner products of exact copies).
TIE_TOLERANCE = 1e-5
NPROBES = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384)
BUILD_THREADS = 2


@dataclass
class SizeResult:
    label: str
    vectors: int
    real: int
    nlist: int
    byline_nprobe: int
    build_s: float
    flat_ms: float
    flat_cpu_ms: float
    recall: dict[int, float]
    latency_ms: dict[int, float]
    cpu_ms: dict[int, float]
    smallest_nprobe: int | None  # smallest nprobe with recall >= target; None if even nlist misses


def exact_tenth_scores(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(vectors)
    scores, _ = flat.search(queries, K)
    return scores[:, -1]


def exact_top(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(vectors)
    _, ids = flat.search(queries, K)
    return ids


def recall_at(index: faiss.IndexIVF, queries: np.ndarray, truth: np.ndarray, nprobe: int) -> float:
    """Recall@10 against ``truth``: the exact top-10 ids, or (a 1-d array) each query's exact
    10th-best score, for a corpus of exact copies, whose ties make ids meaningless: a returned
    vector counts if it scores as well as the 10th best (IVF's scores are exact inner products)."""
    index.nprobe = nprobe
    scores, ids = index.search(queries, K)
    if truth.ndim == 1:
        return float((scores >= truth[:, None] - TIE_TOLERANCE).sum() / (len(truth) * K))
    hits = sum(len(set(found) & set(expected)) for found, expected in zip(ids, truth, strict=True))
    return hits / truth.size


def median_latency_ms(dense: DenseIndex, queries: np.ndarray, repeats: int) -> tuple[float, float]:
    """(wall, CPU) ms: the median over ``repeats`` runs of each run's median single-query time.
    The search runs on one thread, so CPU time is the latency of an unshared core; wall time
    also holds the waits for a core when other processes share the machine."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall_times, cpu_times = [], []
        for query in queries:
            started, cpu = time.perf_counter(), time.process_time()
            dense.search(query, K)
            wall_times.append(time.perf_counter() - started)
            cpu_times.append(time.process_time() - cpu)
        walls.append(statistics.median(wall_times))
        cpus.append(statistics.median(cpu_times))
    return 1000 * statistics.median(walls), 1000 * statistics.median(cpus)


def smallest_nprobe(index: faiss.IndexIVF, queries: np.ndarray, truth: np.ndarray, target: float) -> int | None:
    """Binary search: recall never falls as nprobe grows (more cells, a superset of candidates)."""
    low, high = 1, int(index.nlist)
    if recall_at(index, queries, truth, high) < target:
        return None
    while low < high:
        middle = (low + high) // 2
        if recall_at(index, queries, truth, middle) >= target:
            high = middle
        else:
            low = middle + 1
    return low


def measure(
    label: str, vectors: np.ndarray, real: int, queries: np.ndarray, args: argparse.Namespace, ties: bool = False
) -> SizeResult:
    ids = np.arange(len(vectors), dtype=np.int64)
    faiss.omp_set_num_threads(BUILD_THREADS)
    truth = exact_top(vectors, queries) if not ties else exact_tenth_scores(vectors, queries)
    started = time.perf_counter()
    dense = DenseIndex.build(ids, vectors)
    build_s = time.perf_counter() - started
    if dense.kind != "ivf":
        raise SystemExit(f"{len(vectors)} vectors build a {dense.kind} index: choose sizes of 50,000 or more.")
    index = faiss.extract_index_ivf(dense.index)
    byline = int(index.nprobe)
    latency_queries = queries[: args.latency_queries]
    flat = DenseIndex()
    flat.add(ids, vectors)
    flat_ms, flat_cpu_ms = median_latency_ms(flat, latency_queries, args.repeats)
    del flat
    recall: dict[int, float] = {}
    latency: dict[int, float] = {}
    cpu: dict[int, float] = {}
    for nprobe in sorted({p for p in NPROBES if p <= index.nlist} | {byline}):
        faiss.omp_set_num_threads(BUILD_THREADS)
        recall[nprobe] = recall_at(index, queries, truth, nprobe)
        index.nprobe = nprobe
        latency[nprobe], cpu[nprobe] = median_latency_ms(dense, latency_queries, args.repeats)
    faiss.omp_set_num_threads(BUILD_THREADS)
    smallest = smallest_nprobe(index, queries, truth, args.target)
    if smallest is not None and smallest not in latency:
        recall[smallest] = recall_at(index, queries, truth, smallest)
        index.nprobe = smallest
        latency[smallest], cpu[smallest] = median_latency_ms(dense, latency_queries, args.repeats)
    return SizeResult(
        label,
        len(vectors),
        real,
        int(index.nlist),
        byline,
        build_s,
        flat_ms,
        flat_cpu_ms,
        recall,
        latency,
        cpu,
        smallest,
    )


def report(result: SizeResult, target: float) -> None:
    kind = "all real" if result.real == result.vectors else f"{result.real} real + {result.vectors - result.real} pairs"
    print(
        f"\n{result.label}: {result.vectors} vectors ({kind}), nlist {result.nlist}, Byline nprobe "
        f"{result.byline_nprobe}; build (train+add) {result.build_s:.1f} s; flat query p50 {result.flat_ms:.2f} ms "
        f"(CPU {result.flat_cpu_ms:.2f} ms)"
    )
    print(f"  {'nprobe':>6}  {'recall@10':>9}  {'p50 ms':>7}  {'CPU ms':>7}  {'cells %':>7}")
    for nprobe in sorted(result.recall):
        marks = [
            " Byline" if nprobe == result.byline_nprobe else "",
            " smallest" if nprobe == result.smallest_nprobe else "",
        ]
        print(
            f"  {nprobe:>6}  {result.recall[nprobe]:>9.4f}  {result.latency_ms[nprobe]:>7.2f}  "
            f"{result.cpu_ms[nprobe]:>7.2f}  "
            f"{100 * nprobe / result.nlist:>6.1f}%{''.join(marks)}"
        )
    byline = result.byline_nprobe
    if result.smallest_nprobe is None:
        print(
            f"  recall@10 >= {target} needs more than every cell; "
            f"Byline's nprobe {byline} gets {result.recall[byline]:.4f}"
        )
        return
    smallest = result.smallest_nprobe
    verdict = "enough" if result.recall[byline] >= target else "NOT enough"
    print(
        f"  smallest nprobe with recall@10 >= {target}: {smallest} ({result.recall[smallest]:.4f}, "
        f"{result.cpu_ms[smallest]:.2f} ms CPU); Byline's {byline} is {verdict} "
        f"({result.recall[byline]:.4f}, {result.cpu_ms[byline]:.2f} ms CPU, {byline / smallest:.2f}x the probes needed)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bbc", type=Path, default=SHARED_DATA / "bbc-news")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/byline-ivf-cache"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 500_000])
    parser.add_argument("--real", type=int, default=100_000, help="real embedded texts at most (the rest: pairs)")
    parser.add_argument(
        "--embed-minutes",
        type=float,
        default=12.0,
        help="new embedding stops after this many minutes (sentences, queries always embedded; cache is free)",
    )
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--latency-queries", type=int, default=100, help="queries timed one at a time")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--target", type=float, default=0.98)
    parser.add_argument(
        "--replicated", action="store_true", help="also the largest size as exact copies of the real vectors"
    )
    args = parser.parse_args(argv)
    if not args.bbc.is_dir():
        print(f"No BBC corpus at {args.bbc}: pass --bbc DIR (the folder with business/, politics/, ...).")
        return 1
    started = time.perf_counter()
    cache = EmbeddingCache(args.cache)
    pool = real_pool(args.bbc, cache, min(args.real, max(args.sizes)), budget_s=60 * args.embed_minutes)
    _, queries = natural_queries(cache, args.queries)
    mean, low, windows = window_check(pool)
    print(
        f"pool: {len(pool.vectors)} real vectors ({pool.sentences} BBC sentences + "
        f"{len(pool.vectors) - pool.sentences} "
        f"shuffled-paragraph windows) from {len(set(pool.articles.tolist()))} articles; {len(queries)} natural "
        f"questions; {cache.embedded} texts embedded this run in {cache.seconds:.0f} s"
    )
    print(
        f"extension check: cosine(normalize(a+b), embedding of 'a b') over {windows} real windows: "
        f"mean {mean:.3f}, 5th percentile {low:.3f}"
    )
    results = []
    for size in args.sizes:
        real = min(size, len(pool.vectors))
        vectors = pool.vectors[:real]
        if size > real:
            extra = pair_means(pool.vectors, pool.articles, size - real, seed=size)
            vectors = np.concatenate([vectors, extra])
        label = f"{size // 1000}k " + ("all real" if size == real else "extended")
        results.append(measure(label, vectors, real, queries, args))
        report(results[-1], args.target)
        if size == min(args.sizes) and pool.sentences < size:
            # Control: the same size from real sentences + pairs of sentences instead of real windows.
            sentences = pool.vectors[: pool.sentences]
            extra = pair_means(sentences, pool.articles[: pool.sentences], size - pool.sentences, seed=1)
            control = np.concatenate([sentences, extra])
            results.append(
                measure(f"{size // 1000}k control (real sentences + pairs)", control, pool.sentences, queries, args)
            )
            report(results[-1], args.target)
    if args.replicated:
        # The corpus replicated as the issue puts it: every real vector copied (new ids) until the
        # largest size, as re-ingesting the articles with their paragraphs shuffled would embed
        # them (a sentence's embedding does not depend on where its paragraph sits).
        size = max(args.sizes)
        copies = np.resize(pool.vectors, (size, pool.vectors.shape[1]))
        label = f"{size // 1000}k replicated ({len(pool.vectors)} real vectors copied, tie-aware recall)"
        results.append(measure(label, copies, size, queries, args, ties=True))
        report(results[-1], args.target)
    out = args.cache / "ivf-results.json"
    out.write_text(json.dumps({"target": args.target, "results": [asdict(r) for r in results]}, indent=1))
    print(f"\nresults written to {out}; total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
