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
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from bot.replies import Reply, TextReply, untrusted
from bot.state.gaps import ABSTAINED, CLOSEST_KEPT, DOWNVOTED, Gap, GapStore, stamp
from retrieval.features.digest import parse_added_at, window_label
from retrieval.render import plain

if TYPE_CHECKING:
    from bot.service import Asker, Service

GROUP_SIMILARITY = 0.8
DEFAULT_SINCE = "7d"
# A chat reply lists the top ten groups; the terminal and JSON list them all.
CHAT_GROUPS = 10
VARIANTS_SHOWN = 3
_NOT_WORDS = re.compile(r"[^\w\s]")

Embed = Callable[[list[str]], np.ndarray]


@dataclass
class GapGroup:
    """Gaps whose questions mean the same; ``question`` is the most frequent wording."""

    question: str
    gaps: list[Gap] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.gaps)

    @property
    def last_seen(self) -> str:
        return max(gap.created_at for gap in self.gaps)

    def kinds(self) -> Counter[str]:
        return Counter(gap.kind for gap in self.gaps)

    def refused_by(self) -> Counter[str]:
        return Counter(gap.refused_by for gap in self.gaps if gap.kind == ABSTAINED and gap.refused_by)

    def variants(self) -> list[str]:
        """The other wordings, most frequent first."""
        counts = Counter(gap.question for gap in self.gaps if normalise(gap.question) != normalise(self.question))
        seen: dict[str, str] = {}
        for text, _ in counts.most_common():
            seen.setdefault(normalise(text), text)
        return list(seen.values())

    def channels(self) -> Counter[tuple[str, str]]:
        return Counter((gap.platform, gap.channel_id) for gap in self.gaps if gap.channel_id)

    def closest(self) -> list[dict[str, Any]]:
        """The passages that came up most often for these questions."""
        counts: Counter[tuple[int, int]] = Counter()
        found: dict[tuple[int, int], dict[str, Any]] = {}
        for gap in self.gaps:
            for citation in gap.closest:
                key = (int(citation.get("article_id", 0)), int(citation.get("paragraph", 0)))
                counts[key] += 1
                found.setdefault(key, citation)
        return [found[key] for key, _ in counts.most_common(CLOSEST_KEPT)]

    def to_json(self) -> dict[str, Any]:
        kinds = self.kinds()
        return {
            "question": self.question,
            "count": self.count,
            "abstained": kinds[ABSTAINED],
            "downvoted": kinds[DOWNVOTED],
            "variants": self.variants(),
            "refused_by": dict(self.refused_by().most_common()),
            "channels": [
                {"platform": platform, "channel_id": channel, "count": count}
                for (platform, channel), count in self.channels().most_common()
            ],
            "closest": self.closest(),
            "first_seen": min(gap.created_at for gap in self.gaps),
            "last_seen": self.last_seen,
            "gaps": [gap.to_json() for gap in self.gaps],
        }


def normalise(question: str) -> str:
    """Case, punctuation and spacing removed: "Who won?" and "who  won" are one question."""
    return " ".join(_NOT_WORDS.sub(" ", question.casefold()).split())


# -- grouping --------------------------------------------------------------------------------


def group_gaps(gaps: list[Gap], embed: Embed | None = None, similarity: float = GROUP_SIMILARITY) -> list[GapGroup]:
    """Gaps grouped by similar question, the biggest group (then the most recent) first.

    Questions are first merged by normalised text; with ``embed``, each distinct question (most
    frequent first) joins the group whose leading question is nearest, if the cosine is at least
    ``similarity``, else it leads a new group. Comparing with the leader, not any member, keeps
    a chain of small steps from pulling unrelated questions into one group.
    """
    by_text: dict[str, list[Gap]] = {}
    for gap in gaps:
        by_text.setdefault(normalise(gap.question), []).append(gap)
    texts = sorted(by_text, key=lambda text: (-len(by_text[text]), -_latest(by_text[text])))
    # Normalised text is embedded too, so case and punctuation never move a question's vector.
    vectors = embed(texts) if embed and texts else None
    groups: list[GapGroup] = []
    leaders: list[int] = []
    for index, text in enumerate(texts):
        members = by_text[text]
        target = None
        if vectors is not None and leaders:
            scores = vectors[leaders] @ vectors[index]
            best = int(np.argmax(scores))
            if scores[best] >= similarity:
                target = groups[best]
        if target is None:
            target = GapGroup(Counter(g.question for g in members).most_common(1)[0][0])
            groups.append(target)
            leaders.append(index)
        target.gaps.extend(members)
    for group in groups:
        group.gaps.sort(key=lambda gap: (gap.created_at, gap.id))
    groups.sort(key=lambda group: (-group.count, -_latest(group.gaps)))
    return groups


def _latest(gaps: list[Gap]) -> float:
    return max(parse_added_at(gap.created_at).timestamp() for gap in gaps)


# -- showing them ----------------------------------------------------------------------------


def group_line(number: int, group: GapGroup) -> str:
    """ "1. 3× “who won the derby?” — 2 abstained (names_absent 2), 1 👎; also asked as: …"."""
    kinds = group.kinds()
    parts = []
    if kinds[ABSTAINED]:
        refused = ", ".join(f"{name} {count}" for name, count in group.refused_by().most_common())
        parts.append(f"{kinds[ABSTAINED]} abstained" + (f" ({refused})" if refused else ""))
    if kinds[DOWNVOTED]:
        parts.append(f"{kinds[DOWNVOTED]} 👎")
    line = f"{number}. {group.count}× “{_one_line(group.question)}” — {', '.join(parts)}"
    variants = group.variants()
    if variants:
        shown = "; ".join(f"“{_one_line(v)}”" for v in variants[:VARIANTS_SHOWN])
        more = f" and {len(variants) - VARIANTS_SHOWN} more" if len(variants) > VARIANTS_SHOWN else ""
        line += f"\n   also asked as: {shown}{more}"
    channels = ", ".join(f"{channel} ({count})" for (_, channel), count in group.channels().most_common(3))
    if channels:
        line += f"\n   in: {channels}"
    # "Headline ¶1, ¶11; Other headline ¶4": each article named once.
    paragraphs: dict[str, list[str]] = {}
    for citation in group.closest():
        paragraphs.setdefault(_one_line(citation["title"], 120), []).append(f"¶{citation['paragraph']}")
    closest = "; ".join(f"{title} {', '.join(marks)}" for title, marks in paragraphs.items())
    if closest:
        line += f"\n   closest: {closest}"
    return line


def _one_line(text: str, limit: int = 200) -> str:
    """A question or headline on one line, capped, and marked as not Byline's own words, so that
    no platform reads markup in it (a question "[Reset your password](https://evil.example)")."""
    text = " ".join(str(text).split())
    return untrusted(text if len(text) <= limit else text[: limit - 1] + "…")


def gaps_text(groups: list[GapGroup], since_label: str, limit: int | None = None) -> str:
    if not groups:
        return f"Nothing unanswered since {since_label}: no abstentions and no 👎."
    total = sum(group.count for group in groups)
    shown = groups[:limit] if limit else groups
    heading = (
        f"What Byline couldn't answer since {since_label}: {total} question{'s' if total != 1 else ''} "
        f"in {len(groups)} group{'s' if len(groups) != 1 else ''}, most frequent first"
    )
    if len(shown) < len(groups):
        heading += f" (the top {len(shown)}; `byline gaps` lists them all)"
    return heading + ":\n\n" + "\n".join(group_line(n, group) for n, group in enumerate(shown, 1))


def gap_groups(service: Service, since: datetime, tenant: str | None = None) -> list[GapGroup]:
    """The gaps of one tenant (``None``: every tenant, for the operator's ``byline gaps``), grouped."""
    return group_gaps(GapStore(service.state).since(since, tenant), service.library.embedder.encode)


def _since(text: str, now: datetime) -> datetime:
    from bot.commands.digest import parse_since

    return parse_since(text or DEFAULT_SINCE, now, UTC)


def gaps_command(service: Service) -> Callable[[str, Asker], Reply]:
    """``/gaps [TIME]`` (admins): the top ten groups since TIME (default 7 days)."""

    def run(args: str, asker: Asker) -> Reply:
        from bot.jobs.digest_schedule import ScheduleError

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
    from bot.jobs.digest_schedule import ScheduleError

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
        print(plain(f"{mark} {vote['voted_at'][:16]} {who} — “{_one_line(vote['question'])}” ({outcome})"))
    return 0
