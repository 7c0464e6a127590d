"""Questions that look like users, over the whole BBC corpus: the figures that matter most.

Each question file under ``bench/data/natural/`` was written blind (see its header): a writer
read one article and asked in their own words. Rows are ``kind, article, question, expected,
speaker``. A question is scored by kind:

- ``speaker`` ("what did X say about Y"): answered, the expected words in a cited span, and a
  span attributed to the expected speaker;
- ``fact``: answered, the expected words in a cited span;
- ``who_said``: answered, the expected words in a span, and the speaker named (as the span's
  speaker or in its text);
- ``absent``: abstained;
- ``detail_absent`` (the person is in the library, the detail is not): abstained, or answered
  with a caveat that says it is not about what was asked (``Answer.message``).

The split is by article (a hash of its path; of the file and line for ``absent`` rows), so that
tuning on ``dev`` never sees a ``test`` article. Two baselines run on the same questions: the
dense top sentence (no abstention) and a LangChain-style retriever (800-character chunks, the
top chunk as the answer, no abstention).
"""

from __future__ import annotations

import csv
import hashlib
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.paths import DATA
from retrieval.answering import TUNING, Tuning, answer_question
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from retrieval.models import Answer
from retrieval.reading.text import without_accents

KINDS = ("speaker", "fact", "who_said", "absent", "detail_absent")
ANSWERABLE = ("speaker", "fact", "who_said")


@dataclass(frozen=True)
class NaturalQuestion:
    kind: str
    article: str  # relative to the corpus folder, e.g. "business/182.txt"; "" for absent
    text: str
    expected: str
    speaker: str
    part: str  # "dev" or "test" (or the file's own part name, e.g. "final")


def _part(path: Path, line: int, article: str) -> str:
    key = article or f"{path.name}:{line}"
    return "dev" if int(hashlib.sha1(key.encode()).hexdigest(), 16) % 2 == 0 else "test"


def load_natural(path: Path, split: bool = True) -> list[NaturalQuestion]:
    """The questions of one file; ``split`` assigns dev/test by article, else the file's stem."""
    lines = [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    questions = []
    for number, row in enumerate(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)):
        kind = (row.get("kind") or "").strip()
        if kind not in KINDS or not (row.get("question") or "").strip():
            continue
        article = (row.get("article") or "").strip()
        part = _part(path, number, article) if split else path.stem
        questions.append(
            NaturalQuestion(
                kind,
                article,
                row["question"].strip(),
                (row.get("expected") or "").strip(),
                (row.get("speaker") or "").strip(),
                part,
            )
        )
    return questions


NATURAL_DIR = DATA / "natural"


def dev_questions(limit: int) -> list[NaturalQuestion]:
    """The first ``limit`` dev questions of all the natural files: the question mix of the
    speed benches (``bench_ask_latency``, ``bench_related``)."""
    # Never the blind final parts: a bench must not run Byline on a part before its one scoring.
    files = [path for path in sorted(NATURAL_DIR.glob("*.tsv")) if not path.stem.startswith("final")]
    natural = [q for path in files for q in load_natural(path)]
    return [q for q in natural if q.part == "dev"][:limit]


def open_warm_library(path: Path) -> Library | None:
    """A built library, opened and warmed as ``serve`` does it; None (with a message) if absent."""
    if not path.is_dir():
        print(f"No library at {path}: build one first (python -m bench.eval --cache ...).")
        return None
    library = Library.open(path)
    library.warm_up()
    return library


def _folded(text: str) -> str:
    return without_accents(text).replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"').lower()


def speaker_matches(expected: str, got: str) -> bool:
    """The same person: the surnames agree ("Gordon Brown" and "Brown", accents ignored)."""
    if not expected or not got:
        return False
    want, have = _folded(expected).split(), _folded(got).split()
    return bool(want and have) and want[-1].removesuffix("'s") == have[-1].removesuffix("'s")


def _holds(text: str, expected: str) -> bool:
    # A duplicate of the article may write "flat fee" where the writer's copy had "flat-fee".
    return _folded(expected).replace("-", " ") in _folded(text).replace("-", " ")


def judge(question: NaturalQuestion, answer: Answer) -> bool:
    """Whether Byline's answer is right for this question (see the module docstring)."""
    if question.kind == "absent":
        return not answer.answered
    if question.kind == "detail_absent":
        return not answer.answered or bool(answer.message)
    if not answer.answered or not answer.citations:
        return False
    spans = [s for s in answer.spans if _holds(s.text, question.expected)]
    if question.kind == "fact":
        return bool(spans)
    if question.kind == "speaker":
        return any(s.kind == "quote" and speaker_matches(question.speaker, s.speaker) for s in spans)
    surname = _folded(question.speaker).split()[-1] if question.speaker else ""
    return any(speaker_matches(question.speaker, s.speaker) or (surname and surname in _folded(s.text)) for s in spans)


@dataclass
class NaturalTally:
    asked: Counter[str] = field(default_factory=Counter)
    right: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    refused_by: Counter[str] = field(default_factory=Counter)  # answerable questions refused, per check
    seconds: list[float] = field(default_factory=list)

    def score(self, kind: str) -> float:
        return self.right[kind] / self.asked[kind] if self.asked[kind] else float("nan")

    @property
    def answerable_refusal(self) -> float:
        asked = sum(self.asked[k] for k in ANSWERABLE)
        return sum(self.refused[k] for k in ANSWERABLE) / asked if asked else float("nan")

    @property
    def overall(self) -> float:
        asked = sum(self.asked.values())
        return sum(self.right.values()) / asked if asked else float("nan")


def run_natural(
    library: Library, questions: list[NaturalQuestion], tuning: Tuning = TUNING
) -> tuple[NaturalTally, list[str]]:
    """Ask every question through the real pipeline; returns the tally and one line per miss."""
    tally = NaturalTally()
    misses = []
    for question in questions:
        started = time.perf_counter()
        answer = answer_question(library, question.text, (), tuning)
        tally.seconds.append(time.perf_counter() - started)
        tally.asked[question.kind] += 1
        if not answer.answered:
            tally.refused[question.kind] += 1
            if question.kind in ANSWERABLE:
                tally.refused_by[answer.refused_by or "?"] += 1
        if judge(question, answer):
            tally.right[question.kind] += 1
        else:
            got = (
                " | ".join(f"[{s.speaker}] {s.text[:90]}" for s in answer.spans[:3])
                if answer.answered
                else f"REFUSED by {answer.refused_by}: {answer.message[:80]}"
            )
            misses.append(
                f"{question.kind:13} {question.article:20} {question.text}\n"
                f"    want: {question.expected!r} ({question.speaker})\n    got:  {got}"
            )
    return tally, misses


class ChunkBaseline:
    """A LangChain-style retriever: articles cut into ~800-character chunks on paragraph
    boundaries (long paragraphs cut at a space), embedded with the same model; the answer is the
    top chunk, with no abstention."""

    CHUNK = 800

    def __init__(self, library: Library, embedder: Embedder, cache: Path) -> None:
        self.chunks: list[str] = []
        for article_id in library.store.article_ids().tolist():
            article = library.store.article(article_id, with_text=True)
            if article is not None:
                self.chunks.extend(chunk_text(f"{article.title}\n\n{article.text}", self.CHUNK))
        digest = hashlib.sha1("\x00".join(self.chunks).encode()).hexdigest()[:16]
        cached = cache / f"chunks-{digest}.npy"
        if cached.exists():
            self.vectors = np.load(cached)
        else:
            self.vectors = embedder.encode(self.chunks)
            cache.mkdir(parents=True, exist_ok=True)
            np.save(cached, self.vectors)
        self.embedder = embedder

    def answer(self, question: str) -> str:
        vector = self.embedder.encode_one(question)
        return self.chunks[int(np.argmax(self.vectors @ vector))]


def chunk_text(text: str, size: int = ChunkBaseline.CHUNK) -> list[str]:
    """~``size``-character chunks on paragraph boundaries, a long paragraph cut at a space."""
    chunks: list[str] = []
    current = ""
    for paragraph in (p.strip() for p in text.split("\n")):
        while len(paragraph) > size:
            cut = paragraph.rfind(" ", 0, size)
            cut = cut if cut > 0 else size
            chunks.append(paragraph[:cut])
            paragraph = paragraph[cut:].strip()
        if current and len(current) + len(paragraph) + 1 > size:
            chunks.append(current)
            current = ""
        current = f"{current}\n{paragraph}".strip() if paragraph else current
    if current:
        chunks.append(current)
    return chunks


def run_chunk_baseline(baseline: ChunkBaseline, questions: list[NaturalQuestion]) -> NaturalTally:
    """Answerable kinds only: the expected words in the top chunk (it never abstains, so it
    scores 0 on the others, and no speaker is checked: it has none)."""
    tally = NaturalTally()
    for question in questions:
        if question.kind not in ANSWERABLE:
            continue
        tally.asked[question.kind] += 1
        tally.right[question.kind] += _holds(baseline.answer(question.text), question.expected)
    return tally


def check_effects(library: Library, questions: list[NaturalQuestion], tuning: Tuning = TUNING) -> list[str]:
    """Per refusing check: how many right answers it costs and how many wrong answers it stops,
    measured by asking every question again with that one check switched off."""
    from dataclasses import replace

    from retrieval.answering.checks import ALL_CHECKS

    baseline = [judge(q, answer_question(library, q.text, (), tuning)) for q in questions]
    lines = []
    for check in ALL_CHECKS:
        without = replace(tuning, disabled_checks=tuning.disabled_checks | {check.name})
        costs = stops = 0
        for question, right in zip(questions, baseline, strict=True):
            right_without = judge(question, answer_question(library, question.text, (), without))
            costs += right_without and not right
            stops += right and not right_without
        lines.append(f"  check {check.name:22} costs {costs:3} right answers, stops {stops:3} wrong ones")
    return lines
