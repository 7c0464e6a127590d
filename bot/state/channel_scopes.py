"""Which scope applies to an asker's channel: the state's record, read as a ``Scope``.

Here, not in the ``/scope`` command, because every answer path (the service, ``/quotes``,
``/verify``) and the digest schedule read it, while only the command writes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrieval.scope import Scope

if TYPE_CHECKING:
    from bot.asking import Asker
    from bot.state.store import BotState


def scope_key(asker: Asker) -> tuple[str, str]:
    """(platform, channel) whose scope applies: a thread answers with its channel's scope."""
    return asker.platform, asker.parent_channel or asker.channel_id


def channel_scope(state: BotState, asker: Asker) -> Scope | None:
    """The asker's channel scope, or None (the whole library answers there)."""
    return scope_of_channel(state, *scope_key(asker), asker.tenant)


def scope_of_channel(state: BotState, platform: str, channel_id: str, tenant: str) -> Scope | None:
    """A channel's scope in ``tenant`` (for its digests too), or None."""
    if not channel_id:
        return None
    row = state.channel_scope(platform, channel_id, tenant)
    return Scope.from_json(row[0]) if row else None
