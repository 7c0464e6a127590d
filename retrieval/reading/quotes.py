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

from retrieval.models import Paragraph
from retrieval.reading.entities import not_people
from retrieval.reading.people import (
    IN_RELATIVE_CLAUSE,
    NAME,
    NOT_PERSON_WORDS,
    ROLE_NOUNS,
    SAME_JOB,
    SPEECH_VERBS,
    Mention,
    People,
    is_title_word,
)
from retrieval.reading.text import STOPWORDS, sentence_end, sentence_start

# "the company said": an organisation, never resolved to a person.
ORGANISATION_ROLES = frozenset(
    """company firm group report statement""".split()  # noqa: SIM905
)

# Bump when extraction or attribution changes: a library opened with newer rules than its
# stored quotes were read with re-reads them from the stored article text (no re-embedding).
RULES_VERSION = 32

_OPEN_CURLY = "“"
_CLOSE_CURLY = "”"
_PRONOUN = r"(?:he|she|He|She|they|They)"
# A person called by their nationality: "said the New Zealander" (capitalised, unlike a role).
_DEMONYMS = (
    r"Zealander|American|Briton|Scot|Scotsman|Englishman|Welshman|Irishman|Frenchman|Frenchwoman|Dutchman"
    r"|Australian|Canadian|Spaniard|Italian|German|Swede|Norwegian|Dane|Russian|Brazilian|Argentine|Texan"
)
# Sport reports name a manager or player by nationality alone ("the Portuguese replied:"). Only
# as "the <nationality>": "A senior Swiss finance official" is the official, not "A senior Swiss".
_BARE_DEMONYMS = (
    r"Portuguese|Belgian|Swiss|Austrian|Croat|Serb|Czech|Pole|Greek|Turk|Finn|Ukrainian|Romanian|Nigerian"
    r"|Ghanaian|Cameroonian|Senegalese|Ivorian|Argentinian|Uruguayan|Chilean|Colombian|Mexican|Jamaican"
    r"|Kenyan|Ethiopian|Japanese|Kiwi|Ulsterman|Yorkshireman|Geordie"
    # Round 23: a city's or region's people, and nationalities of two words ("the Sri Lankan").
    r"|Brummie|Scouser|Mancunian|Londoner|Cockney|Lancastrian|Cornishman|Aussie|Springbok|Icelander"
    r"|Sri\s+Lankan|South\s+African|West\s+Indian|Costa\s+Rican|Zimbabwean|Pakistani|Indian|Bangladeshi"
    r"|Hungarian|Bulgarian|Slovak|Slovenian|Bosnian|Israeli|Egyptian|Moroccan|Algerian|Tunisian|Malian"
    r"|Zambian|Venezuelan|Peruvian|Paraguayan|Ecuadorian|Korean|Chinese|Fijian|Samoan|Tongan|Estonian"
    r"|Latvian|Lithuanian|Georgian"
)
# A word that opens a clause inside a sentence, right before a name (with up to three capitalised
# words between: "when Morgan", "after Rutherford"): that name is not the sentence's subject.
_SUBORDINATE_BEFORE_NAME = re.compile(
    r"\b(?:when|as|after|before|while|because|until|once|if)\s+(?:[A-Z][\w’'\-]*\s+){0,3}$"
)
# A description that gives only an age or a standing, no job: "the 31-year-old", "the veteran".
_AGE_ONLY = re.compile(r"[Tt]he\s+(?:\d+-year-old|veteran|youngster|teenager)")
_DESCRIPTION = (
    rf"(?:(?:\b(?:[Tt]he|[Aa]n?|[Hh]is|[Hh]er|[Tt]heir|[Oo]ne))\s+(?:[\w’'\-]+\s+){{0,4}}?(?:{ROLE_NOUNS}|{_DEMONYMS})"
    rf"(?:\s+(?:for|of|at)\s+(?:the\s+)?[\w’'\-]+(?:\s+[A-Z][\w’'\-]+){{0,3}})?"
    # "the Portuguese", "the 25-year-old Finn", "the experienced Greek"
    rf"|\b[Tt]he\s+(?:[\w’'\-]+\s+){{0,2}}?(?:{_BARE_DEMONYMS})\b)"
)
_SPEAKER = rf"(?P<speaker>{_DESCRIPTION}|{NAME}|{_PRONOUN})"
_VERB = rf"(?:(?:has|had|have|also|later|then|simply|previously|once|[a-z]+ly)\s+)?(?:{SPEECH_VERBS})"

# Attribution after a closing mark: `," Mourinho said`, `," said Mr Smith`, `," he added`.
# The words between the mark and the verb (or after the verb) are a "chunk" that holds the
# speaker, possibly behind a job title ("chief executive James Skinner") or before an
# apposition ("William Lerach, the lawyer leading the suit, said").
_AFTER_CHUNK_VERB = re.compile(rf"^[,.!?]?\s*[–—-]?\s*(?P<chunk>[^\"“”.;:!?]{{1,160}}?),?\s+{_VERB}\b")
_AFTER_VERB_CHUNK = re.compile(rf"^[,.!?]?\s*(?:{_VERB}|according\s+to)\s+(?P<chunk>[^\"“”.;:!?]{{1,120}})")
_LOWER_WORDS = r"(?:(?:[A-Z][\w’'\-]*['’]s\s+)?(?:[a-z][\w’'\-]*\s+|[A-Z][\w’'\-]+\s+){0,5}?)"
_ROLE_WORD = re.compile(rf"\b(?:{ROLE_NOUNS})\b", re.IGNORECASE)
_FULL_NAME = re.compile(r"\b[A-Z][a-z][\w’'\-]*\s+[A-Z][a-z][\w’'\-]*")
_CHUNK_NAME = re.compile(rf"^{_LOWER_WORDS}(?P<speaker>{NAME})$")
# A name written right after a job word at the end of a chunk: "… Statistics chief Li Deshui".
# Not an organisation's word ("the Swiss research group MiraLab" names a group, not a person).
_NAME_AFTER_ROLE = re.compile(
    rf"\b(?!(?:{'|'.join(sorted(ORGANISATION_ROLES))})\b)(?:{ROLE_NOUNS})\s+(?P<speaker>{NAME})$"
)
# Letters after a name that are not part of it: `Peter Ainsworth MP`, `Guy Mansfield QC`.
_POST_NOMINAL = r"(?:\s+(?:MP|MEP|MSP|QC|AM))?"
_POST_NOMINAL_END = re.compile(_POST_NOMINAL + "$")
_ARTICLE = re.compile(r"(?:The|A|An)\s")
# Attribution before an opening mark: `Ms Hewitt said: "`, `He told the BBC: "`.
# An apposition may sit between the name and the verb: `David Cameron, MP for Witney, added: "`,
# unless it is itself the name: `The Shadow Secretary for the Family, Theresa May, said: "`.
# A post-nominal stays outside the name: `Peter Ainsworth MP, said: "`.
_BEFORE = re.compile(
    rf"{_SPEAKER}{_POST_NOMINAL}(?:,\s+(?!(?:{NAME}),)[^,:;\"“”]{{1,120}},"
    # An apposition the writer did not close: `Mark Serwotka, the leader of the PCS union said: "`.
    rf"|,\s+(?:the|a|an|his|her)\s+[^,:;\"“”]{{1,80}}?(?=\s+{_VERB}))?,?\s+(?:(?!(?:he|she|they)\b)[a-z][\w’'\-]*\s+){{0,3}}?{_VERB}"
    rf"(?:\s+[^:\"“”]{{0,80}}?)?\s*[:,]\s*$"
)
# A full name and a comma right before the words ``_BEFORE`` took for the speaker.
_NAME_BEFORE_APPOSITION = re.compile(r"(?:^|[.!?]\s+|\s)(?P<speaker>[A-Z][\w’'\-]+\s+[A-Z][\w’'\-]+),\s+$")
# A sentence that introduces a quote with a colon: `He also praised the film director: "`.
_COLON = re.compile(rf"^\s*(?P<speaker>{NAME}|{_PRONOUN})(?:\s+himself|\s+herself)?\s+[^\"“”]{{0,120}}:\s*$")
# The verb before the name, opening the sentence: `Said Mr Bysshe: "`, `Added Ms Jones: "`.
_INVERTED = re.compile(
    rf"^\s*(?:Said|Says|Added|Adds|Explained|Explains|Continued|Continues|Insisted|Insists|Warned|Warns)"
    rf"\s+(?P<speaker>{NAME})\s*[:,]\s*$"
)
# A name alone before the colon, after at most a few words of job: `BBC Two controller Roly Keating: "`.
_NAME_COLON = re.compile(rf"^\s*(?:[\w’'\-]+\s+){{0,5}}?(?P<speaker>{NAME})\s*:\s*$")
# A quote a sentence's subject goes on to say: `Liam Fox derided the photo call, saying: "`.
_SAYING_COLON = re.compile(r",\s+(?:saying|adding|insisting|warning|declaring)\s*:\s*$")
_SUBJECT_OF_VERB = re.compile(
    rf"(?P<speaker>{NAME})(?:,[^,:;\"“”]{{1,110}},)?\s+(?:(?:has|had|also|\w+ly)\s+)?(?:\w+ed|{SPEECH_VERBS})\b"
)
_LEAD_IN = (
    r"(?:(?:And|But|Meanwhile|However|Separately|Earlier|Later|Instead|In a statement|In its report|Yesterday)[,]?\s+"
    # "Commenting on the delay to the albums, Mr Levy said that …": the person after the phrase.
    r"|(?:Commenting|Speaking|Writing|Responding|Talking|Referring|Turning|Asked)\b[^,\"“”]{0,120},\s+)*"
)
# A partial quote inside reported speech: `Mourinho later accused City of being "…"`.
_REPORTED = re.compile(
    rf"^\s*{_LEAD_IN}(?P<chunk>[^,\"“”]{{1,80}}?)(?:,(?P<apposition>[^,\"“”]{{1,110}}?),?)?\s+(?:(?:also|later|then|has|had|have|previously|once)\s+)?{_VERB}\b"
)
# An unnamed speaker as the subject of a sentence: `A spokesman for the British Phonographic
# Industry (BPI) said …`, `The BPI spokesman described …`.
_UNNAMED = (
    rf"(?P<who>(?:A|An|The)\s+(?:[\w’'\-]+\s+){{0,3}}?(?:spokesman|spokeswoman|spokesperson)"
    rf"(?:\s+(?:for|of|at)\s+(?:the\s+)?[A-Z][\w’'\-]*(?:\s+[A-Z][\w’'\-]*){{0,3}}(?:\s+\([A-Z]+\))?)?)"
    rf"(?:,[^,]{{1,100}},)?\s+(?:\w+\s+)?(?:{SPEECH_VERBS})\b"
)
_UNNAMED_AT_START = re.compile(_UNNAMED)
# An unnamed person as a sentence's subject ("One leading Karachi broker said", "However, one
# dealer, who asked not to be named, told Reuters").
_UNNAMED_ROLE_SUBJECT = re.compile(
    r"(?:^|[.!?][\"”]?\s+|\n)(?:(?:However|But|And|Meanwhile),?\s+)?(?P<who>(?:A|An|One|one|a|an)\s+(?:[\w’'\-]+\s+){0,3}"
    r"(?:dealer|broker|trader|analyst|economist|banker|source|insider|official|executive|spokesman|spokeswoman))\b"
)
_UNNAMED_SUBJECT = re.compile(rf"(?:^|(?<=[.!?])[\"”]?\s+|\n){_UNNAMED}")
# A verb of saying after a name: "Rennie admitted", "Rennie has also insisted", "Green,
# chairman of the group, says".
_SPEAKING_AFTER = re.compile(rf"(?:,\s+(?:the|an?|who|whose|[a-z]\w*)\b[^,\"“”.]{{0,120}})?,?\s+{_VERB}\b")
# A person described, not named, as the subject of a sentence of speech: `But the Frenchman said
# the race was not over.`, `In a furious response, the Chelsea boss said …`.
_DESCRIBED_SUBJECT = re.compile(
    rf"(?:^|[.!?][\"”]?\s+|\n|,\s+)(?:(?:But|And|However|Meanwhile|Later),?\s+)?"
    rf"(?P<who>[Tt]he\s+(?:[\w’'\-]+\s+){{0,3}}?(?:{ROLE_NOUNS}|{_DEMONYMS}|{_BARE_DEMONYMS}))"
    rf"\s+{_VERB}\b"
)
# A described person opening the one sentence right before a quote, whatever its verb: `The
# Motherwell keeper puts his longevity down to his diet. "…," he said.` is the keeper's (round 28).
_DESCRIBED_LEAD_IN = re.compile(
    rf"(?:^|[.!?][\"”]?\s+|\n)(?:(?:But|And|However|Meanwhile|Later),?\s+)?"
    rf"(?P<who>[Tt]he\s+(?:[\w’'\-]+\s+){{0,3}}?(?:{ROLE_NOUNS}|{_DEMONYMS}|{_BARE_DEMONYMS}))"
    rf"\s+(?:[a-z]+ly\s+)?[a-z]+\b[^.!?\"“”\n]*[.:]\s*$"
)
# A partial quote whose sentence is about a person saying it in other words:
# `Mr Marchionne is confident ..., saying ... GM's argument "has no legs"`.
_SAYING = re.compile(
    r"\b(?:saying|said|says|say|told|calling|called|describing|described|adding|warned|claimed|insisted|thanked|praised"
    r"|branded|dismissed|denied|denies|accused|accuses|likened|labelled|dubbed|attacked|criticised|urged|hailed)\b"
)

# Surnames that are also words ``NOT_PERSON_WORDS`` keeps out of names ("Brian May", "Mike Read").
_WORD_SURNAMES = frozenset({"may", "read"})
# Between a name and its verb: nothing but an auxiliary or an adverb ("Mr Bez has described").
_JUST_BEFORE_VERB = re.compile(r"\s+(?:(?:has|had|have|also|once|\w+ly)\s+)?")
_PASSIVE_BEFORE = re.compile(r"\b(?:was|were|is|are|been|being)\s+(?:\w+ly\s+)?$")
# A clause of a reported sentence with a speaker of its own: `…, but Tory Liam Fox said`.
_CONTRAST_CLAUSE = re.compile(rf"[,;]\s+(?:but|while|whereas)\s+(?P<chunk>[^,\"“”]{{1,60}}?)\s+{_VERB}\b")
# A verb of saying whose subject is a thing named just before it, not the sentence's subject:
# "a report which branded", "in a move branded".
_SAYING_OF_ANOTHER = re.compile(
    r"(?:\b(?:which|that)\s+\w+|\b(?:a|an|the)\s+[a-z][\w\-]*\s+(?:branded|dubbed|labelled|described|called|hailed))$"
)

# The person a newspaper or agency reports: `"…," the Interfax news agency quoted Mr
# Khodorkovsky as saying`, `"…," Arab News quoted Prince Saud as saying`.
_QUOTED_AS_SAYING = re.compile(
    r"^[,.!?]?\s*[^\"“”.;:!?]{1,80}?\bquoted\s+(?P<chunk>[^\"“”.;:!?]{1,60}?)\s+as\s+saying\b"
)

# Words credited with "from" and a full name: `a call for him to "pause for thought" from
# Charles Kennedy.` (two capitalised words and the end of the clause: not "from the album").
_FROM_PERSON = re.compile(r"^\s+from\s+(?P<speaker>[A-Z][a-z][\w’'\-]*\s+[A-Z][a-z][\w’'\-]+)\s*(?:[.,;]|$)")

# A person's own words written down: `"…," Mr Tanzi's statement said.` (Not "Mr Blair's
# spokesman", who is another person.)
_OWN_WORDS = re.compile(
    rf"(?P<speaker>{NAME})['’]s\s+(?:own\s+|written\s+|prepared\s+|brief\s+|short\s+)?"
    r"(?:statement|letter|message|note|website|blog|column|book|autobiography|memoir|e-?mail|diary)"
)

# Where an affiliation starts after a name: "Kirsten Pfeifer from the CEA", "Sarkozy of France".
_BEFORE_AFFILIATION = re.compile(
    r"\s+(?:quoted|speaking|told|at|of|for|from|in|on|who|with|after|before|during|when|while)\s"
)


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
            if text[index] not in '"“”':
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


class _Attributor:
    def __init__(self, text: str, paragraphs: list[Paragraph], segments: list[_Segment]) -> None:
        self.text = text
        self.paragraph_of = {p.number: p for p in paragraphs}
        self.segments = segments
        self.not_people = not_people(text, paragraphs)
        named = [self._explicit(s) for s in segments]
        self.people = People(
            text,
            [w for w, _, _ in named if w and w[0].isupper() and not _is_description(w)],
            self.not_people,
            [(s.start, s.end) for s in segments],
        )
        self.explicit = named

    def _explicit(self, segment: _Segment) -> tuple[str, str, int]:
        """(written speaker, how, where it is written) for the attribution next to a segment."""
        paragraph = self.paragraph_of[segment.paragraph]
        if segment.close_mark >= 0:
            found = self._after(segment, paragraph)
            if found:
                return found
        opens_at = sentence_start(self.text, segment.open_mark, paragraph.start)
        before = self.text[opens_at : segment.open_mark]
        offset = opens_at + len(before) - len(re.split(r"[\"“”]", before)[-1])
        before = re.split(r"[\"“”]", before)[-1]
        inverted = _INVERTED.match(before)
        if inverted and self._plausible(inverted.group("speaker")):
            return inverted.group("speaker"), "before", offset + inverted.start("speaker")  # `Said Mr Bysshe: "`
        # Try every word start: a rejected capitalised word ("But") must not hide the real
        # speaker right after it ("But a spokesman added:").
        for word in re.finditer(r"\b\w", before):
            match = _BEFORE.match(before, word.start())
            if match and IN_RELATIVE_CLAUSE.search(before, 0, match.start("speaker")):
                continue  # "The actor, whose films include … Star Wars: The Phantom Menace, said:"
            if match and self._plausible(match.group("speaker")):
                # `Colin Asplin, Blackpool Hotel Association said: "`: the organisation is the
                # person's, whose name comes before the apposition the writer did not close.
                organisation = self.not_people.vetoes(match.group("speaker"))
                person = organisation and _NAME_BEFORE_APPOSITION.search(before, 0, match.start("speaker"))
                if person and self._plausible(person.group("speaker")):
                    return person.group("speaker"), "before", offset + person.start("speaker")
                return match.group("speaker"), "before", offset + match.start("speaker")
        match = _COLON.match(before)
        if match and self._plausible(match.group("speaker")):
            return match.group("speaker"), "before", offset + match.start("speaker")
        bare = _NAME_COLON.match(before)
        if bare and not re.search(rf"\b(?:{SPEECH_VERBS})\b", before) and self._plausible(bare.group("speaker")):
            # `BBC Two controller Roly Keating: "`: a name and a colon, no verb.
            return bare.group("speaker"), "before", offset + bare.start("speaker")
        saying = _SAYING_COLON.search(before)
        if saying:
            # `Conservative co chairman Liam Fox derided the photo call, saying: "`: the subject.
            for subject in _SUBJECT_OF_VERB.finditer(before, 0, saying.start()):
                if self._plausible(subject.group("speaker")):
                    return subject.group("speaker"), "before", offset + subject.start("speaker")
        reported = self._reported(opens_at, segment.open_mark)
        if reported:
            return reported[0], "reported", reported[1]
        return "", "", -1

    def _reported(self, start: int, end: int) -> tuple[str, int] | None:
        """(speaker, offset) of the subject of a reported-speech sentence ``text[start:end]``."""
        sentence = self.text[start:end]
        match = _REPORTED.match(sentence)
        if not match:
            return None
        contrasts = list(_CONTRAST_CLAUSE.finditer(sentence, match.end()))
        contrast = contrasts[-1] if contrasts else None
        if contrast is not None:
            # "The Lib Dems say they will look at his plans, but Tory Liam Fox said his party offered
            # a "…"": the clause nearest the quote has a speaker of its own.
            speaker = self._speaker_in(contrast.group("chunk").strip())
            if speaker and not re.fullmatch(_PRONOUN, speaker):
                return speaker, start + contrast.start("chunk") + max(0, contrast.group("chunk").find(speaker))
        later = list(_SAYING.finditer(sentence, match.end()))
        if later and _SAYING_OF_ANOTHER.search(sentence, 0, later[-1].end()):
            # "Tessa Jowell has announced plans …, in a move branded a "…"", "… in the wake of a
            # report which branded the law as "…"": the words are whoever branded, not the subject's.
            return None
        apposition = (match.group("apposition") or "").strip()
        # `But the chairman of Migration Watch UK, Sir Andrew Green, said`: a name in the apposition
        # is the person the chunk describes, post-nominal or not (`…, Guy Mansfield QC has warned`).
        order = ("apposition", "chunk") if re.fullmatch(NAME + _POST_NOMINAL, apposition) else ("chunk", "apposition")
        for group in order:
            # `The woman's lawyer, Dolores M Troiani, said`: the name is in the apposition.
            chunk = (match.group(group) or "").strip()
            # `Nicolas Sarkozy of France said he …`, `William Corr of the Campaign for Tobacco-Free
            # Kids urged …`: the person before the affiliation, whose own names come last.
            speaker = self._speaker_in(_BEFORE_AFFILIATION.split(chunk)[0]) if chunk else ""
            if not speaker and chunk:
                speaker = self._speaker_in(chunk)
            if speaker:
                return speaker, start + match.start(group) + max(0, match.group(group).find(speaker))
        return None

    def _after(self, segment: _Segment, paragraph: Paragraph) -> tuple[str, str, int] | None:
        start = segment.close_mark + 1
        after = self.text[start : min(paragraph.end, start + 200)]
        after = re.split(r"[\"“”]", after)[0]
        closed_sentence = self.text[segment.close_mark - 1 : segment.close_mark] in (".", "!", "?")
        if closed_sentence and re.match(r"\s+[A-Z]", after):
            return None  # `…land." The company pointed out…`: a new sentence, not an attribution
        if re.match(r"\.\s+[A-Z]", after):
            return None  # `…politicians". Martin Bell, who won Tatton, said`: the full stop ends it
        source = _FROM_PERSON.match(after)
        if source and self._plausible(source.group("speaker")) and not self.not_people.vetoes(source.group("speaker")):
            return source.group("speaker"), "after", start + source.start("speaker")
        quoted = _QUOTED_AS_SAYING.match(after)
        if quoted:
            speaker = self._speaker_in(quoted.group("chunk"))
            if speaker:
                return speaker, "after", start + quoted.start("chunk")
        for pattern in (_AFTER_VERB_CHUNK, _AFTER_CHUNK_VERB):
            match = pattern.match(after)
            if not match or re.match(r"[^.;,]{0,60}:\s*(?:[\"“]|$)", after[match.end() :]):
                # `NAO head Sir John Bourn said: "…` introduces the next quote (a colon before
                # a title, "author of the Analysys report: Pushing Beyond …", does not).
                continue
            # `"A," said Joaquin Almunia, "but B."`: the comma before the quote goes on is no part of it.
            chunk = match.group("chunk").strip().rstrip(",")
            parts = re.split(r",\s+", chunk)
            head = parts[0].strip()
            described = _is_description(head)
            # The person before "from the Consumer Electronics Association", not the organisation;
            # else the name after a job ("said BA director of commercial planning, Robert Boyle").
            # (A described job before the name counts too: "said the festival's executive
            # director, Craig Prater" is Prater, not the description.)
            after_role = (
                [parts[1].strip()]
                if len(parts) == 2
                and _ROLE_WORD.search(head)
                and not _FULL_NAME.search(head)  # "on behalf of Robert Zoellick, US Trade Representative"
                and (described or not self._speaker_in(head))
                else []
            )
            # "National Bureau of Statistics chief Li Deshui told Reuters": the name after the job
            # comes before the organisation at the head of the chunk.
            # ("the 25-year-old Finn" is a description whole, not a job and the name "Finn".)
            after_job = None if described else _NAME_AFTER_ROLE.search(head)
            named_after_job = [after_job.group("speaker")] if after_job else []
            own_words = _OWN_WORDS.fullmatch(head)
            named_own_words = [own_words.group("speaker")] if own_words else []
            # "the chief executive of a leading European car maker": someone the writer does not
            # name, not a chief executive named earlier.
            before_affiliation = _BEFORE_AFFILIATION.split(head)[0]
            unnamed = re.search(r"\b(?:of|at|for|from)\s+an?\s", head) and _is_description(before_affiliation)
            plain = [] if unnamed else [before_affiliation]
            # A name after a described job comes before the description itself.
            rest = (*after_role, *plain, head) if described else (*plain, head, *after_role)
            candidates = (*named_own_words, *named_after_job, *rest)
            for candidate in candidates:
                speaker = self._speaker_in(candidate)
                if speaker:
                    return speaker, "after", start + after.find(speaker)
        return None

    def _speaker_in(self, chunk: str) -> str:
        """The speaker a chunk of attribution names, or "" when it names nobody."""
        if re.fullmatch(_PRONOUN, chunk) or chunk in ("it", "It"):
            return chunk
        # fullmatch: "the festival's executive director" is one description (not "the festival's
        # executive" and more), and "the 25-year-old Finn" is not "the 25-year-old" and a name.
        if re.fullmatch(_DESCRIPTION, chunk) and not re.fullmatch(NAME, chunk):
            return chunk
        if len(chunk.split()) > 8:
            return ""
        # "Guy Mansfield QC": a name alone with its post-nominal (not "the Salford MP").
        named = _POST_NOMINAL_END.sub("", chunk) if chunk[:1].isupper() and not _ARTICLE.match(chunk) else chunk
        match = _CHUNK_NAME.match(named)
        if match and self._plausible(match.group("speaker")):
            return match.group("speaker")
        return ""

    def _plausible(self, written: str) -> bool:
        """Reject a capitalised ordinary word ("Earlier", "The") taken for a name."""
        if re.fullmatch(_PRONOUN, written):
            return True
        if re.fullmatch(r"(?:(?:The|A|An)\s+)?[A-Z][\w’']*-[a-z][\w\-]*", written.strip()):
            return False  # "The Oscar-nominated actor … said": an adjective ("Ballymena-born")
        if " " in written.strip():
            return True
        if is_title_word(written.strip()):
            return False  # "Chairman of the Environmental Audit Committee Peter Ainsworth MP said:"
        if self._full_name_ending(written.strip()):
            return True  # "May said:" after "Guitarist Brian May", though "may" is also a word
        word = written.strip().lower()
        if word in STOPWORDS or word in NOT_PERSON_WORDS:
            return False
        # A name is capitalised everywhere; an ordinary word also appears in lower case.
        return not re.search(rf"\b{re.escape(word)}\b", self.text)

    def _full_name_ending(self, word: str) -> str:
        """For a surname that is also an ordinary word of the article ("may", "read"), the
        "<First> <word>" the article names someone by, with a first name that is never an
        ordinary lower-case word of it ("Brian May", but not "In May"); else ""."""
        ordinary = word.lower() in _WORD_SURNAMES or re.search(rf"\b{re.escape(word.lower())}\b", self.text)
        if not ordinary:
            return ""  # a proper noun only ("Paris", "Labour"): not this case
        for match in re.finditer(rf"\b([A-Z][a-z]+)\s+{re.escape(word)}\b", self.text):
            first = match.group(1)
            if first.lower() not in STOPWORDS and not re.search(rf"\b{first.lower()}\b", self.text):
                return match.group(0)
        return ""

    def resolve(self, written: str, where: int, group_span: tuple[int, int]) -> str:
        if written in ("it", "It"):
            return ""  # an organisation ("it noted"): attributed, but to no person we know
        inside = self.people.names_in(*group_span)
        # A pronoun refers back from where it is written, so names between it and the quote
        # ("he told ITV Wales' Waterfront programme:") are objects, not candidates.
        at = min(where, group_span[0]) if where >= 0 else group_span[0]
        if re.fullmatch(_PRONOUN, written):
            mention = self.people.reference_mention(at, inside, pronoun=written)
            unnamed = self._recent_unnamed(at)
            after = max(mention.start if mention else -1, unnamed[1] if unnamed else -1)
            described = self._recent_described(at, after, inside, written.lower())
            if described:
                # `The Chelsea boss said … He told reporters: "…"`: the person described.
                return described[0]
            if unnamed and (mention is None or unnamed[1] > mention.start):
                # `A spokesman for the BPI said … "…," he said.`, `However, one dealer … told
                # Reuters … "…," he said`: that unnamed person, not whoever was named before.
                return unnamed[0]
            if mention is None:
                return ""
            if self._named_beside_a_speaker(mention):
                # `Rennie admitted he had been worried. Ballantyne is out for a month and Paolo
                # Ferrante missed the game. "…," he said.`: the one reported speaking, not the
                # last of several people the sentence before names doing something.
                pronoun = written.lower()
                return (
                    self._speaking_since_last_quote(mention, at, inside, pronoun)
                    or self._opening_subject(mention, inside, pronoun)
                    or mention.name
                )
            return mention.name
        if _is_description(written):
            if re.match(r"(?i)(?:an?|one)\s", written):
                return written  # "a spokesman for the firm": a new, unnamed person
            resolved = self.people.description_holder(written, at, inside)
            if resolved is None:
                resolved = self._described_without_apposition(written, at, inside)
            if not resolved and written.split()[-1].lower() in ORGANISATION_ROLES:
                return ""  # "the company said": an organisation we cannot name; no guess
            return resolved or written
        name = self.people.canonical(self.not_people.person_inside(written) or written, at)
        if " " not in name and name.lower() in NOT_PERSON_WORDS:
            # "May said" of "Guitarist Brian May": a surname that is also a word ("may", "read")
            # is kept out of the article's full names, so find the full name here.
            return self._full_name_ending(name) or name
        return name

    def _described_without_apposition(self, written: str, at: int, inside: set[str]) -> str:
        """Whom a description no apposition of the article explains refers to, as "he said" would:
        `The Lancashire captain admitted he had considered his future. "…," the 31-year-old said`
        and `The Rangers boss said he had seen him play. "…," joked the former Hearts defender`
        (round 28) are the person the writer's sentence before was about, not whoever was
        named last."""
        mention = self.people.reference_mention(at, inside)
        described = self._recent_described(at, mention.start if mention else -1, inside, "", job=written)
        if described:
            return described[0]
        if mention is None:
            return ""
        # `But pundit Gary Tomkins believes Haverstock may be running out of time. "…," the
        # 44-year-old said.`: the pundit (round 28).
        # `But Marchal settled the tie ..., curling a free-kick ... after Aitken had been fouled.
        # "…," said the 27-year-old`: the one the sentence opens with (round 31), as for "he".
        if _AGE_ONLY.fullmatch(written.strip()) and self._named_beside_a_speaker(mention):
            return (
                self._speaking_since_last_quote(mention, at, inside, "")
                or self._opening_subject(mention, inside, "", first_word=True)
                or mention.name
            )
        return mention.name

    def _recent_described(
        self, before: int, after: int, exclude: set[str], pronoun: str, job: str = ""
    ) -> tuple[str, int] | None:
        """The person a description names ("the Chelsea boss", "the Frenchman") as the subject of
        the latest sentence of speech shortly before ``before``, or of the one sentence right
        before it whatever its verb, and where the description ends;
        None when there is none, it ends by ``after`` (someone named or unnamed spoke since), it
        names nobody known, or the article calls them the other of "he" and "she". Resolving
        the description is the costly part, so it is done last."""
        found = None
        for match in _DESCRIBED_SUBJECT.finditer(self.text, max(0, before - 500), before):
            found = match
        lead_in = _DESCRIBED_LEAD_IN.search(self.text, max(0, before - 300), before)
        if lead_in and (found is None or lead_in.start("who") > found.start("who")):
            found = lead_in
        if found is None or found.end("who") <= after or (job and _other_jobs(job, found.group("who"))):
            return None
        name = self.people.resolve_description(found.group("who"), found.start("who"), exclude)
        if not name or (pronoun in ("he", "she") and self.people.genders.get(name, pronoun) != pronoun):
            return None
        return name, found.end("who")

    def _named_beside_a_speaker(self, mention: Mention) -> bool:
        """Whether a mention is not the one speaking in a sentence that names others too."""
        return not self._speaks(mention) and self._among_others(mention)

    def _speaks(self, mention: Mention) -> bool:
        """Whether a mention is the subject of a verb of saying ("Rennie admitted")."""
        return bool(_SPEAKING_AFTER.match(self.text, mention.end))

    def _among_others(self, mention: Mention) -> bool:
        """Whether the sentence of a mention has other people as subjects too."""
        start = sentence_start(self.text, mention.start)
        end = sentence_end(self.text, mention.end, len(self.text))
        return len({m.name for m in self.people.mentions_in(start, end) if m.subject}) >= 2

    def _speaking_since_last_quote(self, last: Mention, before: int, exclude: set[str], pronoun: str) -> str:
        """The person last reported speaking, as a sentence's subject, in the 400 characters
        before ``before`` and after any other quote, when ``last`` (named after them) does not
        speak; "" when there is none or the pronoun does not fit them."""
        floor = max([before - 400, *(s.end for s in self.segments if s.end <= before)])
        speaking = [
            m
            for m in self.people.mentions_in(floor, last.start)
            if m.subject and m.name not in exclude and self._speaks(m)
        ]
        if not speaking:
            return ""
        name = speaking[-1].name
        if pronoun in ("he", "she") and self.people.genders.get(name, pronoun) != pronoun:
            return ""
        return name

    def _opening_subject(self, last: Mention, exclude: set[str], pronoun: str, first_word: bool = False) -> str:
        """The subject opening the sentence of ``last`` when ``last`` stands in a clause after
        "when", "as", "after" and the like: `Pryce was also unhappy with the referee's decision
        not to award a penalty when Morgan went down. "…," he said.` is Pryce's (round 26); ""
        when there is none or the pronoun does not fit them."""
        start = sentence_start(self.text, last.start, max(0, last.start - 400))
        first = next(
            (
                m
                for m in self.people.mentions_in(start, last.start)
                if m.subject and m.name not in exclude and m.name != last.name
            ),
            None,
        )
        if (
            first is None
            or first.start - start > 80
            # (With ``first_word``, the sentence opens with them: "But Marchal settled ...", not
            # "The deciding frame lasted 47 minutes, and McAllister missed ...".)
            or (first_word and not _OPENING_WORDS.fullmatch(self.text[start : first.start]))
            or not _SUBORDINATE_BEFORE_NAME.search(self.text[first.end : last.start])
        ):
            return ""
        if pronoun in ("he", "she") and self.people.genders.get(first.name, pronoun) != pronoun:
            return ""
        return first.name

    def _recent_unnamed(self, before: int) -> tuple[str, int] | None:
        """The latest unnamed speaker shortly before ``before``, and where its description ends
        (a name inside it, "Human Rights Watch" of "A spokeswoman for Human Rights Watch", is
        part of it): a spokesman who said something ("A spokesman for the BPI said"), or an
        unnamed person as a sentence's subject ("One leading Karachi broker")."""
        found = None
        for pattern in (_UNNAMED_SUBJECT, _UNNAMED_ROLE_SUBJECT):
            for match in pattern.finditer(self.text, max(0, before - 500), before):
                if found is None or match.end("who") > found[1]:
                    found = (match.group("who"), match.end("who"))
        return found

    def reported_before(self, segment: _Segment) -> str:
        """The speaker of reported speech in the sentence just before an unattributed quote.

        News prose often paraphrases someone and then quotes them without a new attribution:
        `Peter Chelsom said he was disappointed. "It's a shame."`
        """
        before = self._sentence_before(segment, ".!")  # not "?": a question is answered by another
        if before is None:
            return ""
        start, end = before
        # The sentence may hold a partial quote of the same person (`Mr Blair … said abortion was a
        # "difficult issue". "However much I dislike …"`): its subject comes before any mark.
        found = self._reported(start, end)
        if found:
            return self.resolve(found[0], found[1], (segment.open_mark, segment.end))
        return ""

    def _sentence_before(self, segment: _Segment, endings: str) -> tuple[int, int] | None:
        """(start, end) of the sentence right before a quote's opening mark, when it ends with one
        of ``endings``."""
        floor = max(0, segment.open_mark - 400)
        end = segment.open_mark
        while end > floor and self.text[end - 1].isspace():
            end -= 1
        if end <= floor or self.text[end - 1] not in endings:
            return None
        return sentence_start(self.text, end - 1, floor), end

    def subject_before(self, segment: _Segment) -> str:
        """The person the sentence just before an unattributed quote is about, as its subject:
        `But Gervais is keen for the project to be taken slowly. "A film will happen …"`."""
        before = self._sentence_before(segment, ".")
        if before is None:
            return ""
        start, end = before
        if re.search(r"[\"“”]", self.text[start:end]):
            return ""  # a sentence with a quote of its own is attributed by the rules above
        inside = self.people.mentions_in(start, end)
        # The subject may come after a clause or a long title ("… snapped up but Gervais is keen",
        # "But general secretary of the public services union Unison Dave Prentis criticised"):
        # within 80 characters of the start (40 left both unattributed; 80 changed nothing else
        # of the BBC corpus).
        if len(inside) != 1 or not inside[0].subject or inside[0].start - start > 80:
            return ""
        name = inside[0].name
        quoted = self.text[segment.open_mark : segment.end]
        # People rarely speak of themselves by name ("Bondi supplied us with …" is about him),
        # and an organisation the NER model knows is nobody's voice.
        if any(re.search(rf"\b{re.escape(part)}\b", quoted) for part in name.split()) or self.not_people.vetoes(name):
            return ""
        return name

    def saying_subject(self, segment: _Segment) -> str:
        """The person a sentence is about, when it reports them saying a partial quote."""
        paragraph = self.paragraph_of[segment.paragraph]
        start = sentence_start(self.text, segment.open_mark, paragraph.start)
        saying = _SAYING.search(self.text[start : segment.open_mark])
        if not saying or _PASSIVE_BEFORE.search(self.text[start : start + saying.start()]):
            return ""  # "Im was hailed for his "…"": the words are someone else's about him
        if _SAYING_OF_ANOTHER.search(self.text, start, start + saying.end()):
            return ""  # "… in a move branded a "…"": the words are whoever branded, not the subject's
        unnamed = _UNNAMED_AT_START.match(self.text, start)
        if unnamed and unnamed.end() <= segment.open_mark:
            return unnamed.group("who")
        for mention in self.people.mentions:
            if start <= mention.start < min(start + 80, segment.open_mark):
                return mention.name if mention.subject else ""
        return self._named_right_before_verb(start, segment.open_mark)

    def _named_right_before_verb(self, start: int, end: int) -> str:
        """The person named right before a verb of saying further into the sentence: "…, which
        Mr Harding described as "…"", "Development costs …, which Mr Bez described as "…"."""
        ending_here = [m for m in self.people.mentions if start <= m.end <= end]
        for verb in reversed(list(_SAYING.finditer(self.text, start, end))):
            for mention in ending_here:
                if mention.end <= verb.start() and _JUST_BEFORE_VERB.fullmatch(self.text[mention.end : verb.start()]):
                    return mention.name
        return ""


# What may stand before the subject opening a sentence: a conjunction or a sentence adverb.
_OPENING_WORDS = re.compile(r"\s*(?:(?:But|And|However|Yet|So|Then|Now|Still|Instead|Later|Earlier),?\s+)?")


def _is_description(written: str) -> bool:
    # "The Portuguese" is capitalised like a name, but no name starts with "The".
    return bool(re.fullmatch(_DESCRIPTION, written)) and (
        not re.fullmatch(NAME, written) or bool(re.match(r"(?:The|A|An)\s", written))
    )


def _other_jobs(written: str, described: str) -> bool:
    """Whether two descriptions name different jobs: "the chairman" is not "the new manager"
    (a standing or a nationality, "the Scot", "the 31-year-old", fits any job, and a past job,
    "the former Hearts defender", any job now)."""
    first, second = written.split()[-1].lower(), described.split()[-1].lower()
    if first == second or {first, second} <= SAME_JOB or re.search(r"(?i)\b(?:former|ex)\b", written):
        return False
    return is_title_word(first) and is_title_word(second)


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
        speaker, explicit = "", False
        for member in members:
            written, how, where = attributor.explicit[member]
            if written:
                speaker, explicit = _bare(attributor.resolve(written, where, span)), True
                if how == "reported":
                    partial_groups.add(group_id)
                break
        starts = _starts_sentence(text, first)
        if not explicit and starts:
            speaker = attributor.reported_before(first)
        if not explicit and not speaker and not starts:
            speaker = attributor.saying_subject(first)
            if speaker:
                partial_groups.add(group_id)
        if not explicit and not speaker and previous_speaker and first.paragraph - previous_paragraph <= 1 and starts:
            # Unattributed quote right after an attributed one: the same speaker goes on, as
            # in `"A," Mourinho said. "B."` or a quote paragraph following a quote paragraph,
            # unless someone else became the subject in between.
            # Names in the previous quote's own attribution clause (`Roy Asher, chief of
            # Hibernian Investment Managers, told Reuters.`) do not count.
            boundary = re.compile(r"[.!?][\"”]?\s").search(text, previous_end, first.open_mark)
            clause_end = boundary.end() if boundary else previous_end
            others = attributor.people.subjects_in(clause_end, first.open_mark) - {previous_speaker}
            # "However, one dealer, who asked not to be named, told Reuters …": an unnamed speaker
            # became the subject, so the named one does not go on.
            # (Looked for from the previous quote's last character: `… comfort zone." However, one
            # dealer …` starts a sentence right after the marks, which the boundary above skips.)
            unnamed = _UNNAMED_ROLE_SUBJECT.search(text[max(0, previous_end - 1) : first.open_mark])
            if not others and not unnamed:
                speaker = previous_speaker
        if not explicit and not speaker and starts:
            speaker = attributor.subject_before(first)
        if speaker and group_id not in partial_groups:
            previous_speaker = speaker
            previous_paragraph = segments[members[-1]].paragraph
            previous_end = segments[members[-1]].end
        elif explicit or group_id in partial_groups:
            previous_speaker = ""  # someone else spoke, or only reported speech: no run-on
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
    return not before or before[-1] in '.!?:\n"”' or text[segment.open_mark - 2 : segment.open_mark] == ", "


def _bare(speaker: str) -> str:
    """A speaker without a possessive ("Bill Conti's" written before "own words")."""
    return re.sub(r"['’]s$", "", speaker)
