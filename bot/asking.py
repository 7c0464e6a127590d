"""Who is asking and what they may run: the ``Asker``, a ``Command``, and their text made safe.

The lowest module of the bot's request path: the service, the commands, the jobs and the
adapters all take these, so none of them has to import another to name them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.replies import Reply

# A page number longer than this is refused before int() reads it (int() of a 5,000-digit
# string raises ValueError, and no library has a billion pages).
MAX_PAGE_DIGITS = 9
# Lone surrogates (JSON "\ud800", undecodable bytes under surrogateescape) cannot be encoded as
# UTF-8, so SQLite and every platform API would raise on them; they become U+FFFD.
_SURROGATES = re.compile("[\ud800-\udfff]")
# C0/C1 control characters other than tab and newline (NUL, ESC, BEL...) become spaces, and
# bidi embeddings/overrides/isolates are dropped: they carry no words, and echoed back in a
# reply they would reorder or recolour Byline's own text.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def clean_input(text: str) -> str:
    """User text made safe to store, search and echo; every entry point of the service uses it."""
    return _BIDI.sub("", _CONTROLS.sub(" ", _SURROGATES.sub("\ufffd", text)))


def shown(text: str, limit: int = 60) -> str:
    """User input quoted back in a message, cut so that a huge argument gives a short reply."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Asker:
    """Who is asking, and where: enough for permissions, feedback and conversation context."""

    platform: str
    user_id: str
    channel_id: str = ""
    is_admin: bool = False
    conversation: str = ""
    # The channel a thread belongs to (Discord threads have their own ids): its scope applies.
    parent_channel: str = ""
    # The workspace or server the request came from, and whether the asker owns the shared
    # library (bot/tenancy.py); ``is_admin`` above is admin of this tenant only.
    tenant: str = ""
    is_operator: bool = False


@dataclass
class Command:
    name: str
    usage: str
    summary: str
    run: Callable[[str, Asker], Reply]
    # Tenant admins (this workspace's or server's channels) / the operator (the shared library).
    admin_only: bool = False
    operator_only: bool = False
