"""Fact questions: which retrieved sentences answer, and whether any is close enough."""

from __future__ import annotations

from ..ranking import Tuning, _Scored, answer_type
from ..text import search_tokens
from .names import question_name_tokens, variant_in


def typed_first(scored: list[_Scored], question: str, tuning: Tuning) -> list[_Scored] | None:
    """The candidates with ones holding the asked-for type first; None when none holds it.

    "When did the Berlin Wall fall?" answered by a sentence with no date in it is a guess.
    """
    wanted = answer_type(question)
    if wanted is None or not tuning.type_window:
        return scored
    window = scored[: tuning.type_window]
    asked = set(search_tokens(question))
    # The thing asked for is not one the question already names: "Who was the first Labour
    # leader after Tony Blair?" is not answered by a sentence whose only names are Labour and Blair.
    typed = [
        s for s in window if any(not set(search_tokens(m.group())) <= asked for m in wanted.finditer(s.sentence.text))
    ]
    if not typed:
        return None
    return typed + [s for s in scored if s not in typed]


def words_besides_names(question: str) -> frozenset[str]:
    """The question's search words that are not its names or numbers."""
    names = set(question_name_tokens(question))
    return frozenset(t for t in search_tokens(question) if t not in names)


def confident(item: _Scored, tuning: Tuning, other_words: frozenset[str] = frozenset()) -> bool:
    """Whether a sentence is close enough to answer: by meaning alone, or by meaning and shared
    words. Shared names alone are weak evidence: "Who was the first person to walk on the
    Moon?" shares only "Moon" with a sentence about the film Shape of the Moon, so a sentence
    sharing none of the question's other words must stand on its meaning."""
    if other_words and not any(variant_in(t, other_words) for t in search_tokens(item.sentence.text)):
        return item.cosine >= tuning.names_only_min_cosine
    return item.cosine >= tuning.answer_min_cosine or (
        item.cosine >= tuning.answer_min_cosine_with_overlap and item.overlap >= tuning.answer_min_overlap
    )


def choose_sentences(scored: list[_Scored], tuning: Tuning, other_words: frozenset[str]) -> list[_Scored]:
    """The best sentence, and up to ``max_sentences - 1`` more that score close to it, say
    something else and are confident on their own."""
    chosen = [scored[0]]
    for candidate in scored[1:]:
        if len(chosen) >= tuning.max_sentences or candidate.score < scored[0].score - tuning.extra_sentence_margin:
            break
        if all(float(candidate.vector @ c.vector) < tuning.redundancy for c in chosen) and confident(
            candidate, tuning, other_words
        ):
            chosen.append(candidate)
    return chosen
