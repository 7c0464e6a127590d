"""The text the reader reads for one candidate: the same at training time and at answer time.

A candidate is a sentence (or a quote's best sentence) of a stored article. The reader sees it
in its context, in an order that lets truncation cut the least useful words first (the
tokenizer trims the candidate from its end): the sentence, its speaker when it is a quote, the
headline, and (with ``NEIGHBOURS``) the sentences before and after it.

The shipped reader reads no neighbours. Trained on the same pairs, the same steps' worth of
data, with them (128 tokens) it reached a dev pair AUC of 0.827 and put the answer first for 44%
of the dev questions; without them (64 tokens, twice the epochs in less time) 0.876 and 55%: a
neighbour of the answer sentence carries the answer in its context, which blurs the labels for a
model this small, and the shorter pair reads twice as fast.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.models import Sentence

# Characters of context kept on each side: at ~4.5 characters a token this keeps the pair under
# the reader's 128 tokens with room for the question, so the tokenizer rarely has to cut.
CONTEXT_CHARS = 220
SENTENCE_CHARS = 400
# Whether a candidate carries the sentences around it (see the module docstring).
NEIGHBOURS = False


def _clip(text: str, limit: int, keep_end: bool = False) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    if keep_end:  # the sentence before: its end is what leads into the candidate
        cut = text.find(" ", len(text) - limit)
        return "... " + text[cut + 1 if cut >= 0 else len(text) - limit :]
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > 0 else limit] + " ..."


def candidate_text(sentence: str, speaker: str, title: str, before: str = "", after: str = "") -> str:
    """One candidate as the reader reads it (see the module docstring)."""
    said = f" (said by {speaker})" if speaker else ""
    parts = [f"{_clip(sentence, SENTENCE_CHARS)}{said}", f"Headline: {_clip(title, 160)}"]
    context = " ".join(
        part for part in (_clip(before, CONTEXT_CHARS, keep_end=True), _clip(after, CONTEXT_CHARS)) if part
    )
    if context:
        parts.append(f"Context: {context}")
    return " | ".join(parts)


def neighbours(sentences: Sequence[Sentence], index: int) -> tuple[str, str]:
    """The texts of the sentences before and after ``sentences[index]`` in the same article
    (``sentences`` is one article's, in order); empty at either end, and always without
    ``NEIGHBOURS``."""
    if not NEIGHBOURS:
        return "", ""
    here = sentences[index]
    before = sentences[index - 1].text if index > 0 and sentences[index - 1].article_id == here.article_id else ""
    after = (
        sentences[index + 1].text
        if index + 1 < len(sentences) and sentences[index + 1].article_id == here.article_id
        else ""
    )
    return before, after
