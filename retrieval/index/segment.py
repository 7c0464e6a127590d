"""Passages and sentences of an article.

Passages follow paragraph boundaries: short paragraphs are merged with their neighbours, and a
paragraph too long for the model's 256-token window is split at sentence boundaries, so no
text is silently cut. Sentences are the units Byline embeds and quotes from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from retrieval.index.embedder import MAX_WORDS_PER_TEXT
from retrieval.models import Paragraph
from retrieval.reading.text import sentence_spans

# About 240 word pieces: inside the model's 256-token window with room for punctuation.
MAX_PASSAGE_WORDS = 180
SHORT_PARAGRAPH_WORDS = 60

_WORD_RE = re.compile(r"\S+")


@dataclass(frozen=True)
class SentenceSpan:
    paragraph: int
    start: int
    end: int


@dataclass(frozen=True)
class PassageSpan:
    paragraph_first: int
    paragraph_last: int
    start: int
    end: int
    sentences: tuple[SentenceSpan, ...]


def _word_count(text: str, start: int, end: int) -> int:
    return len(_WORD_RE.findall(text, start, end))


def split_sentences(text: str, paragraph: Paragraph) -> list[SentenceSpan]:
    """Sentences of a paragraph; a run-on longer than the model window is cut into windows."""
    spans: list[SentenceSpan] = []
    for start, end in sentence_spans(text, paragraph.start, paragraph.end):
        words = list(_WORD_RE.finditer(text, start, end))
        if len(words) <= MAX_WORDS_PER_TEXT:
            spans.append(SentenceSpan(paragraph.number, start, end))
            continue
        for index in range(0, len(words), MAX_WORDS_PER_TEXT):
            chunk = words[index : index + MAX_WORDS_PER_TEXT]
            spans.append(SentenceSpan(paragraph.number, chunk[0].start(), chunk[-1].end()))
    return spans


def build_passages(text: str, paragraphs: list[Paragraph]) -> list[PassageSpan]:
    """Group sentences into passages; see the module docstring for the rule."""
    passages: list[PassageSpan] = []
    pending: list[SentenceSpan] = []
    pending_words = 0

    def flush() -> None:
        nonlocal pending, pending_words
        if pending:
            passages.append(
                PassageSpan(
                    pending[0].paragraph, pending[-1].paragraph, pending[0].start, pending[-1].end, tuple(pending)
                )
            )
        pending, pending_words = [], 0

    for paragraph in paragraphs:
        sentences = split_sentences(text, paragraph)
        words = _word_count(text, paragraph.start, paragraph.end)
        if pending and (pending_words >= SHORT_PARAGRAPH_WORDS or pending_words + words > MAX_PASSAGE_WORDS):
            flush()
        for sentence in sentences:
            sentence_words = _word_count(text, sentence.start, sentence.end)
            if pending and pending_words + sentence_words > MAX_PASSAGE_WORDS:
                flush()
            pending.append(sentence)
            pending_words += sentence_words
    flush()
    return passages
