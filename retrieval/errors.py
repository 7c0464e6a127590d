"""Errors a user can act on. Each message says what went wrong and what to do."""


class BylineError(Exception):
    """Base class: the message is shown to the user as it is."""


class UnreadableArticle(BylineError):
    """A file or page that cannot be turned into an article (binary, empty, no text)."""


class BadQuestion(BylineError):
    """A question that cannot be answered as asked (empty, far too long)."""


class CorruptDatabase(BylineError):
    """A SQLite file that is not a database, or is damaged: never overwritten, the user decides."""
