"""``byline quotes``, ``byline reactions`` and ``byline alerts``, hooked into ``bot/cli/main.py``.

``byline quotes --format csv`` is for a reporter's spreadsheet: one row per quote, every field
quoted where it needs to be (the csv module), and a cell that a spreadsheet would run as a
formula (one starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is written
with a leading apostrophe, so a quote such as ``=HYPERLINK(…)`` stays text.

The CLI is the operator (``bot/tenancy.py``): its alerts are the operator's tenant, and it names
the channel they post to (``--channel slack:C0123`` or ``discord:1234``).
"""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import asdict, fields
from datetime import UTC, datetime
from typing import Any, TextIO

from bot.commands.quotes import ArgumentError, parse_since_date
from bot.jobs.alerts import PER_HOUR, alert_label
from bot.output import print_error, print_json
from bot.schedules import parse_targets
from bot.service import Service
from bot.state.alerts import AlertStore
from bot.tenancy import OPERATOR
from retrieval.features.quote_pages import QuoteRow, timeline_json, timeline_page, timeline_rows
from retrieval.features.quote_timeline import speaker_timeline
from retrieval.features.reaction_pages import reactions_digest, reactions_json
from retrieval.features.reactions import reactions

# What a spreadsheet reads as the start of a formula (OWASP's list: = + - @, tab, carriage return).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def add_parsers(commands: argparse._SubParsersAction) -> None:
    quotes = commands.add_parser("quotes", help="a person's quotes (on a topic), newest first, grouped by story")
    quotes.add_argument("--speaker", required=True, help="the person: a full name, a surname, Mr Smith…")
    quotes.add_argument("--topic", default="", help="only their quotes about this (default: all of them)")
    quotes.add_argument("--since", default="", help="only articles dated since: 2005-01-31, 30d, yesterday")
    quotes.add_argument("--json", action="store_true", help="print JSON (the same as --format json)")
    quotes.add_argument("--format", choices=("text", "json", "csv"), default="text", help="text, json or csv")
    reactions_parser = commands.add_parser("reactions", help="who said what about a story: one quote per speaker")
    reactions_parser.add_argument("--topic", required=True, help="the story or topic, e.g. 'the Budget'")
    reactions_parser.add_argument("--json", action="store_true", help="print JSON")
    alerts = commands.add_parser("alerts", help="quote alerts: post a person's new quotes to a channel")
    verbs = alerts.add_subparsers(dest="alerts_command", required=True)
    add = verbs.add_parser("add", help="subscribe a channel to a person's new quotes")
    add.add_argument("--channel", required=True, help="slack:C0123ABC or discord:123456789012345678")
    add.add_argument("--speaker", required=True)
    add.add_argument("--topic", default="")
    add.add_argument("--json", action="store_true")
    show = verbs.add_parser("show", help="the operator's alerts (of one channel with --channel)")
    show.add_argument("--channel", default="")
    show.add_argument("--json", action="store_true")
    remove = verbs.add_parser("remove", help="remove one of the operator's alerts by its number")
    remove.add_argument("id", type=int)
    remove.add_argument("--json", action="store_true")


def safe_cell(value: Any) -> Any:
    """A cell a spreadsheet shows as written: text that would start a formula gets an apostrophe."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def write_csv(rows: list[QuoteRow], out: TextIO) -> None:
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    writer.writerow([f.name for f in fields(QuoteRow)])
    for row in rows:
        writer.writerow([safe_cell("" if value is None else value) for value in asdict(row).values()])


def run_quotes(service: Service, args: argparse.Namespace) -> int:
    form = "json" if args.json else args.format
    since = ""
    if args.since:
        try:
            since = parse_since_date(args.since, datetime.now(UTC), "--since")
        except ArgumentError as error:
            print_error(str(error), form == "json")
            return 2
    if not args.speaker.strip():
        print_error("give a person: byline quotes --speaker Mourinho [--topic referees]", form == "json")
        return 2
    timeline = speaker_timeline(service.library, args.speaker, args.topic, since)
    if form == "json":
        print_json(timeline_json(timeline))
    elif form == "csv":
        write_csv(timeline_rows(timeline), sys.stdout)
    else:
        print(timeline_page(timeline, 1, size=max(1, len(timeline.quotes))).text)
    # Nobody quoted is an answer, as a search that finds nothing is: the message says so.
    return 0


def run_reactions(service: Service, args: argparse.Namespace) -> int:
    if not args.topic.strip():
        print_error("name the story: byline reactions --topic 'the Budget'", args.json)
        return 2
    found = reactions(service.library, args.topic)
    if args.json:
        print_json(reactions_json(found))
    else:
        print(reactions_digest(found).text)
    return 0


def run_alerts(service: Service, args: argparse.Namespace) -> int:
    store = AlertStore(service.state)
    verb = args.alerts_command
    if verb == "remove":
        removed = store.remove(OPERATOR, args.id)
        if args.json:
            print_json({"removed": removed, "id": args.id})
        elif removed:
            print(f"Alert {args.id} removed.")
        else:
            print_error(f"the operator has no alert {args.id}; `byline alerts show` lists them")
        return 0 if removed else 1
    targets = []
    if args.channel:
        try:
            targets = parse_targets(args.channel)
        except ValueError as error:
            print_error(str(error), args.json)
            return 2
        if len(targets) != 1:
            print_error("give one channel: --channel slack:C0123ABC or discord:123456789012345678", args.json)
            return 2
    if verb == "add":
        if not args.speaker.strip():
            print_error("give a person: --speaker NAME", args.json)
            return 2
        target = targets[0]
        alert = store.add(OPERATOR, target.platform, target.channel_id, args.speaker.strip(), args.topic.strip(), "cli")
        if alert is None:
            print_error(f"{target.platform}:{target.channel_id} already has that alert", args.json)
            return 1
        if args.json:
            print_json(asdict(alert))
        else:
            print(
                f"Alert {alert.id} added: new quotes of {alert_label(alert)} go to "
                f"{target.platform}:{target.channel_id} while `byline serve` runs (at most {PER_HOUR} an hour)."
            )
        return 0
    alerts = store.of_tenant(OPERATOR)
    if targets:
        alerts = [a for a in alerts if (a.platform, a.channel_id) == (targets[0].platform, targets[0].channel_id)]
    if args.json:
        print_json([asdict(a) | {"sent": store.history(OPERATOR, a.id)} for a in alerts])
    elif not alerts:
        print("No alerts. Add one: byline alerts add --channel slack:C0123ABC --speaker NAME [--topic WORDS]")
    else:
        for alert in alerts:
            sent = store.history(OPERATOR, alert.id).get("sent", 0)
            print(f"{alert.id}. {alert_label(alert)} -> {alert.platform}:{alert.channel_id} ({sent} posted)")
    return 0
