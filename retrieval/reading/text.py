"""Text primitives: paragraphs, sentences and search tokens, all with character offsets.

Everything here works on offsets into the stored article text, so that every piece of an
answer can be traced back to exactly where it stands in the article.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache

import Stemmer

from retrieval.models import Paragraph

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")

# Words that end with a full stop without ending a sentence.
_ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof st sr jr gen lt col sgt capt cpt rev gov sen rep pres inc ltd co corp
    plc bros vs etc no nos vol fig approx dept est jan feb mar apr jun jul aug sep sept oct nov
    dec mt ft ave rd u.s u.k e.g i.e a.m p.m""".split()
)

# A sentence may end after ., ! or ? (and closing quotes or brackets) when the next
# non-space character starts a new sentence: a capital, a digit or an opening quote.
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s+[\"“‘'(\[]?[A-Z0-9])")

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves also said says say tell told ask did does one s t""".split()
)


def paragraphs(text: str) -> list[Paragraph]:
    """Split article text into paragraphs at blank lines, keeping offsets."""
    found: list[Paragraph] = []
    position = 0
    for match in [*_PARAGRAPH_BREAK.finditer(text), None]:
        end = match.start() if match else len(text)
        chunk = text[position:end]
        stripped_start = position + (len(chunk) - len(chunk.lstrip()))
        stripped_end = position + len(chunk.rstrip())
        if stripped_end > stripped_start:
            found.append(Paragraph(len(found) + 1, stripped_start, stripped_end))
        if match:
            position = match.end()
    return found


# Where a sentence ends for the attribution rules, which read back from a quote or a name: a
# full stop, "!" or "?" (closed by a quote mark or not) and a space, or a line break. Plainer
# than ``sentence_spans``'s test (no abbreviations, no capital needed after it): prose right
# before a quote is short, and a looser end only narrows what the rules read.
_ATTRIBUTION_SENTENCE_END = re.compile(r"[.!?][\"”’]?\s+|\n")


def sentence_start(text: str, position: int, floor: int = 0) -> int:
    """Where the sentence holding ``position`` starts, looking back no further than ``floor``."""
    ends = [m.end() for m in _ATTRIBUTION_SENTENCE_END.finditer(text, floor, position)]
    return max(ends) if ends else floor


def sentence_end(text: str, position: int, ceiling: int) -> int:
    """Where the sentence holding ``position`` ends (before its full stop or line break),
    looking no further than ``ceiling``."""
    found = _ATTRIBUTION_SENTENCE_END.search(text, position, ceiling)
    return found.start() if found else min(ceiling, len(text))


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Split ``text[start:end]`` into sentences; returns absolute (start, end) offsets."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    sentence_start = start
    for match in _SENTENCE_END.finditer(text, start, end):
        if _is_abbreviation(text, match.start()):
            continue
        spans.append((sentence_start, match.end()))
        sentence_start = match.end()
        while sentence_start < end and text[sentence_start].isspace():
            sentence_start += 1
    if sentence_start < end and text[sentence_start:end].strip():
        spans.append((sentence_start, end))
    return [_strip_span(text, s, e) for s, e in spans if text[s:e].strip()]


def _is_abbreviation(text: str, dot: int) -> bool:
    if text[dot] != ".":
        return False
    word_start = dot
    while word_start > 0 and (text[word_start - 1].isalpha() or text[word_start - 1] == "."):
        word_start -= 1
    word = text[word_start:dot].lower()
    # A single capital letter is an initial ("J. K. Rowling"), not the end of a sentence.
    return word in _ABBREVIATIONS or (len(word) == 1 and text[dot - 1].isupper())


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def without_accents(text: str) -> str:
    """``text`` with accents dropped: "José" is searched as "Jose", "fiancée" as "fiancee"
    (askers often type names without them, and an accent would split a word in two)."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    """Lower-cased words of a text, apostrophes normalised and accents dropped."""
    return [w.lower().replace("’", "'").removesuffix("'s") for w in _WORD.findall(without_accents(text))]


def search_tokens(text: str) -> list[str]:
    """Stemmed content words: the terms BM25 indexes and lexical overlap compares."""
    content = [w for w in words(text) if w not in STOPWORDS]
    return list(_stemmer().stemWords(content))


def iter_windows(tokens: list[str], size: int) -> Iterator[list[str]]:
    for index in range(0, len(tokens), size):
        yield tokens[index : index + size]
