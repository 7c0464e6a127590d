"""``byline digest [--since TIME] [--json]``: the digest in the terminal, hooked into ``bot/cli/main.py``."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.commands.digest import parse_since
from bot.output import print_error
from bot.schedules import ScheduleError, parse_timezone
from bot.service import Service
from retrieval.features.digest import MAX_ARTICLES, MAX_STORIES, build_digest, digest_to_json


def add_subparser(commands: argparse._SubParsersAction) -> None:
    digest = commands.add_parser("digest", help="a briefing of the articles added recently, grouped by story")
    digest.add_argument("--since", default="24h", help="2h, yesterday, monday, 2026-11-30 or 09:00 (default: 24h)")
    digest.add_argument(
        "--timezone", default=None, help="IANA timezone for dates and the header (default: BYLINE_TIMEZONE, else UTC)"
    )
    digest.add_argument("--json", action="store_true", help="print the structured digest as JSON")


def run(service: Service, args: argparse.Namespace) -> int:
    now = datetime.now(UTC)
    default = service.scheduler.default_timezone if service.scheduler is not None else "UTC"
    try:
        zone = ZoneInfo(parse_timezone(args.timezone or default))
        since = parse_since(args.since, now, zone)
    except ScheduleError as error:
        print_error(str(error), args.json)
        return 2
    # until is a moment after now so that an article added this very instant is included.
    # JSON is for programs: every story, not the dozen a chat post is cut to.
    stories = MAX_ARTICLES if args.json else MAX_STORIES
    until = now + timedelta(microseconds=1)
    digest = build_digest(service.library, "", since, until, now, zone=zone, max_stories=stories)
    if args.json:
        print(json.dumps(digest_to_json(digest), ensure_ascii=False, indent=2))
    else:
        print(digest.text)
    return 0
