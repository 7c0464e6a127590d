"""Quotes ingest left without a speaker that a timeline can give to its person, and only those.

Attribution at ingest (``quotes.py``) leaves a quote unattributed when its sentence does not
match a pattern: `…, saying his finance chief had "a keen command of the numbers"` after a quote
attributed to Bernie Ebbers, `was described by Jobs as the "most important Mac"`. For one
person's timeline two cues are safe enough to adopt such a quote:

- its sentence also holds a quote attributed to that person (one sentence, one speaker);
- its sentence names that person (the surname) next to a verb of saying (``reports_speech_of``),
  and is not passive with someone else as the agent ("praised by police for "very courageously"").

Adopted quotes keep their stored text and offsets; only the speaker shown is the person's.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from retrieval.answering.speaker import reports_speech_of
from retrieval.models import Quote, Sentence

if TYPE_CHECKING:
    from retrieval.ports import Corpus


def adopted_quotes(library: Corpus, speakers: list[str], ranges: np.ndarray) -> tuple[np.ndarray, dict[int, Quote]]:
    """Rows in the shape of ``Store.speaker_quote_ranges`` for the unattributed quotes of the
    speakers' articles that belong to them, and those quotes with the speaker set."""
    if not len(ranges) or not speakers:
        return np.zeros((0, 5), dtype=np.int64), {}
    article_ids = sorted(set(ranges[:, 4].tolist()))
    theirs = set(ranges[:, 0].tolist())
    quotes = library.store.quotes_of_articles(article_ids)
    sentences = library.store.sentences_of_articles(article_ids)
    by_article: dict[int, list[Sentence]] = {}
    for sentence in sorted(sentences, key=lambda s: (s.article_id, s.start)):
        by_article.setdefault(sentence.article_id, []).append(sentence)
    full_names = [s for s in speakers if " " in s] or speakers
    # Sentence ids that hold a quote attributed to the person.
    spoken: set[int] = set()
    for quote in quotes:
        if quote.id in theirs:
            spoken.update(s.id for s in _overlapping(by_article.get(quote.article_id, []), quote))
    rows: list[tuple[int, int, int, int, int]] = []
    found: dict[int, Quote] = {}
    for quote in quotes:
        if quote.speaker or len(quote.text.split()) < 2:
            continue
        around = _overlapping(by_article.get(quote.article_id, []), quote)
        if not around:
            continue
        if any(s.id in spoken for s in around) or any(
            _names_speaker(name, s.text) for s in around for name in full_names
        ):
            rows.append((quote.id, around[0].id, around[-1].id, int(quote.partial), quote.article_id))
            found[quote.id] = replace(quote, speaker=full_names[0])
    return np.array(rows, dtype=np.int64).reshape(-1, 5), found


# "Ozzy Osbourne has been praised by police for "very courageously" …": words said of the person
# by someone else, unless the agent after "by" is the person ("was described by Jobs as").
_PASSIVE_BY = re.compile(r"\b(?:been|was|were|is|are|being)\s+(?:\w+ly\s+)?\w+\s+by\s+(?P<agent>[\w’'\-]+)")


def _names_speaker(name: str, text: str) -> bool:
    """Whether a sentence reports ``name`` saying something, not something said of them."""
    if not reports_speech_of(name, text):
        return False
    surname = name.split()[-1]
    return all(match.group("agent") == surname for match in _PASSIVE_BY.finditer(text))


def _overlapping(sentences: list[Sentence], quote: Quote) -> list[Sentence]:
    """The sentences (in order, by start) that share characters with the quote."""
    starts = [s.start for s in sentences]
    index = max(0, bisect.bisect_right(starts, quote.start) - 1)
    found = []
    for sentence in sentences[index:]:
        if sentence.start >= quote.end:
            break
        if sentence.end > quote.start:
            found.append(sentence)
    return found
