"""Article text and metadata from an HTML page, boilerplate dropped."""

from __future__ import annotations

import re

from retrieval.errors import UnreadableArticle
from retrieval.models import ArticleDraft


def html_to_draft(html: str, key: str, url: str = "") -> ArticleDraft:
    """Extract the article from a page: scripts, navigation, ads and comments are dropped."""
    # Imported here: trafilatura takes a third of a second to import, and most commands
    # (ask, search, sources) never read a page.
    import trafilatura

    try:
        document = trafilatura.bare_extraction(
            html, url=url or None, include_comments=False, include_tables=False, with_metadata=True
        )
    except (ValueError, RecursionError, MemoryError, LookupError, TypeError) as error:
        # lxml and trafilatura reject some hostile markup (absurd nesting, broken encodings).
        raise UnreadableArticle(f"the page could not be parsed as HTML ({type(error).__name__})") from None
    text = (getattr(document, "text", None) or "").strip() if document is not None else ""
    if not text:
        raise UnreadableArticle("no article text found in the page (only scripts or markup?)")
    # trafilatura separates paragraphs with single newlines; Byline's are blank lines.
    text = re.sub(r"\s*\n\s*", "\n\n", text)
    title = (getattr(document, "title", None) or "").strip()
    if not title:
        first, _, rest = text.partition("\n\n")
        title, text = first.strip(), rest.strip() or first.strip()
    return ArticleDraft(
        key=key,
        title=title,
        text=text,
        source=(getattr(document, "sitename", None) or "").strip(),
        url=(getattr(document, "url", None) or url or "").strip(),
        published=(getattr(document, "date", None) or "").strip(),
        author=(getattr(document, "author", None) or "").strip(),
    )
