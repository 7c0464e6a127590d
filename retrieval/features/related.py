"""Related questions: up to three follow-ups that an answer's own articles answer, each checked.

Candidates are built with two fixed templates, so which ones appear can be predicted by reading
the articles (no model writes them):

1. **Speakers.** People quoted in the cited articles, except those the answer already quotes and
   those the question names, most-quoted there first (then first quoted): "What did X say?" when
   every quote of X that Byline has is in these articles (so the answer must come from them);
   otherwise "What did X say about T?" with the question's own topic T, when it has one; otherwise
   X is skipped (their answer would come from other stories).
2. **Facts.** Sentences of the cited articles that open with a name (two or three capitalised
   words, or one that the article also writes capitalised mid-sentence) followed by "was/were
   <participle>" or a past-tense verb, nearest the cited paragraphs first: the name becomes "Who",
   and the clause runs to the first comma or linking word ("Ander Herrera was booked for diving by
   referee…" -> "Who was booked for diving?"). A clause that runs into a quote mark, "and"/"but",
   or past nine words is a fragment, and is dropped, not cut. Reporting verbs ("said",
   "claimed") are left out: "Who said …?" is a different kind of question.

The two kinds alternate (speaker first). Nothing is offered unchecked: each candidate is asked
through the real answer path (``Library.ask``, with no conversation, exactly as a click asks
it) and kept only when that answer is given without reservation, cites only the articles the
first answer cited, and says something the first answer and the follow-ups kept before it did
not. At most ``CHECK_BUDGET`` candidates are asked per answer (``FACT_CHECKS`` of them facts,
the costly kind), and each candidate's result is remembered per library generation and scope, so
the follow-ups of an article many people ask about are checked once.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import TYPE_CHECKING, Protocol

from retrieval.answering.question import parse
from retrieval.models import Answer, Sentence
from retrieval.ports import Corpus

if TYPE_CHECKING:
    from retrieval.scope import Scope


class AnswerSource(Corpus, Protocol):
    """A corpus that answers by the full answer path (``Library.ask``): each candidate is asked
    exactly as a click would ask it."""

    def ask(self, question: str, history: Sequence[str] = (), scope: Scope | None = None) -> Answer: ...


MAX_RELATED = 3
# Candidates asked per answer. A speaker check with no topic costs ~1 ms (no embedding); a fact
# check costs what a question does (a query embedding and a ranking), so only one of the four is a
# fact: the added time is at most about one more ask, and usually ~1 ms (bench/perf/bench_related.py).
CHECK_BUDGET = 4
FACT_CHECKS = 1
# Slack caps a button's text at 75 characters (Discord at 80); a longer question is not offered.
MAX_QUESTION_CHARS = 75
MAX_CLAUSE_WORDS = 9
CACHE_SIZE = 2048

# A candidate with any of these could carry a mention or markup (<@U1>, <!channel>, @everyone,
# <#C1>): it is dropped outright, whatever the renderers would escape.
_UNSAFE = re.compile(r"[@<>&`*_~|\[\]#\\]")
_NAME_WORD = r"[A-Z][\w’'\-.]*"
_OPENING = re.compile(rf"^(?P<name>{_NAME_WORD}(?: {_NAME_WORD}){{0,2}}) (?P<rest>.+)$")
_WORD = re.compile(r"[\w’'\-]+|[^\w\s]")
# Capitalised openings that are not a person: articles, pronouns, conjunctions, groups.
_NOT_A_NAME = frozenset(
    """the a an and but or so yet it he she they we i you this that these those there here his her their its
    our my your some many most all both each every one two three last next now then today yesterday earlier later
    meanwhile however sources eyewitnesses police officials reports critics analysts experts fans players
    yes no read more in on at after before when while if as for from with by of to what who why how""".split()
)
# Verbs whose "Who ...?" reads as a who-said question or a fragment of reported speech.
_REPORTING = frozenset(
    "said says told tells added claimed claims thought believed understood expected reported alleged asked".split()
)
_NOT_VERBS = frozenset("indeed hundred need speed seed feed red bed shed wed bred".split())
_IRREGULAR_PARTICIPLES = frozenset(
    """hit cut seen born given taken made sent shown known held found left beaten thrown chosen put brought
    caught struck sold paid won lost built bought kept written driven stolen hurt shot set run spent""".split()
)
_ADVERBS = frozenset("later also then earlier previously recently once first".split())
# Where a clause ends: punctuation, or a word that starts an adjunct ("with yet another injury").
_CLAUSE_ENDS = frozenset(", ; : . ? ! ( ) – —".split())
_LINKING = frozenset(
    "after as when while because since amid before although though which who where with by during despite".split()
)
# Words that make the clause a fragment if reached before it ends.
_FRAGMENT = frozenset({"and", "but", "or", "“", "”", '"', "‘", "’"})


@dataclass(frozen=True)
class Checked:
    """What asking a candidate gave: kept or not, and which article spans its answer used."""

    usable: bool
    spans: frozenset[tuple[int, int, int]]
    articles: frozenset[int]


def related_questions(library: AnswerSource, answer: Answer, scope: Scope | None = None) -> list[str]:
    """Up to ``MAX_RELATED`` checked follow-ups for ``answer``; none when it was refused.

    ``scope`` is the channel's scope the answer was given under: a click asks under it too."""
    if not answer.answered or not answer.spans:
        return []
    articles = frozenset(span.article_id for span in answer.spans)
    asked = {_normal(answer.question), _normal(answer.standalone_question)}
    seen = frozenset((s.article_id, s.start, s.end) for s in answer.spans)
    kept: list[str] = []
    said: list[frozenset[tuple[int, int, int]]] = [seen]
    checks = facts = 0
    for candidate in candidates(library, answer):
        if checks >= CHECK_BUDGET or len(kept) >= MAX_RELATED:
            break
        if _normal(candidate) in asked or candidate in kept:
            continue
        fact = candidate.startswith("Who ")
        if fact and facts >= FACT_CHECKS:
            continue
        checks, facts = checks + 1, facts + fact
        result = check(library, candidate, scope)
        if not result.usable or not result.articles <= articles:
            continue
        # Something new: not all within what the answer, or an earlier follow-up, already said.
        if any(result.spans <= earlier for earlier in said):
            continue
        kept.append(candidate)
        said.append(result.spans)
    return kept


def with_related(library: AnswerSource, answer: Answer, scope: Scope | None = None) -> Answer:
    """``answer`` with its ``related`` questions filled in (what the service hands adapters)."""
    answer.related = related_questions(library, answer, scope)
    return answer


def candidates(library: AnswerSource, answer: Answer) -> Iterator[str]:
    """Speaker and fact candidates, alternating, each safe to show (see the module docstring)."""
    pairs = zip_longest(_speaker_candidates(library, answer), _fact_candidates(library, answer))
    for pair in pairs:
        for candidate in pair:
            if candidate and len(candidate) <= MAX_QUESTION_CHARS and not _UNSAFE.search(candidate):
                yield candidate


def _speaker_candidates(library: AnswerSource, answer: Answer) -> Iterator[str]:
    articles = sorted({span.article_id for span in answer.spans})
    question = answer.standalone_question or answer.question
    named = {word for word in re.findall(r"\w+", question.casefold()) if len(word) >= 3}
    answered = {span.speaker for span in answer.spans if span.speaker}
    counts: dict[str, int] = {}
    for quote in library.store.quotes_of_articles(articles):
        if quote.speaker:
            counts[quote.speaker] = counts.get(quote.speaker, 0) + 1  # dicts keep first-quoted order
    topic = parse(question).topic
    for speaker, count in sorted(counts.items(), key=lambda item: -item[1]):
        if speaker in answered or named & {w for w in re.findall(r"\w+", speaker.casefold()) if len(w) >= 3}:
            continue
        if library.speakers.get(speaker, 0) <= count:
            yield f"What did {speaker} say?"
        elif topic:
            yield f"What did {speaker} say about {topic}?"


def _fact_candidates(library: AnswerSource, answer: Answer) -> Iterator[str]:
    articles = sorted({span.article_id for span in answer.spans})
    cited = {(span.article_id, span.paragraph) for span in answer.spans}
    used = {(span.article_id, span.start) for span in answer.spans}
    paragraphs: dict[int, list[int]] = {}
    for article_id, paragraph in cited:
        paragraphs.setdefault(article_id, []).append(paragraph)

    def distance(sentence: Sentence) -> tuple[int, int, int]:
        near = min(abs(sentence.paragraph - p) for p in paragraphs[sentence.article_id])
        return near, sentence.article_id, sentence.start

    sentences = [s for s in library.store.sentences_of_articles(articles) if (s.article_id, s.start) not in used]
    texts: dict[int, str] = {}
    for sentence in sorted(sentences, key=distance):
        question = who_question(sentence.text)
        if not question:
            continue
        if sentence.article_id not in texts:
            article = library.store.article(sentence.article_id, with_text=True)
            texts[sentence.article_id] = article.text if article else ""
        if _is_a_name(sentence.text, texts[sentence.article_id]):
            yield question


def _is_a_name(sentence: str, text: str) -> bool:
    """Whether the sentence's opening capitalised words are a name: two or three of them ("Ander
    Herrera"), or one the article also writes capitalised inside a sentence ("Kompany"), not a
    common word capitalised only because it opens one ("Widely leaked …")."""
    match = _OPENING.match(sentence.strip())
    if not match:
        return False
    words = match["name"].split()
    if len(words) > 1:
        return True
    word = words[0].rstrip("’'s").strip(".,")
    return bool(word) and re.search(rf"[a-z,] {re.escape(word)}\b", text) is not None


def who_question(sentence: str) -> str:
    """ "Who …?" from a sentence that opens with a name and its verb; "" when it does not. The
    words after "Who" are the sentence's own, as written."""
    match = _OPENING.match(sentence.strip())
    if not match or any(word.casefold().strip(".") in _NOT_A_NAME for word in match["name"].split()):
        return ""
    rest = match["rest"]
    tokens = list(_WORD.finditer(rest))
    words = [token.group() for token in tokens]
    first = 1 if words and (words[0] in _ADVERBS or (words[0].islower() and words[0].endswith("ly"))) else 0
    words = words[first:]  # "Mourinho later accused …"
    if len(words) < 2:
        return ""
    if words[0] in {"was", "were"} and _participle(words[1]):
        head = 2
    elif _past_tense(words[0]):
        head = 1
    else:
        return ""
    clause = 0
    for word in words[head:]:
        if word in _CLAUSE_ENDS or word.casefold() in _LINKING:
            break
        if word.casefold() in _FRAGMENT:
            return ""
        clause += 1
    if not clause or head + clause > MAX_CLAUSE_WORDS:
        return ""
    text = rest[tokens[first].start() : tokens[first + head + clause - 1].end()]
    return f"Who {' '.join(text.split())}?"


def _past_tense(word: str) -> bool:
    return word.islower() and word.endswith("ed") and len(word) > 4 and word not in _NOT_VERBS | _REPORTING


def _participle(word: str) -> bool:
    return word.islower() and word not in _REPORTING and (_past_tense(word) or word in _IRREGULAR_PARTICIPLES)


def _normal(question: str) -> str:
    return " ".join(re.findall(r"\w+", question.casefold()))


# -- checking, remembered per library generation --------------------------------------------

_cache: weakref.WeakKeyDictionary[AnswerSource, OrderedDict[tuple[int, Scope | None, str], Checked]] = (
    weakref.WeakKeyDictionary()
)
_cache_lock = threading.Lock()


def check(library: AnswerSource, question: str, scope: Scope | None = None) -> Checked:
    """Ask ``question`` as a click would (no conversation, the same scope); usable when answered
    without a reservation ("I found nothing from X about Y; here is what they said" is one)."""
    key = (library.indexed_generation, scope, question)
    with _cache_lock:
        known = _cache.setdefault(library, OrderedDict())
        if key in known:
            known.move_to_end(key)
            return known[key]
    answer = library.ask(question, scope=scope)
    result = Checked(
        answer.answered and bool(answer.spans) and not answer.message,
        frozenset((s.article_id, s.start, s.end) for s in answer.spans),
        frozenset(s.article_id for s in answer.spans),
    )
    with _cache_lock:
        known[key] = result
        while len(known) > CACHE_SIZE:
            known.popitem(last=False)
    return result
