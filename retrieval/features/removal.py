"""Removing articles (a retraction, a takedown) and the audit log that records who did it.

An article is named by its id (``byline sources --json`` shows ids), its URL, or its key (a
file's path, a page's canonical URL). Removal goes through ``Library.remove_articles``, so the
store and both search indexes lose it together; each removal is written to the ``audit``
table with who asked and when, and the entry outlives the article.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from retrieval.models import Article
from retrieval.storage.audit import AuditEntry, AuditLog
from retrieval.storage.store import Store, utc_now
from retrieval.urls import normalise_url

REMOVE_ACTION = "remove"
# An id is at most this many digits; longer "numbers" are looked up as keys, never int()-ed.
_MAX_ID_DIGITS = 18


class ArticleRemover(Protocol):
    """What removal takes of a library: the store, to find articles by id, URL or key and to
    write the audit log beside them, and the removal that drops them from the store and both
    indexes together (``Library.remove_articles``)."""

    @property
    def store(self) -> Store: ...

    def remove_articles(self, article_ids: Sequence[int]) -> None: ...


@dataclass
class Removal:
    """What ``remove`` did: the articles removed, and the names that matched none."""

    removed: list[Article] = field(default_factory=list)
    not_found: list[str] = field(default_factory=list)


def find_article(store: Store, reference: str) -> Article | None:
    """The stored article an id, URL or key names, else None."""
    reference = reference.strip().strip("<>")  # Slack wraps links in <...>
    if not reference:
        return None
    if reference.isascii() and reference.isdigit() and len(reference) <= _MAX_ID_DIGITS:
        found = store.article(int(reference))
        if found is not None:
            return found
    candidates = [reference]
    if "://" in reference:
        candidates.append(normalise_url(reference))
    else:
        candidates.append(str(Path(reference).expanduser().resolve()))  # file keys are absolute paths
    for candidate in candidates:
        article_id = store.article_id_by_key_or_url(candidate)
        if article_id is not None:
            return store.article(article_id)
    return None


def remove_articles(library: ArticleRemover, references: Sequence[str], actor: str, detail: str = "") -> Removal:
    """Remove the named articles from store and indexes and log each removal in the audit table."""
    removal = Removal()
    chosen: dict[int, Article] = {}
    for reference in references:
        article = find_article(library.store, reference)
        if article is None:
            removal.not_found.append(reference)
        else:
            chosen.setdefault(article.id, article)
    if not chosen:
        return removal
    library.remove_articles(list(chosen))
    now = utc_now()
    AuditLog(library.store).add([(now, actor, REMOVE_ACTION, a.key, a.title, detail) for a in chosen.values()])
    removal.removed = list(chosen.values())
    return removal


def audit_entries(store: Store, limit: int = 100) -> list[AuditEntry]:
    """The newest audit entries first."""
    return AuditLog(store).newest(limit)
