"""``/quotes`` and ``/reactions`` (``/byline quotes …`` on Slack): a person's quotes over time,
and who said what about a story.

Arguments are ``key:value`` pairs whose values may hold spaces, as Slack's one text box needs:
``/byline quotes speaker:Mark Oaten topic:terror suspects since:2005-01-01 page:2``. A bare
``/quotes Oaten`` is the speaker alone. Both run in the retrieval pool like a question (they read
the indexes), count against the same rate limit, and answer from the channel's scope.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from bot.asking import MAX_PAGE_DIGITS, Asker, Command
from bot.commands.digest import parse_since
from bot.limits import QueueFull, retry_phrase
from bot.replies import DigestReply, Reply, TextReply
from bot.schedules import ScheduleError
from bot.service import Service
from bot.state.channel_scopes import channel_scope
from retrieval.errors import BylineError
from retrieval.features.quote_pages import PAGE_SIZE, page_count, timeline_page, user_words
from retrieval.features.quote_timeline import speaker_timeline
from retrieval.features.reaction_pages import reactions_digest
from retrieval.features.reactions import reactions

if TYPE_CHECKING:
    from retrieval.scope import ResolvedScope

QUOTES_USAGE = "/quotes speaker:NAME [topic:WORDS] [since:DATE] [page:N]"
REACTIONS_USAGE = "/reactions topic:WORDS"
_KEYS = ("speaker", "who", "person", "topic", "about", "since", "page")
_KEY_START = re.compile(rf"(?:^|(?<=\s))(?=(?:{'|'.join(_KEYS)}):)", re.IGNORECASE)
_ALIASES = {"who": "speaker", "person": "speaker", "about": "topic"}
# Longer than any name or topic anyone types; a huge argument is refused, not searched.
MAX_VALUE = 200
# "What has Mourinho said about referees?", "What's Oaten said on terror?", "Everything Hewitt has
# said about maternity pay": a question for the whole timeline. ("What did X say about Y?" asks
# for the quote that answers it, and stays a question.)
_TIMELINE_QUESTION = re.compile(
    r"^\s*(?:(?:so|and|ok|okay),?\s+)?(?:what(?:\s+has|['’]s)\s+(?P<who>.+?)\s+(?:ever\s+)?said"
    r"|(?:show\s+me\s+)?(?:everything|all)\s+(?:that\s+)?(?P<who_all>.+?)\s+(?:has\s+)?(?:ever\s+)?said)"
    r"\s+(?:about|on|regarding)\s+(?P<topic>.+?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# A pronoun needs the conversation to know who it is: the question path reads follow-ups.
_PRONOUNS = frozenset("he she they it him her them this that".split())  # noqa: SIM905


def timeline_question(question: str) -> QuoteQuery | None:
    """The ``/quotes`` a chat question asks for, or None when it is not a timeline question."""
    match = _TIMELINE_QUESTION.match(question)
    if match is None:
        return None
    who = " ".join((match.group("who") or match.group("who_all")).split())
    topic = " ".join(match.group("topic").split())
    if who.lower() in _PRONOUNS or len(who) > MAX_VALUE or len(topic) > MAX_VALUE or len(who.split()) > 6:
        return None
    return QuoteQuery(who, topic)


class ArgumentError(ValueError):
    """Arguments the user must correct; the message says how."""


@dataclass(frozen=True)
class QuoteQuery:
    """What ``/quotes`` was asked: the person, and optionally a topic, a start date and a page."""

    speaker: str
    topic: str = ""
    since: str = ""
    page: int = 1

    def command(self, name: str) -> str:
        """The command line that asks this again (the next page is this plus ``page:N``)."""
        parts = [f"{name} speaker:{self.speaker}"]
        if self.topic:
            parts.append(f"topic:{self.topic}")
        if self.since:
            parts.append(f"since:{self.since}")
        return " ".join(parts)


def parse_pairs(text: str) -> dict[str, str]:
    """``speaker:Mark Oaten topic:terror`` as {"speaker": "Mark Oaten", "topic": "terror"}; text
    before the first key is the speaker."""
    found: dict[str, str] = {}
    for part in _KEY_START.split(text.strip()):
        part = part.strip()
        if not part:
            continue
        key, colon, value = part.partition(":")
        key = key.lower()
        if colon and key in _KEYS:
            key = _ALIASES.get(key, key)
        else:
            key, value = "speaker", part
        value = " ".join(value.split())
        if len(value) > MAX_VALUE:
            raise ArgumentError(f"`{key}:` is {len(value)} characters long; keep it under {MAX_VALUE}.")
        if key in found:
            raise ArgumentError(f"`{key}:` is given twice; give it once.")
        found[key] = value
    return found


def parse_since_date(text: str, now: datetime, name: str) -> str:
    """YYYY-MM-DD from ``2005-01-31`` (any date: an archive reaches back decades) or from what
    ``/digest since`` reads (``30d``, ``yesterday``, ``monday``); ArgumentError otherwise."""
    value = text.strip()
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError:
            raise ArgumentError(f"`{value}` is not a date; write it as 2005-01-31.") from None
    try:
        return parse_since(value, now, UTC).date().isoformat()
    except ScheduleError as error:
        raise ArgumentError(str(error).replace("/digest since", name)) from None


def parse_quote_query(text: str, now: datetime) -> QuoteQuery:
    """The arguments of ``/quotes``; ArgumentError says what to fix, with an example."""
    pairs = parse_pairs(text)
    speaker = pairs.get("speaker", "")
    if not speaker:
        raise ArgumentError(f"Name the person: `{QUOTES_USAGE}`, e.g. `/quotes speaker:Mourinho topic:referees`.")
    since = parse_since_date(pairs["since"], now, "since:") if pairs.get("since") else ""
    page = 1
    if "page" in pairs:
        value = pairs["page"]
        if not re.fullmatch(r"[0-9]+", value) or len(value.lstrip("0")) > MAX_PAGE_DIGITS or int(value) < 1:
            raise ArgumentError(f"`page:{user_words(value, 20)}` is not a page number; pages are numbered from 1.")
        page = int(value)
    return QuoteQuery(speaker, pairs.get("topic", ""), since, page)


class QuoteCommands:
    """``/quotes`` and ``/reactions`` over the service's library, pool and limits."""

    def __init__(self, service: Service, page_size: int = PAGE_SIZE) -> None:
        self.service = service
        self.page_size = page_size

    def quotes(self, args: str, asker: Asker) -> Reply:
        name = "/byline quotes" if asker.platform == "slack" else "/quotes"
        try:
            query = parse_quote_query(args, datetime.now(UTC))
        except ArgumentError as error:
            return _error(str(error))
        limited = self._limited(asker)
        if limited is not None:
            return limited
        scope = self._scope(asker)
        try:
            timeline = self.service.pool.run(
                lambda: speaker_timeline(self.service.library, query.speaker, query.topic, query.since, scope)
            )
        except QueueFull:
            return _busy()
        except BylineError as error:
            return _error(str(error))
        pages = page_count(timeline, self.page_size)
        if query.page > pages and timeline.quotes:
            only = "There is only 1 page" if pages == 1 else f"There are {pages} pages"
            return _error(f"{only} of quotes; `page:` goes from 1 to {pages}.")
        return DigestReply(timeline_page(timeline, query.page, self.page_size, command=query.command(name)))

    def timeline_answer(self, question: str, asker: Asker) -> Reply | None:
        """The timeline a chat question asks for (its rate-limit token already spent), or None to
        answer it as a question: not a timeline question, nobody by that name, nothing on the topic."""
        query = timeline_question(question)
        if query is None:
            return None
        scope = self._scope(asker)
        try:
            timeline = self.service.pool.run(
                lambda: speaker_timeline(self.service.library, query.speaker, query.topic, scope=scope)
            )
        except QueueFull:
            return _busy()
        except BylineError:
            return None  # the question path says what is wrong with it
        if not timeline.quotes:
            return None  # the answer path's refusal shows the closest quotes
        name = "/byline quotes" if asker.platform == "slack" else "/quotes"
        return DigestReply(timeline_page(timeline, 1, self.page_size, command=query.command(name)))

    def reactions(self, args: str, asker: Asker) -> Reply:
        try:
            pairs = parse_pairs(args)
        except ArgumentError as error:
            return _error(str(error))
        # "/reactions the Budget": words before any key are the topic here.
        topic = pairs.get("topic") or pairs.get("speaker", "")
        if not topic:
            return _error(f"Name the story: `{REACTIONS_USAGE}`, e.g. `/reactions topic:the Budget`.")
        limited = self._limited(asker)
        if limited is not None:
            return limited
        scope = self._scope(asker)
        try:
            found = self.service.pool.run(lambda: reactions(self.service.library, topic, scope))
        except QueueFull:
            return _busy()
        except BylineError as error:
            return _error(str(error))
        return DigestReply(reactions_digest(found))

    def _limited(self, asker: Asker) -> Reply | None:
        wait = self.service.rate_limiter.check(
            f"{asker.platform}:{asker.user_id}", f"{asker.platform}:{asker.channel_id}"
        )
        if wait:
            return _error(f"You're asking fast — try again in {retry_phrase(wait)}.")
        return None

    def _scope(self, asker: Asker) -> ResolvedScope | None:
        return self.service.library.resolve_scope(channel_scope(self.service.state, asker))


def _error(text: str) -> TextReply:
    return TextReply(text, private=True, error=True)


def _busy() -> TextReply:
    return _error("Byline is very busy right now — please try again in a minute.")


def register_quote_commands(service: Service) -> QuoteCommands:
    """Add ``/quotes`` and ``/reactions`` to the service."""
    commands = QuoteCommands(service)
    service.timeline_question = commands.timeline_answer
    service.register(
        Command(
            "quotes",
            QUOTES_USAGE,
            "everything a person said (on a topic), newest first, grouped by story, each quote cited "
            "(Slack: /byline quotes)",
            commands.quotes,
        )
    )
    service.register(
        Command(
            "reactions",
            REACTIONS_USAGE,
            "who said what about a story: one cited quote per speaker, the most quoted first "
            "(Slack: /byline reactions)",
            commands.reactions,
        )
    )
    return commands
