"""``byline feeds add URL | list | remove URL | poll``, and URL arguments to ``byline ingest``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from retrieval.feeds import FeedBook, poll_feeds
from retrieval.fetch import Fetcher
from retrieval.library import Library
from retrieval.loader import skip_message

from .config import Settings
from .ingest_commands import describe


def add_feeds_parser(commands: Any) -> None:
    """Add the ``feeds`` subcommand to the ``byline`` parser's subparsers."""
    feeds = commands.add_parser("feeds", help="follow RSS/Atom feeds: add URL, list, remove URL, poll")
    actions = feeds.add_subparsers(dest="feeds_action", required=True)
    actions.add_parser("add", help="subscribe to a feed").add_argument("url")
    actions.add_parser("list", help="the feeds and how their last polls went")
    actions.add_parser("remove", help="unsubscribe from a feed").add_argument("url")
    actions.add_parser("poll", help="poll every feed once, then exit")


def is_url(argument: str) -> bool:
    """Anything with a scheme is a URL (so file:// and ftp:// meet the guard, not the disk)."""
    return "://" in argument


def run_feeds(args: argparse.Namespace, settings: Settings) -> int:
    fetcher = Fetcher.from_env(os.environ)
    if args.feeds_action == "poll":
        return _poll(settings, fetcher)
    library_store = _store(settings)
    book = FeedBook(library_store)
    try:
        if args.feeds_action == "add":
            feed = book.add(args.url, fetcher)
            print(f"following {feed.url} (polled by `byline feeds poll` and while `byline serve` runs)")
        elif args.feeds_action == "remove":
            book.remove(args.url)
            print(f"stopped following {args.url}")
        else:
            feeds = book.list()
            if not feeds:
                print("No feeds yet. Add one with `byline feeds add URL`.")
            for feed in feeds:
                status = f"error: {feed.last_error}" if feed.failures else (feed.last_error or "ok")
                print(
                    f"{feed.url}\n  {feed.title or '(not fetched yet)'}\n  last fetch: {feed.last_fetch or 'never'}"
                    f"; articles added: {feed.articles_added}; {status}"
                )
    finally:
        library_store.close()
    return 0


def _store(settings: Settings) -> Any:
    # Subscriptions need only the store, not the model or the indexes.
    from retrieval.library import STORE_FILE
    from retrieval.store import Store

    return Store(settings.data_dir / STORE_FILE)


def _poll(settings: Settings, fetcher: Fetcher) -> int:
    library = Library.open(settings.data_dir)
    try:
        results = poll_feeds(library, fetcher)
    finally:
        library.close()
    if not results:
        print("No feeds to poll. Add one with `byline feeds add URL`.")
    for result in results:
        if result.error:
            print(skip_message(result.feed.url, result.error), file=sys.stderr)
        elif result.not_modified:
            print(f"{result.feed.url}: not modified")
        else:
            print(f"{result.feed.url}: {result.items} new items, {result.added} added, {result.updated} updated")
            for link, reason in result.item_errors:
                print(f"  {skip_message(link, reason)}", file=sys.stderr)
    return 1 if results and all(r.error for r in results) else 0


def ingest_urls_command(settings: Settings, urls: list[str]) -> int:
    """``byline ingest https://...``: fetch, extract and store each URL."""
    from retrieval.web import ingest_urls

    library = Library.open(settings.data_dir)
    try:
        report = ingest_urls(library, urls, Fetcher.from_env(os.environ))
    finally:
        library.close()
    reply = describe(report)
    print(reply.text, file=sys.stderr if reply.error else sys.stdout)
    return 1 if reply.error else 0


def run_ingest(settings: Settings, arguments: list[str], ingest_files: Callable[[Settings, list[Path]], int]) -> int:
    """``byline ingest`` with any mix of URLs and paths: URLs here, paths by ``ingest_files``."""
    urls = [a for a in arguments if is_url(a)]
    paths = [Path(a) for a in arguments if not is_url(a)]
    codes = [ingest_urls_command(settings, urls)] if urls else []
    if paths:
        codes.append(ingest_files(settings, paths))
    return max(codes)
