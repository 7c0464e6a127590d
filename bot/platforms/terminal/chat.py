"""The terminal: plain-text renderers for every reply, and the interactive chat."""

from __future__ import annotations

import io
import logging
import sys
import threading
from typing import TextIO

from bot.asking import Asker
from bot.commands import verify_render
from bot.commands.related import ask_related
from bot.output import read_as
from bot.platforms.layout import ReplyRenderers
from bot.replies import AnswerReply, PassagesReply, Reply, SearchReply, SourcesReply, TextReply
from bot.service import Service
from bot.tenancy import OPERATOR
from retrieval.render import citation_line, format_date, plain

PROMPT = "you> "
log = logging.getLogger("byline.terminal")


def _answer(reply: AnswerReply) -> str:
    note = read_as(reply.answer)
    return f"{note}\n{reply.answer.text}" if note else reply.answer.text


def _search(reply: SearchReply) -> str:
    if not reply.hits:
        return f"No passages match “{reply.query}”."
    lines = [f"Top passages for “{reply.query}”:"]
    for hit in reply.hits:
        lines += ["", f"{' '.join(hit.passage.text.split())}", f"  {citation_line(hit.citation)}"]
    return "\n".join(lines)


def _sources(reply: SourcesReply) -> str:
    if not reply.total:
        return "No articles yet. Add some with `byline ingest PATH`."
    lines = [f"Articles, newest first (page {reply.page} of {reply.pages}, {reply.total} in all):"]
    for article in reply.articles:
        details = ", ".join(p for p in (article.source, format_date(article.published)) if p)
        lines.append(
            f"- {article.title}" + (f" — {details}" if details else "") + (f" <{article.url}>" if article.url else "")
        )
    if reply.page < reply.pages:
        lines.append(f"More: /sources {reply.page + 1}")
    return "\n".join(lines)


def _passages(reply: PassagesReply) -> str:
    if reply.expired:
        return "That answer has expired; ask again."
    return "\n\n".join(f"{citation_line(c)}\n{p.text}" for c, p in reply.passages)


_RENDERERS: ReplyRenderers[str] = ReplyRenderers(
    answer=_answer,
    search=_search,
    sources=_sources,
    passages=_passages,
    digest=lambda reply: reply.digest.text,
    text=lambda reply: reply.text,
    verify=lambda reply: verify_render.plain_text(reply.check),
)


def render(reply: Reply) -> str:
    """Plain text for any reply (the chat, ``byline ask``, ``search``, ``sources``), with control
    characters dropped: article text carrying ESC sequences (colours, OSC-8 links) stays text."""
    return plain(_RENDERERS(reply))


def related_line(related: list[str]) -> str:
    """ "Related: 1) … 2) …", the follow-ups the chat takes by their number; "" when none."""
    return plain("Related: " + " ".join(f"{n}) {q}" for n, q in enumerate(related, 1))) if related else ""


def _related_reply(service: Service, asker: Asker, last: AnswerReply, line: str) -> tuple[str, Reply]:
    """The related question numbered ``line`` under the last answer, asked as it was checked."""
    related = last.answer.related
    number = int(line)
    if not 1 <= number <= len(related):
        choices = "1" if len(related) == 1 else f"1 to {len(related)}"
        return "", TextReply(f"There is no related question {number}: type {choices}, or a question.", error=True)
    return plain(f"(Asking: {related[number - 1]})"), ask_related(service, last.answer_id, number - 1, asker)


def chat(
    service: Service,
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
    warm: bool = True,
    reading: dict[str, bool] | None = None,
) -> None:
    """A chat in the terminal: a line is a question, or a command such as /search or /sources.

    With ``warm`` the model loads in the background while the first question is typed (``serve``
    starts its own warm-up and passes False). ``reading["reading"]`` is True while the chat waits
    for a line, so a SIGTERM handler knows nothing is in flight."""
    # The terminal is the operator (bot/tenancy.py): it owns the library, as the CLI does.
    asker = Asker(
        "terminal", "local", "terminal", is_admin=True, conversation="terminal", tenant=OPERATOR, is_operator=True
    )
    _tolerate_bad_bytes(stdin, stdout)
    warm_up = _start_warm_up(service) if warm else None
    try:
        _chat_loop(service, asker, stdin, stdout, reading if reading is not None else {})
    finally:
        if warm_up is not None:
            # Exiting while torch is still loading aborts the process; the load ends in seconds.
            warm_up.join()


def _start_warm_up(service: Service) -> threading.Thread:
    print("Loading the language model in the background (a few seconds); type a question now.", file=sys.stderr)
    thread = threading.Thread(target=service.library.warm_up, name="byline-warm-up", daemon=True)
    thread.start()
    return thread


def _chat_loop(service: Service, asker: Asker, stdin: TextIO, stdout: TextIO, reading: dict[str, bool]) -> None:
    count = service.library.store.article_count()
    print(
        f"Byline — {count} article{'s' if count != 1 else ''} loaded. "
        "Ask a question, /help for commands, /quit to leave.",
        file=stdout,
    )
    # The last answer with related questions: a line that is just a number asks one of them.
    last: AnswerReply | None = None
    while True:
        if stdin.isatty():
            print(PROMPT, end="", file=stdout, flush=True)
        reading["reading"] = True
        try:
            line = stdin.readline()
        finally:
            reading["reading"] = False
        if not line:
            break
        line = line.strip()
        if not line:
            continue
        if line.lower() in {"/quit", "/exit", "quit", "exit"}:
            break
        try:
            # A `byline ingest` or `remove` on the same data dir while chatting is seen at the next
            # line (one cheap query when nothing changed), as `serve` sees it every few seconds.
            service.library.catch_up()
            note = ""
            if last is not None and line.isascii() and line.isdigit() and len(line) <= 3:
                note, reply = _related_reply(service, asker, last, line)
            else:
                reply = service.run_command(line, asker) if line.startswith("/") else service.ask(line, asker)
            text = "\n".join(part for part in (note, render(reply)) if part)
            if isinstance(reply, AnswerReply):
                last = reply if reply.answer.related else None
                text = "\n\n".join(part for part in (text, related_line(reply.answer.related)) if part)
        except Exception:
            # One bad command must not end the chat; the traceback goes to the log only.
            log.exception("Command failed: %s", line[:200])
            text = "Sorry — something went wrong with that. The details are in the log."
        print(text, file=stdout, flush=True)
        print(file=stdout, flush=True)


def _tolerate_bad_bytes(*streams: TextIO) -> None:
    """Bytes that are not valid in the terminal's encoding become U+FFFD instead of raising.

    Under a UTF-8 locale stdin decodes strictly, so one pasted Latin-1 byte would raise in
    ``readline()`` and end the chat; printing a character the terminal cannot encode would too.
    """
    for stream in streams:
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")


__all__ = ["chat", "render", "TextReply"]
