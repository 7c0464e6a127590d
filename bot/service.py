"""The platform-neutral service: every adapter parses its events into calls on this.

Commands are registered by name, so features that arrive later (digests, ingest from chat)
plug in without touching the adapters.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bot.asking import MAX_PAGE_DIGITS, Asker, Command, clean_input, shown
from bot.limits import Limiter, LimitSettings, QueueFull, RateLimiter, RetrievalPool, retry_phrase
from bot.replies import AnswerReply, PassagesReply, Reply, SearchReply, SourcesReply, TextReply
from bot.state.channel_scopes import channel_scope
from bot.state.gaps import GapStore
from bot.state.store import BotState, state_location
from retrieval.answering import passages_for
from retrieval.backend import Backend
from retrieval.errors import BylineError
from retrieval.features.related import with_related
from retrieval.library import Library
from retrieval.models import Answer, AnswerSpan, Citation, Passage, SearchHit
from retrieval.scope import Scope

if TYPE_CHECKING:
    from bot.jobs.digest_schedule import DigestScheduler
    from bot.jobs.ingest_queue import IngestQueue

log = logging.getLogger("byline.service")

SOURCES_PAGE_SIZE = 8
SEARCH_RESULTS = 5


@dataclass
class Service:
    """Questions, searches, sources, buttons and commands, for any platform."""

    library: Library
    state: BotState
    limits: LimitSettings = field(default_factory=LimitSettings)
    commands: dict[str, Command] = field(default_factory=dict)
    # Set by bot.app.add_features: the digest scheduler, which adapters hand their poster to.
    scheduler: DigestScheduler | None = None
    # Set by serve on the cluster backend with a Redis: ingest goes to `byline worker` through it.
    ingest_queue: IngestQueue | None = None
    # Set by bot.commands.quotes: "What has Mourinho said about referees?" as the timeline, or None
    # when the question is not one or nothing was found (the question is then answered as usual).
    timeline_question: Callable[[str, Asker], Reply | None] | None = None

    @classmethod
    def open(
        cls,
        data_dir: Path,
        seeds_dir: Path | None = None,
        limits: LimitSettings | None = None,
        backend: Backend | None = None,
    ) -> Service:
        backend = backend or Backend.from_environ()
        library = Library.open(data_dir, backend=backend)
        if seeds_dir is not None and library.store.article_count() == 0 and seeds_dir.is_dir():
            report = library.ingest([seeds_dir])
            log.info("Fresh library: ingested the seed articles (%s).", report.summary())
        return cls(library, BotState(state_location(data_dir, backend)), limits or LimitSettings())

    def __post_init__(self) -> None:
        # In this process; ``serve`` puts the shared (Redis) buckets here when there is a Redis.
        self.rate_limiter: Limiter = RateLimiter(self.limits)
        self.pool = RetrievalPool(self.limits.workers, self.limits.queue_limit)
        self._register_builtin()

    def close(self) -> None:
        self.pool.shutdown()
        self.state.close()
        self.library.close()

    # -- commands ------------------------------------------------------------------------

    def register(self, command: Command) -> None:
        self.commands[command.name] = command

    def _register_builtin(self) -> None:
        self.register(
            Command(
                "ask", "/ask [private] QUESTION", "answer a question with cited quotes and sentences", self._ask_command
            )
        )
        self.register(Command("search", "/search QUERY", "the passages that best match a query", self._search_command))
        self.register(
            Command("sources", "/sources [PAGE]", "the articles Byline knows, newest first", self._sources_command)
        )
        self.register(Command("help", "/help", "this help", lambda _, __: self.help()))

    def run_command(self, line: str, asker: Asker, on_queued: Callable[[int], None] | None = None) -> Reply:
        """Run "/name args" (the slash is optional); unknown names get the list of commands.

        ``on_queued`` reaches ``/ask`` (see ``ask``), so a slash question can show its place in line.
        """
        line = clean_input(line).strip()
        name, _, args = line.lstrip("/").partition(" ")
        name = name.lower()
        command = self.commands.get(name)
        if command is None:
            return TextReply(
                f"Unknown command `/{shown(name, 40)}`. Try one of: {self._command_list()}.", private=True, error=True
            )
        if command.operator_only and not asker.is_operator:
            return TextReply(
                f"Only Byline's operators can use `/{name}`: the article library is shared by every workspace and "
                "server. Ask the person who runs Byline (docs/tenants.md).",
                private=True,
                error=True,
            )
        if command.admin_only and not (asker.is_admin or asker.is_operator):
            return TextReply(f"Only this server's or workspace's admins can use `/{name}`.", private=True, error=True)
        if on_queued is not None and command.run == self._ask_command:
            return self._ask_command(args.strip(), asker, on_queued)
        return command.run(args.strip(), asker)

    def _command_list(self) -> str:
        return ", ".join(f"/{name}" for name in self.commands)

    def help(self) -> TextReply:
        lines = [
            "Byline answers questions about the news articles it has, quoting them exactly and citing the paragraph.",
            "",
        ]
        lines += [f"`{c.usage}` — {c.summary}" for c in self.commands.values()]
        lines += [
            "",
            "You can also mention Byline with a question, reply in its thread to follow up, "
            "or send it a direct message.",
        ]
        return TextReply("\n".join(lines), private=True)

    def _ask_command(self, args: str, asker: Asker, on_queued: Callable[[int], None] | None = None) -> Reply:
        private = False
        first, _, rest = args.partition(" ")
        if first.lower() in {"private", "--private", "-p"}:
            private, args = True, rest.strip()
        if not args:
            return TextReply(
                "Usage: `/ask [private] QUESTION`, e.g. `/ask what did Mourinho say about the referee?`",
                private=True,
                error=True,
            )
        reply = self.ask(args, asker, on_queued, private=private)
        if isinstance(reply, AnswerReply):
            reply.private = private
        return reply

    def _search_command(self, args: str, asker: Asker) -> Reply:
        if not args:
            return TextReply("Usage: `/search QUERY`, e.g. `/search Kompany injury`", private=True, error=True)
        return self.search(args, asker)

    def _sources_command(self, args: str, asker: Asker) -> Reply:
        if not args:
            return self.sources(1, asker)
        # ASCII digits only: str.isdigit() is also true of "²", which int() cannot read.
        if not re.fullmatch(r"[0-9]+", args) or len(args.lstrip("0")) > MAX_PAGE_DIGITS:
            return TextReply(
                f"Usage: `/sources [PAGE]`, a page number from 1 to {self._source_pages()}, e.g. `/sources 2`"
                f" (not `{shown(args)}`).",
                private=True,
                error=True,
            )
        return self.sources_page(int(args), asker)

    def _source_pages(self, asker: Asker | None = None) -> int:
        _, total = self.library.list_articles(0, 0, self._scope(asker))
        return max(1, math.ceil(total / SOURCES_PAGE_SIZE))

    def _scope(self, asker: Asker | None) -> Scope | None:
        """The scope of the asker's channel (None: the whole library answers there)."""
        return channel_scope(self.state, asker) if asker is not None else None

    def sources_page(self, page: int, asker: Asker | None = None) -> Reply:
        """``sources(page)`` for a page a user asked for: one outside 1..pages says the range."""
        pages = self._source_pages(asker)
        if not 1 <= page <= pages:
            only = "There is only 1 page" if pages == 1 else f"There are {pages} pages"
            return TextReply(
                f"{only} of sources; `/sources` takes a page number from 1 to {pages}, not {shown(str(page))}.",
                private=True,
                error=True,
            )
        return self.sources(page, asker)

    # -- the work ------------------------------------------------------------------------

    def ask(
        self,
        question: str,
        asker: Asker,
        on_queued: Callable[[int], None] | None = None,
        private: bool = False,
        admitted: bool = False,
        timelines: bool = True,
    ) -> Reply:
        """Answer a question; the conversation key gives follow-ups their context.

        Rate limits apply per user and per channel; retrieval runs in the bounded pool, and
        ``on_queued(n)`` is called when n questions are ahead of this one. A ``private`` question
        has a conversation of its own (so no public follow-up is read in its light) and stays out
        of every report until its asker shares the answer. ``admitted``: the caller already spent
        this question's rate-limit token (``admit``, before a public side effect such as a thread).
        ``timelines``: "What has X said about Y?" in chat is the speaker's timeline (``/quotes``);
        ``byline ask`` turns it off, its JSON being an answer's.
        """
        question = clean_input(question).strip()
        if not question:
            return TextReply(
                "Ask a question in words, e.g. `what did Mourinho say about the referee?`", private=True, error=True
            )
        refusal = None if admitted else self.admit(asker)
        if refusal is not None:
            return refusal
        if timelines and not private and self.timeline_question is not None:
            timeline = self.timeline_question(question, asker)
            if timeline is not None:
                return timeline
        conversation = f"{asker.conversation}:private" if private and asker.conversation else asker.conversation
        history = self.state.history(conversation, asker.tenant) if conversation else []
        scope = self._scope(asker)
        try:
            # Related questions are checked in the same turn of the pool: they are retrieval too.
            answer = self.pool.run(
                lambda: with_related(self.library, self.library.ask(question, history, scope=scope), scope), on_queued
            )
        except QueueFull:
            return TextReply("Byline is very busy right now — please try again in a minute.", private=True, error=True)
        except BylineError as error:
            return TextReply(str(error), private=True, error=True)
        answer_id = self.state.save_answer(
            asker.platform, asker.user_id, question, answer.to_json(), asker.tenant, private
        )
        if not answer.answered:
            # Kept for /gaps: what people asked that the articles could not answer.
            scope_text = " ".join(scope.entries()) if scope else ""
            GapStore(self.state).record_abstention(asker, answer_id, answer, scope_text, private)
        if conversation:
            # The standalone form, so a follow-up to a follow-up still has the whole context.
            self.state.remember(conversation, answer.standalone_question or question, asker.tenant)
        return AnswerReply(answer, answer_id)

    def admit(self, asker: Asker) -> TextReply | None:
        """Spend one question of the asker's and the channel's rate limits; the notice when spent."""
        wait = self.rate_limiter.check(f"{asker.platform}:{asker.user_id}", f"{asker.platform}:{asker.channel_id}")
        if wait:
            return TextReply(f"You're asking fast — try again in {retry_phrase(wait)}.", private=True, error=True)
        return None

    def search(self, query: str, asker: Asker | None = None) -> Reply:
        """The best passages for a query, of the asker's channel scope when it has one."""
        query = clean_input(query).strip()
        if not query:
            return TextReply("Usage: `/search QUERY`, e.g. `/search Kompany injury`", private=True, error=True)
        scope = self._scope(asker)
        try:
            return SearchReply(query, self.pool.run(lambda: self.library.search(query, SEARCH_RESULTS, scope=scope)))
        except QueueFull:
            return TextReply("Byline is very busy right now — please try again in a minute.", private=True, error=True)
        except BylineError as error:
            return TextReply(str(error), private=True, error=True)

    def sources(self, page: int = 1, asker: Asker | None = None) -> Reply:
        """A page of the articles, newest first: in a scoped channel, the scope's articles."""
        scope = self._scope(asker)
        _, total = self.library.list_articles(0, 0, scope)
        pages = max(1, math.ceil(total / SOURCES_PAGE_SIZE))
        page = min(max(1, page), pages)
        articles, total = self.library.list_articles((page - 1) * SOURCES_PAGE_SIZE, SOURCES_PAGE_SIZE, scope)
        return SourcesReply(articles, page, pages, total)

    def passages(self, answer_id: str, asker: Asker | None = None) -> PassagesReply:
        """The passages an answer cited, for the "Show passages" button (of an answer given in
        the clicker's tenant)."""
        stored = self.state.answer(answer_id, asker.tenant if asker else None)
        if stored is None:
            return PassagesReply(expired=True)
        answer = answer_from_json(stored)
        found = passages_for(self.library, answer)
        return PassagesReply(found, expired=not found and bool(answer.citations))

    def feedback(self, answer_id: str, asker: Asker, vote: int) -> TextReply:
        if not self.state.vote(answer_id, asker.platform, asker.user_id, 1 if vote > 0 else -1, asker.tenant):
            return TextReply(
                "That answer has expired, so the vote was not recorded. Ask again to get a fresh one.", private=True
            )
        GapStore(self.state).record_vote(answer_id, asker, vote)
        return TextReply(
            "Thanks — your feedback was recorded."
            if vote > 0
            else "Thanks — noted. Your feedback helps Byline improve.",
            private=True,
        )

    def share(self, answer_id: str, asker: Asker) -> Reply:
        """A private answer, posted for the channel as it was given, attributed to its asker.

        Only the asker can share it (only they saw it), and only once, so a double click or a
        replayed button does not post it twice.
        """
        owner = self.state.answer_owner(answer_id, asker.tenant)
        stored = self.state.answer(answer_id, asker.tenant) if owner else None
        if owner is None or stored is None or owner[0] != asker.platform:
            return TextReply(
                "That answer has expired, so it can't be shared. Ask again (`/ask private QUESTION`) for a fresh one.",
                private=True,
                error=True,
            )
        if owner[1] != asker.user_id:
            return TextReply("Only the person who asked can share this answer.", private=True, error=True)
        if not self.state.mark_shared(answer_id, asker.platform, asker.channel_id, asker.user_id, asker.tenant):
            return TextReply("You have already shared this answer with the channel.", private=True)
        return AnswerReply(answer_from_json(stored), answer_id, private=False, asked_by=owner[1])


def answer_from_json(data: dict) -> Answer:
    """Rebuild an ``Answer`` saved with ``Answer.to_json`` (enough for buttons and renderers)."""
    return Answer(
        question=data["question"],
        answered=data["answered"],
        spans=[AnswerSpan(**span) for span in data["spans"]],
        citations=[Citation(**c) for c in data["citations"]],
        text=data.get("text", ""),
        message=data.get("message", ""),
        article_count=data.get("article_count", 0),
        interpreted_as=data.get("interpreted_as", ""),
        standalone_question=data.get("standalone_question", ""),
        closest=[_hit_from_json(hit) for hit in data.get("closest", [])],
        refused_by=data.get("refused_by", ""),
        related=[q for q in data.get("related", []) if isinstance(q, str)],
    )


def _hit_from_json(data: dict) -> SearchHit:
    """A closest passage as ``Answer.to_json`` keeps it: its text and citation, which is all a
    renderer shows (so a shared abstention reads as it did in private)."""
    citation = Citation(**data["citation"])
    paragraph = citation.paragraph
    passage = Passage(data.get("passage_id", 0), data.get("article_id", 0), paragraph, paragraph, 0, 0, data["text"])
    return SearchHit(passage, citation, float(data.get("score", 0.0)))
