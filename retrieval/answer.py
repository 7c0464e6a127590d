"""From a question to an ``Answer``: hybrid retrieval, sentence and quote selection, abstention.

Answers are extractive: every span is a sentence or a quote exactly as stored, with offsets.
When the best evidence is weak the answer says so and lists the closest passages instead.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .errors import BadQuestion
from .models import Answer, AnswerSpan, Citation, Passage, Quote, SearchHit, Sentence
from .people import SPEECH_VERBS, one_edit_apart
from .question import MAX_QUESTION_CHARS, Question, parse, with_context
from .ranking import TUNING, Tuning, _overlap, _rank_passages, _score_sentences, _Scored, answer_type
from .render import render_plain
from .text import search_tokens, without_accents

if TYPE_CHECKING:
    from .library import Library


def _check(question: str) -> None:
    if not question.strip():
        raise BadQuestion("Ask a question, for example: what did Mourinho say about the referee?")
    if len(question) > MAX_QUESTION_CHARS:
        raise BadQuestion(
            f"That question is {len(question):,} characters long; please keep it under {MAX_QUESTION_CHARS:,}."
        )


class _Citations:
    """Citation numbers, decided once here: one per (article, paragraph), in answer order."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self.numbers: dict[tuple[int, int], int] = {}
        self.items: list[Citation] = []

    def number(self, article_id: int, paragraph: int, passage_id: int) -> int:
        key = (article_id, paragraph)
        if key not in self.numbers:
            article = self.library.store.article(article_id)
            assert article is not None
            n = len(self.items) + 1
            self.items.append(
                Citation(
                    n, article.id, article.title, article.source, article.url, article.published, paragraph, passage_id
                )
            )
            self.numbers[key] = n
        return self.numbers[key]


def _abstain(
    library: Library,
    question: Question,
    vector: np.ndarray,
    tokens: list[str],
    tuning: Tuning,
    message: str = "",
    ranked: list[tuple[int, float]] | None = None,
) -> Answer:
    """The honest "not found" answer, with the closest passages (reusing a ranking if given)."""
    if ranked is None and library.dense.count():
        ranked = _rank_passages(library, vector, tokens, tuning)
    hits = _hits(library, ranked[:3]) if ranked else []
    count = library.store.article_count()
    answer = Answer(
        question=question.text,
        answered=False,
        spans=[],
        citations=[],
        message=message or f"I couldn't find that in the {count} article{'s' if count != 1 else ''} I have.",
        closest=hits,
        article_count=count,
        standalone_question=question.standalone,
    )
    answer.text = render_plain(answer)
    return answer


def _hits(library: Library, ranked: Sequence[tuple[int, float]]) -> list[SearchHit]:
    passages = library.store.passages([pid for pid, _ in ranked])
    hits = []
    for n, (pid, score) in enumerate(ranked, start=1):
        passage = passages.get(pid)
        if passage is not None:
            hits.append(SearchHit(passage, library.citation_for(passage, passage.paragraph_first, n), score))
    return hits


def search_passages(library: Library, query: str, k: int = 5) -> list[SearchHit]:
    """The ``k`` best passages for a query, each with the citation it would get."""
    _check(query)
    query = parse(query).text
    vector = library.embedder.encode_one(query)
    return _hits(library, _rank_passages(library, vector, search_tokens(query), TUNING)[:k])


def answer_question(
    library: Library, raw_question: str, history: Sequence[str] = (), tuning: Tuning = TUNING
) -> Answer:
    _check(raw_question)
    question = with_context(parse(raw_question), [h for h in history if h.strip()])
    reported_speaker, reported_topic = "", ""
    if question.kind == "speaker":
        speakers = match_speakers(library, question.who)
        if speakers:
            return _speaker_answer(library, question, speakers, tuning)
        # Never quoted directly: answer only with reported speech of theirs ("Nintendo says ...").
        reported_speaker, reported_topic = question.who, question.topic
        question = Question(question.text, "general")
    text = question.search_text
    tokens = search_tokens(text)
    vector = library.embedder.encode_one(text)
    if library.dense.count() == 0:
        return _abstain(
            library, question, vector, tokens, tuning, "I have no articles yet: add some with `byline ingest PATH`."
        )
    if tuning.absent_name_abstains and _names_absent(library, question.text):
        return _abstain(library, question, vector, tokens, tuning)
    ranked = _rank_passages(library, vector, tokens, tuning)
    scored, _ = _score_sentences(library, ranked, vector, tokens, tuning, question.text)
    if reported_speaker:
        scored = [s for s in scored if _reports_speech_of(reported_speaker, s.sentence.text)]
        if reported_topic and tuning.topic_in_quote_article:
            missing = _MissingTerms(library, reported_topic, every_word=True)
            scored = [s for s in scored if not missing.from_article(s.sentence.article_id)]
        if not scored:
            count = library.store.article_count()
            message = f"I found nothing {reported_speaker} said about that in the {count} articles I have."
            return _abstain(library, question, vector, tokens, tuning, message, ranked=ranked)
    if question.kind == "who_said":
        scored = [s for s in scored if _quote_speaker(library, s.sentence)] or scored
    elif scored:
        typed = _typed_first(scored, question.text, tuning)
        if typed is None:
            return _abstain(library, question, vector, tokens, tuning, ranked=ranked)
        scored = typed
    other_words = _words_besides_names(question.text)
    if not scored or not _confident(scored[0], tuning, other_words):
        return _abstain(library, question, vector, tokens, tuning, ranked=ranked)
    if tuning.names_in_answer_article and _MissingTerms(library, question.text).from_article(
        scored[0].sentence.article_id
    ):
        return _abstain(library, question, vector, tokens, tuning, ranked=ranked)
    chosen = [scored[0]]
    for candidate in scored[1:]:
        if len(chosen) >= tuning.max_sentences or candidate.score < scored[0].score - tuning.extra_sentence_margin:
            break
        if all(float(candidate.vector @ c.vector) < tuning.redundancy for c in chosen) and _confident(
            candidate, tuning, other_words
        ):
            chosen.append(candidate)
    citations = _Citations(library)
    spans = []
    for item in chosen:
        s = item.sentence
        n = citations.number(s.article_id, s.paragraph, s.passage_id)
        speaker = _quote_speaker(library, s)
        spans.append(
            AnswerSpan(s.text, "sentence", speaker, n, s.article_id, s.paragraph, s.start, s.end, round(item.score, 4))
        )
    return _finish(library, question, spans, citations)


_SPEECH = re.compile(rf"\b(?:{SPEECH_VERBS}|according to)\b")
# How many words may stand between a name and its speech verb: "Volkswagen, meanwhile, says",
# "said HMV manager Clive Smith". Further away the verb is someone else's ("After beating Amy
# Winehouse, Jamelia and PJ Harvey to the prize, Joss Stone said").
_SPEECH_REACH = 3
_SPEECH_WORD = re.compile(r"[\w’'\-]+")


def _reports_speech_of(who: str, text: str) -> bool:
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


_QUESTION_WORDS = frozenset(
    "what who whom whose which when where why how did does do is are was were can could".split()
)


# A capitalised word is a name unless it starts the question or a sentence of it; so is a word
# with a capital inside ("iPhone", "eBay").
_NAME_START = r"(?<!^)(?<![.?!] )"
_NAME = r"(?:[A-Z][\w’'\-]+|[a-z]+[A-Z][\w’'\-]*)"


def _question_name_tokens(text: str) -> list[str]:
    names = re.findall(rf"{_NAME_START}\b{_NAME}|\b\d{{2,}}\b", text.strip())
    return search_tokens(" ".join(n for n in names if n.lower() not in _QUESTION_WORDS))


def _question_name_phrases(text: str, from_start: bool = False) -> list[list[str]]:
    """Names of several words ("Apple Watch", "London Olympics") or a name and a number
    ("PlayStation 3" is not "PlayStation 2"), as their stemmed tokens. ``from_start``: the
    text is a fragment of a question (a topic), so its first word may be a name too."""
    start = "" if from_start else _NAME_START
    runs = re.findall(rf"{start}\b{_NAME}(?:\s+(?:{_NAME}|\d+\b))+", text.strip())
    phrases = [_split_hyphens(search_tokens(run)) for run in runs]
    return [phrase for phrase in phrases if len(phrase) >= 2]


def _capitalised_tokens(text: str) -> set[str]:
    return set(search_tokens(" ".join(re.findall(rf"\b{_NAME}", text))))


def _split_hyphens(tokens: list[str]) -> list[str]:
    return [part for token in tokens for part in token.split("-") if part]


class _MissingTerms:
    """Whether the names and numbers of a question (with ``every_word``, all its words) are
    missing from an article, one lookup per article. Variants count as present: "Californian"
    for "California", "Arabs" for "Arab", "drinkers" for "drinking"."""

    def __init__(self, library: Library, text: str, every_word: bool = False) -> None:
        self.library = library
        tokens = search_tokens(text) if every_word else _question_name_tokens(text)
        # Every number of a topic counts, however short: "the 7/7 bombings" (as "7 7").
        self.wanted = {t for t in tokens if len(t) >= 3 or (every_word and t.isdigit())}
        self.phrases = _question_name_phrases(text, from_start=every_word)
        if every_word:
            self.phrases += [search_tokens(n) for n in re.findall(r"\b\d+(?:[/.\-]\d+)+\b", text)]
        # A topic's names must be names in the article too: "sales of the Switch" is not in a
        # story where players "switch between the two screens". (Only for topics: in whole
        # questions askers capitalise freely, "Who was Guy's Rival?", and on SQuAD the same
        # rule cost as many answers as it caught out-of-corpus questions.)
        self.capitalised = {t for t in _capitalised_tokens(text) if len(t) >= 3} if every_word else set()
        self.checked: dict[int, bool] = {}

    def from_article(self, article_id: int) -> bool:
        if not self.wanted and not self.phrases:
            return False
        if article_id not in self.checked:
            self.checked[article_id] = bool(self._missing(article_id))
        return self.checked[article_id]

    def _missing(self, article_id: int) -> list[str]:
        present = self.library.article_terms.of(article_id)  # with "arab" from "Norman-Arab"
        # Any name missing means the article is about something else: "When did Queen Elizabeth
        # II die?" is not answered by a story about the band Queen. (Allowing one missing name
        # let four of the 56 fitting questions through.)
        missing = [t for t in self.wanted - present if not _parts_present(t, lambda part: _variant_in(part, present))]
        if missing or not (self.phrases or self.capitalised):
            return missing
        article = self.library.store.article(article_id, with_text=True)
        full_text = f"{article.title}\n{article.text}" if article else ""
        # A name of several words is one name: "the Apple Watch" is not in a story that has
        # "Apple" and, elsewhere, "watch".
        words = _split_hyphens(search_tokens(full_text))
        missing += [" ".join(phrase) for phrase in self.phrases if not _phrase_in(phrase, words)]
        if self.capitalised:
            names = _capitalised_tokens(full_text)
            names |= set(_split_hyphens(list(names)))
            missing += [t for t in self.capitalised if not _parts_present(t, lambda part: _variant_in(part, names))]
        return missing


def _phrase_in(phrase: list[str], words: list[str]) -> bool:
    """Whether the tokens of ``phrase`` (or variants of them) follow each other in ``words``."""

    def same(token: str, term: str) -> bool:
        return token == term or (term[:1] == token[:1] and _variant(token, term))

    return any(
        all(same(token, words[start + i]) for i, token in enumerate(phrase))
        for start in range(len(words) - len(phrase) + 1)
        if same(phrase[0], words[start])
    )


def _parts_present(token: str, present: Callable[[str], bool]) -> bool:
    """``present(token)``, or for a hyphenated token every part of it ("Diego-Carlsbad-San")."""
    if present(token):
        return True
    parts = [part for part in token.split("-") if part]
    return len(parts) > 1 and all(present(part) for part in parts)


def _variant_in(token: str, terms: Iterable[str]) -> bool:
    """Whether ``token`` or a variant of it (``_variant``) is among ``terms``."""
    return token in terms or any(_variant(token, term) for term in terms if term[:1] == token[:1])


def _variant(token: str, term: str) -> bool:
    """Whether ``term`` is ``token`` inflected or mistyped by one letter (stemmed words).

    A word of four letters or more matches a longer form of itself ("arab" / "arabic",
    "europ" / "european"); long words also match on a shared stem ("californian" /
    "california") or one added, dropped, changed or swapped letter ("Hatmanis" / "Hartmanis",
    "Carslbad" / "Carlsbad"). Numbers match only themselves.
    """
    if token.isdigit() or term.isdigit() or token == term:
        return False
    shared_stem = token.startswith(term) or term.startswith(token)
    if shared_stem and len(token) >= 6 and len(term) >= 6 and abs(len(term) - len(token)) <= 2:
        return True
    if len(token) >= 4 and term.startswith(token) and len(term) - len(token) <= 3:
        return True
    return len(token) >= 7 and (one_edit_apart(term, token) or _swapped(term, token))


def _swapped(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with two neighbouring letters swapped."""
    if len(a) != len(b):
        return False
    differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    if len(differ) != 2 or differ[1] != differ[0] + 1:
        return False
    i, j = differ
    return a[i] == b[j] and a[j] == b[i]


def _names_absent(library: Library, text: str) -> bool:
    """Whether the question names something the corpus never mentions.

    A capitalised word or a number ("Greta Thunberg", "in 2018") that no passage contains
    means the answer is not here, however close the rest of the question comes. A variant
    counts as present: "Californian" for "California", "Hatmanis" for "Hartmanis".
    """
    tokens = _question_name_tokens(text)
    if not tokens:
        return False
    absent = [t for t, v in library.sparse.max_idf(tokens).items() if v == 0.0]
    if absent:  # rare, and the titles' terms cost ~0.2 s to gather at 27k articles after a change
        in_titles = library.article_terms.in_titles()
        absent = [t for t in absent if t not in in_titles]
    return any(not _parts_present(t, lambda part: _variant_present(library, part)) for t in absent)


def _variant_present(library: Library, token: str) -> bool:
    if library.sparse.max_idf([token]).get(token, 0.0) > 0:
        return True
    if token.isdigit() or len(token) < 4:
        return False
    vocabulary = _vocabulary(library)
    # Variants share the first letter (``_variant``); the scan checks lengths before letters.
    at = bisect.bisect_left(vocabulary, token[:1])
    while at < len(vocabulary) and vocabulary[at][:1] == token[:1]:
        term = vocabulary[at]
        if abs(len(term) - len(token)) <= 3 and _variant(token, term):
            return True
        at += 1
    return False


def _vocabulary(library: Library) -> list[str]:
    """The index's terms, sorted."""
    with library.lock:
        return library.sparse.sorted_terms()


def _typed_first(scored: list[_Scored], question: str, tuning: Tuning) -> list[_Scored] | None:
    """The candidates with ones holding the asked-for type first; None when none holds it.

    "When did the Berlin Wall fall?" answered by a sentence with no date in it is a guess.
    """
    wanted = answer_type(question)
    if wanted is None or not tuning.type_window:
        return scored
    window = scored[: tuning.type_window]
    asked = set(search_tokens(question))
    # The thing asked for is not one the question already names: "Who was the first Labour
    # leader after Tony Blair?" is not answered by a sentence whose only names are Labour and Blair.
    typed = [
        s for s in window if any(not set(search_tokens(m.group())) <= asked for m in wanted.finditer(s.sentence.text))
    ]
    if not typed:
        return None
    return typed + [s for s in scored if s not in typed]


def _words_besides_names(question: str) -> frozenset[str]:
    """The question's search words that are not its names or numbers."""
    names = set(_question_name_tokens(question))
    return frozenset(t for t in search_tokens(question) if t not in names)


def _confident(item: _Scored, tuning: Tuning, other_words: frozenset[str] = frozenset()) -> bool:
    """Whether a sentence is close enough to answer: by meaning alone, or by meaning and shared
    words. Shared names alone are weak evidence: "Who was the first person to walk on the
    Moon?" shares only "Moon" with a sentence about the film Shape of the Moon, so a sentence
    sharing none of the question's other words must stand on its meaning."""
    if other_words and not any(_variant_in(t, other_words) for t in search_tokens(item.sentence.text)):
        return item.cosine >= tuning.names_only_min_cosine
    return item.cosine >= tuning.answer_min_cosine or (
        item.cosine >= tuning.answer_min_cosine_with_overlap and item.overlap >= tuning.answer_min_overlap
    )


def _quote_speaker(library: Library, sentence: Sentence) -> str:
    for quote in library.store.quotes_of_articles([sentence.article_id]):
        if quote.speaker and quote.start < sentence.end and sentence.start < quote.end:
            return quote.speaker
    return ""


def _finish(library: Library, question: Question, spans: list[AnswerSpan], citations: _Citations) -> Answer:
    answer = Answer(
        question=question.text,
        answered=True,
        spans=spans,
        citations=citations.items,
        article_count=library.store.article_count(),
        interpreted_as=_interpretation(question),
        standalone_question=question.standalone,
    )
    answer.text = render_plain(answer)
    return answer


def _interpretation(question: Question) -> str:
    if question.kind == "speaker":
        return f"what {question.who} said" + (f" about {question.topic}" if question.topic else "")
    return ""


# -- what someone said ------------------------------------------------------------------------


def match_speakers(library: Library, who: str) -> list[str]:
    """Stored speakers a name in a question refers to ("Mourinho" -> "Jose Mourinho")."""
    wanted = [
        w.lower()
        for w in without_accents(who).replace("’", "'").split()
        if w.lower() not in {"the", "mr", "mrs", "ms", "dr", "sir"}
    ]
    if not wanted:
        return []
    by_word = _speaker_words(library)
    candidates = set.intersection(*(by_word.get(w, set()) for w in wanted))
    matches = []
    for speaker in sorted(candidates | (by_word.get(wanted[0], set()) if len(wanted) == 1 else set())):
        parts = without_accents(speaker).lower().replace("’", "'").split()
        if all(w in parts for w in wanted) or (len(wanted) == 1 and wanted[0] == parts[-1]):
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
            for part in without_accents(speaker).lower().replace("’", "'").split():
                built.setdefault(part, set()).add(speaker)
    # Keep the last few (one per open library); holding the dict keeps its identity unique.
    _SPEAKER_WORDS[:] = [*_SPEAKER_WORDS[-3:], (speakers, built)]
    return built


# Quotes scored in full (word overlap) after a first ranking by cosine alone: a prolific
# speaker can have thousands of quotes, and tokenising them all would cost ~100 ms.
RESCORED_QUOTES = 40
# Without a topic ("what did Blair say?") the newest quotes are the ones to show.
NEWEST_QUOTES = 200


def _rank_quotes(
    library: Library,
    ranges: np.ndarray,
    topic_vector: np.ndarray | None,
    topic_tokens: list[str],
    tuning: Tuning,
) -> list[tuple[float, Quote, Sentence]]:
    """A speaker's quotes, best first: by cosine to the topic over all of them (vectorised),
    then with word overlap for the best ``RESCORED_QUOTES``. ``ranges`` rows are
    (quote id, first sentence id, last sentence id, partial)."""
    quote_ids, firsts, lasts, partial = ranges[:, 0], ranges[:, 1], ranges[:, 2], ranges[:, 3].astype(bool)
    if topic_vector is None:
        newest = np.argsort(-quote_ids)[:NEWEST_QUOTES]
        quotes = library.store.quotes_by_ids(quote_ids[newest].tolist())
        first_sentences = library.store.sentences_by_ids(firsts[newest].tolist())
        ranked = [
            ((0.0 if q.partial else 0.2) + min(len(q.text), 300) / 3000, q, first_sentences[int(firsts[i])])
            for i in newest.tolist()
            if (q := quotes.get(int(quote_ids[i]))) is not None and int(firsts[i]) in first_sentences
        ]
        return sorted(ranked, key=lambda item: -item[0])
    lengths = lasts - firsts + 1
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    sentence_ids = np.repeat(firsts - starts, lengths) + np.arange(int(lengths.sum()))
    with library.lock:
        vectors = library.dense.vectors(sentence_ids.tolist())
    cosines = vectors @ topic_vector
    first_scores = np.maximum.reduceat(cosines, starts) - 0.1 * partial
    top = np.argsort(-first_scores)[:RESCORED_QUOTES].tolist()
    best_sentence = {
        int(quote_ids[i]): int(sentence_ids[starts[i] + int(np.argmax(cosines[starts[i] : starts[i] + lengths[i]]))])
        for i in top
    }
    quotes = library.store.quotes_by_ids(list(best_sentence))
    sentences = library.store.sentences_by_ids(list(best_sentence.values()))
    rarity = library.sparse.max_idf(topic_tokens)
    ranked = []
    for i in top:
        quote = quotes.get(int(quote_ids[i]))
        sentence = sentences.get(best_sentence[int(quote_ids[i])])
        if quote is not None and sentence is not None:
            overlap = _overlap(topic_tokens, rarity, quote.text)
            ranked.append((float(first_scores[i]) + tuning.lexical_weight * overlap, quote, sentence))
    return sorted(ranked, key=lambda item: -item[0])


def _speaker_answer(library: Library, question: Question, speakers: list[str], tuning: Tuning) -> Answer:
    ranges = library.store.speaker_quote_ranges(speakers)
    topic_tokens = search_tokens(question.topic)
    topic_vector = library.embedder.encode_one(question.topic) if question.topic else None
    ranked = _rank_quotes(library, ranges, topic_vector, topic_tokens, tuning) if len(ranges) else []
    if not ranked:
        return _abstain(
            library, question, library.embedder.encode_one(question.text), search_tokens(question.text), tuning
        )

    on_topic = topic_vector is None or ranked[0][0] >= tuning.speaker_topic_min
    through_story = False
    if tuning.absent_name_abstains and question.topic and _names_absent(library, question.topic):
        on_topic = False  # "what did Boris Johnson say about partygate?"
    elif topic_vector is not None and tuning.topic_in_quote_article:
        about = _quotes_on_topic(library, ranked[: 4 * tuning.max_quotes], question.topic, topic_vector, tuning)
        on_topic = bool(about)
        # On topic through the story, not through the words themselves: say so.
        through_story = on_topic and about[0][0] < tuning.speaker_topic_min
        ranked = about or ranked
    if not on_topic and not question.topic_optional:
        # They are quoted, but not on what was asked: say so rather than answer off topic.
        count = library.store.article_count()
        message = f"I found nothing from {question.who} about {question.topic} in the {count} articles I have."
        return _abstain(library, question, topic_vector, topic_tokens, tuning, message)  # type: ignore[arg-type]
    chosen: list[tuple[float, Quote, Sentence]] = []
    for item in ranked:
        if len(chosen) >= tuning.max_quotes or item[0] < ranked[0][0] - tuning.quote_margin:
            break
        if any(
            (
                item[1].group == c[1].group
                and item[1].article_id == c[1].article_id
                and item[1].paragraph == c[1].paragraph
            )
            or item[1].text == c[1].text  # the same words reported in two articles
            for c in chosen
        ):
            continue
        chosen.append(item)
    chosen.sort(key=lambda item: (item[1].article_id, item[1].start))
    citations = _Citations(library)
    spans = []
    for score, quote, best in chosen:
        start, end = _quote_window(quote, best)
        text = library.store.article(quote.article_id, with_text=True).text[start:end]  # type: ignore[union-attr]
        n = citations.number(quote.article_id, quote.paragraph, best.passage_id)
        spans.append(
            AnswerSpan(text, "quote", quote.speaker, n, quote.article_id, quote.paragraph, start, end, round(score, 4))
        )
    answer = _finish(library, question, spans, citations)
    if not on_topic:
        answer.message = f"I found nothing from {question.who} about {question.topic}; here is what they said."
    elif through_story:
        answer.message = (
            f"These words of {question.who} don't mention {question.topic}; they are from a story about it."
        )
    if answer.message:
        answer.text = render_plain(answer)
    return answer


def _quotes_on_topic(
    library: Library,
    ranked: list[tuple[float, Quote, Sentence]],
    topic: str,
    topic_vector: np.ndarray,
    tuning: Tuning,
) -> list[tuple[float, Quote, Sentence]]:
    """The ranked quotes that are about the topic, best first; empty when none is.

    A quote is about the topic only if its article has every word of the topic: "What did
    Kennedy say about his drinking problem?" is not answered from a story with no "drinking"
    in it, nor "Brown on the banking bailout in 2008" from one without "bailout". Then either
    the quote itself is close to the topic, or its article is: "What did Cosby's lawyer say
    about Cosby?" is answered by "He looks forward to moving on with his life", which never
    names him, because the story it stands in is about him.
    """
    missing = _MissingTerms(library, topic, every_word=True)
    about = [item for item in ranked if not missing.from_article(item[1].article_id)]
    if not about or about[0][0] >= tuning.speaker_topic_min:
        return about
    articles = {item[1].article_id for item in about}
    close = {a for a in articles if _article_closeness(library, a, topic_vector) >= tuning.speaker_article_min}
    return [item for item in about if item[1].article_id in close]


def _article_closeness(library: Library, article_id: int, vector: np.ndarray) -> float:
    """The cosine of an article's sentence closest to ``vector``."""
    ids = library.store.sentence_ids_of_article(article_id)
    if not ids:
        return 0.0
    with library.lock:
        vectors = library.dense.vectors(ids)
    return float((vectors @ vector).max())


def _quote_window(quote: Quote, best: Sentence) -> tuple[int, int]:
    """The whole quote when it is short, else the best sentence of it (still verbatim)."""
    if len(quote.text.split()) <= 70:
        return quote.start, quote.end
    return max(quote.start, best.start), min(quote.end, best.end)


def passages_for(library: Library, answer: Answer) -> list[tuple[Citation, Passage]]:
    """The cited passages of an answer, for "Show passages"."""
    passages = library.store.passages([c.passage_id for c in answer.citations])
    return [(c, passages[c.passage_id]) for c in answer.citations if c.passage_id in passages]
