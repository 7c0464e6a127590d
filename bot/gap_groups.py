"""The gaps grouped by similar question and listed, most frequent first: what ``/gaps`` shows and
what the weekly gaps report posts (``bot/commands/gaps.py``, ``bot/jobs/gaps_digest.py``).

Questions with the same normalised text are one question, and questions whose embeddings have a
cosine of at least ``GROUP_SIMILARITY`` with a group's most frequent question join that group.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bot.replies import untrusted
from bot.state.gaps import ABSTAINED, CLOSEST_KEPT, DOWNVOTED, Gap
from retrieval.features.digest import parse_added_at

GROUP_SIMILARITY = 0.8
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
    line = f"{number}. {group.count}× “{one_line(group.question)}” — {', '.join(parts)}"
    variants = group.variants()
    if variants:
        shown = "; ".join(f"“{one_line(v)}”" for v in variants[:VARIANTS_SHOWN])
        more = f" and {len(variants) - VARIANTS_SHOWN} more" if len(variants) > VARIANTS_SHOWN else ""
        line += f"\n   also asked as: {shown}{more}"
    channels = ", ".join(f"{channel} ({count})" for (_, channel), count in group.channels().most_common(3))
    if channels:
        line += f"\n   in: {channels}"
    # "Headline ¶1, ¶11; Other headline ¶4": each article named once.
    paragraphs: dict[str, list[str]] = {}
    for citation in group.closest():
        paragraphs.setdefault(one_line(citation["title"], 120), []).append(f"¶{citation['paragraph']}")
    closest = "; ".join(f"{title} {', '.join(marks)}" for title, marks in paragraphs.items())
    if closest:
        line += f"\n   closest: {closest}"
    return line


def one_line(text: str, limit: int = 200) -> str:
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
