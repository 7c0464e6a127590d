"""``/scope add|show|clear`` (``/byline scope …`` on Slack): which sources answer in a channel.

A channel's scope is a row of ``channel_scopes`` in the state store (so it survives a restart),
holding ``retrieval.scope.Scope`` as JSON. Anyone may see it; only admins change it, checked
here because ``show`` is for everyone. Entries are checked against the library before anything
is stored, and an ``add`` with one bad entry stores none of them, so a typo neither empties the
channel's answers nor half-applies.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.asking import Asker, Command
from bot.replies import Reply, TextReply
from bot.state.channel_scopes import channel_scope, scope_key
from bot.tenancy import ANOTHER_TENANT
from retrieval.scope import Scope, ScopeError, parse_entry, with_entry

if TYPE_CHECKING:
    from bot.state.store import BotState
    from retrieval.library import Library

# An entry starts at a kind and runs to the next one ("outlet:BBC Sport tag:football"), or is
# separated by "|" as in the usage line; values may hold spaces (outlet names do).
_ENTRY_START = re.compile(
    r"(?:^|(?<=\s)|(?<=\|))\s*(?=(?:feed|feeds|outlet|outlets|source|tag|tags|section|since):)", re.I
)


def usage_name(platform: str) -> str:
    return "/byline scope" if platform == "slack" else "/scope"


def split_entries(text: str) -> list[str]:
    parts = _ENTRY_START.split(text)
    return [entry for part in parts if (entry := part.strip().strip("|").strip())]


class ScopeCommand:
    """The ``scope`` command of the service, over the library (to check entries) and the state."""

    def __init__(self, library: Library, state: BotState) -> None:
        self.library = library
        self.state = state

    def __call__(self, args: str, asker: Asker) -> Reply:
        usage = usage_name(asker.platform)
        action, _, rest = args.strip().partition(" ")
        action = action.lower() or "show"
        if action not in {"add", "show", "clear"}:
            return _error(
                f"Usage: `{usage} add ENTRY…`, `{usage} show` or `{usage} clear`; an entry is `feed:URL`, "
                f"`outlet:NAME`, `tag:NAME` or `since:30d`, e.g. `{usage} add outlet:BBC Sport since:30d`."
            )
        platform, channel = scope_key(asker)
        if not channel or (platform == "slack" and channel.startswith("D")):
            return _error(f"A scope belongs to a channel: run `{usage} {action}` in the channel it is for.")
        if action == "show":
            return self._show(asker)
        if not (asker.is_admin or asker.is_operator):
            return _error(
                "Only this server's or workspace's admins can change which sources answer in this channel "
                f"(`{usage} {action}`); "
                f"`{usage} show` shows what it follows."
            )
        setter = f"{asker.platform}:{asker.user_id}"
        if action == "clear":
            self.state.set_channel_scope(platform, channel, None, setter, asker.tenant)
            return TextReply(
                f"This channel's scope is cleared: answers here come from all "
                f"{self.library.store.article_count()} articles again.",
                private=True,
            )
        entries = split_entries(rest)
        if not entries:
            return _error(f"Name what to follow, e.g. `{usage} add outlet:BBC Sport` or `{usage} add since:30d`.")
        scope = channel_scope(self.state, asker) or Scope()
        try:
            for entry in entries:
                scope = with_entry(scope, *parse_entry(self.library.store, entry))
        except ScopeError as error:
            return _error(f"Nothing was changed. {error}")
        if not self.state.set_channel_scope(platform, channel, scope.to_json(), setter, asker.tenant):
            return _error(ANOTHER_TENANT)
        return TextReply(self._summary(scope, "This channel now follows"), private=True)

    def _show(self, asker: Asker) -> Reply:
        scope = channel_scope(self.state, asker)
        usage = usage_name(asker.platform)
        if scope is None or scope.is_empty():
            return TextReply(
                f"This channel has no scope: answers here come from all {self.library.store.article_count()} "
                f"articles. An admin can narrow it with `{usage} add outlet:NAME` (or `feed:`, `tag:`, `since:30d`).",
                private=True,
            )
        return TextReply(self._summary(scope, "This channel follows"), private=True)

    def _summary(self, scope: Scope, lead: str) -> str:
        resolved = self.library.resolve_scope(scope)
        count = resolved.article_count if resolved is not None else self.library.store.article_count()
        entries = ", ".join(f"`{entry}`" for entry in scope.entries())
        return (
            f"{lead}: {entries} — {count} article{'s' if count != 1 else ''} {scope.describe()}. "
            "Answers, /search, /sources and digests here use only these; entries of one kind are either-or "
            "(two outlets: either outlet), different kinds must all hold (an outlet and a tag: that outlet's "
            "articles with that tag)."
        )


def _error(text: str) -> TextReply:
    return TextReply(text, private=True, error=True)


def command(library: Library, state: BotState) -> Command:
    """The ``scope`` command (reading a channel's scope is for all; changing it, for admins)."""
    return Command(
        "scope",
        "/scope add ENTRY…|show|clear",
        "which sources answer in this channel: feed:URL, outlet:NAME, tag:NAME, since:30d "
        "(Slack: /byline scope; changing it is for admins)",
        ScopeCommand(library, state),
    )
