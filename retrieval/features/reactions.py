"""Who said what about a story: one best quote per speaker, most prominent speakers first.

The story is found as a question's articles are (hybrid retrieval over passages), narrowed to
the articles about the topic (``quote_topics``: an article whose closest sentences are within
``ARTICLE_MARGIN`` of the best one's). Every attributed quote of those articles is scored
against the topic; a speaker's on-topic quotes are counted (their prominence: more quotes, in
more articles, first) and their best one is shown, a full sentence preferred to a few words.

People and organisations are told apart by spaCy's NER (``entities.py``), reading each speaker's
name in the sentence it is quoted in: "a spokesman for the BPI" and "Standard Life" speak for an
organisation, "Tessa Jowell" is a person. Without the model every named speaker counts as a
person and an unnamed spokesman as an organisation's voice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from retrieval.answering import search_passages
from retrieval.features.quote_timeline import TimelineQuote, newest_first
from retrieval.features.quote_topics import TopicMatcher, TopicScore
from retrieval.models import Article, Quote
from retrieval.reading.entities import NOT_PERSON_LABELS, entity_spans
from retrieval.reading.people import UNNAMED_ROLES

if TYPE_CHECKING:
    from retrieval.ports import Corpus
    from retrieval.scope import ResolvedScope

# Passages the topic is searched in; their articles are the candidates.
SEARCHED_PASSAGES = 40
# An article is about the story when its relevance is this close to the best article's.
ARTICLE_MARGIN = 0.12
# Speakers shown at most: a roundup is a page, not a list of everyone.
MAX_SPEAKERS = 12
# A quote of fewer words is a phrase ("deeply flawed"): shown only when the speaker said nothing longer.
SENTENCE_WORDS = 6

SpeakerKind = Literal["person", "organisation"]


@dataclass(frozen=True)
class Reaction:
    """One speaker's best quote on the topic, and how prominent they are on it."""

    speaker: str
    kind: SpeakerKind
    best: TimelineQuote
    quotes: int
    articles: int


@dataclass
class Reactions:
    """The roundup: speakers most prominent first."""

    topic: str
    reactions: list[Reaction] = field(default_factory=list)
    articles: list[Article] = field(default_factory=list)
    article_count: int = 0

    def of_kind(self, kind: SpeakerKind) -> list[Reaction]:
        return [r for r in self.reactions if r.kind == kind]


def reactions(
    library: Corpus, topic: str, scope: ResolvedScope | None = None, max_speakers: int = MAX_SPEAKERS
) -> Reactions:
    """The roundup of reactions to ``topic`` across the library (or ``scope``'s articles)."""
    topic = " ".join(topic.split())
    found = Reactions(topic, article_count=library.article_count())
    if not topic:
        return found
    hits = search_passages(library, topic, SEARCHED_PASSAGES, scope=scope)
    candidates = list(dict.fromkeys(hit.passage.article_id for hit in hits))
    if not candidates:
        return found
    matcher = TopicMatcher(library, topic, one_person=False)
    ranges = library.store.article_quote_ranges(candidates)
    scores = matcher.score_ranges(ranges)
    relevance = {int(row[4]): score.article for row, score in zip(ranges.tolist(), scores, strict=True)}
    if not relevance:
        return found
    best_article = max(relevance.values())
    about = {a for a, value in relevance.items() if value >= best_article - ARTICLE_MARGIN}
    quotes = library.store.quotes_by_ids([int(row[0]) for row in ranges.tolist() if int(row[4]) in about])
    articles = library.store.articles(sorted(about))
    by_speaker: dict[str, list[TimelineQuote]] = {}
    for row, score in zip(ranges.tolist(), scores, strict=True):
        quote = quotes.get(int(row[0]))
        if quote is None or not score.on_topic() or quote.article_id not in articles:
            continue
        item = TimelineQuote(quote, articles[quote.article_id], score)
        by_speaker.setdefault(_speaker_key(quote.speaker), []).append(item)
    _merge_surnames(by_speaker)
    ranked = sorted(
        by_speaker.items(),
        key=lambda entry: (-len(entry[1]), -len({q.article.id for q in entry[1]}), -_best(entry[1]).topic_value),
    )[:max_speakers]
    # The same words under two names are one person's, attributed twice: each speaker shows
    # words no one before them in the roundup showed.
    shown: set[str] = set()
    chosen: list[tuple[str, list[TimelineQuote], _Best]] = []
    for name, items in ranked:
        fresh = [q for q in items if " ".join(q.quote.text.split()) not in shown]
        if fresh:
            best = _best(fresh)
            shown.add(" ".join(best.quote.text.split()))
            chosen.append((name, items, best))
    kinds = speaker_kinds(library, [(name, best.quote) for name, _, best in chosen])
    for name, items, best in chosen:
        found.reactions.append(
            Reaction(name, kinds.get(name, "person"), best.item, len(items), len({q.article.id for q in items}))
        )
    found.articles = [articles[a] for a in sorted(articles, key=lambda a: -relevance[a])]
    return found


@dataclass(frozen=True)
class _Best:
    item: TimelineQuote
    topic_value: float

    @property
    def quote(self) -> Quote:
        return self.item.quote


def _best(items: list[TimelineQuote]) -> _Best:
    """A speaker's best quote: a sentence before a phrase, then the closest to the topic, then the newest."""

    def value(item: TimelineQuote) -> float:
        score: TopicScore | None = item.topic
        return score.score if score is not None else 0.0

    newest = newest_first(items)
    order = sorted(
        range(len(newest)),
        key=lambda i: (
            len(newest[i].quote.text.split()) < SENTENCE_WORDS,
            newest[i].quote.partial,
            -value(newest[i]),
            i,
        ),
    )
    chosen = newest[order[0]]
    return _Best(chosen, value(chosen))


def _speaker_key(speaker: str) -> str:
    return " ".join(speaker.split())


def _merge_surnames(by_speaker: dict[str, list[TimelineQuote]]) -> None:
    """ "Blair" joins "Tony Blair" when one full name of the roundup ends with it."""
    for short in [name for name in by_speaker if " " not in name]:
        fuller = [name for name in by_speaker if name != short and name.split()[-1] == short]
        if len(fuller) == 1:
            by_speaker[fuller[0]].extend(by_speaker.pop(short))


_UNNAMED = re.compile(rf"\b(?:{'|'.join(sorted(UNNAMED_ROLES))})\b", re.IGNORECASE)


def speaker_kinds(library: Corpus, speakers: list[tuple[str, Quote]]) -> dict[str, SpeakerKind]:
    """Person or organisation for each speaker, from the NER labels of their name in the
    sentence around their quote (the name alone when it is not written there)."""
    kinds: dict[str, SpeakerKind] = {}
    texts: list[str] = []
    for name, quote in speakers:
        if _UNNAMED.search(name) or re.match(r"(?i)(?:the|a|an)\s", name):
            kinds[name] = "organisation" if _UNNAMED.search(name) else "person"
            continue
        article = library.store.article(quote.article_id, with_text=True)
        text = article.text if article is not None else ""
        start = max(0, text.rfind(".", 0, max(0, quote.start - 1)) + 1)
        end = text.find(".", quote.end)
        around = text[start : end + 1 if end >= 0 else len(text)]
        texts.append(around if name in around else f"{name} said so.")
    named = [name for name, _ in speakers if name not in kinds]
    spans = entity_spans(texts) if texts else []
    for index, name in enumerate(named):
        labels = [label for written, label in (spans[index] if spans else []) if _same_name(written, name)]
        organisation = labels and "PERSON" not in labels and any(label in NOT_PERSON_LABELS for label in labels)
        kinds[name] = "organisation" if organisation else "person"
    return kinds


def _same_name(written: str, name: str) -> bool:
    written = re.sub(r"['’]s$", "", written.strip())
    return written == name or written.endswith(" " + name) or name.endswith(" " + written)
