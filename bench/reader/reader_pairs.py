"""Labelled (question, candidate) pairs for the reader, built from the blind training questions.

    .venv/bin/python -m bench.reader.reader_pairs --data ../shared/data --library /tmp/byline-reader/bbc \\
        --out /tmp/byline-reader/pairs.jsonl

The questions are ``bench/data/reader/written_*.jsonl`` (issue 34): each names its article and
gives the verbatim answer span. The four BBC sections (never sport) are ingested once into
``--library`` and reused. For every question the candidates are what Byline's own retrieval
proposes, each in the context the reader sees at answer time (``reader_input.candidate_text``):

- the right article's sentences, the closest to the question first (hard negatives: same
  story, wrong sentence), and the sentence(s) holding the answer span (the positives);
- the best sentences of the other articles the hybrid ranking finds (close stories);
- for a speaker question, the same speaker's quotes in other articles.

A candidate is labelled 1 when its sentence holds the answer span verbatim (or most of a span
that runs over two sentences), else 0; ``absent`` and ``detail_absent`` questions give only
negatives. Nothing here is written by hand: the labels follow from the spans.

Split, by article:

- an article a natural part asks about (``bench/data/natural/*.tsv``) is in ``fold0`` or
  ``fold1`` (a hash of its path, ``fold_of``): the reader is trained twice, once without each
  fold, and every natural figure is the score of the model that never saw that question's
  article (two article-grouped folds: the older parts and the final parts alike);
- an article of the speaker timelines (every ``quote_timeline*`` set) or ``speaker_questions*.tsv``
  is ``heldout``, even where a natural part asks about it: never trained on (a pair-level check
  of generalisation);
- of the rest (quote-check articles included: the quote check never reads with the reader), a
  seeded ~15% form ``dev`` (calibration and threshold), the others ``train``.

The pairs go to ``--out`` (not the repository).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.paths import DATA, PROJECT
from retrieval.answering.reader_input import candidate_text, neighbours
from retrieval.library import Library
from retrieval.models import Sentence
from retrieval.ranking import TUNING, _rank_passages, _score_sentences
from retrieval.reading.text import search_tokens, without_accents

SECTIONS = ("business", "entertainment", "politics", "tech")  # never sport: Byline is measured there
_ARTICLE = re.compile(r"(?:business|entertainment|politics|tech)/\d{3}\.txt")
DEV_SHARE = 0.15


FOLDS = 2


def _articles_in(files: list[Path]) -> set[str]:
    return {match for path in files if path.is_file() for match in _ARTICLE.findall(path.read_text())}


def natural_articles() -> set[str]:
    """The BBC articles the natural parts ask about (``section/NNN.txt``): split into folds."""
    return _articles_in(sorted((DATA / "natural").glob("*.tsv")))


def heldout_articles() -> set[str]:
    """The articles of the other evaluation sets that may read with the reader: never trained on."""
    # Every timeline set (quote_timeline and its blind parts): the timeline's topic judgement may
    # read with the reader one day, and its held-out pairs must then be unseen.
    timelines = sorted(path for folder in sorted(DATA.glob("quote_timeline*")) for path in folder.glob("*"))
    return _articles_in([*sorted(DATA.glob("speaker_questions*.tsv")), *timelines])


def fold_of(key: str) -> int:
    """The fold of a natural article (or, for a question with no article, of its text)."""
    return int(hashlib.sha1(f"fold:{key}".encode()).hexdigest(), 16) % FOLDS


def split_of(article: str, natural: set[str], heldout: set[str]) -> str:
    """``heldout``, ``fold0``/``fold1`` for a natural article, else ``dev`` or ``train``."""
    if article in heldout:
        return "heldout"
    if article in natural:
        return f"fold{fold_of(article)}"
    share = int(hashlib.sha1(f"reader:{article}".encode()).hexdigest(), 16) % 1000 / 1000
    return "dev" if share < DEV_SHARE else "train"


@dataclass(frozen=True)
class Written:
    article: str
    kind: str
    question: str
    answer: str
    speaker: str


def load_written(paths: list[Path]) -> list[Written]:
    found = []
    for path in paths:
        for line in path.read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            if "header" in row or not row.get("question"):
                continue
            found.append(
                Written(row["article"], row["kind"], row["question"], row.get("answer", ""), row.get("speaker", ""))
            )
    return found


def _folded(text: str) -> str:
    return " ".join(
        without_accents(text).replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"').split()
    ).lower()


class Articles:
    """The stored articles by corpus path, their sentences in order, and who each sentence quotes."""

    def __init__(self, library: Library, corpus: Path) -> None:
        self.library = library
        self.by_path: dict[str, int] = {}
        by_title: dict[str, int] = {}
        for article_id in library.store.article_ids().tolist():
            article = library.store.article(article_id)
            if article is None:
                continue
            by_title.setdefault(article.title.strip(), article_id)
            path = Path(article.key)
            if path.parent.name in SECTIONS:
                self.by_path[f"{path.parent.name}/{path.name}"] = article_id
        # A near-duplicate is stored once: its twin answers for it (same headline).
        for section in SECTIONS:
            for path in sorted((corpus / section).glob("*.txt")):
                rel = f"{section}/{path.name}"
                if rel not in self.by_path:
                    title = path.read_text(errors="replace").split("\n", 1)[0].strip()
                    if title in by_title:
                        self.by_path[rel] = by_title[title]
        self._cache: dict[int, tuple[str, str, list[Sentence], list[str]]] = {}

    def get(self, article_id: int) -> tuple[str, str, list[Sentence], list[str]]:
        """(title, text, sentences in order, each sentence's speaker or "")."""
        if article_id not in self._cache:
            article = self.library.store.article(article_id, with_text=True)
            assert article is not None
            sentences = sorted(self.library.store.sentences_of_articles([article_id]), key=lambda s: s.start)
            quotes = [q for q in self.library.store.quotes_of_articles([article_id]) if q.speaker]
            speakers = [next((q.speaker for q in quotes if q.start < s.end and s.start < q.end), "") for s in sentences]
            if len(self._cache) > 4000:
                self._cache.clear()
            self._cache[article_id] = (article.title, article.text, sentences, speakers)
        return self._cache[article_id]

    def candidate(self, article_id: int, index: int) -> str:
        title, _, sentences, speakers = self.get(article_id)
        before, after = neighbours(sentences, index)
        return candidate_text(sentences[index].text, speakers[index], title, before, after)


def answer_range(text: str, answer: str) -> tuple[int, int] | None:
    """Where the answer span lies in the stored text (exactly, else ignoring spacing and case)."""
    at = text.find(answer)
    if at >= 0:
        return at, at + len(answer)
    words = [re.escape(w) for w in answer.split()]
    if not words:
        return None
    match = re.search(r"\s+".join(words), text, flags=re.IGNORECASE)
    return (match.start(), match.end()) if match else None


def holds(sentence: Sentence, span: tuple[int, int], answer: str) -> bool:
    """Whether the sentence holds the answer: the span inside it, or (a span over two
    sentences) at least half of the span or of the sentence; or the words elsewhere verbatim."""
    start, end = span
    overlap = min(end, sentence.end) - max(start, sentence.start)
    if overlap <= 0:
        return False
    return overlap >= 0.5 * min(end - start, sentence.end - sentence.start)


def pairs_for(
    articles: Articles,
    q: Written,
    vector: np.ndarray,
    rng: random.Random,
    own_negatives: int,
    close_negatives: int,
) -> tuple[list[tuple[str, int]], str]:
    """The (candidate text, label) pairs of one question, and why none were made (or "")."""
    library = articles.library
    article_id = articles.by_path.get(q.article)
    if article_id is None:
        return [], "article not stored"
    title, text, sentences, speakers = articles.get(article_id)
    if not sentences:
        return [], "no sentences"
    answerable = q.kind in ("speaker", "who_said", "fact")
    answer = _folded(q.answer) if answerable else ""
    positives: set[int] = set()
    if answerable:
        span = answer_range(text, q.answer)
        if span is None:
            return [], "answer not in the stored text"
        positives = {i for i, s in enumerate(sentences) if holds(s, span, q.answer)}
        if not positives:
            return [], "answer in no sentence"
    pairs: list[tuple[str, int]] = [(articles.candidate(article_id, i), 1) for i in sorted(positives)]
    # The right article's other sentences, closest to the question first, and one at random.
    with library.lock:
        own_vectors = library.dense.vectors([s.id for s in sentences])
    order = np.argsort(-(own_vectors @ vector)).tolist()
    rest = [i for i in order if i not in positives]
    chosen = rest[:own_negatives]
    if len(rest) > own_negatives:
        chosen.append(rng.choice(rest[own_negatives:]))
    pairs += [(articles.candidate(article_id, i), 0) for i in chosen]
    # The best sentences of close articles, as the hybrid ranking proposes them.
    tokens = search_tokens(q.question)
    ranked = _rank_passages(library, vector, tokens, TUNING)
    scored, _ = _score_sentences(library, ranked, vector, tokens, TUNING, q.question)
    taken = 0
    seen_articles: Counter[int] = Counter()
    for item in scored:
        s = item.sentence
        if s.article_id == article_id or seen_articles[s.article_id] >= 2:
            continue
        seen_articles[s.article_id] += 1
        _, _, other_sentences, _ = articles.get(s.article_id)
        index = next((i for i, o in enumerate(other_sentences) if o.id == s.id), None)
        if index is None:
            continue
        # The same words in another story (a follow-up repeating a quote) answer too.
        label = int(bool(answer) and answer in _folded(s.text))
        pairs.append((articles.candidate(s.article_id, index), label))
        taken += 1
        if taken >= close_negatives:
            break
    if q.kind == "speaker" and q.speaker:
        # The same speaker's words in other stories: right person, wrong topic.
        quotes = [quote for quote in library.store.quotes_by_speakers([q.speaker]) if quote.article_id != article_id]
        rng.shuffle(quotes)
        for quote in quotes[:2]:
            _, _, other_sentences, _ = articles.get(quote.article_id)
            index = next((i for i, o in enumerate(other_sentences) if o.start <= quote.start < o.end), None)
            if index is not None:
                label = int(bool(answer) and answer in _folded(other_sentences[index].text))
                pairs.append((articles.candidate(quote.article_id, index), label))
    return pairs, ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=PROJECT.parent / "shared" / "data")
    parser.add_argument("--library", type=Path, default=Path("/tmp/byline-reader/bbc"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/byline-reader/pairs.jsonl"))
    parser.add_argument("--own-negatives", type=int, default=5, help="closest other sentences of the right article")
    parser.add_argument("--close-negatives", type=int, default=4, help="best sentences of other articles")
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args(argv)
    corpus = args.data / "bbc-news"
    if not corpus.is_dir():
        print(f"No BBC corpus at {corpus}.", file=sys.stderr)
        return 2
    library = Library.open(args.library)
    if library.store.article_count() == 0:
        print("Ingesting the four BBC sections once (a few minutes); later runs reuse it.", file=sys.stderr)
        library.ingest([corpus / section for section in SECTIONS])
    articles = Articles(library, corpus)
    natural, heldout = natural_articles(), heldout_articles()
    written = load_written(sorted((DATA / "reader").glob("written_*.jsonl")))
    rng = random.Random(args.seed)
    questions = written
    started = time.perf_counter()
    vectors = library.embedder.encode([q.question for q in questions])
    skipped: Counter[str] = Counter()
    counts: Counter[tuple[str, int]] = Counter()
    asked: Counter[str] = Counter()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w") as out:
        header = {
            "header": (
                f"reader pairs from {len(written)} written questions (bench/data/reader), made by "
                "bench/reader/reader_pairs.py; candidates from Byline's own retrieval, labelled from the verbatim "
                f"answer spans; the {len(natural)} articles of natural/*.tsv are split into fold0/fold1 by a hash "
                f"of the path (the reader is trained without each fold in turn); {len(heldout)} articles of "
                "speaker_questions* and quote_timeline* are 'heldout' (never trained on); dev is ~15% of the other "
                "articles by a hash of the path."
            )
        }
        out.write(json.dumps(header) + "\n")
        for n, (q, vector) in enumerate(zip(questions, vectors, strict=True)):
            pairs, why = pairs_for(articles, q, vector, rng, args.own_negatives, args.close_negatives)
            if why:
                skipped[why] += 1
                continue
            split = split_of(q.article, natural, heldout)
            asked[split] += 1
            qid = hashlib.sha1(f"{q.article}|{q.question}".encode()).hexdigest()[:12]
            for candidate, label in pairs:
                counts[(split, label)] += 1
                row = {"split": split, "qid": qid, "article": q.article, "kind": q.kind, "question": q.question}
                out.write(json.dumps({**row, "candidate": candidate, "label": label}) + "\n")
            if n % 500 == 0:
                print(f"{n}/{len(questions)} questions, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    library.close()
    print(f"Questions: {len(written)} written; {len(natural)} natural articles in {FOLDS} folds.")
    for split in ("train", "dev", *(f"fold{k}" for k in range(FOLDS)), "heldout"):
        print(
            f"  {split:8} {asked[split]:6} questions, {counts[(split, 1)]:6} positive, "
            f"{counts[(split, 0)]:6} negative pairs"
        )
    print(f"  skipped: {dict(skipped)}; {time.perf_counter() - started:.0f} s; pairs in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
