"""The reactions roundup as the platforms show it (a ``Digest``: people first, then
organisations, each quote cited) and as the JSON of ``byline reactions --json``."""

from __future__ import annotations

from typing import Any

from retrieval.citations import CitationNumbers
from retrieval.features.digest import render_digest
from retrieval.features.quote_pages import quote_span, user_words
from retrieval.features.quote_timeline import article_date
from retrieval.features.reactions import Reaction, Reactions
from retrieval.models import Digest, DigestStory

_GROUPS = (("person", "People"), ("organisation", "Organisations"))


def reactions_digest(found: Reactions) -> Digest:
    """People, then organisations, each most prominent first, one cited quote each."""
    numbers = CitationNumbers()
    stories = []
    for kind, label in _GROUPS:
        group = found.of_kind(kind)  # type: ignore[arg-type]
        if not group:
            continue
        spans = [quote_span(reaction.best, numbers) for reaction in group]
        articles = list({r.best.article.id: r.best.article for r in group}.values())
        stories.append(DigestStory(label, articles, spans, spans[0].citation))
    count = len(found.reactions)
    if count:
        header = (
            f"Reactions to “{user_words(found.topic)}”: {count} speaker{'s' if count != 1 else ''} in "
            f"{len(found.articles)} article{'s' if len(found.articles) != 1 else ''}, most quoted first"
        )
    else:
        header = no_reactions(found)
    digest = Digest("", "", "", len(found.articles), stories, numbers.citations, header)
    digest.text = render_digest(digest)
    return digest


def no_reactions(found: Reactions) -> str:
    articles = f"{found.article_count} article{'s' if found.article_count != 1 else ''}"
    if not found.topic:
        return "Name a story or topic, e.g. `/reactions topic:the Budget`."
    return f"No one is quoted on “{user_words(found.topic)}” in the {articles} Byline has. Try other words for it."


def reaction_json(reaction: Reaction) -> dict[str, Any]:
    quote, article = reaction.best.quote, reaction.best.article
    return {
        "speaker": reaction.speaker,
        "kind": reaction.kind,
        "quotes_on_topic": reaction.quotes,
        "articles": reaction.articles,
        "quote": quote.text,
        "citation": {
            "article_id": article.id,
            "title": article.title,
            "source": article.source,
            "url": article.url,
            "date": article_date(article),
            "paragraph": quote.paragraph,
            "start": quote.start,
            "end": quote.end,
        },
    }


def reactions_json(found: Reactions) -> dict[str, Any]:
    """The JSON of ``byline reactions --json``."""
    return {
        "topic": found.topic,
        "articles": [{"article_id": a.id, "title": a.title, "date": article_date(a)} for a in found.articles],
        "reactions": [reaction_json(r) for r in found.reactions],
        "message": "" if found.reactions else no_reactions(found),
    }
