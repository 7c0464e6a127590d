"""What someone said: ranking a speaker's quotes by how well the quote and its context fit the
topic (``who.py`` finds the speaker), and how much of a quote to show.

People paraphrase: "what did Brown say about borrowing costs?" of a story whose words are
"interest rates". So the topic is a scored signal, never an every-word gate: a quote scores by
its own closeness to the topic, by the paragraph around it, by how well its article matches the
whole question (hybrid retrieval), and by shared words. Only when the best score is low does
Byline say it found the person but nothing they said on that.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from retrieval.answering.names import MissingTerms
from retrieval.models import Quote, Sentence
from retrieval.ranking import Tuning, _overlap, _rank_passages
from retrieval.reading.people import SPEECH_VERBS
from retrieval.reading.text import search_tokens, without_accents

if TYPE_CHECKING:
    from retrieval.ports import Corpus
    from retrieval.scope import ResolvedScope

_SPEECH = re.compile(rf"\b(?:{SPEECH_VERBS}|according to)\b")
# How many words may stand between a name and its speech verb: "Volkswagen, meanwhile, says",
# "said HMV manager Clive Smith". Further away the verb is someone else's ("After beating Amy
# Winehouse, Jamelia and PJ Harvey to the prize, Joss Stone said").
_SPEECH_REACH = 3
_SPEECH_WORD = re.compile(r"[\w’'\-]+")


def reports_speech_of(who: str, text: str) -> bool:
    """Whether a sentence reports this speaker's words: their name (the surname at least)
    within a few words of a speech verb."""
    surname = without_accents(who).replace("’", "'").split()[-1].removesuffix("'s")
    text = without_accents(text)
    words = list(_SPEECH_WORD.finditer(text))
    named = [i for i, w in enumerate(words) if w.group().replace("’", "'").removesuffix("'s") == surname]
    if not named:
        return False
    starts = [w.start() for w in words]
    verbs = {bisect.bisect_left(starts, m.start()) for m in _SPEECH.finditer(text)}  # word index of each verb
    return any(abs(v - n) <= _SPEECH_REACH + 1 for v in verbs for n in named)


# -- their quotes, ranked -----------------------------------------------------------------------

# Quotes scored with their context after a first ranking by closeness and article: a prolific
# speaker can have thousands of quotes, and reading every paragraph would cost ~100 ms.
RESCORED_QUOTES = 40
# Without a topic ("what did Blair say?") the newest quotes are the ones to show.
NEWEST_QUOTES = 200
# Quotes of fewer words than this are scored down (``Tuning.speaker_short_quote_penalty`` a word).
SHORT_QUOTE_WORDS = 6
# Articles whose passages rank this high for the whole question count as being about it.
ARTICLE_CANDIDATES = 48


@dataclass(frozen=True)
class RankedQuote:
    """A quote with how well it fits the topic, and the parts of that score."""

    score: float
    quote: Quote
    best: Sentence  # the quote's sentence closest to the topic
    closeness: float  # the quote's own best cosine to the topic
    context: float  # the best cosine of the paragraph around it
    article: float  # its article's retrieval score for the topic


def articles_in_speaker_quotes(ranges: np.ndarray) -> int:
    return len(set(ranges[:, 4].tolist())) if len(ranges) else 0


def rank_quotes(
    library: Corpus,
    ranges: np.ndarray,
    topic: str,
    topic_vector: np.ndarray | None,
    tuning: Tuning,
    scope: ResolvedScope | None = None,
    ranked_passages: list[tuple[int, float]] | None = None,
    lead_in: bool = True,
) -> list[RankedQuote]:
    """A speaker's quotes, best first. ``ranges`` rows are (quote id, first sentence id, last
    sentence id, partial, article id) from ``Store.speaker_quote_ranges``; ``ranked_passages``
    is the topic's passage ranking when the caller already has it. ``lead_in``: whether the
    writer's sentence before a quote counts (for "what did X say about Y", where it often
    names Y; not for "who said ...", whose words describe the quote itself)."""
    if not len(ranges):
        return []
    if topic_vector is None:
        return _newest(library, ranges)
    quote_ids, firsts, lasts = ranges[:, 0], ranges[:, 1], ranges[:, 2]
    partial, article_ids = ranges[:, 3].astype(bool), ranges[:, 4]
    lengths = lasts - firsts + 1
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    sentence_ids = np.repeat(firsts - starts, lengths) + np.arange(int(lengths.sum()))
    with library.lock:
        vectors = library.dense.vectors(sentence_ids.tolist())
    cosines = vectors @ topic_vector
    closeness = np.maximum.reduceat(cosines, starts)
    topic_tokens = search_tokens(topic)
    relevance, floor = _article_relevance(library, topic_vector, topic_tokens, tuning, scope, ranked_passages)
    article_scores = np.array([relevance.get(int(a), floor) for a in article_ids.tolist()])
    first = closeness + tuning.speaker_article_weight * article_scores - 0.1 * partial
    top = np.argsort(-first)[:RESCORED_QUOTES].tolist()
    best_sentence = {
        int(quote_ids[i]): int(sentence_ids[starts[i] + int(np.argmax(cosines[starts[i] : starts[i] + lengths[i]]))])
        for i in top
    }
    quotes = library.store.quotes_by_ids(list(best_sentence))
    sentences = library.store.sentences_by_ids(list(best_sentence.values()))
    rarity = library.sparse.max_idf(topic_tokens)
    passages = [s.passage_id for s in sentences.values()]
    context = _context_closeness(library, passages, topic_vector, topic_tokens, rarity)
    leads = (
        _lead_in_closeness(library, quotes, {int(quote_ids[i]): int(firsts[i]) for i in top}, topic_vector)
        if lead_in and tuning.speaker_lead_weight
        else {}
    )
    # The topic's names and numbers are the words people do not paraphrase: a year or a name
    # missing from the quote's article all but rules the quote out ("touring in 2009" of a 2005
    # story); its other words may be paraphrased freely.
    # (A year: "the Wales number 10 shirt" names no year.)
    years = [t for t in search_tokens(topic) if re.fullmatch(r"(?:19|20)\d\d", t)]
    names = MissingTerms(library, f"about {topic}", names_as_names=True)
    ranked = []
    for i in top:
        quote = quotes.get(int(quote_ids[i]))
        sentence = sentences.get(best_sentence[int(quote_ids[i])])
        if quote is None or sentence is None:
            continue
        around, around_overlap = context.get(sentence.passage_id, (0.0, 0.0))
        overlap = _overlap(topic_tokens, rarity, quote.text)
        score = (
            float(first[i])
            + tuning.speaker_context_weight * around
            + tuning.lexical_weight * overlap
            + tuning.speaker_context_overlap_weight * around_overlap
            # Only what the lead-in adds: a quote on the topic already scores for it, and a shift
            # of every score would move the line between on topic and off it.
            + tuning.speaker_lead_weight * max(0.0, leads.get(quote.id, 0.0) - float(closeness[i]))
            - (tuning.speaker_missing_name_penalty if names.from_article(quote.article_id) else 0.0)
            - (1.0 if years and not set(years) <= library.article_terms.of(quote.article_id) else 0.0)
            # A few quoted words ("uncharted territory") sit close to any topic they name, but
            # say less than the sentence the speaker said about it.
            - tuning.speaker_short_quote_penalty * max(0, SHORT_QUOTE_WORDS - len(quote.text.split()))
        )
        ranked.append(RankedQuote(score, quote, sentence, float(closeness[i]), around, float(article_scores[i])))
    return sorted(ranked, key=lambda item: -item.score)


def _newest(library: Corpus, ranges: np.ndarray) -> list[RankedQuote]:
    quote_ids, firsts = ranges[:, 0], ranges[:, 1]
    newest = np.argsort(-quote_ids)[:NEWEST_QUOTES]
    quotes = library.store.quotes_by_ids(quote_ids[newest].tolist())
    first_sentences = library.store.sentences_by_ids(firsts[newest].tolist())
    ranked = [
        RankedQuote(
            (0.0 if q.partial else 0.2) + min(len(q.text), 300) / 3000, q, first_sentences[int(firsts[i])], 0, 0, 0
        )
        for i in newest.tolist()
        if (q := quotes.get(int(quote_ids[i]))) is not None and int(firsts[i]) in first_sentences
    ]
    return sorted(ranked, key=lambda item: -item.score)


def _article_relevance(
    library: Corpus,
    vector: np.ndarray,
    tokens: list[str],
    tuning: Tuning,
    scope: ResolvedScope | None = None,
    ranked: list[tuple[int, float]] | None = None,
) -> tuple[dict[int, float], float]:
    """Article id -> its best passage's fused score for the topic (the best sentence's cosine plus
    a share of BM25), and the score of an article not among the candidates (the lowest found)."""
    if ranked is None:
        ranked = _rank_passages(library, vector, tokens, tuning, scope)
    ranked = ranked[:ARTICLE_CANDIDATES]
    if not ranked:
        return {}, 0.0
    articles = library.store.article_ids_of_passages([pid for pid, _ in ranked])
    relevance: dict[int, float] = {}
    for pid, score in ranked:
        article_id = articles.get(pid)
        if article_id is not None and article_id not in relevance:
            relevance[article_id] = score
    return relevance, ranked[-1][1]


_QUOTE_MARKS = ('"', "“", "”")


def _lead_in_closeness(
    library: Corpus, quotes: dict[int, Quote], first_sentence: dict[int, int], vector: np.ndarray
) -> dict[int, float]:
    """Quote id -> the cosine to the topic of the writer's sentence right before the quote, when
    it is in the same or the paragraph before and quotes no one (sport reports set a quote up in
    a sentence of its own: "Asked about the heat, ..." or "X was angry with the referee.")."""
    wanted = {qid: first - 1 for qid, first in first_sentence.items() if qid in quotes}
    sentences = library.store.sentences_by_ids(sorted(set(wanted.values())))
    leads = {
        qid: sid
        for qid, sid in wanted.items()
        if (lead := sentences.get(sid)) is not None
        and lead.article_id == quotes[qid].article_id
        and lead.end <= quotes[qid].start
        and quotes[qid].paragraph - 1 <= lead.paragraph
        and not any(mark in lead.text for mark in _QUOTE_MARKS)
    }
    if not leads:
        return {}
    ids = sorted(set(leads.values()))
    with library.lock:
        cosines = library.dense.vectors(ids) @ vector
    by_sentence = dict(zip(ids, cosines.tolist(), strict=True))
    return {qid: by_sentence[sid] for qid, sid in leads.items()}


def _context_closeness(
    library: Corpus, passage_ids: list[int], vector: np.ndarray, tokens: list[str], rarity: dict[str, float]
) -> dict[int, tuple[float, float]]:
    """Passage id -> (best sentence cosine to the topic, share of the topic's words it has)."""
    sentences = library.store.sentences_of_passages(sorted(set(passage_ids)))
    if not sentences:
        return {}
    with library.lock:
        vectors = library.dense.vectors([s.id for s in sentences])
    cosines = vectors @ vector
    best: dict[int, float] = {}
    texts: dict[int, list[str]] = {}
    for sentence, cosine in zip(sentences, cosines.tolist(), strict=True):
        best[sentence.passage_id] = max(best.get(sentence.passage_id, -1.0), cosine)
        texts.setdefault(sentence.passage_id, []).append(sentence.text)
    return {pid: (best[pid], _overlap(tokens, rarity, " ".join(texts[pid]))) for pid in best}


def _shown_within(quote: Quote, article_id: int, window: tuple[int, int]) -> bool:
    return quote.article_id == article_id and window[0] <= quote.start and quote.end <= window[1]


class QuoteWindows:
    """What of each quote an answer shows (``quote_window``), worked out once a quote, with each
    article's text and quotes read once an answer."""

    def __init__(self, library: Corpus) -> None:
        self.library = library
        self._texts: dict[int, str] = {}
        self._quotes: dict[int, list[Quote]] = {}
        self._windows: dict[int, tuple[int, int]] = {}

    def article_text(self, article_id: int) -> str:
        if article_id not in self._texts:
            article = self.library.store.article(article_id, with_text=True)
            self._texts[article_id] = article.text if article is not None else ""
        return self._texts[article_id]

    def article_quotes(self, article_id: int) -> list[Quote]:
        if article_id not in self._quotes:
            self._quotes[article_id] = self.library.store.quotes_of_articles([article_id])
        return self._quotes[article_id]

    def holding(self, sentence: Sentence) -> Quote | None:
        """The attributed quote a sentence lies in, if any."""
        return next(
            (
                q
                for q in self.article_quotes(sentence.article_id)
                if q.speaker and q.start < sentence.end and sentence.start < q.end
            ),
            None,
        )

    def of(self, item: RankedQuote) -> tuple[int, int]:
        return self.window(item.quote, item.best)

    def window(self, quote: Quote, best: Sentence) -> tuple[int, int]:
        if quote.id not in self._windows:
            text = self.article_text(quote.article_id)
            self._windows[quote.id] = quote_window(quote, best, text, self.article_quotes(quote.article_id))
        return self._windows[quote.id]


def _one_utterance(a: Quote, b: Quote) -> bool:
    """Whether two quotes of one paragraph are pieces of one thing said: one quote (a group),
    or one speaker's words broken only by their attribution (`"When I came into the game,
    hookers threw in," he said. "Now you're expected to carry."`)."""
    return a.group == b.group or (bool(a.speaker) and a.speaker == b.speaker)


def choose_quotes(ranked: list[RankedQuote], tuning: Tuning, windows: QuoteWindows) -> list[RankedQuote]:
    """The best quote and, where another comes close in score, that one too (never the same
    words twice, nor two pieces of one paragraph's quote, nor a piece that a chosen quote's
    window already shows)."""
    chosen: list[RankedQuote] = []
    for item in ranked:
        if len(chosen) >= tuning.max_quotes or item.score < ranked[0].score - tuning.quote_margin:
            break
        if any(
            (
                item.quote.group == c.quote.group
                and item.quote.article_id == c.quote.article_id
                and item.quote.paragraph == c.quote.paragraph
            )
            or _shown_within(item.quote, c.quote.article_id, windows.of(c))
            or item.quote.text == c.quote.text  # the same words reported in two articles
            for c in chosen
        ):
            continue
        chosen.append(item)
    return sorted(chosen, key=lambda item: (item.quote.article_id, item.quote.start))


# A quote shown whole has at most this many words; a longer one is shown by its best sentence.
QUOTE_WORDS_SHOWN = 70


def quote_window(quote: Quote, best: Sentence, article_text: str, article_quotes: Sequence[Quote]) -> tuple[int, int]:
    """What of a quote to show: all of what the speaker said there when it is short (a quote of
    several sentences is one unit), else this piece of it, else its best sentence (verbatim).

    A writer who opens each sentence of one quote anew (`"A. "B. "C."`) leaves it stored piece
    by piece under one group, and one who breaks it for the attribution (`"A," he said. "B."`)
    in two groups of one speaker; the words asked about are often in another piece than the one
    closest to the topic (natural questions: the continuation was dropped as "the same quote";
    round 22, invented sport reports: 9 more of 54 dev speaker questions once the pieces
    either side of "he said" count as one thing said).
    The window grows towards the quote's opening first: a speaker's first words are their
    answer ("We don't think we got our sums wrong."), what follows explains it (round 14, all
    1,600 seen natural questions: 2 more speaker answers, none lost, against growing onwards
    first; growing each way in turn changed nothing).
    """
    if len(quote.text.split()) > QUOTE_WORDS_SHOWN:
        return max(quote.start, best.start), min(quote.end, best.end)
    pieces = sorted(
        ((q.start, q.end) for q in article_quotes if q.paragraph == quote.paragraph and _one_utterance(q, quote)),
        key=lambda piece: piece[0],
    )
    if (quote.start, quote.end) not in pieces:
        return quote.start, quote.end
    # Grow from this piece, back to the quote's opening first, then onwards, while the whole
    # stays short.
    first = last = pieces.index((quote.start, quote.end))
    grown = True
    while grown:
        grown = False
        for low, high in ((first - 1, last), (first, last + 1)):
            inside = low >= 0 and high < len(pieces)
            if inside and len(article_text[pieces[low][0] : pieces[high][1]].split()) <= QUOTE_WORDS_SHOWN:
                first, last, grown = low, high, True
                break
    return pieces[first][0], pieces[last][1]
