"""What Byline couldn't answer: every abstention and every 👎, kept, grouped and listed.

Each gap is a row of the ``gaps`` table (``gap_store.py``): the question (its standalone form,
so a follow-up reads whole), where it was asked, which check refused it (``Answer.refused_by``)
and the citations of the closest passages (for a 👎, the passages the judged answer cited).
``/byline gaps`` and ``/gaps`` (admins), and ``byline gaps --since 7d [--json]``, list them
grouped by similar question, most frequent first: questions with the same normalised text are
one question, and questions whose embeddings (``library.embedder``) have a cosine of at least
``GROUP_SIMILARITY`` with a group's most frequent question join that group.
``byline feedback --json`` exports every vote with the answer it judges.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from bot.asking import Asker, Command
from bot.commands.digest import parse_since
from bot.gap_groups import CHAT_GROUPS, GROUP_SIMILARITY, GapGroup, gaps_text, group_gaps, one_line
from bot.replies import Reply, TextReply
from bot.schedules import ScheduleError
from bot.state.gaps import GapStore, stamp
from retrieval.features.digest import window_label
from retrieval.render import plain

if TYPE_CHECKING:
    from bot.service import Service

DEFAULT_SINCE = "7d"


def gap_groups(service: Service, since: datetime, tenant: str | None = None) -> list[GapGroup]:
    """The gaps of one tenant (``None``: every tenant, for the operator's ``byline gaps``), grouped."""
    return group_gaps(GapStore(service.state).since(since, tenant), service.library.embedder.encode)


def _since(text: str, now: datetime) -> datetime:
    return parse_since(text or DEFAULT_SINCE, now, UTC)


def gaps_command(service: Service) -> Callable[[str, Asker], Reply]:
    """``/gaps [TIME]`` (admins): the top ten groups since TIME (default 7 days)."""

    def run(args: str, asker: Asker) -> Reply:

        now = datetime.now(UTC)
        try:
            since = _since(args.strip(), now)
        except ScheduleError as error:
            usage = "/byline gaps" if asker.platform == "slack" else "/gaps"
            return TextReply(f"{error} Usage: `{usage} [TIME]`, e.g. `{usage} 30d`.", private=True, error=True)
        # In chat, even an operator sees only this tenant's gaps: the reply lands in its channel.
        groups = gap_groups(service, since, asker.tenant)
        return TextReply(gaps_text(groups, window_label(since, now), CHAT_GROUPS), private=True)

    return run


# -- the terminal: byline gaps, byline feedback -------------------------------------------


def add_parsers(commands: argparse._SubParsersAction) -> None:
    gaps = commands.add_parser("gaps", help="the questions Byline couldn't answer (abstentions and 👎), grouped")
    gaps.add_argument("--since", default=DEFAULT_SINCE, help="7d, 24h, yesterday or 2026-11-30 (default: 7d)")
    gaps.add_argument("--json", action="store_true", help="print the groups, with every gap, as JSON")
    feedback = commands.add_parser("feedback", help="the 👍/👎 votes, each with the answer it judges")
    feedback.add_argument("--since", default="", help="only votes cast since then (default: all)")
    feedback.add_argument("--json", action="store_true", help="print the votes as JSON")


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def _print_error(message: str, as_json: bool) -> None:
    """As every ``byline`` command: ``{"error": …}`` on stdout under --json, else one stderr line."""
    if as_json:
        print(json.dumps({"error": message}, ensure_ascii=False))
    else:
        print(f"byline: {message}", file=sys.stderr)


def run_cli(service: Service, args: argparse.Namespace) -> int:

    now = datetime.now(UTC)
    try:
        since = _since(args.since, now) if args.command == "gaps" or args.since else None
    except ScheduleError as error:
        _print_error(str(error), args.json)
        return 2
    if args.command == "gaps":
        assert since is not None
        groups = gap_groups(service, since)
        if args.json:
            until = now + timedelta(microseconds=1)
            _print_json(
                {
                    "since": stamp(since),
                    "until": stamp(until),
                    "similarity": GROUP_SIMILARITY,
                    "total": sum(group.count for group in groups),
                    "groups": [group.to_json() for group in groups],
                }
            )
        else:
            print(plain(gaps_text(groups, window_label(since, now))))
        return 0
    votes = GapStore(service.state).votes(since)
    if args.json:
        _print_json({"since": stamp(since) if since else None, "count": len(votes), "votes": votes})
        return 0
    if not votes:
        print("No votes yet." if since is None else f"No votes since {window_label(since, now)}.")
    for vote in votes:
        answer = vote["answer"]
        outcome = "answered" if answer.get("answered") else f"abstained ({answer.get('refused_by') or 'no reason'})"
        mark = "👍" if vote["value"] > 0 else "👎"
        who = f"{vote['platform']}:{vote['voter']}"
        print(plain(f"{mark} {vote['voted_at'][:16]} {who} — “{one_line(vote['question'])}” ({outcome})"))
    return 0


def command(service: Service) -> Command:
    """The ``gaps`` command (admins only: it shows what the tenant's people asked)."""
    return Command(
        "gaps",
        "/gaps [TIME]",
        "the questions Byline couldn't answer or got a 👎, grouped, most frequent first "
        "(Slack: /byline gaps; admins only)",
        gaps_command(service),
        admin_only=True,
    )
