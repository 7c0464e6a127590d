"""From a question to an ``Answer``: parse -> retrieve -> checks -> compose -> cite.

The question is parsed once and flows down one of three paths (what someone said, who said
something, a fact). Every refusal goes through a named check of ``checks.py`` and is recorded
in ``Answer.refused_by``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from retrieval.answering import checks
from retrieval.answering.checks import Refusal
from retrieval.answering.compose import abstain, finish, hits
from retrieval.answering.events import asked_events, unreported
from retrieval.answering.facts import (
    asks_for_outcome,
    best_of_story,
    choose_sentences,
    confident,
    outcomes_first,
    type_test,
    typed_first,
    unnamed_caveat,
    with_the_detail,
    with_the_story_detail,
    words_besides_names,
)
from retrieval.answering.names import MissingTerms, names_absent, variant_in
from retrieval.answering.question import (
    MAX_QUESTION_CHARS,
    SHORT_NAME,
    Question,
    may_name_someone,
    parse,
    with_context,
)
from retrieval.answering.read import active_reader, read_quotes, read_sentences
from retrieval.answering.roles import asked_role, speaker_role
from retrieval.answering.speaker import (
    QuoteWindows,
    RankedQuote,
    articles_in_speaker_quotes,
    choose_quotes,
    rank_quotes,
    reports_speech_of,
)
from retrieval.answering.who import described_speakers, is_stored_surname, name_words, resolve_speakers
from retrieval.citations import CitationNumbers
from retrieval.errors import BadQuestion
from retrieval.models import Answer, AnswerSpan, SearchHit, SpanKind
from retrieval.ranking import CROWD_QUESTION, TUNING, Tuning, _rank_passages, _score_sentences, _Scored
from retrieval.reading.people import without_possessive
from retrieval.reading.text import search_tokens
from retrieval.scope import articles_phrase

if TYPE_CHECKING:
    from retrieval.ports import Corpus
    from retrieval.scope import ResolvedScope


def check_question(question: str) -> None:
    if not question.strip():
        raise BadQuestion("Ask a question, for example: what did Mourinho say about the referee?")
    if len(question) > MAX_QUESTION_CHARS:
        raise BadQuestion(
            f"That question is {len(question):,} characters long; please keep it under {MAX_QUESTION_CHARS:,}."
        )


def search_passages(library: Corpus, query: str, k: int = 5, scope: ResolvedScope | None = None) -> list[SearchHit]:
    """The ``k`` best passages for a query (of ``scope``'s articles), each with the citation it would get."""
    check_question(query)
    query = parse(query).text
    vector = library.embedder.encode_one(query)
    return hits(library, _rank_passages(library, vector, search_tokens(query), TUNING, scope)[:k])


def answer_question(
    library: Corpus,
    raw_question: str,
    history: Sequence[str] = (),
    tuning: Tuning = TUNING,
    scope: ResolvedScope | None = None,
) -> Answer:
    check_question(raw_question)
    question = with_context(parse(raw_question), [h for h in history if h.strip()])
    if question.kind == "speaker":
        speakers = described_speakers(library, question.who) or resolve_speakers(library, question.who)
        if speakers:
            return _speaker_answer(library, question, speakers, tuning, scope)
        if not may_name_someone(question.who):
            return _fact_answer(library, Question(question.text, "general"), tuning, scope=scope)
        # Never quoted directly: answer only with reported speech of theirs ("Nintendo says ...").
        return _fact_answer(library, Question(question.text, "general"), tuning, reported=question, scope=scope)
    why = _why_of_speaker(library, question) if tuning.why_from_quotes else None
    if why is not None:
        # The reason is often in the person's own words: their quotes on the rest of the
        # question answer it when one is plainly on it, else the story's sentences do.
        said = _speaker_answer(library, why[0], why[1], tuning, scope)
        if said.answered and not said.message:
            return said
    return _fact_answer(library, question, tuning, scope=scope)


# "Why did Roy Penfold make so many changes ...?", "why was mallory so annoyed about ...?", "How is
# Frank Ostler trying to ...?": the person, and what they did.
_WHY_SUBJECT = re.compile(
    r"^(?i:why|how\s+come|(?P<how>how))\s+(?i:did|was|is|does|has|had|were|are|do)\s+"
    rf"(?P<who>{SHORT_NAME}|[a-z][\w’'\-]{{3,}})\s+(?P<rest>.+?)\??$"
)


def _why_of_speaker(library: Corpus, question: Question) -> tuple[Question, list[str]] | None:
    """A "why" question about something a quoted person did, as a question for their words
    (with the speakers it names); None when it names no one quoted. A name typed in lower case
    must be a stored surname ("why did the club ..." names nobody). Round 30: sport read parts
    +5 speaker questions, BBC test +1, final +1 speaker and -1 fact (Kinnock's choice of title
    answered with his words), out-of-corpus unchanged; round 31, "how is X ...": sport +2."""
    if question.kind != "general":
        return None
    match = _WHY_SUBJECT.match(question.text.strip())
    # "How is Ostler trying to ...?" too (round 31), not "How did X get on ...?" (how it went).
    if match is None or (match.group("how") and asks_for_outcome(question.text)):
        return None
    who = match.group("who")
    # ("How did Lockhart's caddie Davie Rennie cope ...?" asks about the caddie.)
    if re.search(r"['’]s?$", who) or (who[:1].islower() and not is_stored_surname(library, who)):
        return None
    speakers = resolve_speakers(library, who)
    if not speakers:
        return None
    return Question(question.text, "speaker", who=who, topic=match.group("rest")), speakers


# -- facts and "who said" ---------------------------------------------------------------------


def _fact_answer(
    library: Corpus,
    question: Question,
    tuning: Tuning,
    reported: Question | None = None,
    scope: ResolvedScope | None = None,
) -> Answer:
    text = question.search_text
    tokens = search_tokens(text)
    vector = library.embedder.encode_one(text)

    def refuse(refusal: Refusal, ranked: list[tuple[int, float]] | None = None) -> Answer:
        return abstain(library, question, refusal, vector, tokens, tuning, ranked=ranked, scope=scope)

    if library.dense.count() == 0:
        return refuse(Refusal(checks.EMPTY_LIBRARY, "I have no articles yet: add some with `byline ingest PATH`."))
    if scope is not None and not scope.article_count:
        message = f"This channel follows articles {scope.scope.describe()}, and I have none of those yet."
        return refuse(Refusal(checks.EMPTY_LIBRARY, message))
    if checks.NAMES_ABSENT.on(tuning) and names_absent(library, question.text):
        return refuse(Refusal(checks.NAMES_ABSENT))
    ranked = _rank_passages(library, vector, tokens, tuning, scope)
    scored, _ = _score_sentences(library, ranked, vector, tokens, tuning, question.text)
    if reported is not None:
        scored = [s for s in scored if reports_speech_of(reported.who, s.sentence.text)]
        if reported.topic:
            # The topic's names must be names in the sentence's article: "sales of the Switch" is
            # not in a story where players "switch between the two screens".
            names = MissingTerms(library, f"about {reported.topic}", names_as_names=True)
            scored = [
                s
                for s in scored
                if s.cosine >= tuning.reported_min_cosine and not names.from_article(s.sentence.article_id)
            ]
        if not scored and checks.NEVER_QUOTED.on(tuning):
            message = f"I found nothing {reported.who} said about that in {articles_phrase(library.store, scope)}."
            return refuse(Refusal(checks.NEVER_QUOTED, message), ranked)
    reader = active_reader(tuning)
    if reader is not None and scored:
        # The reader orders the best candidates and refuses when none of them answers.
        reading = read_sentences(
            library, reader, question.text, scored, "who_said" if question.kind == "who_said" else "fact"
        )
        if not reading.answers:
            return refuse(Refusal(checks.READER), ranked)
        scored = reading.items  # type: ignore[assignment]
    if question.kind == "who_said":
        answer = _who_said_answer(library, question, scored, tuning, vector, ranked)
        return answer or refuse(Refusal(checks.NOT_CONFIDENT), ranked)
    crowd = bool(CROWD_QUESTION.match(question.text.strip()))
    # A crowd question's words besides names ask for the crowd ("How many turned up at the
    # Riverside ...?"), which the match's sentences, that find its story, do not share (round 30).
    other_words = frozenset() if crowd else words_besides_names(question.text)
    # Whether the question's names are in an article, looked up once an article.
    question_names = MissingTerms(library, question.text)
    # The sentence the story is found by, when the one answering comes from further down it.
    found_by: _Scored | None = None
    if scored and checks.ANSWER_TYPE.on(tuning):
        typed = typed_first(scored, question.text, tuning, library.article_terms.of)
        if typed is None:
            # (Not for someone's reported words: the story's other sentences are not theirs.)
            further = (
                None
                if reported
                else _typed_in_named_story(library, scored, question_names, question.text, vector, tuning, other_words)
            )
            if further is None:
                return refuse(Refusal(checks.ANSWER_TYPE), ranked)
            # The sentence that found the detail's story is the one that must be confident (the best
            # one instead let 2 out-of-corpus questions through).
            found_by, typed = further[0], [further[1], *scored]
        elif tuning.typed_story_over_missing_names and reported is None:
            # "What was the crowd at the Riverside when Boro beat Basel?": the best sentence finds
            # the match, the first one holding a crowd is another match's, whose story lacks a name
            # asked for. The detail is looked for further down the story found instead.
            best_article, typed_article = scored[0].sentence.article_id, typed[0].sentence.article_id
            if (
                typed[0] is not scored[0]
                and question_names.from_article(typed_article)
                and not question_names.from_article(best_article)
            ):
                detail = _typed_in_story(library, scored[0], question.text, vector, tuning, other_words)
                if detail is not None:
                    found_by, typed = scored[0], [detail, *scored]
            elif question_names.from_article(typed_article) and crowd:
                # A crowd is reported in the match's own story, which may be none of the best
                # sentences' ("How big was the crowd for Celtic's win over Porto?" first finds
                # another Celtic game): the stories of the best few that have every name.
                further = _typed_in_named_story(
                    library, scored, question_names, question.text, vector, tuning, other_words
                )
                if further is not None:
                    found_by, typed = further[0], [further[1], *scored]
            elif typed[0] is not scored[0] and crowd:
                # "How many fans were at the Dragao for Porto against Dynamo Kiev?": the crowd's
                # sentence ("a home crowd of 41,230") shares hardly a word with the question; the
                # story is found by another of its sentences among the best (round 26).
                found_by = next(
                    (s for s in scored[: tuning.type_window] if s.sentence.article_id == typed_article), None
                )
        scored = typed
    if not scored or (checks.NOT_CONFIDENT.on(tuning) and not confident(found_by or scored[0], tuning, other_words)):
        return refuse(Refusal(checks.NOT_CONFIDENT), ranked)
    # "Did Ebbers say whether Sullivan ever flagged problems?" asks for his words, not an outcome.
    if reported is None and checks.OUTCOME_NOT_REPORTED.on(tuning) and asks_for_outcome(question.text):
        settled = outcomes_first(scored, tuning, other_words)
        if settled is None:
            # The closest passages show the story as the library has it.
            message = f"I couldn't find how that turned out in {articles_phrase(library.store, scope)}."
            return refuse(Refusal(checks.OUTCOME_NOT_REPORTED, message), ranked)
        scored = settled
    if checks.NAMES_NOT_IN_ARTICLE.on(tuning) and question_names.from_article(scored[0].sentence.article_id):
        # Any name missing from the best sentence's article means the story is about something
        # else ("When did Queen Elizabeth II die?" of a story about the band Queen). Looking
        # further down for an article that has the names found more right answers on the natural
        # dev questions (+2) but answered more questions the library cannot (-6): not worth it.
        # (Round 30 tried only a story with every name among the best three sentences scoring at
        # least 0.9 of the best: sport read parts +6 facts, -13 absent or detail absent; and only
        # for a typed question whose sentence in that story holds the type: +5, -7.)
        return refuse(Refusal(checks.NAMES_NOT_IN_ARTICLE), ranked)
    if checks.EVENT_NOT_REPORTED.on(tuning) and _event_unreported(
        library, question.text, scored[0].sentence.article_id
    ):
        message = f"I couldn't find a story that reports that in {articles_phrase(library.store, scope)}."
        return refuse(Refusal(checks.EVENT_NOT_REPORTED, message), ranked)
    # Someone never quoted directly is answered with sentences reporting their words; the
    # asker should know these are the article's words, not theirs.
    message = (
        f"I have no words of {reported.who} in quote marks; this is how the articles report them." if reported else ""
    )

    chosen = with_the_detail(choose_sentences(scored, tuning, other_words), scored, question.text, tuning)
    # The article texts and quotes read for the quote after the lead-in are read once, for the spans too.
    windows = QuoteWindows(library)
    quoted: int | None = None
    if reported is None:
        chosen = with_the_story_detail(library, chosen, question.text, vector, tuning)
        chosen, quoted = _with_the_quote_after(library, windows, chosen, question.text, tuning)
    if not message and found_by is not None:
        # The story is the right one, but nothing close to the question says the thing asked
        # for: the sentence that holds one may answer something else ("How much was Sullivan
        # paid?" answered by the sum of the fraud), and the asker should know.
        message = (
            "Nothing close to your question says that outright; "
            "these are the sentences of the closest story most likely to answer it."
        )
    if not message:
        message = unnamed_caveat(question.text, [item.sentence.text for item in chosen])
    return _sentences_answer(library, question, chosen, message, as_quote=quoted, windows=windows)


def _with_the_quote_after(
    library: Corpus, windows: QuoteWindows, chosen: list[_Scored], question: str, tuning: Tuning
) -> tuple[list[_Scored], int | None]:
    """The chosen sentences with, right after the best one, the quote it leads into when that
    quote is of someone the question names, and that quote's first sentence's id (it is shown as
    their words, in quote marks): "Why did Chris Fenwick turn down a move?" finds "He also
    revealed that he had turned down a lucrative offer ...", and the reason is in the words
    Fenwick is quoted saying next. The answer keeps at most ``max_sentences`` sentences."""
    if not chosen or not tuning.quote_after_lead_in:
        return chosen, None
    best = chosen[0].sentence
    quotes = windows.article_quotes(best.article_id)
    if any(q.start < best.end and best.start < q.end for q in quotes):
        return chosen, None  # the best sentence is someone's words already, shown whole
    text = windows.article_text(best.article_id)
    following = next((q for q in sorted(quotes, key=lambda q: q.start) if q.start >= best.end), None)
    if following is None or not following.speaker or text[best.end : following.start].strip(' \n"“') != "":
        return chosen, None
    surname = name_words(following.speaker)[-1:]
    # (A surname mistyped by a letter is still theirs: "Why did Alun Pryderch recall Bevan?", round 30.)
    if not surname or not variant_in(surname[0], name_words(re.sub(r"[^\w’'\-]+", " ", question))):
        return chosen, None
    sentences = library.store.sentences_of_articles([best.article_id])
    first = next((s for s in sentences if s.end > following.start), None)
    if first is None or any(item.sentence.id == first.id for item in chosen):
        return chosen, None
    lead = chosen[0]
    quoted = _Scored(first, lead.score, lead.cosine, lead.overlap, lead.vector)
    return [lead, quoted, *chosen[1:]][: max(tuning.max_sentences, 2)], first.id


def _typed_in_named_story(
    library: Corpus,
    scored: list[_Scored],
    names: MissingTerms,
    question: str,
    vector: np.ndarray,
    tuning: Tuning,
    other_words: frozenset[str],
) -> tuple[_Scored, _Scored] | None:
    """When none of the best sentences holds the kind of thing asked for: the sentence that found
    a story and the detail further down it, trying the stories of the best few sentences that
    have every name the question asks about, best first (else only the best sentence's), once the
    best sentence is confident.

    "What time does Scotland's qualifier with Moldova at Hampden start?" is found first by the
    Italy game at Hampden, whose story has no Moldova; "What time does Leicester's quarter-final
    with Toulouse kick off?" first by the pool game's report, and the kick-off is in the preview."""
    if not confident(scored[0], tuning, other_words):
        return None
    stories = {scored[0].sentence.article_id: scored[0]}
    if tuning.typed_story_over_missing_names:
        named: dict[int, _Scored] = {}
        for item in scored[: tuning.type_window]:
            if item.sentence.article_id not in named and not names.from_article(item.sentence.article_id):
                named[item.sentence.article_id] = item
        stories = named or stories
    for story in stories.values():
        detail = _typed_in_story(library, story, question, vector, tuning, other_words)
        if detail is not None:
            return story, detail
    return None


def _typed_in_story(
    library: Corpus,
    best: _Scored,
    question: str,
    vector: np.ndarray,
    tuning: Tuning,
    other_words: frozenset[str],
) -> _Scored | None:
    """When none of the best sentences holds the kind of thing asked for, the best sentence of
    the closest story that does, if that story is found with confidence.

    "How many law lords heard the Belmarsh appeal?" finds the story, and "a panel of nine law
    lords rather than the usual five" stands far down it."""
    holds = type_test(question, library.article_terms.of)
    if holds is None or not tuning.story_detail_weight or not confident(best, tuning, other_words):
        return None
    detail = best_of_story(library, best, holds, question, vector, tuning)
    if detail is None:
        return None
    # A crowd's sentence ("frustrate a home crowd of 41,230") shares hardly a word with the
    # question; one the story names as a crowd is the answer however far it is (round 26).
    return detail if detail.score >= tuning.typed_detail_min_score or CROWD_QUESTION.match(question.strip()) else None


def _topic_as_asked(question: Question) -> str:
    """The topic with the three words asked before it: "anything about quitting" asks whether
    someone spoke of an event, not that it happened (round 30)."""
    at = question.text.rfind(question.topic)
    if at < 0:
        return question.topic
    return " ".join([*question.text[:at].split()[-3:], question.topic])


def _event_unreported(library: Corpus, asked: str, article_id: int) -> bool:
    """Whether the question asks about an event (``events``) that this article does not report."""
    events = asked_events(asked)
    if not events:
        return False
    article = library.store.article(article_id, with_text=True)
    return article is None or unreported(events, f"{article.title}\n{article.text}")


def _sentences_answer(
    library: Corpus,
    question: Question,
    chosen: list[_Scored],
    message: str = "",
    as_quote: int | None = None,
    windows: QuoteWindows | None = None,
) -> Answer:
    """The chosen sentences, cited. A sentence inside someone's quote is shown with the rest of
    what they said there (``quote_window``, as a speaker answer shows it): the words asked about
    are often in the quote's next sentence ("Which coach refused to promise a win but vowed his
    side would be hard to beat?"). A sentence that a span already shows is not shown again; the
    sentence ``as_quote`` is shown as the quote's words alone, without the writer's. ``windows``:
    the caller's, when it has read the articles' texts and quotes already."""
    citations = CitationNumbers()
    windows = windows or QuoteWindows(library)
    spans: list[AnswerSpan] = []
    for item in chosen:
        s = item.sentence
        quote = windows.holding(s)
        start, end = s.start, s.end
        kind: SpanKind = "sentence"
        if quote is not None:
            low, high = windows.window(quote, s)
            start, end = (low, high) if s.id == as_quote else (min(start, low), max(end, high))
            # Only the quote's words: shown in quote marks; with the writer's words: as written.
            kind = "quote" if (start, end) == (low, high) else "sentence"
        if any(span.article_id == s.article_id and span.start <= start and end <= span.end for span in spans):
            continue
        n = citations.number_by_id(s.article_id, s.paragraph, s.passage_id, library.store.article)
        text = windows.article_text(s.article_id)[start:end] if quote is not None else s.text
        speaker = quote.speaker if quote is not None else ""
        spans.append(AnswerSpan(text, kind, speaker, n, s.article_id, s.paragraph, start, end, round(item.score, 4)))
    return finish(library, question, spans, citations, message)


def _who_said_answer(
    library: Corpus,
    question: Question,
    scored: list[_Scored],
    tuning: Tuning,
    topic_vector: np.ndarray,
    ranked_passages: list[tuple[int, float]],
) -> Answer | None:
    """The quote that says it, with its speaker: the attributed quotes of the best sentences'
    articles, ranked as a speaker's quotes are (the quote, its paragraph and its article against
    what was said); else the best sentence (it often names the speaker itself). The topic's
    vector and passage ranking are the ones the sentences were scored with."""
    if not scored:
        return None
    window = [s for s in scored[: tuning.who_said_window] if confident(s, tuning)]
    if not window:
        return None
    articles = list(dict.fromkeys(s.sentence.article_id for s in window))[: tuning.who_said_articles]
    articles += _articles_with_the_names(library, question.text, articles, ranked_passages, tuning)
    ranges = library.store.article_quote_ranges(articles)
    ranked = rank_quotes(
        library,
        ranges,
        question.topic,
        topic_vector,
        tuning,
        ranked_passages=ranked_passages,
        lead_in=tuning.who_said_lead_in,
    )
    if not ranked:
        return _sentences_answer(library, question, window[:1])
    ranked = _not_the_one_spoken_of(ranked, question.topic, tuning)
    windows = QuoteWindows(library)
    ranked = _of_the_role_asked(ranked, question.text, windows, tuning)
    # The whole quote, as a speaker answer gives it: the words asked about are often in its
    # next sentence ("Who said gun crime is nothing to glamorise?"). Quotes that come close in
    # score are shown too, the closest first, as for "what did X say": the paraphrase a
    # question is put in rarely singles out one quote (natural questions, all parts: 62 -> 70
    # of 108 right with up to 3 quotes, 68 with up to 2).
    chosen = sorted(choose_quotes(ranked, tuning, windows), key=lambda item: -item.score)
    citations = CitationNumbers()
    spans = [_quote_span(library, citations, item, windows) for item in chosen]
    return finish(library, question, spans, citations)


def _articles_with_the_names(
    library: Corpus, question: str, articles: list[int], ranked_passages: list[tuple[int, float]], tuning: Tuning
) -> list[int]:
    """When every article of the best sentences lacks a name the question gives ("when the sides
    met in Chisinau", "the Hove supporters"), the best-ranked articles further down that have
    them all (at most ``who_said_named_articles``): the quote asked about rarely shares words
    with the question, so its article's sentences are not the closest ones."""
    if not tuning.who_said_named_articles:
        return []
    names = MissingTerms(library, question)
    if not all(names.from_article(article_id) for article_id in articles):
        return []
    found: list[int] = []
    by_passage = library.store.article_ids_of_passages([pid for pid, _ in ranked_passages])
    for pid, _ in ranked_passages:
        article_id = by_passage.get(pid)
        if article_id is None or article_id in articles or article_id in found or names.from_article(article_id):
            continue
        found.append(article_id)
        if len(found) == tuning.who_said_named_articles:
            break
    return found


def _not_the_one_spoken_of(ranked: list[RankedQuote], said: str, tuning: Tuning) -> list[RankedQuote]:
    """The quotes with those of anyone the words asked about name scored down: "Which sprinter
    said she thought she had won until Marsden caught her?" is not Marsden, nor "Who said Drummond
    is in the form of his life?" Drummond (people rarely speak of themselves by name)."""
    # ("Okoro's sharpness" names Okoro: the possessive is no part of the name, round 28.)
    named = set(name_words(" ".join(without_possessive(w) for w in re.findall(r"\b[A-Z][\w’'\-]+", said))))
    if not named:
        return ranked
    marked = [
        replace(item, score=item.score - tuning.who_said_named_penalty)
        if set(name_words(item.quote.speaker)[-1:]) & named
        else item
        for item in ranked
    ]
    return sorted(marked, key=lambda item: -item.score)


def _of_the_role_asked(
    ranked: list[RankedQuote], question: str, windows: QuoteWindows, tuning: Tuning
) -> list[RankedQuote]:
    """The quotes with those of a speaker the article makes a manager scored down when a player
    is asked for, and the other way round ("Which Scarlets player said ...?" beside the coaches
    of both sides)."""
    asked = asked_role(question)
    if asked is None or not tuning.who_said_role_penalty:
        return ranked
    marked = [
        replace(item, score=item.score - tuning.who_said_role_penalty)
        if speaker_role(windows.article_text(item.quote.article_id), item.quote.speaker) not in (None, asked)
        else item
        for item in ranked
    ]
    return sorted(marked, key=lambda item: -item.score)


def _quote_span(library: Corpus, citations: CitationNumbers, item: RankedQuote, windows: QuoteWindows) -> AnswerSpan:
    """A quote as an answer span (all of it when short, else its best sentence), cited."""
    quote = item.quote
    start, end = windows.of(item)
    text = windows.article_text(quote.article_id)[start:end]
    n = citations.number_by_id(quote.article_id, quote.paragraph, item.best.passage_id, library.store.article)
    return AnswerSpan(
        text, "quote", quote.speaker, n, quote.article_id, quote.paragraph, start, end, round(item.score, 4)
    )


# -- what someone said --------------------------------------------------------------------------


def _speaker_answer(
    library: Corpus, question: Question, speakers: list[str], tuning: Tuning, scope: ResolvedScope | None = None
) -> Answer:
    ranges = library.store.speaker_quote_ranges(speakers)
    if scope is not None:
        ranges = scope.quote_ranges(ranges)
    topic_vector = library.embedder.encode_one(question.topic) if question.topic else None
    ranked = rank_quotes(library, ranges, question.topic, topic_vector, tuning, scope)
    if not ranked:
        vector = library.embedder.encode_one(question.text)
        tokens = search_tokens(question.text)
        return abstain(library, question, Refusal(checks.NO_QUOTES), vector, tokens, tuning, scope=scope)
    who = _who_found(question.who, speakers)
    if (
        question.topic
        and checks.SPEAKER_TOPIC_ABSENT.on(tuning)
        and not question.topic_optional
        and names_absent(library, question.topic)
    ):
        # "what did Boris Johnson say about partygate?"
        message = f"I found {who}, but nothing about {question.topic} in any article I have."
        return _speaker_refusal(library, question, ranked, Refusal(checks.SPEAKER_TOPIC_ABSENT, message), tuning, scope)
    if (
        question.topic
        and not question.topic_is_claim
        and checks.EVENT_NOT_REPORTED.on(tuning)
        and _event_unreported(library, _topic_as_asked(question), ranked[0].quote.article_id)
    ):
        # "What did Charles Kennedy say when he stood down?" of stories from before he did.
        message = f"I found {who}, but no story that reports {question.topic}."
        return _speaker_refusal(library, question, ranked, Refusal(checks.EVENT_NOT_REPORTED, message), tuning, scope)
    plainly_on_topic = topic_vector is None or ranked[0].score >= tuning.speaker_min_score
    on_topic = plainly_on_topic or _in_story_about_topic(ranked[0], tuning)
    if not on_topic and not question.topic_optional and checks.SPEAKER_OFF_TOPIC.on(tuning):
        count = articles_in_speaker_quotes(ranges)
        message = (
            f"I found {who} in {count} article{'s' if count != 1 else ''}, "
            f"but nothing they said about {question.topic}. Closest:"
        )
        return _speaker_refusal(library, question, ranked, Refusal(checks.SPEAKER_OFF_TOPIC, message), tuning, scope)
    reader = active_reader(tuning)
    if reader is not None:
        reading = read_quotes(library, reader, question.text, ranked)
        if not reading.answers and not question.topic_optional:
            message = f"I found {who}, but nothing they said that answers this. Closest:"
            return _speaker_refusal(library, question, ranked, Refusal(checks.READER, message), tuning, scope)
        ranked = reading.items  # type: ignore[assignment]
    windows = QuoteWindows(library)
    chosen = choose_quotes(ranked, tuning, windows)
    citations = CitationNumbers()
    spans = []
    for item in chosen:
        spans.append(_quote_span(library, citations, item, windows))
    message = ""
    if not on_topic:  # the topic came from an earlier question ("and Guardiola?")
        message = f"I found nothing from {who} about {question.topic}; here is what they said."
    elif not plainly_on_topic:
        # Answered because the quote's story is about the topic, not because the quote itself
        # is close to it: the asker should know the words may not speak to it directly.
        # (A claim, "sign someone to cover the back row", is no subject to name a story by.)
        message = (
            f"These words of {who} are from the story your question is about; they may not answer it directly."
            if question.topic_is_claim
            else f"These words of {who} are from a story about {question.topic}; they may not speak to it directly."
        )
    return finish(library, question, spans, citations, message)


def _who_found(asked: str, speakers: list[str]) -> str:
    """How to name the person in a reply: as asked, unless the name was mistyped and one stored
    person was found ("I found Gordon Lennie", not "I found Gordon Lenny")."""
    if len(speakers) == 1 and asked.lower() not in speakers[0].lower():
        return speakers[0]
    return asked


def _in_story_about_topic(best: RankedQuote, tuning: Tuning) -> bool:
    """Whether a quote below the plain threshold still answers: a fair score, in a story that is
    itself about the topic (people paraphrase what the story says)."""
    return best.score >= tuning.speaker_min_score_in_story and best.article >= tuning.speaker_story_article_score


def _speaker_refusal(
    library: Corpus,
    question: Question,
    ranked: list[RankedQuote],
    refusal: Refusal,
    tuning: Tuning,
    scope: ResolvedScope | None = None,
) -> Answer:
    """Not found on the topic; the closest passages are the person's closest quotes."""
    passages = list(dict.fromkeys(item.best.passage_id for item in ranked[:3]))
    closest = hits(library, [(pid, 0.0) for pid in passages])
    return abstain(library, question, refusal, None, [], tuning, closest=closest, scope=scope)
