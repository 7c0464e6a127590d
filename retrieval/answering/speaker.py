"""What someone said: resolving the person, then ranking their quotes by how well the quote
and its context fit the topic.

People paraphrase: "what did Brown say about borrowing costs?" of a story whose words are
"interest rates". So the topic is a scored signal, never an every-word gate: a quote scores by
its own closeness to the topic, by the paragraph around it, by how well its article matches the
whole question (hybrid retrieval), and by shared words. Only when the best score is low does
Byline say it found the person but nothing they said on that.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..models import Quote, Sentence
from ..people import SPEECH_VERBS, is_title_word, one_edit_apart
from ..ranking import Tuning, _overlap, _rank_passages
from ..text import search_tokens, without_accents
from .names import MissingTerms, letters_swapped

if TYPE_CHECKING:
    from ..library import Library
    from ..scope import ResolvedScope

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


# -- who ----------------------------------------------------------------------------------------

# Words that are never part of how a stored speaker is named.
_NOT_NAME_WORDS = frozenset(
    """the a an mr mrs ms miss dr sir dame lord lady prof professor rev reverend""".split()  # noqa: SIM905
)
_CAPITALISED_RUN = re.compile(r"(?:[A-Z][\w’'\-]*[a-z][\w’'\-]*)(?:\s+(?:de|van|von|der|la|le|da)?\s*[A-Z][\w’'\-]*)*")


def resolve_speakers(library: Library, who: str) -> list[str]:
    """Stored speakers the person named in a question refers to.

    Tries the name as asked, then the person the phrase is about (its head), then the names
    inside it, longest first ("the Microsoft boss Bill Gates" -> "Bill Gates", "Tony Blair's
    spokesman" -> "Tony Blair"), then the last words of each ("Daiwa's Michael Moran" ->
    "Michael Moran", then "Moran"), then the words of it that any stored speaker has
    ("chancellor gordon brown" -> "gordon brown").
    """
    head, rest = _head_and_rest(re.sub(r"['’]s\b", "", who), who)
    for candidate, whole in _name_candidates(who, head, rest):
        found = match_speakers(library, candidate)
        if whole:
            # The surname of a fuller name asked ("Jackson" of "Michael Jackson's doctor"): not
            # someone its first name rules out (Katherine Jackson), only that name or the surname.
            found = [speaker for speaker in found if set(_name_words(speaker)) <= whole]
        if found:
            return _with_shorter_names(library, found)
    by_word = _speaker_words(library)
    words = _name_words(head)
    if not words:
        return []
    # The surname decides: "Rob Partridge" is not every stored Rob when nobody quoted is called
    # Partridge (the topic then picked some Rob's quote about something else). A surname a
    # letter away from a stored one is that one ("Trevor Philips" for Trevor Phillips); with
    # the first name given, two letters away too ("Dave Prentice" for Dave Prentis).
    # The other words narrow it when they belong to the name ("chancellor gordon brown"), and
    # are dropped when they do not ("the symantec guy hogan": Symantec is a speaker too).
    others = [word for word in words[:-1] if word in by_word]
    spellings = _stored_spellings(words[-1], by_word, with_first_name=bool(others))
    for surname in spellings if others else []:
        found = match_speakers(library, " ".join([*others, surname]))
        if found:
            return found
    for surname in spellings:
        found = match_speakers(library, surname)
        # Without its first name a mistyped surname may be someone else's ("Trevor Philips" is
        # not Philip French): a corrected spelling alone counts only for someone of that name.
        if found and (surname == words[-1] or not others or _shares_a_word(found, others)):
            return found
    return []


def _with_shorter_names(library: Library, found: list[str]) -> list[str]:
    """The speakers found, and those stored under part of one of their names that holds the
    surname ("McConnell", "Le Bon"): an article that never gives the full name near a quote
    stores it under the name it does give."""
    by_word = _speaker_words(library)
    shorter = []
    for speaker in found:
        words = _name_words(speaker)
        if len(words) < 2:
            continue
        for other in by_word.get(words[-1], set()):
            other_words = _name_words(other)
            if other not in found and len(other_words) < len(words) and set(other_words) <= set(words):
                shorter.append(other)
    return found + sorted(set(shorter))


def _shares_a_word(speakers: list[str], words: list[str]) -> bool:
    return any(set(words) & set(_name_words(speaker)) for speaker in speakers)


# Where the person a phrase names is said to belong somewhere: "William Corr of the Campaign
# for Tobacco-Free Kids", "Kurt Karl at Swiss Re", "meighan from kasabian".
_AFFILIATION = re.compile(r"\s+(?:of|from|at|with|for|in)\s+")
# Where the person follows their organisation: "Bank of America's Robert Sinche".
_POSSESSIVE_BEFORE_NAME = re.compile(r"^.*['’]s\s+(?=[A-Z])")


def _head_and_rest(who: str, asked: str) -> tuple[str, str]:
    """The part of a phrase that names the person, and the rest (their organisation or
    affiliation, whose own names are tried only when the head names nobody)."""
    if "," in who:
        # An apposition: "Clement, the German economy minister".
        first, after = who.split(",", 1)
        if _CAPITALISED_RUN.search(first):
            return first, after
    possessive = _POSSESSIVE_BEFORE_NAME.match(asked)
    if possessive:
        return asked[possessive.end() :], asked[: possessive.end()]
    parts = _AFFILIATION.split(who, maxsplit=1)
    if len(parts) == 2 and parts[0].strip() and parts[0].split()[-1].lower() not in _NOT_NAME_WORDS:
        return parts[0], parts[1]
    return who, ""


def _stored_spellings(word: str, by_word: dict[str, set[str]], with_first_name: bool = False) -> list[str]:
    """``word`` if a stored speaker's name has it, then the stored words a letter away from it
    or with two letters swapped ("Schnieder"; five letters or more, so "Rob" is not "Bob").
    With the first name given, shorter words ("Oliver Irsh") and, from six letters, words two
    letters away ("Prentice" for "Prentis") count too: the first name then vouches for them."""
    exact = [word] if word in by_word else []
    if len(word) < (4 if with_first_name else 5):
        return exact
    close = [
        w
        for w in by_word
        if w != word
        and abs(len(w) - len(word)) <= 2
        and (
            one_edit_apart(w, word)
            or letters_swapped(w, word)
            or (with_first_name and len(word) >= 6 and _two_edits_apart(w, word))
        )
    ]
    return exact + sorted(close)


def _two_edits_apart(a: str, b: str) -> bool:
    """Whether two words of the same first letter are at most two letters added, dropped or
    changed apart (Levenshtein distance <= 2)."""
    if a[:1] != b[:1]:
        return False
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1] <= 2


def _name_candidates(who: str, head: str, rest: str) -> list[tuple[str, frozenset[str]]]:
    """The name as asked, then the names of its head, each run followed by its last words
    ("Daiwa Michael Moran", "Michael Moran", "Moran"), the last run first ("the Aston Martin
    boss Ulrich Bez"); the rest's names only when the head has none ("Tony Blair's spokesman").
    With each, the words of the fuller name it was cut from (titles aside), when it was."""
    candidates: dict[str, frozenset[str]] = {who.strip(): frozenset(), head.strip(): frozenset()}
    runs = _CAPITALISED_RUN.findall(head)
    if not runs:
        runs = _CAPITALISED_RUN.findall(rest)
    ordered = sorted(reversed(runs), key=lambda run: -len(run.split())) if runs else []
    for run in ordered:
        words = run.split()
        named = frozenset(w for w in _name_words(run) if not is_title_word(w))
        for i in range(len(words)):
            part = " ".join(words[i:])
            cut = len(_name_words(part)) < len(named)
            candidates.setdefault(part, named if cut else frozenset())
    return [(c, whole) for c, whole in candidates.items() if c]


def _name_words(who: str) -> list[str]:
    # "Kilroy-Silk" is stored as "Robert Kilroy Silk" by one article and "Kilroy-Silk" by another.
    words = without_accents(who).replace("’", "'").replace("-", " ").split()
    return [w.lower() for w in words if w.lower() not in _NOT_NAME_WORDS]


def match_speakers(library: Library, who: str) -> list[str]:
    """Stored speakers a name refers to ("Mourinho" -> "Jose Mourinho"; "Jose" -> every stored
    speaker called Jose: the topic then chooses among them)."""
    wanted = _name_words(who)
    if not wanted:
        return []
    by_word = _speaker_words(library)
    candidates = set.intersection(*(by_word.get(w, set()) for w in wanted))
    matches = []
    for speaker in sorted(candidates):
        parts = without_accents(speaker).lower().replace("’", "'").replace("-", " ").split()
        if all(w in parts for w in wanted):
            matches.append(speaker)
    return matches


_SPEAKER_WORDS: list[tuple[dict[str, int], dict[str, set[str]]]] = []


def _speaker_words(library: Library) -> dict[str, set[str]]:
    """Capitalised stored speakers by each lower-cased word of their name, built once per ingest.

    ``library.speakers`` is replaced (a new dict) whenever articles change, so the dict itself
    is the cache key; scanning thousands of speakers per question would cost milliseconds.
    """
    speakers = library.speakers
    for known, index in _SPEAKER_WORDS:
        if known is speakers:
            return index
    built: dict[str, set[str]] = {}
    for speaker in speakers:
        if speaker[:1].isupper():
            for part in without_accents(speaker).lower().replace("’", "'").replace("-", " ").split():
                built.setdefault(part, set()).add(speaker)
    # Keep the last few (one per open library); holding the dict keeps its identity unique.
    _SPEAKER_WORDS[:] = [*_SPEAKER_WORDS[-3:], (speakers, built)]
    return built


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
    library: Library,
    ranges: np.ndarray,
    topic: str,
    topic_vector: np.ndarray | None,
    tuning: Tuning,
    scope: ResolvedScope | None = None,
    ranked_passages: list[tuple[int, float]] | None = None,
) -> list[RankedQuote]:
    """A speaker's quotes, best first. ``ranges`` rows are (quote id, first sentence id, last
    sentence id, partial, article id) from ``Store.speaker_quote_ranges``; ``ranked_passages``
    is the topic's passage ranking when the caller already has it."""
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
    # The topic's names and numbers are the words people do not paraphrase: a year or a name
    # missing from the quote's article all but rules the quote out ("touring in 2009" of a 2005
    # story); its other words may be paraphrased freely.
    years = [t for t in search_tokens(topic) if t.isdigit() and len(t) >= 2]
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
            - (tuning.speaker_missing_name_penalty if names.from_article(quote.article_id) else 0.0)
            - (1.0 if years and not set(years) <= library.article_terms.of(quote.article_id) else 0.0)
            # A few quoted words ("uncharted territory") sit close to any topic they name, but
            # say less than the sentence the speaker said about it.
            - tuning.speaker_short_quote_penalty * max(0, SHORT_QUOTE_WORDS - len(quote.text.split()))
        )
        ranked.append(RankedQuote(score, quote, sentence, float(closeness[i]), around, float(article_scores[i])))
    return sorted(ranked, key=lambda item: -item.score)


def _newest(library: Library, ranges: np.ndarray) -> list[RankedQuote]:
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
    library: Library,
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


def _context_closeness(
    library: Library, passage_ids: list[int], vector: np.ndarray, tokens: list[str], rarity: dict[str, float]
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


def choose_quotes(ranked: list[RankedQuote], tuning: Tuning) -> list[RankedQuote]:
    """The best quote and, where another comes close in score, that one too (never the same
    words twice, nor two pieces of one paragraph's quote)."""
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
            or item.quote.text == c.quote.text  # the same words reported in two articles
            for c in chosen
        ):
            continue
        chosen.append(item)
    return sorted(chosen, key=lambda item: (item.quote.article_id, item.quote.start))


# A quote shown whole has at most this many words; a longer one is shown by its best sentence.
QUOTE_WORDS_SHOWN = 70


def quote_window(library: Library, quote: Quote, best: Sentence, article_text: str) -> tuple[int, int]:
    """What of a quote to show: all of what the speaker said there when it is short (a quote of
    several sentences is one unit), else this piece of it, else its best sentence (verbatim).

    A writer who opens each sentence of one quote anew (`"A. "B. "C."`) leaves it stored piece
    by piece under one group; the words asked about are often in the piece after the one
    closest to the topic (natural questions: the continuation was dropped as "the same quote").
    """
    if len(quote.text.split()) > QUOTE_WORDS_SHOWN:
        return max(quote.start, best.start), min(quote.end, best.end)
    pieces = sorted(
        (
            (q.start, q.end)
            for q in library.store.quotes_of_articles([quote.article_id])
            if q.group == quote.group and q.paragraph == quote.paragraph
        ),
        key=lambda piece: piece[0],
    )
    if (quote.start, quote.end) not in pieces:
        return quote.start, quote.end
    # Grow from this piece, the next one first (what follows the words closest to the topic
    # usually completes them), while the whole stays short.
    first = last = pieces.index((quote.start, quote.end))
    grown = True
    while grown:
        grown = False
        for low, high in ((first, last + 1), (first - 1, last)):
            inside = low >= 0 and high < len(pieces)
            if inside and len(article_text[pieces[low][0] : pieces[high][1]].split()) <= QUOTE_WORDS_SHOWN:
                first, last, grown = low, high, True
                break
    return pieces[first][0], pieces[last][1]
