"""Digests: the articles added in a window, grouped by story, with verbatim cited key lines.

Platform-neutral: ``build_digest`` returns a ``Digest`` that every adapter renders its own way
(``Digest.text`` is the plain-text rendering, used by the terminal and as fallback text).

How stories are found: a story is one event (same actors, same place, same time), decided for
each pair of articles by ``retrieval/reading/story.py`` (the same sentences restated, or alike articles
naming the same people and dates; no conflicting places or publication dates) and grouped by
complete link. The other articles of a story are
shown under it as "also in: …", never as stories of their own. ``cluster`` is the older topic
clustering, kept for ``bench/quality/eval_story.py`` to compare against. Key lines are chosen
extractively: the sentences nearest the story's centroid, so every word shown is a stored
sentence, cited to its paragraph.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from retrieval.citations import CitationNumbers
from retrieval.models import AnswerSpan, Article, Digest, DigestStory, Quote, Sentence
from retrieval.ports import Corpus
from retrieval.reading.story import StoryFeatures, article_features, group_stories
from retrieval.reading.text import search_tokens
from retrieval.render import CLOSE_QUOTE, OPEN_QUOTE, citation_line, format_date
from retrieval.scope import ResolvedScope, articles_added

if TYPE_CHECKING:
    from retrieval.storage.store import Store

# The older topic clustering (``cluster``): similarity of two article groups above which they
# were one story. Calibrated on BBC News
# articles with all-MiniLM-L6-v2: follow-ups of one running story (the Yukos auction and its
# court cases) score 0.88-1.1, different events in one section 0.3-0.7 (two Patricia Hewitt
# speeches on women and work: 0.69).
SAME_STORY = 0.8
# Shared title words are strong evidence of one story ("Yukos ..."), weak on their own.
TITLE_WEIGHT = 0.25
MAX_ARTICLES = 500
MAX_STORIES = 12
# Other articles of a story named under it ("also in: …"); the rest are counted.
ALSO_IN_SHOWN = 5
KEY_SENTENCES = 2
# Key lines that are too short say nothing; too long ones swamp a chat message.
MIN_SENTENCE, MAX_SENTENCE = 40, 320
MIN_QUOTE, MAX_QUOTE = 25, 280
_PRONOUNS = {"he", "she", "they", "it", "we", "i"}
# A key line read on its own must not lean on a sentence that is not shown.
# Site furniture that segmentation keeps as a sentence: "READ MORE: ...", "WATCH: ...".
_FURNITURE = re.compile(r"^[A-Z][A-Z ]{2,}:")
_LEANING = re.compile(r"^(?:He|She|They|It|This|That|These|Those|But|And|However|Also|His|Her|Their)\b")


class DigestSource(Corpus, Protocol):
    """A corpus whose store is the SQL one: a scoped digest selects its window's articles there
    (``scope.articles_added``), before the limit, so a narrow scope is not crowded out."""

    @property
    def store(self) -> Store: ...


def added_at_text(moment: datetime) -> str:
    """A moment in the store's ``added_at`` format (UTC, microseconds), so comparisons are exact."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_added_at(value: str) -> datetime:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def window_label(since: datetime, now: datetime, zone: tzinfo = UTC) -> str:
    """ "Mon 1 Dec, 09:00" in the channel's timezone; the year only when it is not this year's."""
    local = since.astimezone(zone)
    year = f" {local.year}" if local.year != now.astimezone(zone).year else ""
    return f"{local.strftime('%a')} {local.day} {local.strftime('%b')}{year}, {local.strftime('%H:%M')}"


@dataclass
class _Item:
    """One article of the window with what clustering and extraction need."""

    article: Article
    text: str
    sentences: list[Sentence]
    vectors: np.ndarray  # one unit vector per sentence
    mean: np.ndarray  # unit vector
    title_words: frozenset[str]
    quotes: list[Quote]
    features: StoryFeatures


def build_digest(
    library: DigestSource,
    channel: str,
    since: datetime,
    until: datetime,
    now: datetime,
    *,
    zone: tzinfo = UTC,
    late: bool = False,
    max_stories: int = MAX_STORIES,
    scope: ResolvedScope | None = None,
) -> Digest:
    """The digest of articles added in ``[since, until)`` for ``channel``.

    ``zone`` is the channel's timezone, used only for the header; ``late`` marks a digest sent
    after its scheduled time (a run missed while Byline was down); ``scope``, the channel's scope:
    only its articles are in the digest.
    """
    window = added_at_text(since), added_at_text(until)
    if scope is None:
        articles = library.store.list_articles(limit=MAX_ARTICLES, since=window[0], until=window[1])
    else:
        articles = articles_added(library.store, scope, window[0], window[1], MAX_ARTICLES)
    label = window_label(since, now, zone)
    place = channel if channel.startswith("#") or not channel else f"#{channel}"
    if scope is not None:
        place = " ".join(part for part in (place, f"(articles {scope.scope.describe()})") if part)
    if not articles:
        header = " — ".join(part for part in (f"Nothing new since {label}", place) if part)
        digest = Digest(channel, added_at_text(since), added_at_text(until), 0, [], [], header=header, late=late)
        digest.text = render_digest(digest)
        return digest
    items = digest_items(library, articles)
    groups = group_stories([item.features for item in items])
    # Biggest stories first, then the newest (by when their newest article was added).
    groups.sort(key=lambda g: (len(g), max(items[i].article.added_at for i in g)), reverse=True)
    numbering = CitationNumbers()
    stories = [_story([items[i] for i in group], numbering) for group in groups[:max_stories]]
    count = len(articles)
    header = " — ".join(
        part for part in (f"since {label}", f"{count} article{'s' if count != 1 else ''}", place) if part
    )
    digest = Digest(
        channel,
        added_at_text(since),
        added_at_text(until),
        count,
        stories,
        numbering.citations,
        header=header,
        late=late,
    )
    digest.text = render_digest(digest, more=len(groups) - len(stories))
    return digest


def digest_items(library: Corpus, articles: Sequence[Article]) -> list[_Item]:
    """What grouping and extraction need of each article; articles without sentences are left out."""
    ids = [a.id for a in articles]
    sentences = library.store.sentences_of_articles(ids)
    quotes: dict[int, list[Quote]] = {}
    for quote in library.store.quotes_of_articles(ids):
        quotes.setdefault(quote.article_id, []).append(quote)
    with library.lock:
        vectors = library.dense.vectors([s.id for s in sentences])
    by_article: dict[int, list[int]] = {}
    for index, sentence in enumerate(sentences):
        by_article.setdefault(sentence.article_id, []).append(index)
    items: list[_Item] = []
    for article in articles:
        rows = by_article.get(article.id, [])
        full = library.store.article(article.id, with_text=True)
        if not rows or full is None:
            continue  # an article without sentences has nothing to show
        own = _unit(vectors[rows])
        own_sentences = [sentences[i] for i in rows]
        items.append(
            _Item(
                article=article,
                text=full.text,
                sentences=own_sentences,
                vectors=own,
                mean=_unit(own.mean(axis=0, keepdims=True))[0],
                title_words=frozenset(search_tokens(article.title)),
                quotes=quotes.get(article.id, []),
                features=article_features(article.title, full.text, own_sentences, own, article.published),
            )
        )
    return items


def cluster(
    means: Sequence[np.ndarray], title_words: Sequence[frozenset[str]], threshold: float = SAME_STORY
) -> list[list[int]]:
    """The older topic grouping: average-linkage clustering of articles (lists of indexes).

    Pairwise similarity is the cosine of the mean vectors plus ``TITLE_WEIGHT`` times the
    overlap of title words; two groups merge while their average pairwise similarity is at
    least ``threshold``. Average linkage, unlike single linkage, keeps a chain of loosely
    related articles (one politics story leading to the next) from becoming one story.
    """
    n = len(means)
    if n == 0:
        return []
    matrix = np.stack(means) @ np.stack(means).T
    for i in range(n):
        for j in range(i + 1, n):
            bonus = TITLE_WEIGHT * _overlap(title_words[i], title_words[j])
            matrix[i, j] += bonus
            matrix[j, i] += bonus
    groups: list[list[int]] = [[i] for i in range(n)]
    while len(groups) > 1:
        best, pair = threshold, None
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                score = float(matrix[np.ix_(groups[a], groups[b])].mean())
                if score >= best:
                    best, pair = score, (a, b)
        if pair is None:
            break
        a, b = pair
        groups[a] = sorted(groups[a] + groups[b])
        del groups[b]
    return groups


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Share of the shorter title's words found in the other (titles are short)."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def _story(items: list[_Item], numbering: CitationNumbers) -> DigestStory:
    centroid = _unit(np.stack([item.mean for item in items]).mean(axis=0, keepdims=True))[0]
    # The lead is the newest article: a digest reports where a story stands now.
    items.sort(key=lambda item: (item.article.published or item.article.added_at, item.article.added_at), reverse=True)
    lead = items[0]
    chosen = _key_sentences(items, centroid)
    spans = [_sentence_span(item, sentence, numbering, score) for item, sentence, score in chosen]
    quote = _best_quote(items, centroid, numbering)
    if quote is not None:
        spans.append(quote)
    lead_sentence = next((s for item, s, _ in chosen if item is lead), lead.sentences[0])
    lead_citation = numbering.number(lead.article, lead_sentence.paragraph, lead_sentence.passage_id)
    return DigestStory(lead.article.title, [item.article for item in items], spans, lead_citation)


def _key_sentences(items: list[_Item], centroid: np.ndarray) -> list[tuple[_Item, Sentence, float]]:
    """1-2 sentences nearest the story's centroid, from different articles where possible."""
    candidates: list[tuple[float, int, int]] = []
    for item_index, item in enumerate(items):
        scores = item.vectors @ centroid
        for index, sentence in enumerate(item.sentences):
            if (
                not MIN_SENTENCE <= len(sentence.text) <= MAX_SENTENCE
                or '"' in sentence.text
                or OPEN_QUOTE in sentence.text
            ):
                continue  # quoted words belong to the quote line, with their speaker
            if _FURNITURE.match(sentence.text):
                continue
            # News leads summarise: an early paragraph is a better key line than a late one.
            bonus = 0.05 if sentence.paragraph <= 2 else 0.0
            if _LEANING.match(sentence.text):
                bonus -= 0.15
            candidates.append((float(scores[index]) + bonus, item_index, index))
    if not candidates:  # every sentence was short, long or quoted: fall back to the lead's first
        return [(items[0], items[0].sentences[0], 0.0)]
    candidates.sort(reverse=True)
    chosen: list[tuple[_Item, Sentence, float]] = []
    used_articles: set[int] = set()
    first_vector: np.ndarray | None = None
    for prefer_new_article in (True, False):
        for score, item_index, index in candidates:
            if len(chosen) >= min(KEY_SENTENCES, len(candidates)):
                break
            item = items[item_index]
            sentence = item.sentences[index]
            if any(s.id == sentence.id for _, s, _ in chosen):
                continue
            if prefer_new_article and item_index in used_articles:
                continue
            # Two articles of one story often open with the same sentence, reworded.
            if first_vector is not None and float(item.vectors[index] @ first_vector) > 0.9:
                continue
            chosen.append((item, sentence, score))
            used_articles.add(item_index)
            if first_vector is None:
                first_vector = item.vectors[index]
    return chosen


def _sentence_span(item: _Item, sentence: Sentence, numbering: CitationNumbers, score: float) -> AnswerSpan:
    n = numbering.number(item.article, sentence.paragraph, sentence.passage_id)
    return AnswerSpan(
        item.text[sentence.start : sentence.end],
        "sentence",
        "",
        n,
        item.article.id,
        sentence.paragraph,
        sentence.start,
        sentence.end,
        score,
    )


def _best_quote(items: list[_Item], centroid: np.ndarray, numbering: CitationNumbers) -> AnswerSpan | None:
    """The attributed quote whose sentence is nearest the story's centroid, if any."""
    best: tuple[float, _Item, Quote, Sentence] | None = None
    for item in items:
        for quote in item.quotes:
            if not _usable_quote(quote):
                continue
            found = next(((i, s) for i, s in enumerate(item.sentences) if s.start <= quote.start < s.end), None)
            if found is None:
                continue
            index, sentence = found
            score = float(item.vectors[index] @ centroid)
            if best is None or score > best[0]:
                best = (score, item, quote, sentence)
    if best is None:
        return None
    score, item, quote, sentence = best
    n = numbering.number(item.article, quote.paragraph, sentence.passage_id)
    return AnswerSpan(
        item.text[quote.start : quote.end],
        "quote",
        quote.speaker,
        n,
        item.article.id,
        quote.paragraph,
        quote.start,
        quote.end,
        score,
    )


def _usable_quote(quote: Quote) -> bool:
    speaker = quote.speaker.strip()
    if not speaker or speaker.lower() in _PRONOUNS or quote.partial:
        return False
    # A quote that is mostly a fragment ("a 'disgrace'") reads badly on its own line.
    return MIN_QUOTE <= len(quote.text) <= MAX_QUOTE and len(re.findall(r"\w+", quote.text)) >= 5


# -- rendering ---------------------------------------------------------------------------


def also_in_label(article: Article, lead: Article) -> str:
    """How another article of a story is named: its outlet, and its headline when it differs."""
    same_title = " ".join(article.title.split()).casefold() == " ".join(lead.title.split()).casefold()
    if same_title or not article.title.strip():
        return article.source.strip() or article.title.strip() or "another article"
    return f"{article.title.strip()} ({article.source.strip()})" if article.source.strip() else article.title.strip()


def also_in_text(story: DigestStory) -> str:
    """ "also in: Inquiry ordered (Northern Times); Ashworth Gazette" or "" for a one-article story."""
    others = story.articles[1:]
    if not others:
        return ""
    lead = story.articles[0]
    shown = "; ".join(" ".join(also_in_label(article, lead).split()) for article in others[:ALSO_IN_SHOWN])
    more = len(others) - ALSO_IN_SHOWN
    return f"also in: {shown}" + (f" and {more} more" if more > 0 else "")


def story_lines(story: DigestStory, number: int) -> list[str]:
    """One story as plain text: headline, lead details, key lines, the quote and "also in"."""
    lead = story.articles[0]
    count = len(story.articles)
    headline = f"{number}. {story.headline}" + (f" ({count} articles)" if count > 1 else "")
    details = [part for part in (lead.source, format_date(lead.published), lead.url) if part]
    if details:
        lines = [headline, "   " + " · ".join([*details, f"[{story.lead_citation}]"])]
    else:
        lines = [f"{headline} [{story.lead_citation}]"]
    for span in story.spans:
        if span.kind == "quote":
            lines.append(f"   {OPEN_QUOTE}{span.text}{CLOSE_QUOTE} — {span.speaker} [{span.citation}]")
        else:
            lines.append(f"   {' '.join(span.text.split())} [{span.citation}]")
    also = also_in_text(story)
    if also:
        lines.append(f"   {also}")
    return lines


def render_digest(digest: Digest, more: int = 0) -> str:
    """The plain-text rendering: header, stories, then the numbered sources."""
    lines = [digest.header]
    if digest.late:
        lines.append("(Late: this scheduled digest was due while Byline was offline.)")
    for number, story in enumerate(digest.stories, start=1):
        lines += ["", *story_lines(story, number)]
    if more > 0:
        lines += ["", f"… and {more} more stor{'ies' if more != 1 else 'y'}."]
    if digest.citations:
        lines += ["", "Sources:", *(citation_line(c) for c in digest.citations)]
    return "\n".join(lines)


def digest_to_json(digest: Digest) -> dict[str, Any]:
    """The JSON shape of ``byline digest --json`` (and of digests stored in history)."""
    return {
        "channel": digest.channel,
        "since": digest.since,
        "until": digest.until,
        "header": digest.header,
        "late": digest.late,
        "article_count": digest.article_count,
        "stories": [
            {
                "headline": story.headline,
                "lead_citation": story.lead_citation,
                "articles": [
                    {
                        "article_id": a.id,
                        "title": a.title,
                        "source": a.source,
                        "url": a.url,
                        "published": a.published,
                        "added_at": a.added_at,
                    }
                    for a in story.articles
                ],
                "sentences": [
                    {
                        "text": s.text,
                        "kind": s.kind,
                        "speaker": s.speaker,
                        "citation": s.citation,
                        "article_id": s.article_id,
                        "paragraph": s.paragraph,
                        "start": s.start,
                        "end": s.end,
                    }
                    for s in story.spans
                ],
            }
            for story in digest.stories
        ],
        "citations": [asdict(c) for c in digest.citations],
        "text": digest.text,
    }
