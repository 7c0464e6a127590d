"""SQuAD 2.0 paragraphs as one-paragraph articles, and out-of-corpus questions over the BBC."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from bench.quality.eval_common import DenseBaseline, Tally, fit_threshold, in_half, ranked_articles, verbatim_spans
from retrieval.answering import TUNING, Tuning, answer_question
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from retrieval.models import Answer, ArticleDraft


@dataclass(frozen=True)
class SquadQuestion:
    index: int
    text: str
    key: str
    answers: tuple[str, ...]
    impossible: bool


def load_squad(path: Path, paragraph_limit: int = 0) -> tuple[list[ArticleDraft], list[SquadQuestion]]:
    """Drafts (one per paragraph, keyed ``squad:<title>:<n>``) and the questions, in file order."""
    data = json.loads(path.read_text())
    drafts: list[ArticleDraft] = []
    questions: list[SquadQuestion] = []
    for article in data["data"]:
        for number, paragraph in enumerate(article["paragraphs"]):
            if paragraph_limit and len(drafts) >= paragraph_limit:
                break
            key = f"squad:{article['title']}:{number}"
            drafts.append(ArticleDraft(key=key, title=article["title"].replace("_", " "), text=paragraph["context"]))
            for qa in paragraph["qas"]:
                answers = tuple(dict.fromkeys(a["text"] for a in qa.get("answers", [])))
                questions.append(SquadQuestion(len(questions), qa["question"], key, answers, bool(qa["is_impossible"])))
    return drafts, questions


def build_library(directory: Path, drafts: list[ArticleDraft], embedder: Embedder) -> Library:
    library = Library.open(directory, embedder)
    library.add_drafts(drafts)  # idempotent: a cached directory is left as it is
    return library


def _article_ids(library: Library) -> dict[str, int]:
    articles = library.store.articles(library.store.article_ids().tolist())
    return {article.key: article_id for article_id, article in articles.items()}


def _hit(text: str, answers: tuple[str, ...]) -> bool:
    lowered = text.lower()
    return any(a.lower() in lowered for a in answers)


def run_squad(
    library: Library, questions: list[SquadQuestion], half: str, tuning: Tuning = TUNING
) -> tuple[Tally, list[tuple[SquadQuestion, object]]]:
    """Ask every question of the half through the real pipeline; returns the tally and answers."""
    ids = _article_ids(library)
    tally = Tally()
    answers: list[tuple[SquadQuestion, object]] = []
    spans_checked = spans_good = 0
    for question in questions:
        if not in_half(question.index, half) or question.key not in ids:
            continue
        started = time.perf_counter()
        answer = answer_question(library, question.text, (), tuning)
        tally.seconds.append(time.perf_counter() - started)
        checked, good = verbatim_spans(library, answer)
        spans_checked, spans_good = spans_checked + checked, spans_good + good
        answers.append((question, answer))
        if question.impossible:
            tally.impossible += 1
            tally.abstained_impossible += not answer.answered
            continue
        tally.answerable += 1
        tally.rank(ranked_articles(library, answer, question.text), ids[question.key])
        if not answer.answered:
            tally.false_abstained += 1
        elif _hit(answer.spans[0].text, question.answers):
            tally.hit += 1
    tally.spans_checked, tally.spans_good = spans_checked, spans_good  # type: ignore[attr-defined]
    return tally, answers


def run_squad_baseline(
    library: Library, baseline: DenseBaseline, questions: list[SquadQuestion], half: str
) -> tuple[Tally, float]:
    """The dense-only baseline on the report half, with its threshold fitted on the fit half."""
    ids = _article_ids(library)
    fit_cosines: list[float] = []
    results = []
    for question in questions:
        if question.key not in ids:
            continue
        ranked, sentence, cosine = baseline.ask(question.text)
        if in_half(question.index, "fit") and not question.impossible:
            fit_cosines.append(cosine)
        if in_half(question.index, half):
            results.append((question, ranked, sentence, cosine))
    threshold = fit_threshold(fit_cosines)
    tally = Tally()
    for question, ranked, sentence, cosine in results:
        answered = cosine >= threshold
        if question.impossible:
            tally.impossible += 1
            tally.abstained_impossible += not answered
            continue
        tally.answerable += 1
        tally.rank(ranked, ids[question.key])
        tally.false_abstained += not answered
        tally.hit += answered and _hit(sentence, question.answers)
    return tally, threshold


def load_ooc(path: Path) -> list[str]:
    lines = [line.strip() for line in path.read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def run_ooc(library: Library, questions: list[str], tuning: Tuning = TUNING) -> tuple[Tally, list[Answer]]:
    tally = Tally()
    answers: list[Answer] = []
    for question in questions:
        started = time.perf_counter()
        answer = answer_question(library, question, (), tuning)
        tally.seconds.append(time.perf_counter() - started)
        tally.asked += 1
        tally.abstained += not answer.answered
        answers.append(answer)
    return tally, answers


def run_ooc_baseline(baseline: DenseBaseline, questions: list[str], threshold: float) -> Tally:
    tally = Tally()
    for question in questions:
        tally.asked += 1
        tally.abstained += baseline.ask(question)[2] < threshold
    return tally
