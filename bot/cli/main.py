"""The ``byline`` command: ingest, ask, search, sources, chat and serve."""

from __future__ import annotations

import argparse
import getpass
import logging
import math
import os
import re
import sys
from dataclasses import asdict
from importlib import metadata

from bot.asking import MAX_PAGE_DIGITS, Asker, shown
from bot.cli import digest as cli_digest
from bot.cli import eval as cli_eval
from bot.cli import migrate as cli_migrate
from bot.cli import quotes as cli_quotes
from bot.cli import verify as cli_verify
from bot.cli import worker as cli_worker
from bot.cli.feeds import add_feeds_parser, run_feeds
from bot.cli.ingest import ingest_command
from bot.commands import gaps
from bot.logs import configure_logging
from bot.output import pipe_safe, plural, print_error, print_json
from bot.platforms.terminal.chat import chat, render
from bot.replies import AnswerReply, SearchReply, SourcesReply, TextReply
from bot.service import SOURCES_PAGE_SIZE, Service
from bot.settings import Settings, environment_problem, load_environment
from bot.tenancy import OPERATOR
from retrieval.errors import BylineError
from retrieval.features.removal import audit_entries, remove_articles
from retrieval.storage.database import DATABASE_ERRORS

log = logging.getLogger("byline")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="byline", description="Cited answers about news articles, in chat.")
    parser.add_argument("--version", action="version", version=f"byline {_version()}")
    commands = parser.add_subparsers(dest="command")
    ingest = commands.add_parser("ingest", help="add article files or folders (.txt, .md, .html) or https:// URLs")
    ingest.add_argument("paths", nargs="+")
    ask = commands.add_parser("ask", help="answer one question")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print the structured answer as JSON")
    search = commands.add_parser("search", help="the passages that best match a query")
    search.add_argument("query")
    search.add_argument("--json", action="store_true", help="print the passages and citations as JSON")
    sources = commands.add_parser("sources", help="list the stored articles, newest first")
    sources.add_argument("page", nargs="?", type=_page, default=1, help="page number, from 1 (default: 1)")
    sources.add_argument("--json", action="store_true", help="print the page as JSON (with article ids and keys)")
    remove = commands.add_parser("remove", help="remove articles (by id, URL or key) from the store and indexes")
    remove.add_argument("articles", nargs="+", help="article ids (byline sources --json), URLs or keys (file paths)")
    remove.add_argument("--json", action="store_true", help="print what was removed as JSON")
    audit = commands.add_parser("audit", help="the audit log of removals: who, when, what")
    audit.add_argument("--limit", type=_count, default=100, help="at most this many entries, newest first")
    audit.add_argument("--json", action="store_true", help="print the entries as JSON")
    cli_digest.add_subparser(commands)
    gaps.add_parsers(commands)
    cli_quotes.add_parsers(commands)
    cli_verify.add_parser(commands)
    commands.add_parser("chat", help="chat in the terminal")
    commands.add_parser("serve", help="run on the platforms configured in the environment (or the terminal)")
    add_feeds_parser(commands)
    cli_migrate.add_parser(commands)
    cli_worker.add_parser(commands)
    cli_eval.add_parser(commands)
    return parser


def _version() -> str:
    try:
        return metadata.version("byline")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def _count(text: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > MAX_PAGE_DIGITS or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{shown(text)!r} is not a number from 1")
    return int(text)


def _page(text: str) -> int:
    """A page number for ``byline sources``; argparse reports anything else as a usage error."""
    if not text.isascii() or not text.isdigit() or len(text.lstrip("0")) > MAX_PAGE_DIGITS or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{shown(text)!r} is not a page number; pages are numbered from 1")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        load_environment()
        settings = Settings.from_env()
    except ValueError as error:
        print(f"byline: {error}", file=sys.stderr)
        return 2
    level = settings.log_level if args.command in {None, "serve"} else "WARNING"
    configure_logging(level, settings.secrets(), settings.log_format)
    command = args.command or "serve"
    try:
        return _run(command, args, settings)
    except BylineError as error:
        print(f"byline: {error}", file=sys.stderr)
        return 1
    except (OSError, *DATABASE_ERRORS) as error:  # type: ignore[misc]  # a tuple of exception classes
        # A data dir that cannot be made, a full disk: one line, not a traceback. Every write is
        # atomic (retrieval/storage/atomic.py, SQLite transactions), so what was stored is intact.
        print(f"byline: {environment_problem(error, settings.data_dir)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _open(settings: Settings, with_seeds: bool) -> Service:
    # start-up: loaded when this runs, not whenever the CLI or the registry starts.
    from bot.app import open_service

    service = open_service(
        settings.data_dir,
        settings.seeds_dir if with_seeds else None,
        settings.limits,
        settings.timezone,
        settings.fetcher(),
        settings.storage(),
    )
    for message in service.library.messages:
        print(message, file=sys.stderr)
    return service


def _run(command: str, args: argparse.Namespace, settings: Settings) -> int:
    # Output may go to a reader that stops early (| head -1): no traceback for that.
    return pipe_safe(lambda: _dispatch(command, args, settings))


def _dispatch(command: str, args: argparse.Namespace, settings: Settings) -> int:
    if command == "eval":
        return cli_eval.run(args)
    if command == "ingest":
        return ingest_command(settings, args.paths)
    if command == "feeds":
        return run_feeds(args, settings)
    if command == "audit":
        return _audit(settings, args)
    if command == "migrate":
        return cli_migrate.run(settings)
    if command == "worker":
        return cli_worker.run(settings, args.threads)
    service = _open(settings, with_seeds=command in {"ask", "chat", "serve"})
    try:
        if command == "ask":
            return _ask(service, args)
        if command == "search":
            return _search(service, args)
        if command == "sources":
            return _sources(service, args)
        if command == "remove":
            return _remove(service, args)
        if command == "digest":
            return cli_digest.run(service, args)
        if command == "quotes":
            return cli_quotes.run_quotes(service, args)
        if command == "verify":
            return cli_verify.run(service, args)
        if command == "reactions":
            return cli_quotes.run_reactions(service, args)
        if command == "alerts":
            return cli_quotes.run_alerts(service, args)
        if command in {"gaps", "feedback"}:
            return gaps.run_cli(service, args)
        if command == "chat":
            chat(service)
            return 0
        # start-up: loaded when this runs, not whenever the CLI or the registry starts.
        from bot.serve import serve

        return serve(service, settings)
    finally:
        service.close()


def _ask(service: Service, args: argparse.Namespace) -> int:
    asker = Asker("terminal", "local", tenant=OPERATOR, is_operator=True)
    reply = service.ask(args.question, asker, timelines=False)  # `byline quotes` is the timeline here
    if isinstance(reply, TextReply):
        print_error(reply.text, args.json)
        return 1
    if args.json and isinstance(reply, AnswerReply):
        print_json(reply.answer.to_json())
    else:
        print(render(reply))
    return 0


def _search(service: Service, args: argparse.Namespace) -> int:
    if not args.query.strip():
        print_error('give some words to look for, e.g. byline search "Kompany injury"', args.json)
        return 2
    reply = service.search(args.query)
    if isinstance(reply, TextReply):
        print_error(reply.text, args.json)
        return 1
    if args.json and isinstance(reply, SearchReply):
        hits = [
            {"text": hit.passage.text, "score": round(hit.score, 4), "passage_id": hit.passage.id}
            | {"citation": asdict(hit.citation)}
            for hit in reply.hits
        ]
        print_json({"query": reply.query, "hits": hits})
    else:
        print(render(reply))
    return 0


def _sources(service: Service, args: argparse.Namespace) -> int:
    total = service.library.store.article_count()
    pages = max(1, math.ceil(total / SOURCES_PAGE_SIZE))
    if args.page > pages:
        only = "there is only 1 page" if pages == 1 else f"there are {pages} pages"
        print_error(
            f"{only} of sources ({plural(total, 'article')}): `byline sources` takes a page number from 1 to {pages}",
            args.json,
        )
        return 1
    reply = service.sources(args.page)
    assert isinstance(reply, SourcesReply)
    if args.json:
        articles = [{k: v for k, v in asdict(article).items() if k != "text"} for article in reply.articles]
        print_json({"page": reply.page, "pages": reply.pages, "total": reply.total, "articles": articles})
        return 0
    text = render(reply)
    # The shared renderer speaks chat ("More: /sources 2"); here the next page is a command line.
    print(re.sub(r"^More: /sources (\d+)$", r"More: byline sources \1", text, flags=re.M))
    return 0


def _remove(service: Service, args: argparse.Namespace) -> int:
    actor = f"cli:{_user()}"
    removal = remove_articles(service.library, args.articles, actor, "byline remove")
    if args.json:
        print_json(
            {
                "removed": [{"article_id": a.id, "key": a.key, "title": a.title} for a in removal.removed],
                "not_found": removal.not_found,
            }
        )
    else:
        for article in removal.removed:
            print(f"removed: {article.title} (id {article.id}, {article.key})")
        for name in removal.not_found:
            print(
                f"byline: no stored article is {shown(name)!r}; give an id (byline sources --json), a URL or a key",
                file=sys.stderr,
            )
        if removal.removed:
            print(f"{plural(len(removal.removed), 'article')} removed; see `byline audit`.")
    return 1 if removal.not_found else 0


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name in a bare container
        return str(os.getuid()) if hasattr(os, "getuid") else "unknown"


def _audit(settings: Settings, args: argparse.Namespace) -> int:
    # The log needs only the store, not the model or the indexes.
    from retrieval.storage.store import Store

    store = Store(settings.storage().store_location(settings.data_dir))
    try:
        entries = audit_entries(store, args.limit)
    finally:
        store.close()
    if args.json:
        print_json([asdict(entry) for entry in entries])
        return 0
    if not entries:
        print("The audit log is empty: nothing has been removed.")
    for entry in entries:
        print(
            f"{entry.at[:19].replace('T', ' ')} UTC  {entry.actor}  {entry.action}  {entry.title} ({entry.article_key})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
