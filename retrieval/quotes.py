"""Direct quotes and who said them.

A quote is found from its marks (curly or straight), follows news conventions for quotes that
run on (a paragraph that opens a quote and does not close it continues in the next paragraph
that opens with a mark), and is attributed from the words around it: ``"…," X said``,
``X said: "…"``, ``said X``, ``"…," he added`` and descriptions such as "the City manager",
resolved to the full name introduced earlier in the article.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .models import Paragraph
from .people import NAME, NOT_PERSON_WORDS, ROLE_NOUNS, SPEECH_VERBS, People, strip_honorific
from .text import STOPWORDS

_OPEN_CURLY = "“"
_CLOSE_CURLY = "”"
_PRONOUN = r"(?:he|she|He|She|they|They)"
_DESCRIPTION = rf"(?:[Tt]he|[Aa]n?|[Hh]is|[Hh]er|[Tt]heir)\s+(?:[\w’'\-]+\s+){{0,4}}?(?:{ROLE_NOUNS})(?:\s+(?:for|of|at)\s+(?:the\s+)?[\w’'\-]+(?:\s+[A-Z][\w’'\-]+){{0,3}})?"
_SPEAKER = rf"(?P<speaker>{_DESCRIPTION}|{NAME}|{_PRONOUN})"
_VERB = rf"(?:(?:has|had|have|also|later|then|simply|previously|once)\s+)?(?:{SPEECH_VERBS})"

# Attribution after a closing mark: `," Mourinho said`, `," said Mr Smith`, `," he added`.
_AFTER_SPEAKER_VERB = re.compile(rf"^[,.!?]?\s*[–—-]?\s*{_SPEAKER},?\s+{_VERB}\b")
_AFTER_VERB_SPEAKER = re.compile(rf"^[,.!?]?\s*{_VERB}\s+{_SPEAKER}")
# Attribution before an opening mark: `Ms Hewitt said: "`, `He told the BBC: "`.
_BEFORE = re.compile(
    rf"{_SPEAKER},?\s+(?:(?!(?:he|she|they)\b)[a-z][\w’'\-]*\s+){{0,3}}?{_VERB}(?:\s+[^:\"“”]{{0,80}}?)?\s*[:,]\s*$"
)
# A partial quote inside reported speech: `Mourinho later accused City of being "…"`.
_REPORTED = re.compile(rf"^\s*(?:And|But|Meanwhile,|However,)?\s*{_SPEAKER}\s+(?:\w+\s+)?{_VERB}\b")


@dataclass(frozen=True)
class FoundQuote:
    """A quote segment as found, before it is stored."""

    paragraph: int
    start: int
    end: int
    text: str
    speaker: str
    group: int
    partial: bool


@dataclass
class _Segment:
    paragraph: int
    open_mark: int
    start: int
    end: int
    close_mark: int  # -1 when the quote was not closed in this paragraph
    group: int


def _mark_kind(text: str, index: int) -> str:
    char = text[index]
    if char == _OPEN_CURLY:
        return "open"
    if char == _CLOSE_CURLY:
        return "close"
    before = text[index - 1] if index > 0 else " "
    after = text[index + 1] if index + 1 < len(text) else " "
    if before.isspace() or before in "([{—–-/":
        return "open" if not after.isspace() else "close"
    return "close"


def _segments(text: str, paragraphs: list[Paragraph]) -> list[_Segment]:
    segments: list[_Segment] = []
    group = 0
    carry = False  # the previous paragraph ended inside a quote
    for paragraph in paragraphs:
        open_at = -1
        for index in range(paragraph.start, paragraph.end):
            if text[index] not in "\"“”":
                continue
            kind = _mark_kind(text, index)
            if kind == "open":
                if open_at >= 0:
                    # A new opening mark before a close: the quote ran on ("A. "B.").
                    segments.append(_Segment(paragraph.number, open_at, open_at + 1, index, -1, group))
                else:
                    at_paragraph_start = not text[paragraph.start : index].strip()
                    if not (carry and at_paragraph_start):
                        group += 1
                open_at = index
            elif open_at >= 0:
                segments.append(_Segment(paragraph.number, open_at, open_at + 1, index, index, group))
                open_at = -1
        carry = open_at >= 0
        if carry:
            segments.append(_Segment(paragraph.number, open_at, open_at + 1, paragraph.end, -1, group))
    return [_trim(text, s) for s in segments if text[s.start : s.end].strip()]


def _trim(text: str, segment: _Segment) -> _Segment:
    start, end = segment.start, segment.end
    while start < end and text[start].isspace():
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in ",;:"):
        end -= 1
    return replace(segment, start=start, end=end)


def _sentence_start(text: str, position: int, floor: int) -> int:
    index = position
    while index > floor:
        if text[index - 1] in ".!?" and index < len(text) and text[index].isspace():
            return index
        index -= 1
    return floor


class _Attributor:
    def __init__(self, text: str, paragraphs: list[Paragraph], segments: list[_Segment]) -> None:
        self.text = text
        self.paragraph_of = {p.number: p for p in paragraphs}
        self.segments = segments
        named = [self._explicit(s) for s in segments]
        self.people = People(text, [w for w, _ in named if w and w[0].isupper() and not _is_description(w)])
        self.explicit = named

    def _explicit(self, segment: _Segment) -> tuple[str, str]:
        """(written speaker, how) for the attribution next to this segment, if any."""
        paragraph = self.paragraph_of[segment.paragraph]
        if segment.close_mark >= 0:
            after = self.text[segment.close_mark + 1 : min(paragraph.end, segment.close_mark + 160)]
            after = re.split(r"[\"“”]", after)[0]
            for pattern in (_AFTER_VERB_SPEAKER, _AFTER_SPEAKER_VERB):
                match = pattern.match(after)
                if match and self._plausible(match.group("speaker")):
                    return match.group("speaker"), "after"
        floor = paragraph.start
        sentence_start = _sentence_start(self.text, segment.open_mark, floor)
        before = self.text[sentence_start : segment.open_mark]
        before = re.split(r"[\"“”]", before)[-1]
        for match in _BEFORE.finditer(before):
            if self._plausible(match.group("speaker")):
                return match.group("speaker"), "before"
        match = _REPORTED.match(self.text[sentence_start : segment.open_mark])
        if match and self._plausible(match.group("speaker")):
            return match.group("speaker"), "reported"
        return "", ""

    def _plausible(self, written: str) -> bool:
        """Reject a capitalised ordinary word ("Earlier", "The") taken for a name."""
        if " " in written.strip() or re.fullmatch(_PRONOUN, written):
            return True
        word = written.strip().lower()
        if word in STOPWORDS or word in NOT_PERSON_WORDS:
            return False
        # A name is capitalised everywhere; an ordinary word also appears in lower case.
        return not re.search(rf"\b{re.escape(word)}\b", self.text)

    def resolve(self, written: str, segment: _Segment, group_span: tuple[int, int]) -> str:
        inside = self.people.names_in(*group_span)
        if re.fullmatch(_PRONOUN, written):
            return self.people.resolve_reference(segment.open_mark, inside)
        if _is_description(written):
            if re.match(r"(?i)an?\s", written):
                return written  # "a spokesman for the firm": a new, unnamed person
            return self.people.resolve_description(written, segment.open_mark, inside) or written
        return self.people.canonical(written)


def _is_description(written: str) -> bool:
    return bool(re.fullmatch(_DESCRIPTION, written)) and not re.fullmatch(NAME, written)


def extract_quotes(text: str, paragraphs: list[Paragraph], min_words: int = 2) -> list[FoundQuote]:
    """Every direct quote in an article, one entry per paragraph it occupies, attributed."""
    segments = _segments(text, paragraphs)
    if not segments:
        return []
    attributor = _Attributor(text, paragraphs, segments)
    groups: dict[int, list[int]] = {}
    for index, segment in enumerate(segments):
        groups.setdefault(segment.group, []).append(index)

    speakers: dict[int, str] = {}
    partial_groups: set[int] = set()
    previous_speaker, previous_paragraph, previous_end = "", -10, -1
    for group_id, members in groups.items():
        first = segments[members[0]]
        span = (first.open_mark, segments[members[-1]].end)
        speaker = ""
        for member in members:
            written, how = attributor.explicit[member]
            if written:
                speaker = attributor.resolve(written, segments[member], span)
                if how == "reported":
                    partial_groups.add(group_id)
                break
        if not speaker and previous_speaker and first.paragraph - previous_paragraph <= 1:
            # Unattributed quote right after an attributed one: the same speaker goes on, as
            # in `"A," Mourinho said. "B."` or a quote paragraph following a quote paragraph.
            others = attributor.people.names_in(previous_end, first.open_mark) - {previous_speaker}
            if not others and _starts_sentence(text, first):
                speaker = previous_speaker
        if speaker:
            previous_speaker = speaker
            previous_paragraph = segments[members[-1]].paragraph
            previous_end = segments[members[-1]].end
        speakers[group_id] = speaker

    found: list[FoundQuote] = []
    for segment in segments:
        quoted = text[segment.start : segment.end]
        if len(quoted.split()) < min_words:
            continue
        partial = segment.group in partial_groups or not _starts_sentence(text, segment)
        found.append(
            FoundQuote(
                paragraph=segment.paragraph,
                start=segment.start,
                end=segment.end,
                text=quoted,
                speaker=speakers.get(segment.group, ""),
                group=segment.group,
                partial=partial,
            )
        )
    return found


def _starts_sentence(text: str, segment: _Segment) -> bool:
    """Whether the quote stands as its own sentence(s) rather than inside reported speech."""
    before = text[max(0, segment.open_mark - 3) : segment.open_mark].rstrip()
    return not before or before[-1] in ".!?:\n\"”" or text[segment.open_mark - 2 : segment.open_mark] == ", "
