"""Everything a person said, newest first: the speaker timeline behind ``byline quotes``,
``/quotes`` and quote alerts.

The person is matched as the answer path matches a speaker (``answering/who.py``): the full
name, the surname, a name as people write it ("Mr Oaten", "the Tory leader Michael Howard"),
a typo a letter away, and the shorter names an article stored them under. Their quotes are the
stored ones (``Store.speaker_quote_ranges``: two words or more, attributed at ingest), with the
few that ingest left unattributed and ``quote_adoption`` can safely give them, each a verbatim
span with its offsets. A topic keeps only the quotes ``quote_topics`` judges to be on
it. Quotes are ordered newest first by their article's date (published, else when it was
added), then by where they stand in the article; articles that report one story are grouped
as the digest groups them (``story.group_stories``). The same words in several articles (a
story updated and republished, a quote repeated in a follow-up) are shown once, in the newest
article, with the others counted in ``reprinted_in``: a reporter wants each thing said once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from retrieval.answering.who import name_words, resolve_speakers
from retrieval.features.digest import digest_items
from retrieval.features.quote_adoption import adopted_quotes
from retrieval.features.quote_topics import TopicMatcher, TopicScore
from retrieval.models import Article, Quote
from retrieval.reading.story import group_stories
from retrieval.reading.text import words

if TYPE_CHECKING:
    from retrieval.ports import Corpus
    from retrieval.scope import ResolvedScope

# Story grouping reads every article's sentences and runs the NER model over them; past this
# many articles (a prime minister's thousand) each article is its own group, which stays fast.
MAX_GROUPED_ARTICLES = 60


@dataclass(frozen=True)
class TimelineQuote:
    """One quote of the timeline: the stored quote, its article, and its fit to the topic."""

    quote: Quote
    article: Article
    topic: TopicScore | None = None
    # Older articles that carry the same words (see the module docstring), newest first.
    reprinted_in: tuple[Article, ...] = ()

    @property
    def date(self) -> str:
        """The article's date: published when known, else the day it was added."""
        return article_date(self.article)


@dataclass
class TimelineStory:
    """Quotes from articles that report one story, newest first; ``articles`` newest first."""

    articles: list[Article]
    quotes: list[TimelineQuote]


@dataclass
class Timeline:
    """A person's quotes (on a topic, since a date), grouped by story, newest first."""

    asked: str
    speakers: list[str]
    topic: str = ""
    since: str = ""
    stories: list[TimelineStory] = field(default_factory=list)
    # Quotes of the person before the topic and date filters: "3 of their 40 quotes".
    total_quotes: int = 0
    # Other people the name asked could mean ("Kennedy": Helena Kennedy when Charles Kennedy is
    # the one shown), for the reply to offer by full name.
    also_named: list[str] = field(default_factory=list)
    article_count: int = 0

    @property
    def quotes(self) -> list[TimelineQuote]:
        """Every quote, in the order shown (story by story)."""
        return [quote for story in self.stories for quote in story.quotes]


def article_date(article: Article) -> str:
    """YYYY-MM-DD: the published date when the article has one, else the day it was stored."""
    return (article.published or article.added_at)[:10]


def speaker_timeline(
    library: Corpus,
    speaker: str,
    topic: str = "",
    since: str = "",
    scope: ResolvedScope | None = None,
    group: bool = True,
) -> Timeline:
    """The quotes of the person ``speaker`` names; ``since`` is YYYY-MM-DD (inclusive)."""
    speakers = resolve_speakers(library, speaker.strip()) if speaker.strip() else []
    speakers, also_named = one_person(library, speakers)
    timeline = Timeline(
        speaker, speakers, topic.strip(), since, also_named=also_named, article_count=library.article_count()
    )
    ranges = library.store.speaker_quote_ranges(speakers)
    if scope is not None:
        ranges = scope.quote_ranges(ranges)
    adopted_rows, adopted = adopted_quotes(library, speakers, ranges)
    ranges = np.vstack([ranges, adopted_rows]) if len(adopted_rows) else ranges
    timeline.total_quotes = len(ranges)
    if not len(ranges):
        return timeline
    scores: list[TopicScore | None] = [None] * len(ranges)
    if timeline.topic:
        scores = list(TopicMatcher(library, timeline.topic).score_ranges(ranges))
    quotes = library.store.quotes_by_ids(ranges[:, 0].tolist()) | adopted
    articles = library.store.articles(sorted(set(ranges[:, 4].tolist())))
    found: list[TimelineQuote] = []
    for row, score in zip(ranges.tolist(), scores, strict=True):
        quote, article = quotes.get(int(row[0])), articles.get(int(row[4]))
        if quote is None or article is None or (score is not None and not score.on_topic()):
            continue
        if since and article_date(article) < since:
            continue
        found.append(TimelineQuote(quote, article, score))
    found = without_reprints(found)
    timeline.stories = group_by_story(library, found) if group else _by_article(found)
    return timeline


def one_person(library: Corpus, speakers: list[str]) -> tuple[list[str], list[str]]:
    """The stored names of one person, the most quoted, when a name asked fits several people
    ("Kennedy": Charles, Helena and John Kennedy), and a full name of each of the others.

    A timeline is one person's words: mixing two people's would attribute words wrongly, which
    is the one thing Byline must not do. Names where one ends with the other ("Ladbrokes' Warren
    Lush", "Warren Lush") and bare surnames or peerages ("Kennedy", "Lord Goldsmith") are the
    same person.
    """
    words = {name: name_words(name) for name in speakers}
    people: list[list[str]] = []
    for name in sorted((n for n in speakers if len(words[n]) >= 2), key=lambda n: -len(words[n])):
        mine = words[name]
        same = next((group for group in people if words[group[0]][-len(mine) :] == mine), None)
        if same is None:
            people.append([name])
        else:
            same.append(name)
    if len(people) < 2:
        return speakers, []
    # The library's in-memory count of each speaker's stored quotes: no query per name.
    people.sort(key=lambda group: -sum(library.speakers.get(name, 0) for name in group))
    others = {name for group in people[1:] for name in group}
    return [name for name in speakers if name not in others], [group[0] for group in people[1:]]


def without_reprints(quotes: Sequence[TimelineQuote]) -> list[TimelineQuote]:
    """One quote per wording (case, spacing and punctuation aside), kept where it is newest."""
    kept: dict[tuple[str, ...], TimelineQuote] = {}
    for item in newest_first(quotes):
        key = tuple(words(item.quote.text))
        first = kept.get(key)
        if first is None:
            kept[key] = item
        elif item.article.id != first.article.id and all(a.id != item.article.id for a in first.reprinted_in):
            kept[key] = replace(first, reprinted_in=(*first.reprinted_in, item.article))
    return list(kept.values())


def newest_first(quotes: Sequence[TimelineQuote]) -> list[TimelineQuote]:
    """Newest article first (by date, then the later stored), in reading order within one."""
    return sorted(quotes, key=lambda q: (_negated(q.date), -q.article.id, q.quote.start))


def _negated(day: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in day)


def group_by_story(library: Corpus, quotes: Sequence[TimelineQuote]) -> list[TimelineStory]:
    """Quotes grouped by the story their articles report, the story with the newest quote first."""
    ordered = newest_first(quotes)
    articles = list({q.article.id: q.article for q in ordered}.values())
    if len(articles) < 2 or len(articles) > MAX_GROUPED_ARTICLES:
        return _by_article(ordered)
    items = digest_items(library, articles)
    groups = group_stories([item.features for item in items])
    story_of = {items[i].article.id: n for n, members in enumerate(groups) for i in members}
    stories: dict[object, TimelineStory] = {}
    for quote in ordered:
        key: object = story_of.get(quote.article.id, ("article", quote.article.id))
        story = stories.setdefault(key, TimelineStory([], []))
        if quote.article not in story.articles:
            story.articles.append(quote.article)
        story.quotes.append(quote)
    return list(stories.values())


def _by_article(quotes: Sequence[TimelineQuote]) -> list[TimelineStory]:
    stories: dict[int, TimelineStory] = {}
    for quote in newest_first(quotes):
        stories.setdefault(quote.article.id, TimelineStory([quote.article], [])).quotes.append(quote)
    return list(stories.values())
