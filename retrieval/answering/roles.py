"""Whether a "Which manager said ...?" question asks for a manager or a player, and which of
the two an article makes a speaker.

Sport reports quote both sides of a game: a manager and his opposite number, a player and his
coach. "Which Scarlets player said he'd have looked daft ...?" is not asking about the coaches
quoted beside him, and the article says who is which in the words before each name ("Scarlets
wing Dafydd Prosser", "Ulster coach Mark McCall").
"""

from __future__ import annotations

import re

from retrieval.reading.people import SAME_JOB

STAFF = "staff"
PLAYER = "player"

# The jobs sport writes one way or another (``people.SAME_JOB``), their plurals and more staff.
_STAFF_WORDS = SAME_JOB | frozenset("managers bosses coaches gaffer director trainer".split())
_PLAYER_WORDS = frozenset(
    """player players striker forward midfielder defender keeper goalkeeper winger wing full-back
    centre-back centre-half captain skipper batsman batter bowler spinner all-rounder opener fly-half
    scrum-half prop hooker lock flanker centre substitute debutant teenager youngster jockey driver
    golfer sprinter""".split()
)
_ROLE_WORDS = "|".join(sorted(_STAFF_WORDS | _PLAYER_WORDS, key=len, reverse=True))
# "Which (Bolton / new / uncapped / teenage) player said ..." and "Which boss heaped praise ...":
# the role word ends the few words after "which".
_ASKED = re.compile(rf"^(?:which|what)\s+(?:[\w'’\-]+\s+){{0,3}}?(?P<role>{_ROLE_WORDS})\b", re.IGNORECASE)


def _role_of(word: str) -> str | None:
    word = word.lower()
    if word in _STAFF_WORDS:
        return STAFF
    if word in _PLAYER_WORDS:
        return PLAYER
    return None


def asked_role(question: str) -> str | None:
    """STAFF or PLAYER when the question asks "which manager / which player ...", else None."""
    match = _ASKED.match(question.strip())
    return _role_of(match.group("role")) if match else None


def speaker_role(article_text: str, speaker: str) -> str | None:
    """STAFF or PLAYER by the job the article writes right before the speaker's full name, at its
    first mention that has one; None when it writes none (or the speaker is not a named person)."""
    if len(speaker.split()) < 2:
        return None
    for match in re.finditer(rf"((?:[\w'’\-]+\s+){{1,3}}){re.escape(speaker)}\b", article_text):
        for word in reversed(match.group(1).split()):
            role = _role_of(word)
            if role is not None:
                return role
    return None
