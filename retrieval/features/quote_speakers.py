"""Who said the words a quote check found: the speaker of the stored quote they stand in
(``quotes.py`` attributed it at ingest), whether pieces joined by an ellipsis are one quote, and,
for words the article attributes to nobody, whether the person asked about is the one named just
before them. Names are compared as people write them: "Blair", "Mr Blair", "Tony Blair".
"""

from __future__ import annotations

import re

from retrieval.features.quote_text import HONORIFIC_WORDS, words_of
from retrieval.models import Article, Quote
from retrieval.ports import Corpus
from retrieval.reading.people import SPEECH_VERBS, strip_honorific
from retrieval.reading.text import paragraphs

# How far before words attributed to nobody their speaker may be named (paragraphs).
NAMED_NEARBY = 2


def speaker_of(library: Corpus, article_id: int, spans: list[tuple[int, int]]) -> tuple[str, bool]:
    """Who the article says spoke the words at ``spans`` ("" when nobody), and whether they all
    stand in quote marks. Pieces joined by an ellipsis must be one person's words."""
    quotes = library.store.quotes_of_articles([article_id])
    speakers: list[str] = []
    quoted = True
    for start, end in spans:
        inside = _overlapping(quotes, start, end)
        if inside is None:
            quoted = False
            continue
        speakers.append(inside.speaker)
    named = [s for s in speakers if s]
    if named and any(not same_person(named[0], other) for other in named[1:]):
        return "", quoted  # pieces of two people's quotes: nobody said the joined words
    return (named[0] if named else ""), quoted


def one_quote(library: Corpus, article: Article, spans: list[tuple[int, int]]) -> bool:
    """Whether the pieces an ellipsis joins (at ``spans``) are one quote: one quote group, or (as
    in `"A," he said. "B."`) one speaker's words in the same or the next paragraph."""
    if len(spans) < 2:
        return True
    quotes = library.store.quotes_of_articles([article.id])
    found = [_overlapping(quotes, start, end) for start, end in spans]
    if all(q is not None for q in found) and len({q.group for q in found if q is not None}) == 1:
        return True
    named = {q.speaker for q in found if q is not None and q.speaker}
    if len(named) > 1 and any(not same_person(a, b) for a in named for b in named):
        return False
    numbers = [paragraph_of(article.text, start) for start, _ in spans]
    return all(0 <= later - earlier <= 1 for earlier, later in zip(numbers, numbers[1:], strict=False))


def _overlapping(quotes: list[Quote], start: int, end: int) -> Quote | None:
    best, best_overlap = None, 0
    for quote in quotes:
        overlap = min(end, quote.end) - max(start, quote.start)
        if overlap > best_overlap:
            best, best_overlap = quote, overlap
    return best


def named_before(library: Corpus, article: Article, start: int, speaker: str) -> bool:
    """Whether ``speaker`` is the last person named before words (at ``start``) the article
    attributes to nobody, in their paragraph or the one or two before: named, and no other of
    the article's speakers named after them (that one would be likelier to be speaking)."""
    surname = name_words(speaker)[-1:]
    if not surname:
        return False
    text = article.text
    found = paragraphs(text)
    index = next((i for i, p in enumerate(found) if p.start <= start <= p.end), 0)
    before = text[found[max(0, index - NAMED_NEARBY)].start : start] if found else text[:start]
    # "Mr Crosby's statement said:" names him too.
    window = [re.sub(r"'s$", "", w.norm) for w in words_of(before)]
    if surname[0] not in window:
        return False
    last = len(window) - 1 - window[::-1].index(surname[0])
    others = {
        words[-1]
        for quote in library.store.quotes_of_articles([article.id])
        if quote.speaker and not same_person(speaker, quote.speaker)
        for words in [name_words(quote.speaker)]
        if words
    }
    if any(word in others for word in window[last + 1 :]):
        return False
    # `Fans outside the ground called it "…"`: the quote's own sentence names who said it, and
    # it is not the person asked about (else the quote would have been attributed to them).
    # (`It added: "…"` names nobody new: "it" is the statement or the person named before.)
    sentence = re.split(r"[.!?][\"”’]?\s+", before)[-1]
    if _PRONOUN_SAYING.fullmatch(re.split(r"[\"“]", sentence, maxsplit=1)[0].strip()):
        return True
    return not (_SAYING.search(sentence) and surname[0] not in {w.norm for w in words_of(sentence)})


_PRONOUN_SAYING = re.compile(rf"(?:It|He|She|They)\s+(?:also\s+)?(?:{SPEECH_VERBS})\s*:?")
_SAYING = re.compile(rf"\b(?:{SPEECH_VERBS}|called|calls|described|describes|dubbed|branded|saying)\b")


def name_words(name: str) -> list[str]:
    bare = re.sub(r"['’]s$", "", strip_honorific(name.strip()))
    return [w.norm for w in words_of(bare) if w.norm not in HONORIFIC_WORDS]


def same_person(asked: str, real: str) -> bool:
    """Whether a speaker as a user names them ("Blair", "Mr Blair", "Tony Blair") is the one an
    article names ("Tony Blair", "a spokesman for Microsoft"): every word asked is in the real
    name, or every real word is in the asked one (the article naming "Blair" alone, the asker
    "Tony Blair"), its surname last."""
    a, r = name_words(asked), name_words(real)
    if not a or not r:
        # Neither names anyone ("a BBC spokesman"): the same description, less its articles.
        described_a, described_r = _description_words(asked), _description_words(real)
        return bool(described_a and described_r) and (described_a <= described_r or described_r <= described_a)
    if set(a) <= set(r):
        return True
    # The article names fewer words: the same surname ("Blair" for "Tony Blair"), or the first
    # words of the name ("Rory" where it wrote "Rory O' Neill", "Marsh" for "Marsh & McLennan").
    return set(r) <= set(a) and (r[-1] == a[-1] or a[: len(r)] == r)


def _description_words(name: str) -> set[str]:
    return {w.norm for w in words_of(name)} - {"a", "an", "the", "one"}


def paragraph_of(text: str, offset: int) -> int:
    for paragraph in paragraphs(text):
        if paragraph.start <= offset < paragraph.end:
            return paragraph.number
    return 1
