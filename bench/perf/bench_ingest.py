"""Ingest time: Byline against a plain LangChain-style script, on the same articles, in one run.

    .venv/bin/python -m bench.perf.bench_ingest ../shared/data/bbc-news [--sections ...]

The script cuts each article into ~800-character chunks (``eval_natural.chunk_text``), embeds
them with the same model and batch size, and adds them to a flat FAISS index: what a LangChain
``RecursiveCharacterTextSplitter`` + ``FAISS.from_documents`` pipeline does, without LangChain.
Byline ingests the same files into a fresh library (sentences, passages, quotes and their
speakers, BM25, FAISS, SQLite). The model is loaded before either clock starts. Byline's time is
split into its stages (embedding and the rest in the calling thread; reading quotes and their
speakers, in a thread of its own beside them), timed in the same run.
Without the corpus it says so and exits 0. Run it on a quiet machine: it is CPU-bound.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import faiss
import numpy as np

import retrieval.library as library_module
from bench.quality.eval_natural import chunk_text
from retrieval.index.embedder import Embedder
from retrieval.library import Library

SECTIONS = ("business", "entertainment", "politics", "tech")  # never sport: it is the held-out news


class StageClock:
    """Seconds Byline's ingest spends reading quotes and embedding (the two stages that cost),
    timed by wrapping the two calls for this run only."""

    def __init__(self, library: Library) -> None:
        self.quotes = self.embedding = 0.0
        read, encode = library_module._quote_rows, library.embedder.encode

        def timed_read(*args, **kwargs):  # type: ignore[no-untyped-def]
            started = time.perf_counter()
            try:
                return read(*args, **kwargs)
            finally:
                self.quotes += time.perf_counter() - started

        def timed_encode(*args, **kwargs):  # type: ignore[no-untyped-def]
            started = time.perf_counter()
            try:
                return encode(*args, **kwargs)
            finally:
                self.embedding += time.perf_counter() - started

        library_module._quote_rows = timed_read  # type: ignore[assignment]
        library.embedder.encode = timed_encode  # type: ignore[method-assign]
        self._restore = lambda: setattr(library_module, "_quote_rows", read)

    def summary(self, total: float) -> str:
        """The model's calls and the rest of the calling thread add up to the total; the reading
        runs in its own thread beside them (``Library.add_drafts``), so it is reported apart."""
        self._restore()
        rest = total - self.embedding
        return (
            f"embedding {self.embedding:.1f} s and the rest {rest:.1f} s in the calling thread; "
            f"beside them, reading quotes and speakers {self.quotes:.1f} s in the reading thread"
        )


def plain_script(files: list[Path], embedder: Embedder) -> tuple[float, int]:
    started = time.perf_counter()
    chunks = [chunk for path in files for chunk in chunk_text(path.read_text(encoding="utf-8", errors="replace"))]
    vectors = embedder.encode(chunks)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.ascontiguousarray(vectors))
    return time.perf_counter() - started, len(chunks)


def byline(files: list[Path], embedder: Embedder, folder: Path) -> tuple[float, int, StageClock]:
    library = Library.open(folder, embedder)
    clock = StageClock(library)
    try:
        started = time.perf_counter()
        report = library.ingest(files)
        return time.perf_counter() - started, len(report.article_ids), clock
    finally:
        library.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bbc", type=Path, help="the bbc-news folder")
    parser.add_argument("--sections", nargs="+", default=list(SECTIONS))
    args = parser.parse_args(argv)
    if "sport" in args.sections:
        parser.error("sport is the held-out news: leave it out")
    files = sorted(path for section in args.sections for path in (args.bbc / section).glob("*.txt"))
    if not files:
        print(f"Skipped: no articles under {args.bbc} ({', '.join(args.sections)}).")
        return 0
    embedder = Embedder()
    embedder.encode(["load the model before the clocks start"])
    plain_s, chunks = plain_script(files, embedder)
    print(f"plain script: {plain_s:.1f} s ({len(files)} files, {chunks} chunks of ~800 characters)")
    with tempfile.TemporaryDirectory() as scratch:
        byline_s, articles, clock = byline(files, embedder, Path(scratch) / "data")
    print(f"Byline:       {byline_s:.1f} s ({articles} articles stored)")
    print(f"  of which: {clock.summary(byline_s)}")
    print(f"ratio Byline / plain: {byline_s / plain_s:.2f} (target: at most 1.00)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
