"""What a question asks: someone's words on a topic, who said something, or plain facts.

Also rewrites a follow-up ("and what did Guardiola say?") with what the earlier question in
the same conversation was about.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

MAX_QUESTION_CHARS = 2000

_LEAD = r"^(?:and|but|so|ok|okay|also|then)?[\s,]*"
_SAY = r"(?:say|said|tell|told|think|thought|claim|admit|reveal|comment|argue|insist|mean|feel|add)"
_TOPIC = r"(?:\s+(?:about|on|of|regarding|concerning|after|over|when|to|re|at|in|during)\s+(?P<topic>.+?))?"
_SPEAKER_PATTERNS = [
    re.compile(
        _LEAD
        + r"what\s+(?:else\s+)?(?:did|does|do|has|have|had|would)\s+(?P<who>.+?)\s+"
        + rf"(?:have\s+to\s+)?{_SAY}{_TOPIC}\s*[?.!]*$",
        re.I,
    ),
    re.compile(
        _LEAD
        + r"how\s+(?:did|does|has)\s+(?P<who>.+?)\s+(?:react|respond|reply|feel)"
        + r"(?:\s+(?:to|about|on)\s+(?P<topic>.+?))?\s*[?.!]*$",
        re.I,
    ),
    re.compile(
        _LEAD
        + r"(?:what\s+(?:were|are|was|is)\s+)?(?P<who>.+?)['’]s\s+"
        + r"(?:comments?|remarks?|words|reaction|quotes?|views?|response|take)"
        + r"(?:\s+(?:on|about|to)\s+(?P<topic>.+?))?\s*[?.!]*$",
        re.I,
    ),
    re.compile(
        _LEAD + r"did\s+(?P<who>.+?)\s+(?:say|comment|talk)\s+(?:anything\s+)?(?:about|on)\s+(?P<topic>.+?)\s*[?.!]*$",
        re.I,
    ),
    re.compile(
        _LEAD + r"(?:quotes?|comments?)\s+(?:from|by)\s+(?P<who>.+?)(?:\s+(?:about|on)\s+(?P<topic>.+?))?\s*[?.!]*$",
        re.I,
    ),
]
_WHO_SAID = re.compile(
    _LEAD
    + r"who\s+(?:said|says|claimed|called|described|admitted|insisted|complained|accused|warned)\s+"
    + r"(?:that\s+)?(?P<topic>.+?)\s*[?.!]*$",
    re.I,
)
_SHORT_FOLLOW_UP = re.compile(
    _LEAD + r"(?:what\s+about|how\s+about)?\s*(?P<who>[A-Z][\w’'\-]+(?:\s+[A-Z][\w’'\-]+)*)\s*\?*$"
)
_PRONOUNS = re.compile(r"^(?:he|she|they|him|her|them|it)$", re.I)
_PRONOUN_IN_TEXT = re.compile(r"\b(?:he|she|they|him|her|them|his|their)\b", re.I)


@dataclass(frozen=True)
class Question:
    """A parsed question. ``who`` is set for questions about what someone said."""

    text: str
    kind: str  # "speaker", "who_said" or "general"
    who: str = ""
    topic: str = ""
    # An answer off the topic is still what the user asked for: the topic came from an
    # earlier question ("and what did Guardiola say?"). (A reaction, "how did Mourinho react
    # to the defeat?", is not: it is found through its article being about the defeat.)
    topic_optional: bool = False

    @property
    def standalone(self) -> str:
        """The question as it would be asked with no conversation before it."""
        if self.kind == "speaker":
            return f"what did {self.who} say" + (f" about {self.topic}" if self.topic else "") + "?"
        return self.text

    @property
    def search_text(self) -> str:
        if self.kind == "speaker":
            return self.topic or self.who
        if self.kind == "who_said":
            return self.topic
        return self.text


def normalise(question: str) -> str:
    """Whitespace and invisible characters cleaned; what the user typed otherwise kept."""
    cleaned = "".join(ch for ch in question if ch.isprintable() or ch in " \t\n")
    return re.sub(r"\s+", " ", cleaned).strip()


def parse(question: str) -> Question:
    text = normalise(question)
    for pattern in _SPEAKER_PATTERNS:
        match = pattern.match(text)
        if match:
            who = _clean_who(match.group("who"))
            if who:
                topic = _clean_topic(match.groupdict().get("topic") or "")
                return Question(text, "speaker", who, topic)
    match = _WHO_SAID.match(text)
    if match:
        return Question(text, "who_said", topic=_clean_topic(match.group("topic")))
    return Question(text, "general")


def _clean_who(who: str) -> str:
    who = re.sub(r"^(?:the\s+)?(?:manager|boss|coach|minister|president)\s+", "", who.strip(), flags=re.I)
    return who.strip(" ,.?!")


def _clean_topic(topic: str) -> str:
    return topic.strip(" ,.?!")


def with_context(question: Question, history: Sequence[str]) -> Question:
    """Rewrite a follow-up using the most recent earlier question it depends on."""
    if not history:
        return question
    previous = parse(history[-1])
    short = _SHORT_FOLLOW_UP.match(question.text)
    if question.kind == "general" and short and previous.kind == "speaker" and len(question.text.split()) <= 5:
        # "and Guardiola?" after "what did Mourinho say about the referee?"
        return Question(
            question.text, "speaker", short.group("who"), previous.topic, topic_optional=bool(previous.topic)
        )
    if question.kind == "speaker":
        who = previous.who if _PRONOUNS.match(question.who) and previous.who else question.who
        inherited = not question.topic and previous.kind == "speaker" and bool(previous.topic)
        topic = question.topic or (previous.topic if previous.kind == "speaker" else "")
        return replace(question, who=who, topic=topic, topic_optional=question.topic_optional or inherited)
    if question.kind == "general" and _PRONOUN_IN_TEXT.search(question.text):
        subject = previous.who if previous.kind == "speaker" else _names(previous.text)
        if subject:
            return replace(question, text=f"{question.text} ({subject})")
    return question


def _names(text: str) -> str:
    return " ".join(re.findall(r"\b[A-Z][\w’'\-]+(?:\s+[A-Z][\w’'\-]+)*", text[1:]))
