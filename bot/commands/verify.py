"""``/verify`` (``/byline verify …`` on Slack): is this quote in the library, word for word?

The quote may carry its speaker as people paste it (``/verify Mourinho: "We were robbed"``,
``/verify "We were robbed" - Mourinho``) or name them apart: ``speaker:NAME`` after the quote
(``/verify "We were robbed" speaker:Jose Mourinho``) or before a quote in marks
(``/verify speaker:Mourinho "We were robbed"``). The check runs in the retrieval pool like a
question, counts against the same rate limit and reads only the channel's scope.
"""

from __future__ import annotations

import re

from bot.asking import Asker, Command, clean_input
from bot.limits import QueueFull, retry_phrase
from bot.replies import Reply, TextReply, VerifyReply
from bot.service import Service
from bot.state.channel_scopes import channel_scope
from retrieval.errors import BylineError
from retrieval.features.quote_check import MAX_QUOTE_CHARS, check_quote

USAGE = '/verify "QUOTE" [speaker:NAME]'
EXAMPLE = '`/verify Mourinho: "We were the better team"` or `/verify "We were the better team" speaker:Mourinho`'
# Longer than any name; a longer "speaker" is the quote itself, misread.
MAX_SPEAKER = 200
_SPEAKER_AFTER = re.compile(r"^(?P<quote>.+?)\s+(?:speaker:|--speaker\s+)\s*(?P<speaker>[^\"“”]+)$", re.S)
_SPEAKER_BEFORE = re.compile(r"^(?:speaker:|--speaker\s+)\s*(?P<speaker>[^\"“”‘]+?)\s+(?P<quote>[\"“‘'].+)$", re.S)


class VerifyArgumentError(ValueError):
    """Arguments the user must correct; the message says how."""


def parse_verify(args: str) -> tuple[str, str]:
    """(quote, speaker) from ``/verify``'s text; the speaker is "" when not given apart."""
    args = " ".join(args.split())
    if not args:
        raise VerifyArgumentError(f"Give the quote to check: `{USAGE}`, e.g. {EXAMPLE}.")
    quote, speaker = args, ""
    for pattern in (_SPEAKER_BEFORE, _SPEAKER_AFTER):
        match = pattern.match(args)
        if match:
            quote, speaker = match.group("quote").strip(), match.group("speaker").strip()
            break
    if len(speaker) > MAX_SPEAKER:
        raise VerifyArgumentError(f"`speaker:` is {len(speaker):,} characters long; keep it under {MAX_SPEAKER}.")
    if not quote or quote.lower().startswith(("speaker:", "--speaker")):
        raise VerifyArgumentError(f"Give the quote to check as well as the speaker, e.g. {EXAMPLE}.")
    if len(quote) > MAX_QUOTE_CHARS:
        raise VerifyArgumentError(
            f"That is {len(quote):,} characters; a quote to check is at most {MAX_QUOTE_CHARS:,}."
            " Paste the quote alone."
        )
    return quote, speaker


class VerifyCommand:
    """``/verify`` over the service's library, pool, limits and channel scopes."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def __call__(self, args: str, asker: Asker) -> Reply:
        try:
            quote, speaker = parse_verify(clean_input(args))
        except VerifyArgumentError as error:
            return TextReply(str(error), private=True, error=True)
        service = self.service
        wait = service.rate_limiter.check(f"{asker.platform}:{asker.user_id}", f"{asker.platform}:{asker.channel_id}")
        if wait:
            return TextReply(f"You're asking fast — try again in {retry_phrase(wait)}.", private=True, error=True)
        scope = service.library.resolve_scope(channel_scope(service.state, asker))
        try:
            check = service.pool.run(lambda: check_quote(service.library, quote, speaker, scope))
        except QueueFull:
            return TextReply("Byline is very busy right now — please try again in a minute.", private=True, error=True)
        except BylineError as error:
            return TextReply(str(error), private=True, error=True)
        return VerifyReply(check)


def register_verify(service: Service) -> VerifyCommand:
    """Add ``/verify`` to the service."""
    command = VerifyCommand(service)
    service.register(
        Command(
            "verify",
            USAGE,
            "is this quote real? verbatim, altered (the words that differ), said by someone else, or not found "
            "(Slack: /byline verify)",
            command,
        )
    )
    return command
