"""``byline feeds add URL | list [--json] | remove URL | poll``."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import asdict
from typing import Any

from bot.output import print_json
from bot.settings import Settings
from retrieval.ingest.feeds import FeedBook, poll_feeds
from retrieval.ingest.fetch import Fetcher
from retrieval.library import Library
from retrieval.reading.loader import skip_message


def add_feeds_parser(commands: Any) -> None:
    """Add the ``feeds`` subcommand to the ``byline`` parser's subparsers."""
    feeds = commands.add_parser("feeds", help="follow RSS/Atom feeds: add URL, list, remove URL, poll")
    actions = feeds.add_subparsers(dest="feeds_action", required=True)
    actions.add_parser("add", help="subscribe to a feed").add_argument("url")
    listing = actions.add_parser("list", help="the feeds and how their last polls went")
    listing.add_argument("--json", action="store_true", help="print the feeds as JSON")
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
            feed = book.subscribe(args.url, fetcher)
            found = "" if feed.url == args.url.strip() else f" (the feed that {args.url.strip()} links to)"
            named = f" “{feed.title}”" if feed.title else ""
            print(f"following{named} {feed.url}{found}; polled by `byline feeds poll` and while `byline serve` runs")
        elif args.feeds_action == "remove":
            book.remove(args.url)
            print(f"stopped following {args.url}")
        elif getattr(args, "json", False):  # a Namespace built by hand may lack it
            print_json([asdict(feed) for feed in book.list()])
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
    from retrieval.storage.store import Store

    return Store(settings.storage().store_location(settings.data_dir))


def _poll(settings: Settings, fetcher: Fetcher) -> int:
    library = Library.open(settings.data_dir, backend=settings.storage())
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
