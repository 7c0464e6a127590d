"""Real sentence embeddings in the hundreds of thousands, for the scale benches, cached on disk.

The BBC corpus has only ~33k sentences, and copying them would put exact duplicates in the
index (recall@10 is ill-defined when ten vectors tie). So the pool is built from DISTINCT real
texts, all embedded by Byline's model:

1. every sentence Byline itself embeds (``build_passages`` over ``paragraphs``, the ingest path);
2. replicas "with shuffled paragraphs": for replica r = 1, 2, ... each article's paragraphs are
   shuffled (seed r) and a window of two adjacent sentences slides over the shuffled article.
   A window inside a paragraph is the same in every replica and one that crosses a paragraph
   boundary is new text; every window is embedded once (texts are deduplicated). Replicas are
   added until the requested number of real texts is reached. BBC articles have ~5 paragraphs,
   so later replicas add mostly windows of the articles with many paragraphs.

Embedding is the cost (~200 sentences/s, ~110 two-sentence windows/s on 2 cores), so beyond
the real pool the benches use an extension, always labelled as such: an extra vector is
``normalize(a + b)`` of two distinct real vectors of the same article, drawn without
replacement. For mean-pooled models this is what embedding the concatenation approximates;
``window_check`` measures how close it is on the real windows, whose sentences are in the pool.
"""

from __future__ import annotations

import hashlib
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.quality.eval_natural import NATURAL_DIR, load_natural
from retrieval.index.embedder import DIMENSION, Embedder
from retrieval.index.segment import build_passages
from retrieval.reading.loader import iter_article_files, read_article_file
from retrieval.reading.text import paragraphs

SECTIONS = ("business", "entertainment", "politics", "tech")
CHUNK = 2048  # texts per cached .npy file: a killed run keeps what it embedded
CACHE_FORMAT = "1"
MAX_REPLICAS = 400


@dataclass
class Pool:
    """Unit vectors with the article each came from; ``parts`` holds, for a two-sentence
    window, the pool rows of its two sentences (-1 for a sentence)."""

    vectors: np.ndarray
    articles: np.ndarray
    parts: np.ndarray
    sentences: int  # the first ``sentences`` rows are plain sentences


def article_sentences(corpus: Path) -> list[list[list[str]]]:
    """For each article of the four BBC sections, its sentences grouped by paragraph."""
    articles = []
    for path in iter_article_files([corpus / section for section in SECTIONS]):
        draft = read_article_file(path)
        by_paragraph: dict[int, list[str]] = {}
        for passage in build_passages(draft.text, paragraphs(draft.text)):
            for sentence in passage.sentences:
                by_paragraph.setdefault(sentence.paragraph, []).append(draft.text[sentence.start : sentence.end])
        articles.append([by_paragraph[number] for number in sorted(by_paragraph)])
    return articles


def shuffled_windows(articles: list[list[list[str]]], wanted: int) -> list[tuple[int, str, str]]:
    """Up to ``wanted`` distinct (article, sentence, next sentence) windows, replica by replica."""
    seen: set[tuple[str, str]] = set()
    windows: list[tuple[int, str, str]] = []
    for replica in range(1, MAX_REPLICAS + 1):
        rng = random.Random(replica)
        for number, article in enumerate(articles):
            order = article[:]
            rng.shuffle(order)
            flat = [sentence for paragraph in order for sentence in paragraph]
            for first, second in zip(flat, flat[1:], strict=False):
                if (first, second) not in seen and first != second:
                    seen.add((first, second))
                    windows.append((number, first, second))
                    if len(windows) >= wanted:
                        return windows
    return windows


class EmbeddingCache:
    """``Embedder.encode`` in chunks, each chunk saved as ``.npy`` under a key of its texts."""

    def __init__(self, directory: Path, embedder: Embedder | None = None) -> None:
        self.directory = directory
        self.embedder = embedder or Embedder(batch_size=64)
        self.embedded = 0
        self.seconds = 0.0
        directory.mkdir(parents=True, exist_ok=True)

    def encode(self, texts: list[str], label: str, budget_s: float | None = None) -> np.ndarray:
        """Vectors of ``texts``; with ``budget_s``, of a prefix only, once this cache has spent
        that many seconds embedding (cached chunks cost nothing, so a rerun goes further)."""
        parts = []
        for offset in range(0, len(texts), CHUNK):
            chunk = texts[offset : offset + CHUNK]
            key = hashlib.sha256("\x00".join([CACHE_FORMAT, *chunk]).encode()).hexdigest()[:24]
            path = self.directory / f"{label}-{key}.npy"
            if path.is_file():
                parts.append(np.load(path))
                continue
            if budget_s is not None and self.seconds >= budget_s:
                print(f"  embedding budget spent: {offset} of {len(texts)} {label} embedded", file=sys.stderr)
                break
            started = time.perf_counter()
            vectors = self.embedder.encode(chunk)
            self.seconds += time.perf_counter() - started
            self.embedded += len(chunk)
            np.save(path.with_suffix(".tmp.npy"), vectors)
            path.with_suffix(".tmp.npy").replace(path)  # never half a file under the real name
            parts.append(vectors)
            done = offset + len(chunk)
            print(
                f"  embedded {label} {done}/{len(texts)} ({self.embedded / self.seconds:.0f} texts/s this run)",
                file=sys.stderr,
                flush=True,
            )
        return np.concatenate(parts) if parts else np.zeros((0, DIMENSION), dtype=np.float32)


def real_pool(corpus: Path, cache: EmbeddingCache, total: int, budget_s: float | None = None) -> Pool:
    """Every BBC sentence, then shuffled-paragraph windows, ``total`` real vectors in all (fewer
    if the replicas run out of new windows, or the windows' embedding runs past ``budget_s``)."""
    articles = article_sentences(corpus)
    texts = [sentence for article in articles for paragraph in article for sentence in paragraph]
    owners = [number for number, article in enumerate(articles) for paragraph in article for _ in paragraph]
    sentence_vectors = cache.encode(texts, "sentences")
    windows = shuffled_windows(articles, max(0, total - len(texts)))
    window_vectors = cache.encode([f"{first} {second}" for _, first, second in windows], "windows", budget_s)
    windows = windows[: len(window_vectors)]
    # The rows of a window's two sentences (a sentence text can recur across articles: keep
    # the one of the same article).
    row_of = {(owner, text): row for row, (owner, text) in enumerate(zip(owners, texts, strict=True))}
    parts = np.full((len(texts) + len(windows), 2), -1, dtype=np.int64)
    for index, (number, first, second) in enumerate(windows):
        parts[len(texts) + index] = (row_of[(number, first)], row_of[(number, second)])
    return Pool(
        vectors=np.concatenate([sentence_vectors, window_vectors]),
        articles=np.asarray(owners + [number for number, _, _ in windows], dtype=np.int64),
        parts=parts,
        sentences=len(texts),
    )


def pair_means(vectors: np.ndarray, articles: np.ndarray, count: int, seed: int) -> np.ndarray:
    """``count`` vectors ``normalize(a + b)``, a and b distinct rows of the same article, each
    unordered pair at most once. Rows are drawn uniformly, so an article contributes in
    proportion to its share of the pool."""
    order = np.argsort(articles, kind="stable")
    sorted_articles = articles[order]
    starts = np.searchsorted(sorted_articles, sorted_articles, side="left")
    sizes = np.searchsorted(sorted_articles, sorted_articles, side="right") - starts
    eligible = np.flatnonzero(sizes > 1)
    # Each article's row counted once (at its first row): the unordered pairs there are.
    available = int(np.sum((sizes * (sizes - 1) // 2)[starts == np.arange(len(starts))]))
    if count > available:
        raise ValueError(f"{count} pairs wanted, the pool holds {available}: embed more real text (--real)")
    rng = np.random.default_rng(seed)
    chosen = np.zeros((0, 2), dtype=np.int64)
    while len(chosen) < count:
        first = rng.choice(eligible, size=2 * (count - len(chosen)) + 1024)
        offset = rng.integers(0, sizes[first] - 1)
        second = starts[first] + offset
        second = second + (second >= first)  # any other row of the article
        pairs = np.sort(np.stack([first, second], axis=1), axis=1)
        chosen = np.unique(np.concatenate([chosen, pairs]), axis=0)
    picked = chosen[rng.permutation(len(chosen))[:count]]
    summed = vectors[order[picked[:, 0]]] + vectors[order[picked[:, 1]]]
    return np.ascontiguousarray(summed / np.linalg.norm(summed, axis=1, keepdims=True), dtype=np.float32)


def window_check(pool: Pool) -> tuple[float, float, int]:
    """(mean, 5th percentile) cosine between each real window's embedding and the
    ``normalize(a + b)`` of its two sentences' embeddings, and the number of windows."""
    rows = np.flatnonzero(pool.parts[:, 0] >= 0)
    if not len(rows):
        return float("nan"), float("nan"), 0
    summed = pool.vectors[pool.parts[rows, 0]] + pool.vectors[pool.parts[rows, 1]]
    summed /= np.linalg.norm(summed, axis=1, keepdims=True)
    cosines = np.einsum("ij,ij->i", summed, pool.vectors[rows])
    return float(cosines.mean()), float(np.percentile(cosines, 5)), len(rows)


def natural_queries(cache: EmbeddingCache, count: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """``count`` distinct natural questions (all kinds, dev and test) and their vectors."""
    questions = sorted({q.text for path in sorted(NATURAL_DIR.glob("*.tsv")) for q in load_natural(path)})
    chosen = random.Random(seed).sample(questions, min(count, len(questions)))
    return chosen, cache.encode(chosen, "queries")
