"""In-corpus "what did X say about Y?" questions over the BBC corpus: the speaker path's recall.

The out-of-corpus questions measure how often Byline rightly says "nothing found"; these
measure the other side, how often it wrongly says so (or quotes someone else) when the
speaker's words on the topic are there.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from bench.quality.eval_squad import _article_ids
from retrieval.answering import TUNING, Tuning, answer_question
from retrieval.library import Library


@dataclass(frozen=True)
class SpeakerQuestion:
    text: str
    article: str  # relative to the corpus folder, e.g. "business/182.txt"
    speaker: str


@dataclass
class SpeakerTally:
    asked: int = 0
    right: int = 0  # quotes the expected speaker, words from the expected article
    abstained: int = 0


def load_speaker_questions(path: Path) -> list[SpeakerQuestion]:
    lines = [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return [
        SpeakerQuestion(row["question"], row["article"], row["speaker"])
        for row in csv.DictReader(lines, delimiter="\t")
    ]


def run_speaker_questions(
    library: Library, corpus: Path, questions: list[SpeakerQuestion], tuning: Tuning = TUNING
) -> tuple[SpeakerTally, list[str]]:
    """Ask each question; returns the tally and one line per question not answered right. A
    question whose article was not stored (a duplicate of another file) is skipped."""
    keys = _article_ids(library)
    tally = SpeakerTally()
    misses = []
    for question in questions:
        article_id = keys.get(str(corpus.resolve() / question.article))
        if article_id is None:
            continue
        answer = answer_question(library, question.text, (), tuning)
        tally.asked += 1
        tally.abstained += not answer.answered
        expected = library.store.article(article_id, with_text=True)
        text = expected.text if expected else ""
        # The corpus has near-duplicate stories: the same words quoted from another copy count.
        if any(s.kind == "quote" and s.speaker == question.speaker and s.text in text for s in answer.spans):
            tally.right += 1
        else:
            got = "; ".join(f"[{s.speaker}] {s.text[:60]}" for s in answer.spans[:2]) or answer.message[:80]
            misses.append(f"{question.text} -> {got}")
    return tally, misses
