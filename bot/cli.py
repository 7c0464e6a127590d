"""The ``byline`` command: ingest, ask, search, sources, chat and serve."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from retrieval.errors import BylineError

from . import cli_digest, cli_eval, gaps
from .cli_feeds import add_feeds_parser, run_feeds, run_ingest
from .config import Settings, load_environment
from .logs import configure_logging
from .replies import AnswerReply, TextReply
from .service import MAX_PAGE_DIGITS, Asker, Service, shown
from .terminal import chat, render

log = logging.getLogger("byline")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="byline", description="Cited answers about news articles, in chat.")
    commands = parser.add_subparsers(dest="command")
    ingest = commands.add_parser("ingest", help="add article files or folders (.txt, .md, .html) or https:// URLs")
    ingest.add_argument("paths", nargs="+")
    ask = commands.add_parser("ask", help="answer one question")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print the structured answer as JSON")
    search = commands.add_parser("search", help="the passages that best match a query")
    search.add_argument("query")
    sources = commands.add_parser("sources", help="list the stored articles, newest first")
    sources.add_argument("page", nargs="?", type=_page, default=1, help="page number, from 1 (default: 1)")
    cli_digest.add_subparser(commands)
    gaps.add_parsers(commands)
    commands.add_parser("chat", help="chat in the terminal")
    commands.add_parser("serve", help="run on the platforms configured in the environment (or the terminal)")
    add_feeds_parser(commands)
    cli_eval.add_parser(commands)
    return parser


def _page(text: str) -> int:
    """A page number for ``byline sources``; argparse reports anything else as a usage error."""
    if not text.isascii() or not text.isdigit() or len(text.lstrip("0")) > MAX_PAGE_DIGITS or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{shown(text)!r} is not a page number; pages are numbered from 1")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    load_environment()
    try:
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
    except KeyboardInterrupt:
        return 130


def _open(settings: Settings, with_seeds: bool) -> Service:
    from .app import open_service

    service = open_service(
        settings.data_dir,
        settings.seeds_dir if with_seeds else None,
        settings.limits,
        settings.timezone,
        settings.fetcher(),
    )
    for message in service.library.messages:
        print(message, file=sys.stderr)
    return service


def _run(command: str, args: argparse.Namespace, settings: Settings) -> int:
    if command == "eval":
        return cli_eval.run(args)
    if command == "ingest":
        return run_ingest(settings, args.paths, _ingest)
    if command == "feeds":
        return run_feeds(args, settings)
    service = _open(settings, with_seeds=command in {"ask", "chat", "serve"})
    try:
        if command == "ask":
            reply = service.ask(args.question, Asker("terminal", "local"))
            if args.json and isinstance(reply, AnswerReply):
                print(json.dumps(reply.answer.to_json(), ensure_ascii=False, indent=2))
            elif args.json and isinstance(reply, TextReply):
                print(json.dumps({"answered": False, "error": reply.text}, ensure_ascii=False))
            else:
                print(render(reply))
            return 0 if not isinstance(reply, TextReply) else 1
        if command == "search":
            print(render(service.search(args.query)))
            return 0
        if command == "sources":
            reply = service.sources_page(args.page)
            print(render(reply), file=sys.stderr if isinstance(reply, TextReply) else sys.stdout)
            return 1 if isinstance(reply, TextReply) else 0
        if command == "digest":
            return cli_digest.run(service, args)
        if command in {"gaps", "feedback"}:
            return gaps.run_cli(service, args)
        if command == "chat":
            chat(service)
            return 0
        from .serve import serve

        return serve(service, settings)
    finally:
        service.close()


def _ingest(settings: Settings, paths: list[Path]) -> int:
    from tqdm import tqdm

    from retrieval.library import Library
    from retrieval.loader import iter_article_files, skip_message

    missing = [p for p in paths if not p.exists()]
    for path in missing:
        print(f"byline: {path}: no such file or folder", file=sys.stderr)
    library = Library.open(settings.data_dir)
    for message in library.messages:
        print(message, file=sys.stderr)
    total = sum(1 for _ in iter_article_files([p for p in paths if p.exists()]))
    bar = tqdm(total=total, unit="article", disable=total < 20 or not sys.stderr.isatty(), file=sys.stderr)

    def progress(done: int, _total: int) -> None:
        bar.n = done
        bar.refresh()

    try:
        report = library.ingest([p for p in paths if p.exists()], progress)
    finally:
        bar.close()
        library.close()
    for _, title in report.added:
        print(f"added: {title}")
    for _, title in report.replaced:
        print(f"updated: {title}")
    for name, reason in report.failed:
        print(f"skipped: {skip_message(name, reason)}", file=sys.stderr)
    print(f"{report.summary()}; {report.paragraphs} paragraphs, {report.quotes} quotes.")
    return 1 if missing or (report.failed and not report.added and not report.replaced and not report.unchanged) else 0


if __name__ == "__main__":
    raise SystemExit(main())
