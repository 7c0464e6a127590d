"""How far any mix of the signals Byline computes goes toward issue 13's abstention targets.

    .venv/bin/python -m bench.quality.abstain_ceiling [--cache DIR] [--workers N]

Issue 13 asks for abstention on questions the library cannot answer (>= 0.95), on details it
lacks (>= 0.80), with at most 0.10 of the answerable questions refused. The named checks of
``retrieval.answering`` each decide alone, in a fixed order. This asks whether a learner that
sees every check's verdict and the scores the checks read, together, would do better, on every
natural question (``bench/data/natural``, all parts: none is held out any more but final17's
misses, which this does not print) and the out-of-corpus sets (``bench/data/out_of_corpus*``).

Per question it records:

- each refusing check's own verdict: the pipeline run with that check alone switched on;
- what the checks read: the best sentence's cosine, word overlap and score, the best passage's
  fused score and its lead over the fifth, how many of the question's words and names the best
  sentence's article holds, whether that sentence speaks of what will happen;
- the answer given with no check on: its first span's score, how many spans, a caveat, a quote;
- the question's kind as parsed (speaker, "who said", general).

A learner (logistic regression, gradient boosting; scikit-learn, installed with
sentence-transformers) scores each question's chance of being one to abstain on, out of fold
(5 folds grouped by article, so no article's questions are both learned and scored). Byline then
abstains above a threshold and otherwise gives the answer it gives now (or, where it refuses now,
the answer with no check on). The threshold is chosen on the out-of-fold scores themselves, at the
refusal rate of the current rules and at 0.10: that flatters the learner, so each row is a ceiling.

The run takes about an hour on two cores (nine answers per question); the signals are kept
in ``DIR/abstain_signals.json`` and reused (delete it after a rule changes).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from bench.paths import DATA
from bench.quality.eval_natural import NATURAL_DIR, NaturalQuestion, judge, load_natural, open_warm_library
from bench.quality.eval_squad import load_ooc
from retrieval.answering import answer_question, checks
from retrieval.answering.names import MissingTerms, question_name_tokens
from retrieval.answering.question import parse
from retrieval.library import Library
from retrieval.models import Answer
from retrieval.ranking import TUNING, _rank_passages, _score_sentences
from retrieval.reading.text import search_tokens

OOC_DIR = DATA
# The checks whose verdicts vary on these questions (the others refuse only an empty library,
# or refuse at most one natural question: ``bench.eval --checks``).
VOTING = (
    checks.NAMES_ABSENT,
    checks.ANSWER_TYPE,
    checks.NOT_CONFIDENT,
    checks.NAMES_NOT_IN_ARTICLE,
    checks.OUTCOME_NOT_REPORTED,
    checks.EVENT_NOT_REPORTED,
    checks.SPEAKER_OFF_TOPIC,
)
ANSWERABLE = ("speaker", "fact", "who_said")
ABSTAIN = ("absent", "detail_absent", "out_of_corpus")
# A sentence telling what is still to come: the library's story may predate the event asked about.
_AHEAD = re.compile(
    r"\b(?:will|shall|set to|due to|expected to|expects to|is to|are to|plans? to|hopes? to|aims? to|intends? to"
    r"|would)\b|\w+'ll\b",
    re.I,
)
NUMERIC = (
    "tokens",
    "names",
    "top_passage",
    "passage_lead",
    "cosine",
    "overlap",
    "score",
    "best_cosine",
    "best_overlap",
    "cosine_lead",
    "words_in_article",
    "names_missing",
    "plain_score",
    "plain_spans",
)
# The pipeline with no check on, and with each voting check switched on alone.
_EVERY_CHECK = frozenset(c.name for c in checks.ALL_CHECKS)
_NO_CHECK = dataclasses.replace(TUNING, disabled_checks=_EVERY_CHECK)
_ALONE = {c.name: dataclasses.replace(TUNING, disabled_checks=_EVERY_CHECK - {c.name}) for c in VOTING}
FLAGS = ("ahead", "plain_caveat", "plain_quote", "answered_now", "kind_speaker", "kind_who_said", "kind_general")


def _questions(ooc_files: list[Path]) -> list[NaturalQuestion]:
    """Every natural question, and each out-of-corpus one as a question of its own kind."""
    questions = [q for path in sorted(NATURAL_DIR.glob("*.tsv")) for q in load_natural(path)]
    for path in ooc_files:
        for n, text in enumerate(load_ooc(path)):
            questions.append(NaturalQuestion("out_of_corpus", f"{path.stem}:{n}", text, "", "", path.stem))
    return questions


def _right(question: NaturalQuestion, answer: Answer) -> bool:
    return not answer.answered if question.kind == "out_of_corpus" else judge(question, answer)


# Each worker process opens the library once (it cannot be sent between processes).
_LIBRARY: Library | None = None


def _open(path: Path) -> None:
    global _LIBRARY
    _LIBRARY = open_warm_library(path)


def _signals_of(question: NaturalQuestion) -> dict[str, Any]:
    assert _LIBRARY is not None
    return signals(_LIBRARY, question)


def signals(library: Library, question: NaturalQuestion) -> dict[str, Any]:
    """What the checks decide and read for one question (see the module docstring)."""
    text = question.text
    now = answer_question(library, text)
    plain = answer_question(library, text, (), _NO_CHECK)
    votes = {name: answer_question(library, text, (), tuning).refused_by == name for name, tuning in _ALONE.items()}
    parsed = parse(text)
    tokens = search_tokens(parsed.search_text)
    vector = library.embedder.encode_one(parsed.search_text)
    ranked = _rank_passages(library, vector, tokens, TUNING, None)
    scored, _ = _score_sentences(library, ranked, vector, tokens, TUNING, parsed.text)
    found: dict[str, float] = dict.fromkeys(NUMERIC + FLAGS, 0.0)
    found.update(
        tokens=len(tokens),
        names=len(question_name_tokens(text)),
        top_passage=ranked[0][1] if ranked else 0.0,
        passage_lead=ranked[0][1] - ranked[4][1] if len(ranked) > 4 else 0.0,
        plain_score=plain.spans[0].score if plain.spans else 0.0,
        plain_spans=len(plain.spans),
        plain_caveat=float(bool(plain.message)),
        plain_quote=float(bool(plain.spans) and plain.spans[0].kind == "quote"),
        answered_now=float(now.answered),
        kind_speaker=float(parsed.kind == "speaker"),
        kind_who_said=float(parsed.kind == "who_said"),
        kind_general=float(parsed.kind == "general"),
    )
    if scored:
        best, window = scored[0], scored[:20]
        terms = library.article_terms.of(best.sentence.article_id)
        found.update(
            cosine=best.cosine,
            overlap=best.overlap,
            score=best.score,
            best_cosine=max(s.cosine for s in window),
            best_overlap=max(s.overlap for s in window),
            cosine_lead=best.cosine - scored[4].cosine if len(scored) > 4 else 0.0,
            words_in_article=sum(t in terms for t in tokens) / max(1, len(tokens)),
            names_missing=float(MissingTerms(library, text).from_article(best.sentence.article_id)),
            ahead=float(bool(_AHEAD.search(best.sentence.text))),
        )
    return {
        "question": dataclasses.asdict(question),
        "votes": votes,
        "signals": found,
        # What the asker would get if Byline answered where it now refuses.
        "right_answering": _right(question, now if now.answered else plain),
    }


def _gather(cache: Path, workers: int, ooc_files: list[Path]) -> list[dict[str, Any]]:
    kept = cache / "abstain_signals.json"
    if kept.exists():
        rows: list[dict[str, Any]] = json.loads(kept.read_text())
        return rows
    questions = _questions(ooc_files)
    with ProcessPoolExecutor(workers, initializer=_open, initargs=(cache / "bbc",)) as pool:
        rows = list(pool.map(_signals_of, questions, chunksize=8))
    kept.write_text(json.dumps(rows))
    return rows


def outcome(rows: list[dict[str, Any]], abstain: np.ndarray) -> dict[str, float]:
    """Each kind's score, and the share of answerable questions refused, for these abstentions."""
    right: Counter[str] = Counter()
    asked: Counter[str] = Counter()
    for row, refuses in zip(rows, abstain.tolist(), strict=True):
        kind = row["question"]["kind"]
        asked[kind] += 1
        if kind in ("absent", "out_of_corpus"):
            right[kind] += refuses
        elif kind == "detail_absent":
            # A plain caveat counts as well as a refusal (``judge``).
            right[kind] += refuses or row["right_answering"]
        else:
            right[kind] += not refuses and row["right_answering"]
            right["refused"] += refuses
            asked["refused"] += 1
    return {kind: right[kind] / asked[kind] for kind in (*ANSWERABLE, *ABSTAIN, "refused") if asked[kind]}


def _table_row(label: str, scores: dict[str, float]) -> str:
    return f"  {label:52}" + "".join(f"{scores.get(k, 0.0):>9.3f}" for k in (*ANSWERABLE, *ABSTAIN, "refused"))


def main(argv: list[str] | None = None) -> int:
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/byline-eval"), help="bench.eval's cache (its bbc/)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    if not (args.cache / "bbc").is_dir():
        print(f"No library at {args.cache / 'bbc'}: build one first (python -m bench.eval --cache {args.cache}).")
        return 1
    rows = _gather(args.cache, args.workers, sorted(OOC_DIR.glob("out_of_corpus*.txt")))
    x = np.array(
        [[row["signals"][k] for k in NUMERIC + FLAGS] + [float(row["votes"][c.name]) for c in VOTING] for row in rows]
    )
    kinds = [row["question"]["kind"] for row in rows]
    y = np.array([kind in ABSTAIN for kind in kinds])
    groups = [row["question"]["article"] or f"{row['question']['part']}:{n}" for n, row in enumerate(rows)]
    answerable = np.array([kind in ANSWERABLE for kind in kinds])
    now = np.array([not row["signals"]["answered_now"] for row in rows])
    print(f"{len(rows)} questions: " + ", ".join(f"{k} {n}" for k, n in Counter(kinds).items()))
    print("\n  " + " " * 52 + "".join(f"{k[:8]:>9}" for k in (*ANSWERABLE, *ABSTAIN, "refused")))
    print(_table_row("the rules now", outcome(rows, now)))
    learners = {
        "logistic regression": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        "gradient boosting": lambda: GradientBoostingClassifier(
            n_estimators=200, max_depth=3, learning_rate=0.05, subsample=0.8, random_state=0
        ),
    }
    for name, make in learners.items():
        scores = np.zeros(len(rows))
        for learn, held in GroupKFold(n_splits=5).split(x, y, groups):
            model = make().fit(x[learn], y[learn])
            scores[held] = model.predict_proba(x[held])[:, 1]
        for refused in (float(now[answerable].mean()), 0.10, 0.15):
            threshold = float(np.quantile(scores[answerable], 1 - refused))
            print(_table_row(f"{name}, refusing {refused:.3f} of answerable", outcome(rows, scores >= threshold)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
