"""Is this quote real? The quote check behind ``byline verify`` and ``/verify``.

A reporter pastes a quote a reader sent in; Byline answers with one of four verdicts:

- **verbatim**: the words stand in a stored article (case, punctuation and quote marks aside),
  said by the person named (or by whoever the article says, when nobody is named);
- **altered**: a real quote lines up with the words but some differ: the closest real quote is
  shown with the differing words marked and counted;
- **misattributed**: the words are real, but the article gives them to someone else;
- **not_found**: nothing in the library is clearly the same quote; the closest quotes are shown.

The hard rule is that no altered or invented quote is ever called verbatim: verbatim needs every
word of every piece to stand in the article in order, and "altered" needs the quote to be
clearly the same one (most of its words in place, a run of them unbroken): a loose paraphrase is
not found, not "altered". Candidates come from an index of runs of three quoted words
(``quote_index.py``) and from the keyword index (words outside quote marks), so a check reads a
handful of articles, not the library; who said the words comes from the quotes extracted at
ingest (``quote_speakers.py``), and words in an article that nobody is quoted saying are still
found in its text.
"""

from __future__ import annotations

import math
import threading
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from retrieval.citations import citation_of
from retrieval.errors import BylineError
from retrieval.features.quote_index import quote_index
from retrieval.features.quote_speakers import named_before, one_quote, paragraph_of, same_person, speaker_of
from retrieval.features.quote_text import (
    Alignment,
    AskedQuote,
    Difference,
    Word,
    align,
    find_exact,
    parse_asked,
    words_of,
)
from retrieval.models import AnswerSpan, Article, Citation, Quote
from retrieval.ports import Corpus
from retrieval.reading.text import search_tokens
from retrieval.scope import ResolvedScope

Verdict = Literal["verbatim", "altered", "misattributed", "not_found"]

# Longer than any quote worth checking; a pasted article is not a quote.
MAX_QUOTE_CHARS = 2000
# Passages the keyword index returns, and the articles among them that are read in full.
CANDIDATE_PASSAGES = 40
CANDIDATE_ARTICLES = 12
ALIGNED_ARTICLES = 8
# "Clearly the same quote": at least this share of the asked words in place, in an unbroken run
# of at least RUN_WORDS of them, and at least MIN_WORDS asked words. Below that the words are a
# paraphrase at best, and a paraphrase is not a quote to correct. On the labelled set's dev half
# the hand-written fabricated quotes share at most 36% of their words with their nearest real
# quote and the altered ones (1-3 words changed) at least 75%; 60% leaves room for a short
# partial quote with two words changed (3 of 5).
SAME_QUOTE_SHARE = 0.6
FEW_EDITS, FEW_EDITS_SHARE = 3, 0.5
RUN_WORDS = 3
MIN_WORDS = 4
CLOSEST_SHOWN = 3
# The most words of attribution ("Mourinho told reporters on Saturday") left out between two quotes.
MAX_ATTRIBUTION_WORDS = 12
# A closest quote shares at least this many content words with the one asked about (most first).
CLOSEST_SHARED_WORDS = 1


class QuoteCheckError(BylineError):
    """A quote that cannot be checked as given (empty, or far too long)."""


@dataclass
class QuoteCheck:
    """The verdict on one quote, with the real words behind it.

    ``spans`` are the real words, each a verbatim span of the cited article (one per piece of a
    quote joined by an ellipsis) and all citing ``citations[0]``; ``closest`` (not found) are the
    nearest real quotes, citing the citations after it. ``speaker`` is who the article says
    spoke the real words ("" when it does not say).
    """

    verdict: Verdict
    asked: AskedQuote
    speaker: str = ""
    spans: list[AnswerSpan] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    changed_words: int = 0
    articles_searched: int = 0
    closest: list[AnswerSpan] = field(default_factory=list)
    # Whether the real words stand in quote marks (else they are the article's own words), and,
    # for words the article attributes to nobody, whether the speaker asked about is named just
    # before them (the renderers word their notes from these).
    quoted: bool = True
    named_nearby: bool = False
    # Altered by joining: every word is real, but the pieces an ellipsis joins are far apart.
    joined_apart: bool = False
    # The reason in a sentence, when the verdict needs one (JSON and plain text).
    note: str = ""

    @property
    def text(self) -> str:
        """The real words (pieces joined by " … "), or "" when none were found."""
        return " … ".join(span.text for span in self.spans)

    @property
    def citation(self) -> Citation | None:
        return self.citations[0] if self.spans and self.citations else None

    def to_json(self) -> dict[str, Any]:
        citation = self.citation
        return {
            "verdict": self.verdict,
            "speaker": self.speaker or None,
            "asked_speaker": self.asked.speaker or None,
            "asked_text": self.asked.text,
            "text": self.text or None,
            "citation": asdict(citation) if citation else None,
            "spans": [asdict(span) for span in self.spans],
            "differences": [{"asked": d.asked, "real": d.real} for d in self.differences],
            "changed_words": self.changed_words,
            "articles_searched": self.articles_searched,
            "closest": [self._closest_json(span) for span in self.closest],
            "quoted": self.quoted,
            "joined_apart": self.joined_apart,
            "note": self.note or None,
        }

    def _closest_json(self, span: AnswerSpan) -> dict[str, Any]:
        return {
            "text": span.text,
            "speaker": span.speaker or None,
            "start": span.start,
            "end": span.end,
            "paragraph": span.paragraph,
            "citation": asdict(self.citations[span.citation - 1]),
        }


@dataclass
class _Match:
    """Where a quote's pieces line up in one article."""

    article: Article
    words: list[Word]
    pieces: list[Alignment]

    @property
    def edits(self) -> int:
        return sum(p.edits for p in self.pieces)

    @property
    def matched(self) -> int:
        return sum(p.matched for p in self.pieces)

    @property
    def longest_run(self) -> int:
        return max((p.longest_run for p in self.pieces), default=0)

    def offsets(self, alignment: Alignment) -> tuple[int, int]:
        return self.words[alignment.first].start, self.words[alignment.last].end

    @property
    def spans(self) -> list[tuple[int, int]]:
        """Where each piece stands in the article's text."""
        return [self.offsets(piece) for piece in self.pieces]


def check_quote(library: Corpus, text: str, speaker: str = "", scope: ResolvedScope | None = None) -> QuoteCheck:
    """The verdict on ``text`` (a quote as pasted, perhaps with its speaker written in), said by
    ``speaker`` when given, among the library's articles (or ``scope``'s)."""
    if len(text) > MAX_QUOTE_CHARS:
        raise QuoteCheckError(
            f"That is {len(text):,} characters; a quote to check is at most {MAX_QUOTE_CHARS:,}. Paste the quote alone."
        )
    asked = parse_asked(text, speaker)
    pieces = [words_of(piece) for piece in asked.pieces]
    if not any(pieces):
        raise QuoteCheckError('Give the words of a quote to check, e.g. `Mourinho: "We were the better team"`.')
    searched = scope.article_count if scope is not None else library.article_count()
    candidates = _candidates(library, asked, pieces, scope)
    exact = [m for m in (_match(a, words, pieces, exact_only=True) for a, words in candidates) if m]
    if exact:
        return _exact_verdict(library, asked, exact, searched)
    # Word-by-word alignment costs a few milliseconds an article: only the likeliest are aligned.
    aligned = (_match(a, words, pieces, asked.pieces) for a, words in candidates[:ALIGNED_ARTICLES])
    matches = sorted((m for m in aligned if m), key=lambda m: (m.edits, -m.matched))
    spoken = [joined for joined in (_without_attribution(library, m) for m in matches[:3]) if joined]
    if spoken:
        return _exact_verdict(library, asked, spoken, searched)
    total = sum(len(p) for p in pieces)
    if matches and _same_quote(matches[0], total):
        return _altered(library, asked, matches[0], searched)
    return _not_found(library, asked, candidates, scope)


def _candidates(
    library: Corpus, asked: AskedQuote, pieces: list[list[Word]], scope: ResolvedScope | None
) -> list[tuple[Article, list[Word]]]:
    """The articles whose quotes share most runs of words with the quote (``quote_index``), then
    those whose passages share most rare words with it (the keyword index: words an article says
    outside quote marks), with their words."""
    ordered = [
        a
        for a in quote_index(library).articles_sharing(pieces, CANDIDATE_ARTICLES)
        if scope is None or scope.allows_article(a)
    ]
    tokens = search_tokens(" ".join(asked.pieces))
    if not tokens:
        # Only stopwords ("it is what it is"): still a quote; look for its words as they are.
        tokens = [w.norm for piece in asked.pieces for w in words_of(piece)]
    with library.lock:
        hits = library.sparse.search(tokens, CANDIDATE_PASSAGES, within=scope.passages if scope else None)
    article_of = library.store.article_ids_of_passages([passage_id for passage_id, _ in hits])
    by_keywords: list[int] = []
    for passage_id, _ in hits:
        article_id = article_of.get(passage_id)
        if article_id is not None and article_id not in ordered and article_id not in by_keywords:
            by_keywords.append(article_id)
    found = []
    for article_id in ordered + by_keywords[:CANDIDATE_ARTICLES]:
        article = library.store.article(article_id, with_text=True)
        if article is not None:
            found.append((article, _words_of_article(article)))
    return found


_ARTICLE_WORDS: dict[tuple[int, int], list[Word]] = {}
_ARTICLE_WORDS_KEPT = 512
# Checks run in the service's worker threads; the cache is shared by them.
_ARTICLE_WORDS_LOCK = threading.Lock()


def _words_of_article(article: Article) -> list[Word]:
    """An article's words, kept for the articles read most recently: a batch of quotes, or the
    quotes a newsroom checks about one story, read the same few articles again and again."""
    key = (article.id, hash(article.text))
    with _ARTICLE_WORDS_LOCK:
        words = _ARTICLE_WORDS.pop(key, None)
    if words is None:
        words = words_of(article.text)
    with _ARTICLE_WORDS_LOCK:
        if key not in _ARTICLE_WORDS and len(_ARTICLE_WORDS) >= _ARTICLE_WORDS_KEPT:
            del _ARTICLE_WORDS[next(iter(_ARTICLE_WORDS))]
        _ARTICLE_WORDS[key] = words  # last in: the most recently used
    return words


def _match(
    article: Article, words: list[Word], pieces: list[list[Word]], texts: tuple[str, ...] = (), exact_only: bool = False
) -> _Match | None:
    """The pieces lined up in order in one article: word for word where they can be, else (unless
    ``exact_only``) as closely as they can; None when a piece cannot be placed."""
    norms = [w.norm for w in words]
    placed: list[Alignment] = []
    start = 0
    for index, piece in enumerate(pieces):
        if not piece:
            continue
        exact = find_exact([w.norm for w in piece], norms, start)
        if exact:
            first = exact[0]
            last = first + len(piece) - 1
            placed.append(Alignment(first, last, 0, len(piece), len(piece), ()))
        elif exact_only:
            return None
        else:
            found = align(piece, words, start, (texts[index] if texts else "", article.text))
            if found is None:
                return None
            placed.append(found)
        start = placed[-1].last + 1
    return _Match(article, words, placed) if placed else None


def _without_attribution(library: Corpus, match: _Match) -> _Match | None:
    """``"A," Mourinho said. "B."`` pasted as "A. B.": when the only difference is article words
    left out, and every one of them stands outside quote marks (the attribution between two
    quotes), the match is the quotes' words, in pieces; else None."""
    gaps = [d for piece in match.pieces for d in piece.differences]
    if not gaps or any(d.asked or d.real_start < 0 for d in gaps):
        return None
    if sum(len(d.real.split()) for d in gaps) > MAX_ATTRIBUTION_WORDS:
        return None
    quotes = library.store.quotes_of_articles([match.article.id])
    if any(q.start < d.real_end and d.real_start < q.end for d in gaps for q in quotes):
        return None  # a word inside quote marks was left out: altered
    pieces: list[Alignment] = []
    for piece in match.pieces:
        run: list[int] = []
        for index in range(piece.first, piece.last + 1):
            word = match.words[index]
            if any(d.real_start <= word.start < d.real_end for d in gaps):
                if run:
                    pieces.append(Alignment(run[0], run[-1], 0, len(run), len(run), ()))
                run = []
            else:
                run.append(index)
        if run:
            pieces.append(Alignment(run[0], run[-1], 0, len(run), len(run), ()))
    joined = _Match(match.article, match.words, pieces)
    # Each piece must be words inside quote marks: skipping words of the article's own prose
    # ("Mourinho said the club would appeal") makes a quote nobody wrote.
    inside = all(any(q.start <= start and end <= q.end for q in quotes) for start, end in joined.spans)
    return joined if inside else None


def _same_quote(match: _Match, total: int) -> bool:
    """Whether an inexact match is clearly the same quote, changed: not a loose paraphrase. A few
    words changed (``FEW_EDITS``) in a short quote leave less of it in place than in a long one,
    so up to that many edits only half of it must stand."""
    # One word changed in the middle of five leaves runs of two: still plainly the same words.
    run = RUN_WORDS if match.edits > 1 or total < 5 else RUN_WORDS - 1
    if total < MIN_WORDS or match.longest_run < run:
        return False
    share = FEW_EDITS_SHARE if match.edits <= FEW_EDITS else SAME_QUOTE_SHARE
    return match.matched >= math.ceil(share * total)


# -- verdicts ------------------------------------------------------------------------------


def _exact_verdict(library: Corpus, asked: AskedQuote, exact: list[_Match], searched: int) -> QuoteCheck:
    """Every word is real: verbatim when the speaker agrees (or none was asked), else misattributed.
    Pieces joined by an ellipsis must be pieces of one quote; joined from far apart, they are a
    quote nobody said, so "altered"."""
    whole = [m for m in exact if one_quote(library, m.article, m.spans)]
    if not whole:
        result = _altered(library, asked, exact[0], searched)
        result.joined_apart = True
        result.note = "Every word is real, but the pieces come from different quotes: nobody said them together."
        return result
    attributed = [(m, speaker_of(library, m.article.id, m.spans)) for m in whole]
    if not asked.speaker:
        # The article that says who spoke first; then the one with the words in quote marks.
        match, (said_by, quoted) = max(attributed, key=lambda pair: (bool(pair[1][0]), pair[1][1]))
        note = "" if quoted else "These words are in the article's own text, not in quote marks."
        return _result(library, "verbatim", asked, match, said_by, searched, note=note, quoted=quoted)
    for match, (said_by, _) in attributed:
        if said_by and same_person(asked.speaker, said_by):
            return _result(library, "verbatim", asked, match, said_by, searched)
    for match, (said_by, quoted) in attributed:
        # Words in quote marks that the article gives to nobody: the person named just before
        # them. (The article's own prose, reported speech included, is nobody's quote.)
        if quoted and not said_by and named_before(library, match.article, match.spans[0][0], asked.speaker):
            note = f"The article does not say outright who said this; {asked.speaker} is named just before it."
            result = _result(library, "verbatim", asked, match, "", searched, note=note, quoted=quoted)
            result.named_nearby = True
            return result
    match, (said_by, quoted) = max(attributed, key=lambda pair: (bool(pair[1][0]), pair[1][1]))
    if said_by:
        note = f"The article gives these words to {said_by}, not {asked.speaker}."
    elif quoted:
        note = f"The article does not say who said this, and does not name {asked.speaker} near it."
    else:
        note = f"These words are the article's own, not a quote of {asked.speaker}."
    return _result(library, "misattributed", asked, match, said_by, searched, note=note, quoted=quoted)


def _altered(library: Corpus, asked: AskedQuote, match: _Match, searched: int) -> QuoteCheck:
    said_by, quoted = speaker_of(library, match.article.id, match.spans)
    differences = [d for piece in match.pieces for d in piece.differences]
    note = ""
    if asked.speaker and said_by and not same_person(asked.speaker, said_by):
        note = f"The real quote is {said_by}'s, not {asked.speaker}'s."
    result = _result(library, "altered", asked, match, said_by, searched, note=note, quoted=quoted)
    result.differences = differences
    result.changed_words = match.edits
    return result


def _not_found(
    library: Corpus, asked: AskedQuote, candidates: list[tuple[Article, list[Word]]], scope: ResolvedScope | None
) -> QuoteCheck:
    """Not found, with the closest quotes: those of the person named that share most content words
    with it (did they say something like it?), then those of the candidate articles."""
    searched = scope.article_count if scope is not None else library.article_count()
    result = QuoteCheck("not_found", asked, articles_searched=searched)
    wanted = set(search_tokens(" ".join(asked.pieces)))
    named = [name for name in library.speakers if asked.speaker and same_person(asked.speaker, name)]
    quotes = library.store.quotes_by_speakers(named) if named else []
    quotes += library.store.quotes_of_articles([article.id for article, _ in candidates])
    scored: dict[int, tuple[int, int, int, Quote]] = {}
    for quote in quotes:
        if scope is not None and not scope.allows_article(quote.article_id):
            continue
        shared = len(wanted & set(search_tokens(quote.text)))
        by_them = quote.speaker in named
        if shared >= CLOSEST_SHARED_WORDS:
            scored[quote.id] = (-by_them, -shared, len(quote.text), quote)
    for *_, quote in sorted(scored.values(), key=lambda row: row[:3])[:CLOSEST_SHOWN]:
        article = library.store.article(quote.article_id, with_text=True)
        if article is None:
            continue
        citation = _citation(library, article, quote.start, len(result.citations) + 1)
        result.citations.append(citation)
        span = AnswerSpan(quote.text, "quote", quote.speaker, citation.n, article.id, 0, quote.start, quote.end)
        result.closest.append(replace(span, paragraph=citation.paragraph))
    return result


def _result(
    library: Corpus,
    verdict: Verdict,
    asked: AskedQuote,
    match: _Match,
    said_by: str,
    searched: int,
    note: str = "",
    quoted: bool = True,
) -> QuoteCheck:
    offsets = [match.offsets(piece) for piece in match.pieces]
    citation = _citation(library, match.article, offsets[0][0], 1)
    spans = [
        AnswerSpan(
            match.article.text[start:end],
            "quote",
            said_by,
            1,
            match.article.id,
            paragraph_of(match.article.text, start),
            start,
            end,
        )
        for start, end in offsets
    ]
    return QuoteCheck(verdict, asked, said_by, spans, [citation], articles_searched=searched, quoted=quoted, note=note)


# -- citations -----------------------------------------------------------------------------


def _citation(library: Corpus, article: Article, offset: int, n: int) -> Citation:
    """The citation of the paragraph holding ``offset``, with the passage that holds it."""
    passage_id = 0
    for sentence in library.store.sentences_of_articles([article.id]):
        if sentence.start <= offset < sentence.end or (passage_id == 0 and sentence.start > offset):
            passage_id = sentence.passage_id
            break
        passage_id = sentence.passage_id if sentence.start <= offset else passage_id
    return citation_of(article, paragraph_of(article.text, offset), n, passage_id)
