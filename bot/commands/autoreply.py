"""Question channels: an admin marks a channel, and Byline answers every question posted there.

The adapters decide what a top-level message or a new forum post is; this module decides
whether its text is a question, and runs ``/autoreply on|off|status`` (``/byline autoreply …``
on Slack). A channel's mark is a row of ``autoreply_channels`` in the state store, so it
survives a restart.

A question channel is also where people chat, so Byline stays quiet unless the text looks like
a question: at least ``MIN_WORDS`` words, and a question mark or a leading question word. A
channel that gets an "I couldn't find that" for every "thanks all" would be switched off.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.asking import Asker, Command
from bot.replies import Reply, TextReply
from bot.tenancy import ANOTHER_TENANT

if TYPE_CHECKING:
    from bot.state.store import BotState

MIN_WORDS = 3
# Words that open a question, or a request people put to a bot as one ("tell me about …").
QUESTION_WORDS = frozenset(
    "what whats what's who whos who's whom whose when where why which how "
    "is are was were do does did can could should would will has have had "
    "tell explain".split()
)
_WORD = re.compile(r"[\w'’-]+")
# "?" in any script's form: ASCII, full-width, Arabic, and the Spanish opening "¿".
_QUESTION_MARKS = ("?", "？", "؟", "¿")


def is_question(text: str) -> bool:
    """Whether a message in a question channel is asking something (and so gets an answer)."""
    words = _WORD.findall(text.casefold())
    if len(words) < MIN_WORDS:
        return False
    return any(mark in text for mark in _QUESTION_MARKS) or words[0].replace("’", "'") in QUESTION_WORDS


def _usage(platform: str) -> str:
    return "/byline autoreply" if platform == "slack" else "/autoreply"


def autoreply_command(state: BotState, args: str, asker: Asker) -> Reply:
    """``on``, ``off`` or ``status`` for the asker's channel (admins only, checked by the service)."""
    usage = _usage(asker.platform)
    action = args.strip().lower() or "status"
    if action not in {"on", "off", "status"}:
        return TextReply(f"Usage: `{usage} on|off|status`, e.g. `{usage} on`.", private=True, error=True)
    # Slack DM channel ids start with D; a terminal has no channel at all.
    if asker.platform not in {"slack", "discord"} or not asker.channel_id or asker.channel_id.startswith("D"):
        return TextReply(
            f"Question channels are set in a Slack or Discord channel: run `{usage} on` there.",
            private=True,
            error=True,
        )
    if action == "status":
        on = state.is_autoreply(asker.platform, asker.channel_id, asker.tenant)
        return TextReply(
            (
                "This is a question channel: Byline answers every question posted here in a thread. "
                f"`{usage} off` stops it."
            )
            if on
            else f"This is not a question channel; Byline answers here only when mentioned. `{usage} on` changes that.",
            private=True,
        )
    if not state.set_autoreply(
        asker.platform, asker.channel_id, action == "on", f"{asker.platform}:{asker.user_id}", asker.tenant
    ):
        return TextReply(ANOTHER_TENANT, private=True, error=True)
    if action == "on":
        return TextReply(
            "This is now a question channel: Byline answers every question posted here in a thread, "
            "without a mention (in a forum, every new post). Messages that aren't questions "
            f"(no question mark or question word, or under {MIN_WORDS} words) are left alone. "
            f"`{usage} off` stops it.",
            private=True,
        )
    return TextReply(
        "This is no longer a question channel; Byline answers here only when mentioned. "
        f"`{usage} on` turns it back on.",
        private=True,
    )


def command(state: BotState) -> Command:
    """The ``autoreply`` command over the state (question channels are admins' to change)."""
    return Command(
        "autoreply",
        "/autoreply on|off|status",
        "make this a question channel: every question posted here is answered in a thread "
        "(Slack: /byline autoreply; admins only)",
        lambda args, asker: autoreply_command(state, args, asker),
        admin_only=True,
    )
