"""``/remove ARTICLE…``: take articles out of the shared library (Byline's operators only; logged)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.asking import Asker, Command, shown
from bot.replies import Reply, TextReply
from retrieval.errors import BylineError
from retrieval.features.removal import Removal, remove_articles

if TYPE_CHECKING:
    from retrieval.library import Library


class RemoveCommand:
    """The ``remove`` command, over the library."""

    def __init__(self, library: Library) -> None:
        self.library = library

    def __call__(self, args: str, asker: Asker) -> Reply:
        references = args.split()
        if not references:
            return TextReply(
                "Usage: `/remove ARTICLE…`, each an article's URL (as `/sources` shows it), key or id "
                "(`byline sources --json`), e.g. `/remove https://www.bbc.co.uk/news/123`",
                private=True,
                error=True,
            )
        where = f" in {asker.channel_id}" if asker.channel_id else ""
        actor = f"{asker.platform}:{asker.user_id}"
        try:
            removal = remove_articles(self.library, references, actor, f"/remove{where}")
        except BylineError as error:
            return TextReply(f"Could not remove it: {error}", private=True, error=True)
        return removal_reply(removal)


def command(library: Library) -> Command:
    """The ``remove`` command (operators only: the library is every tenant's)."""
    return Command(
        "remove",
        "/remove ARTICLE…",
        "remove articles by id, URL or key, logged in the audit log (Byline's operators only)",
        RemoveCommand(library),
        operator_only=True,
    )


def removal_reply(removal: Removal) -> TextReply:
    """What ``/remove`` (and ``byline remove``) did, one line per article."""
    lines = [f"Removed “{a.title}” (id {a.id}, {a.key}); logged in the audit log." for a in removal.removed]
    lines += [f"No stored article is {shown(name)!r} (give an id, URL or key)." for name in removal.not_found]
    failed = not removal.removed
    return TextReply("\n".join(lines), private=True, error=failed)
