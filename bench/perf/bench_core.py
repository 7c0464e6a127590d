"""Core benchmark: warm `ask` latency at ~100k passages, ingest throughput, memory per passage.

    .venv/bin/python bench/perf/bench_core.py --bbc ../shared/data/bbc-news --passages 100000

* Ingest throughput: a sample of BBC articles is ingested into a fresh data directory, and the
  raw ``SentenceTransformer.encode`` rate on exactly the sentences that ingest embeds is
  measured in the same run (encode, ingest, encode; the ratio uses the median encode time).
* Scale: the whole BBC corpus is ingested for real, then replicated with shuffled paragraphs
  ("copy k" of each article) until the store holds the requested number of passages. Replica
  sentences are the same texts as the originals, so their embeddings are looked up instead of
  recomputed (the model would spend ~10 minutes re-deriving identical vectors); everything else
  (segmenting, quotes, SQLite, FAISS, BM25) runs the real ingest path.
* Latency: questions are asked from the warm process, each several times; p50/p95 include the
  query embedding.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from retrieval.index.embedder import Embedder  # noqa: E402
from retrieval.index.segment import build_passages  # noqa: E402
from retrieval.library import Library  # noqa: E402
from retrieval.models import ArticleDraft  # noqa: E402
from retrieval.reading.loader import iter_article_files, read_article_file  # noqa: E402
from retrieval.reading.text import paragraphs  # noqa: E402

QUESTIONS = [
    "what did Tony Blair say about the election?",
    "What did Gordon Brown say about the economy?",
    "how much did Yukos pay in back taxes?",
    "who won the best film award at the Oscars?",
    "what did the Bank of England do with interest rates?",
    "which mobile phone company reported record profits?",
    "what did Michael Howard say about immigration?",
    "what is the price of oil?",
    "who said the plans were desperate?",
    "how many people downloaded music illegally?",
    "what happened to the dollar against the euro?",
    "what did Microsoft announce about security?",
]


class CachedEmbedder(Embedder):
    """The real model, plus a cache so replicated (identical) sentences are not re-encoded."""

    def __init__(self) -> None:
        super().__init__()
        self.cache: dict[str, np.ndarray] = {}
        self.record = True

    def encode(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            for text, vector in zip(missing, super().encode(missing), strict=True):
                self.cache[text] = vector
        return np.stack([self.cache[t] for t in texts]) if texts else super().encode([])


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def sentence_texts(drafts: list[ArticleDraft]) -> list[str]:
    texts: list[str] = []
    for draft in drafts:
        for passage in build_passages(draft.text, paragraphs(draft.text)):
            texts.extend(draft.text[s.start : s.end] for s in passage.sentences)
    return texts


def bench_ingest(drafts: list[ArticleDraft], workdir: Path) -> dict[str, float]:
    embedder = Embedder()
    texts = sentence_texts(drafts)
    embedder.encode(texts[:64])  # warm the model
    encode_times: list[float] = []
    ingest_times: list[float] = []
    # Interleaved (encode, ingest, encode, ingest, encode) so that drift in the machine's speed
    # affects both sides alike; each ingest goes into a fresh data directory.
    for round_number in range(3):
        started = time.perf_counter()
        embedder.encode(texts)
        encode_times.append(time.perf_counter() - started)
        if round_number < 2:
            library = Library.open(workdir / f"ingest{round_number}", embedder)
            started = time.perf_counter()
            library.add_drafts(drafts)
            ingest_times.append(time.perf_counter() - started)
            library.close()
    encode_rate = len(texts) / statistics.median(encode_times)
    ingest_rate = len(texts) / statistics.median(ingest_times)
    return {
        "articles": len(drafts),
        "sentences": len(texts),
        "encode_rate": encode_rate,
        "ingest_rate": ingest_rate,
        "ratio": ingest_rate / encode_rate,
    }


def replicate(drafts: list[ArticleDraft], copy: int, rng: random.Random) -> list[ArticleDraft]:
    replicas = []
    for draft in drafts:
        parts = [draft.text[p.start : p.end] for p in paragraphs(draft.text)]
        rng.shuffle(parts)
        replicas.append(
            ArticleDraft(key=f"{draft.key}#copy{copy}", title=f"{draft.title} (copy {copy})", text="\n\n".join(parts))
        )
    return replicas


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def report_ingest(ingest: dict[str, float]) -> None:
    print(
        f"ingest: {ingest['articles']:.0f} articles, {ingest['sentences']:.0f} sentences: "
        f"raw encode {ingest['encode_rate']:.0f} sentences/s, ingest {ingest['ingest_rate']:.0f} sentences/s "
        f"= {ingest['ratio']:.0%} of raw encode"
    )


def build_scaled(drafts: list[ArticleDraft], scale_dir: Path, passages: int) -> None:
    """The BBC corpus for real, then shuffled replicas until ``passages`` are stored."""
    embedder = CachedEmbedder()
    library = Library.open(scale_dir, embedder)
    started = time.perf_counter()
    library.add_drafts(drafts)
    print(
        f"scale: BBC corpus ingested for real in {time.perf_counter() - started:.0f} s "
        f"({library.sparse.count()} passages)"
    )
    rng = random.Random(7)
    copy = 1
    while library.sparse.count() < passages:
        library.add_drafts(replicate(drafts, copy, rng))
        copy += 1
    library.close()


def measure_asks(scale_dir: Path, repeats: int) -> None:
    """Reopen as a warm process would (index files from disk, model warm) and time asks."""
    embedder = Embedder()
    embedder.encode(["warm up the model"])
    rss_open = rss_mb()
    library = Library.open(scale_dir, embedder)
    rss_loaded = rss_mb()
    counts = library.store.counts()
    data_bytes = sum(f.stat().st_size for f in scale_dir.iterdir() if f.is_file())
    for question in QUESTIONS:
        library.ask(question)
    latencies: list[float] = []
    by_question: dict[str, list[float]] = {q: [] for q in QUESTIONS}
    for _ in range(repeats):
        for question in QUESTIONS:
            started = time.perf_counter()
            library.ask(question)
            elapsed = (time.perf_counter() - started) * 1000
            latencies.append(elapsed)
            by_question[question].append(elapsed)
    embed_times = []
    for question in QUESTIONS:
        started = time.perf_counter()
        embedder.encode_one(question)
        embed_times.append((time.perf_counter() - started) * 1000)
    print(
        f"scale: {counts['passages']} passages, {counts['sentences']} sentences, {counts['quotes']} quotes, "
        f"index {library.dense.kind}"
    )
    print(
        f"ask: p50 {statistics.median(latencies):.1f} ms, p95 {percentile(latencies, 0.95):.1f} ms over "
        f"{len(latencies)} asks (query embedding alone, {embedder.query_encoder_kind}: "
        f"p50 {statistics.median(embed_times):.1f} ms)"
    )
    slowest = max(by_question, key=lambda q: statistics.median(by_question[q]))
    print(f"ask: slowest question p50 {statistics.median(by_question[slowest]):.1f} ms: {slowest!r}")
    print(
        f"memory: {(rss_loaded - rss_open) * 1024 / counts['passages']:.1f} KB RSS per passage once loaded "
        f"({rss_loaded:.0f} MB process), {data_bytes / counts['passages'] / 1024:.1f} KB on disk per passage"
    )
    library.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--bbc", type=Path, default=Path(__file__).resolve().parents[3] / "shared" / "data" / "bbc-news"
    )
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--ingest-sample", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--keep", type=Path, help="build the scaled data directory here and keep it; reuse it if it exists"
    )
    parser.add_argument("--skip-ingest", action="store_true", help="skip the ingest-throughput measurement")
    args = parser.parse_args()
    if not args.bbc.is_dir():
        print(f"skipped: no BBC corpus at {args.bbc}")
        return 0
    drafts = [read_article_file(path) for path in iter_article_files([args.bbc])]
    workdir = Path(tempfile.mkdtemp(prefix="byline-bench-"))
    try:
        if not args.skip_ingest:
            sample = random.Random(1).sample(drafts, min(args.ingest_sample, len(drafts)))
            report_ingest(bench_ingest(sample, workdir))
        scale_dir = args.keep or workdir / "scale"
        if not (scale_dir / "byline.sqlite3").exists():
            build_scaled(drafts, scale_dir, args.passages)
        measure_asks(scale_dir, args.repeats)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
