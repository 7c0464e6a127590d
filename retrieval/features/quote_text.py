"""The text side of a quote check: reading what a user pasted, and lining it up with an article.

A user pastes a quote the way it reached them: in straight or curly marks, with the speaker in
front ("Mourinho: '…'") or behind ("'…' - Mourinho"), cut with an ellipsis, lower-cased, its
punctuation lost. ``parse_asked`` takes that apart into the pieces of words to look for and the
speaker named with them. ``words_of`` reduces a text to comparable words (case, accents, quote
marks, apostrophes and punctuation do not count; numbers, currency signs and percentages do,
because "£5m" and "$5m" are different quotes), each keeping its offsets into the original text
so that a match is always a verbatim span. ``align`` finds the part of an article's words a piece
lines up with best, word by word, and the words that differ.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import NamedTuple

# A word, a number ("1,000", "3.5") or a sign that changes what a number means.
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:['’‘ʼ][^\W\d_]+)*|[£$€¥%]|[^\W_]+")
# Apostrophes as typed or typeset; they stay in the word ("we're" is not "were").
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})
# Where one piece of a quote ends and the next begins: "…", "...", ". . .", "[…]", "[...]".
_ELLIPSIS = re.compile(r"\s*(?:\[\s*(?:…|\.\s?\.\s?\.)\s*\]|…|\.\s?\.\s?\.)\s*")
_OPENERS = "\"“‘'«„"
_CLOSERS = "\"”’'»“"
# A speaker's name as a user types it: one to five capitalised words (with particles and
# initials), perhaps after an honorific; never a pronoun or a sentence's first word alone.
_NAME_WORD = r"(?:[A-Z][\w’'\-]*\.?|(?:de|da|van|von|der|del|la|le|du|bin|al)\b)"
_NAME_BODY = rf"[A-Z][\w’'\-]*\.?(?:[^\S\n]+{_NAME_WORD}){{0,4}}"
_NAME = rf"(?P<name>{_NAME_BODY})"
_NOT_NAMES = frozenset(
    "i he she it we they you this that there here but and so yes no the a an mr mrs ms dr note update".split()
)
# Titles written before a name ("Mr Hosford", "Dr Brydon"), lower case.
HONORIFIC_WORDS = frozenset({"mr", "mrs", "ms", "miss", "dr", "sir", "dame", "lord", "lady", "prof", "professor"})
_SAID = r"(?:said|says|told|added|wrote|tweeted|declared|insisted|warned|claimed)"
# "Mourinho: '…'", "Mourinho said: “…”", "José Mourinho, “…”".
_SPEAKER_FIRST = re.compile(rf"^{_NAME}(?:\s+{_SAID}(?:\s+\w+){{0,2}})?\s*[:,]\s*(?P<quote>[{_OPENERS}].*)$", re.S)
# "Mourinho: …" without marks: only a colon right after the name.
_SPEAKER_COLON = re.compile(rf"^{_NAME}\s*:\s+(?P<quote>\S.*)$", re.S)
# "'…' - Mourinho", "“…,” said Mourinho", "“…,” Mourinho said", "… — Mourinho", "“…”, according to Mourinho".
_SPEAKER_AFTER = re.compile(
    rf"^(?P<quote>.*?[^\s,;:–—-])[\s,;:]*(?:[–—-]+\s*(?P<dashed>{_NAME_BODY})"
    rf"|(?:{_SAID}|according\s+to)\s+(?P<after>{_NAME_BODY})"
    rf"|(?P<before>{_NAME_BODY})\s+{_SAID})\s*\.?\s*$",
    re.S,
)


class Word(NamedTuple):
    """A word of a text as compared (``norm``), and where it is written (``start``:``end``)."""

    norm: str
    start: int
    end: int


@dataclass(frozen=True)
class AskedQuote:
    """What a user asked to check: the quote's pieces (split at ellipses) and the speaker named."""

    text: str
    pieces: tuple[str, ...]
    speaker: str


def normalise(token: str) -> str:
    """A token as compared: accents dropped, case folded, one apostrophe for every kind, commas
    in numbers gone. The apostrophe stays: dropping it would make "we're" the same as "were"."""
    token = token.translate(_APOSTROPHES)
    if not token.isascii():
        token = "".join(c for c in unicodedata.normalize("NFKD", token) if not unicodedata.combining(c))
    token = token.casefold()
    return token.replace(",", "") if token[:1].isdigit() else token


def words_of(text: str, offset: int = 0) -> list[Word]:
    """The comparable words of ``text``, with offsets (plus ``offset``) into it."""
    # Lower-casing the whole text at once is what makes reading an article fast; the rare text
    # whose lower case changes length ("İ") is normalised word by word instead.
    lowered = text.lower()
    whole = len(lowered) == len(text)
    source = lowered if whole else text
    found = []
    for match in _TOKEN.finditer(source):
        token = match.group()
        if not whole or not token.isascii() or (token[0].isdigit() and "," in token):
            token = normalise(token)
        if token:
            found.append(Word(token, match.start() + offset, match.end() + offset))
    return found


def _strip_marks(text: str) -> str:
    """``text`` without the quote marks around it (a pair, or a lone one at either end)."""
    text = text.strip()
    for _ in range(2):
        if len(text) >= 2 and text[0] in _OPENERS and text[-1] in _CLOSERS:
            text = text[1:-1].strip()
        elif text[:1] in _OPENERS and not any(c in text[1:] for c in _CLOSERS if c not in "'’"):
            text = text[1:].strip()
        elif text[-1:] in _CLOSERS and text[-1:] not in "'’" and not any(c in text[:-1] for c in _OPENERS[:2]):
            text = text[:-1].strip()
        # A closing mark may sit before the sentence's end: “…,” / “….” / '…'.
        text = re.sub(r"^([\"“‘«„])(.*)([\"”’»])[.,;:]?$", r"\2", text, flags=re.S).strip()
    return text


def _a_name(name: str) -> bool:
    words = name.split()
    # "- Mr Hosford", "Dr Brydon: …": a title before a name is part of it; a title alone is no name.
    while len(words) > 1 and words[0].lower().strip(".") in HONORIFIC_WORDS:
        words = words[1:]
    return bool(words) and words[0].lower().strip(".") not in _NOT_NAMES and len(name) <= 60


def parse_asked(text: str, speaker: str = "") -> AskedQuote:
    """Take a pasted quote apart: the speaker written with it (unless ``speaker`` is given), the
    quote marks, and the pieces an ellipsis joins. Every piece keeps its own words verbatim."""
    text = " ".join(text.split())
    body, named = text, ""
    for pattern in (_SPEAKER_FIRST, _SPEAKER_AFTER, _SPEAKER_COLON):
        match = pattern.match(text)
        name = next((v for k, v in (match.groupdict() if match else {}).items() if k != "quote" and v), "")
        if match and _a_name(name):
            quote = match.group("quote").strip()
            # "'…' - Mourinho": the quote must look quoted, or the dash must set the name apart.
            if pattern is _SPEAKER_AFTER and not (quote[:1] in _OPENERS or re.search(r"\s[–—-]+\s*\S+[^\n]*$", text)):
                continue
            # A full stop after the name ends the sentence, unless the name ends with an initial.
            named = name.strip() if re.search(r"\b[A-Z]\.$", name.strip()) else name.strip().rstrip(".")
            body = quote
            break
    body = _strip_marks(body)
    pieces = tuple(piece for piece in (_strip_marks(p) for p in _ELLIPSIS.split(body)) if words_of(piece))
    return AskedQuote(text=body, pieces=pieces, speaker=(speaker.strip() or named))


# -- alignment ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    """Words where the asked quote and the real one part: ``asked`` (as the user wrote them)
    written instead of, or added to, the ``real`` ones (as the article writes them, at
    ``real_start``:``real_end`` of its text). Either side may be empty: a word added (no real
    words: offsets -1) or dropped."""

    asked: str
    real: str
    real_start: int = -1
    real_end: int = -1


@dataclass(frozen=True)
class Alignment:
    """How a piece lines up with an article's words: ``first``..``last`` (inclusive word indexes)
    is the real span, ``edits`` how many words differ, ``matched`` how many asked words agree."""

    first: int
    last: int
    edits: int
    matched: int
    longest_run: int
    differences: tuple[Difference, ...]


def find_exact(piece: list[str], words: list[str], start: int = 0) -> list[int]:
    """Every index in ``words`` (from ``start``) where ``piece`` occurs word for word."""
    if not piece or len(piece) > len(words):
        return []
    first, size = piece[0], len(piece)
    return [i for i in range(start, len(words) - size + 1) if words[i] == first and words[i : i + size] == piece]


def _windows(piece: list[str], words: list[str], start: int, keep: int) -> list[int]:
    """Start indexes of the ``keep`` stretches of ``words`` that share most words with ``piece``."""
    wanted = set(piece)
    size = len(piece)
    hits = [1 if w in wanted else 0 for w in words]
    if not any(hits[start:]):
        return []
    best: list[tuple[int, int]] = []
    running = sum(hits[start : start + size])
    for i in range(start, max(start + 1, len(words) - size + 1)):
        if i > start:
            running += (hits[i + size - 1] if i + size - 1 < len(words) else 0) - hits[i - 1]
        if hits[i] or (i + size - 1 < len(words) and hits[i + size - 1]):
            best.append((running, i))
    best.sort(key=lambda pair: (-pair[0], pair[1]))
    chosen: list[int] = []
    for _, i in best:
        if all(abs(i - other) > size // 2 for other in chosen):
            chosen.append(i)
        if len(chosen) == keep:
            break
    return chosen


def align(
    piece: list[Word], words: list[Word], start: int = 0, texts: tuple[str, str] = ("", ""), keep: int = 3
) -> Alignment | None:
    """The best word-by-word alignment of all of ``piece`` with a stretch of ``words`` (from index
    ``start``): fewest edits (a word changed, added or dropped), then most words agreeing.
    ``texts`` are the piece's and the article's text, from which differences are quoted."""
    asked = [w.norm for w in piece]
    real = [w.norm for w in words]
    best: tuple[Alignment, _Pairs] | None = None
    slack = max(3, len(asked) // 3)
    for window_start in _windows(asked, real, start, keep):
        low = max(start, window_start - slack)
        high = min(len(real), window_start + len(asked) + slack)
        found = _align_window(asked, real, low, high)
        if found and (best is None or (found[0].edits, -found[0].matched) < (best[0].edits, -best[0].matched)):
            best = found
    if best is None:
        return None
    return _with_text(best[0], best[1], piece, words, texts)


_Pairs = list[tuple[int | None, int | None]]


def _align_window(asked: list[str], real: list[str], low: int, high: int) -> tuple[Alignment, _Pairs] | None:
    """Semi-global edit distance: all of ``asked`` against any stretch of ``real[low:high]``."""
    n, span = len(asked), high - low
    if n == 0 or span <= 0:
        return None
    # cost[i][j]: asked[:i] aligned to a stretch of real ending at low + j (free start).
    cost = [[0] * (span + 1)] + [[i] + [0] * span for i in range(1, n + 1)]
    move = [[0] * (span + 1) for _ in range(n + 1)]  # 0 start, 1 diagonal, 2 asked only, 3 real only
    for i in range(1, n + 1):
        cost[i][0], move[i][0] = i, 2
        for j in range(1, span + 1):
            same = asked[i - 1] == real[low + j - 1]
            diagonal = cost[i - 1][j - 1] + (0 if same else 1)
            up = cost[i - 1][j] + 1
            left = cost[i][j - 1] + 1
            if diagonal <= up and diagonal <= left:
                cost[i][j], move[i][j] = diagonal, 1
            elif up <= left:
                cost[i][j], move[i][j] = up, 2
            else:
                cost[i][j], move[i][j] = left, 3
    end = min(range(1, span + 1), key=lambda j: (cost[n][j], -j))
    pairs: _Pairs = []
    i, j = n, end
    while i > 0:
        step = move[i][j]
        if step == 1:
            pairs.append((i - 1, low + j - 1))
            i, j = i - 1, j - 1
        elif step == 2:
            pairs.append((i - 1, None))
            i -= 1
        else:
            pairs.append((None, low + j - 1))
            j -= 1
    pairs.reverse()
    real_indexes = [r for _, r in pairs if r is not None]
    if not real_indexes:
        return None
    matched, run, longest = 0, 0, 0
    for a, r in pairs:
        if a is not None and r is not None and asked[a] == real[r]:
            matched, run = matched + 1, run + 1
            longest = max(longest, run)
        else:
            run = 0
    # Differences are written out by ``_with_text``, for the one alignment kept.
    return Alignment(real_indexes[0], real_indexes[-1], cost[n][end], matched, longest, ()), pairs


def _with_text(
    alignment: Alignment, pairs: _Pairs, piece: list[Word], words: list[Word], texts: tuple[str, str]
) -> Alignment:
    """The alignment with its differences written out: the asked words as typed, the real words
    as the article writes them, with their offsets."""
    asked_text, real_text = texts
    differences: list[Difference] = []
    asked_run: list[int] = []
    real_run: list[int] = []

    def written(text: str, found: list[Word], run: list[int]) -> str:
        if not run:
            return ""
        first, last = found[run[0]], found[run[-1]]
        return text[first.start : last.end] if text else " ".join(found[i].norm for i in run)

    def flush() -> None:
        if asked_run or real_run:
            real_offsets = (words[real_run[0]].start, words[real_run[-1]].end) if real_run else (-1, -1)
            differences.append(
                Difference(written(asked_text, piece, asked_run), written(real_text, words, real_run), *real_offsets)
            )
            asked_run.clear()
            real_run.clear()

    for a, r in pairs:
        if a is not None and r is not None and piece[a].norm == words[r].norm:
            flush()
            continue
        if a is not None:
            asked_run.append(a)
        if r is not None:
            real_run.append(r)
    flush()
    return Alignment(
        alignment.first, alignment.last, alignment.edits, alignment.matched, alignment.longest_run, tuple(differences)
    )
