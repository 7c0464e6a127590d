"""Who is who in an article: person names, their mentions, and how later references resolve.

Byline has no named-entity model (none installs offline here), so people are found from the
cues that news writing always gives: honorifics, job titles before a name, being the subject
of a speech verb, and the full name introduced before the surname is used alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HONORIFICS = r"(?:Mr|Mrs|Ms|Miss|Dr|Sir|Dame|Lord|Lady|Prof|Professor|Rev|Sen|Gen|Judge)\.?"
_NAME_WORD = r"(?:[A-Z][a-z]*[’'])?[A-Z][\w’'\-]*[a-z][\w’'\-]*"
_PARTICLE = r"(?:de|da|di|del|van|von|der|den|le|la|bin|al|el|du|dos|ter)"
NAME = rf"(?:{HONORIFICS}\s+)?{_NAME_WORD}(?:\s+(?:{_PARTICLE}\s+)?{_NAME_WORD}){{0,3}}"
_NAME_RE = re.compile(rf"\b{NAME}\b")

SPEECH_VERBS = (
    "said|says|added|adds|insisted|insists|admitted|admits|told|tells|explained|explains|"
    "claimed|claims|stated|states|argued|argues|warned|warns|noted|notes|continued|continues|"
    "asked|asks|replied|replies|stressed|stresses|declared|declares|commented|comments|"
    "revealed|reveals|confirmed|confirms|conceded|concedes|suggested|suggests|maintained|"
    "maintains|acknowledged|acknowledges|wrote|writes|joked|jokes|agreed|agrees|recalled|"
    "recalls|announced|announces|predicted|predicts|believes|believed|urged|urges|remarked|"
    "observed|responded|responds|complained|complains|boasted|promised|promises|vowed|vows|"
    "accused|accuses|described|describes|called|calls|defended|defends|pointed out|points out"
)

# Role nouns that make "the City manager" or "a spokesman for the firm" a speaker.
ROLE_NOUNS = (
    "manager|boss|coach|chief|spokesman|spokeswoman|spokesperson|director|minister|secretary|"
    "president|chairman|chairwoman|chair|analyst|economist|official|executive|player|striker|"
    "defender|midfielder|goalkeeper|keeper|captain|winger|forward|star|singer|actor|actress|"
    "author|leader|head|founder|owner|expert|lawyer|judge|officer|spokespeople|researcher|"
    "professor|chancellor|governor|mayor|senator|mp|source|sources|insider|veteran|champion|"
    "portuguese|spaniard|frenchman|dutchman|belgian|argentine|brazilian|italian|german|scot|"
    "welshman|irishman|englishman|american|australian|swede|norwegian|dane|russian|"
    "\\d+-year-old|man|woman|veteran|critic|campaigner|group|firm|company|report|statement"
)

NOT_PERSON_WORDS = frozenset(
    """city united fc club league cup party government council ministry department bank
    commission association union corporation company group ltd inc plc news bbc street road
    trafford stadium park university college school court house office agency board
    committee service trust fund institute market markets exchange airways airlines motors
    records studios pictures games festival awards award prize europe america britain
    england scotland wales ireland london paris monday tuesday wednesday thursday friday
    saturday sunday january february march april may june july august september october
    november december the a an in on at for of and but or so if when while after before
    read more meanwhile however sources eyewitnesses premier champions world national
    labour conservative tory tories liberal democrats democrat republican republicans
    parliament commons lords senate congress olympic olympics grand prix internet web
    online microsoft apple google sony nintendo yahoo""".split()
)


@dataclass(frozen=True)
class Mention:
    """One place where a person is named, resolved to their canonical (full) name."""

    start: int
    end: int
    name: str
    subject: bool


_TITLE_WORDS = frozenset(
    """secretary minister president chancellor chairman chairwoman chief executive manager boss
    coach striker defender midfielder goalkeeper captain prime shadow deputy director governor
    mayor senator spokesman spokeswoman leader commissioner general""".split()
)


def strip_honorific(name: str) -> str:
    """The bare name: no honorific, and no job title written before it."""
    tokens = re.sub(rf"^{HONORIFICS}\s+", "", name).strip().split()
    for index in range(len(tokens) - 1, -1, -1):
        if tokens[index].lower() in _TITLE_WORDS:
            tokens = tokens[index + 1 :]
            break
    return " ".join(tokens)


def _looks_like_person(candidate: str) -> bool:
    tokens = strip_honorific(candidate).replace("’", "'").split()
    if not tokens or tokens[0].lower() in {"the", "a", "an", "and", "but"}:
        return False
    return not any(token.lower().strip("'s") in NOT_PERSON_WORDS for token in tokens)


class People:
    """The people of one article, built once per article from its text."""

    def __init__(self, text: str, speaker_names: list[str]) -> None:
        self.text = text
        self.full_names: list[str] = []
        self._collect_full_names(speaker_names)
        self.mentions = self._find_mentions()

    def _collect_full_names(self, speaker_names: list[str]) -> None:
        role_before = re.compile(
            rf"\b(?i:{ROLE_NOUNS}|prime minister|chief executive)\s+({NAME})"
        )
        candidates: list[str] = list(speaker_names)
        for match in _NAME_RE.finditer(self.text):
            name = match.group(0)
            if re.match(HONORIFICS + r"\s", name) or len(name.split()) >= 2:
                candidates.append(name)
        for match in role_before.finditer(self.text):
            candidates.append(match.group(1))
        for candidate in candidates:
            bare = strip_honorific(candidate)
            if len(bare.split()) >= 2 and _looks_like_person(bare) and bare not in self.full_names:
                self.full_names.append(bare)

    def canonical(self, written: str) -> str:
        """The full name a written reference ("Mourinho", "Mr Smith") stands for."""
        bare = strip_honorific(written) or written
        if bare in self.full_names:
            return bare
        last = bare.split()[-1] if bare.split() else bare
        for full in self.full_names:
            parts = full.split()
            if parts[-1] == last or (len(bare.split()) == 1 and bare in parts):
                return full
        return bare

    def _find_mentions(self) -> list[Mention]:
        surnames: dict[str, str] = {}
        for full in self.full_names:
            surnames.setdefault(full.split()[-1], full)
        found: list[Mention] = []
        for match in _NAME_RE.finditer(self.text):
            written = match.group(0)
            bare = strip_honorific(written)
            name = ""
            if not bare:
                continue
            if bare in self.full_names:
                name = bare
            elif bare.split()[-1] in surnames and _looks_like_person(bare):
                name = surnames[bare.split()[-1]]
            elif bare in surnames:
                name = surnames[bare]
            if name:
                found.append(Mention(match.start(), match.end(), name, self._is_subject(match.end())))
        return found

    def _is_subject(self, end: int) -> bool:
        after = self.text[end : end + 40]
        return bool(
            re.match(
                rf"\s*(?:,[^,]{{1,60}},\s*)?(?:has |had |have |also |later |then |now |"
                rf"previously |recently |again |however )?(?:{SPEECH_VERBS}|was|is|has|had|will|would|"
                rf"could|can|\w+ed\b)",
                after,
            )
        )

    def resolve_reference(self, before: int, exclude: set[str], window: int = 1500) -> str:
        """The person a pronoun or description used at ``before`` most likely refers to.

        The most recent person in subject position wins (news prose names the speaker as the
        subject of the sentence before "he said"); people named inside the quote itself are
        excluded because speakers rarely refer to themselves in the third person.
        """
        recent = [
            m
            for m in self.mentions
            if before - window <= m.start < before and m.name not in exclude
        ]
        for mention in reversed(recent):
            if mention.subject:
                return mention.name
        return recent[-1].name if recent else ""

    def resolve_description(self, description: str, before: int, exclude: set[str]) -> str:
        """Resolve "the City manager" via an apposition in the article, else by recency."""
        words = [w for w in re.findall(r"[A-Za-z]+", description) if w.lower() not in {"the", "a", "an"}]
        if words:
            head = words[-1]
            for full in self.full_names:
                if full in exclude:
                    continue
                pattern = rf"{re.escape(head)}\s+(?:{HONORIFICS}\s+)?{re.escape(full)}|{re.escape(full)},\s+(?:the\s+)?[^,.]{{0,40}}\b{re.escape(head)}\b"
                if re.search(pattern, self.text[:before], re.IGNORECASE):
                    return full
        return self.resolve_reference(before, exclude)

    def names_in(self, start: int, end: int) -> set[str]:
        return {m.name for m in self.mentions if start <= m.start < end}
