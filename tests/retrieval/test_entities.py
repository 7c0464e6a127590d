"""The NER veto reads a paragraph only when a name asked about could be in it, and answers
exactly as if it had read every paragraph (``retrieval/reading/entities.py``).

The synthetic article always runs; the BBC check is skipped when ``../shared/data/bbc-news`` is
absent. Both run the real spaCy model.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from retrieval.reading.entities import NotPeople, not_people
from retrieval.reading.text import paragraphs

PROJECT = Path(__file__).resolve().parent.parent.parent
BBC = PROJECT.parent / "shared" / "data" / "bbc-news"

ARTICLE = "\n\n".join(
    [
        "Shares in Standard Life Investments fell on Monday after the fund warned on profits.",
        '"We expect a difficult year," Standard Life Investments said in a statement.',
        "The Commons Audit Committee chairman Peter Ainsworth said the Audit Committee would meet.",
        '"The figures speak for themselves," Mr Ainsworth said.',
        "Theresa May travelled to Paris for talks with the French government.",
        '"It was a constructive meeting," she told the BBC.',
        '"We regret the decision," Tony Blair Associates said in a statement.',
        "Tony Blair was not available for comment.",
        '"He is travelling," his office said.',
    ]
)
# Capitalised runs of words, and every run of words inside them: the names the rules may ask about.
_CAPITALISED = re.compile(r"[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*")


def asked_names(text: str) -> set[str]:
    """Capitalised runs and every run of words inside them, and the pronouns and descriptions the
    rules also ask about."""
    names: set[str] = {"he", "He", "she", "the prime minister", "a spokesman", "his office"}
    for match in _CAPITALISED.finditer(text):
        words = match.group().split()
        names.update(" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1))
    return names


def eager(text: str) -> NotPeople:
    everything = not_people(text, paragraphs(text))
    everything._read_holding([""])  # every paragraph, as the veto read them before it read lazily
    return everything


def assert_same_answers(text: str) -> None:
    """Each name asked first, of a fresh veto: what it reads for that name alone must settle it."""
    found = paragraphs(text)
    read_all = eager(text)
    for name in sorted(asked_names(text)):
        assert not_people(text, found).vetoes(name) == read_all.vetoes(name), name
        assert not_people(text, found).person_inside(name) == read_all.person_inside(name), name


def test_answers_are_those_of_reading_every_paragraph() -> None:
    assert_same_answers(ARTICLE)
    found = eager(ARTICLE)
    assert found.vetoes("Standard Life Investments")
    assert found.vetoes("Standard Life")  # the start of an organisation's name
    assert not found.vetoes("Theresa May")
    # A person's name inside the organisation's, in another paragraph, keeps it a candidate.
    assert not found.vetoes("Tony Blair Associates")
    assert found.person_inside("Audit Committee Peter Ainsworth") == "Peter Ainsworth"
    assert found.person_inside("Theresa May") == ""


def test_only_paragraphs_holding_a_word_of_the_name_are_read() -> None:
    lazy = not_people(ARTICLE, paragraphs(ARTICLE))
    assert len(lazy._unread) == 9  # every paragraph holds a quote or comes before one
    assert lazy.vetoes("Standard Life Investments")
    assert [paragraph for paragraph, _ in lazy._unread if "Standard" in paragraph] == []
    assert any("Theresa May" in paragraph for paragraph, _ in lazy._unread)


@pytest.mark.skipif(not BBC.is_dir(), reason="BBC corpus not present")
def test_bbc_articles_get_the_same_answers() -> None:
    articles = sorted((BBC / "politics").glob("*.txt"))[:6] + sorted((BBC / "business").glob("*.txt"))[:6]
    for path in articles:
        assert_same_answers(path.read_text(encoding="utf-8", errors="replace"))
