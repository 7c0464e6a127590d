"""Errors a user can act on. Each message says what went wrong and what to do."""


class BylineError(Exception):
    """Base class: the message is shown to the user as it is."""


class UnreadableArticle(BylineError):
    """A file or page that cannot be turned into an article (binary, empty, no text)."""


class BadQuestion(BylineError):
    """A question that cannot be answered as asked (empty, far too long)."""


class CorruptDatabase(BylineError):
    """A SQLite file that is not a database, or is damaged: never overwritten, the user decides."""


class OldIndexFormat(ValueError):
    """An index file written by an older Byline: rebuilt from the store, as when stale."""


class IndexFileOutOfStep(ValueError):
    """An index file whose ids are not the store's: it misses some articles or holds deleted ones
    (rebuilt from the store)."""


class QdrantUnavailable(BylineError):
    """Qdrant could not be opened or reached; the message says where and what to do."""
