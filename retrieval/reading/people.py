"""Who is who in an article: person names, their mentions, and how later references resolve.

Byline has no named-entity model (none installs offline here), so people are found from the
cues that news writing always gives: honorifics, job titles before a name, being the subject
of a speech verb, and the full name introduced before the surname is used alone.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.reading.entities import NotPeople
from retrieval.reading.text import sentence_end, sentence_start

HONORIFICS = r"(?:Mr|Mrs|Ms|Miss|Dr|Sir|Dame|Lord|Lady|Baroness|Prof|Professor|Reverend|Rev|Sen|Gen|Judge)\.?"
_NAME_WORD = r"(?:[A-Z][a-z]*[’'])?[A-Z][\w’'\-]*[a-z][\w’'\-]*"
_PARTICLE = r"(?:de|da|di|del|van|von|der|den|le|la|bin|al|el|du|dos|ter)"
# Middle initials ("Walter M Phillips Jr", "Bruce L. Castor") belong to the name.
# A name never spans a line break (a headline above a paragraph is not a first name).
NAME = rf"(?:{HONORIFICS}[^\S\n]+)?{_NAME_WORD}(?:[^\S\n]+(?:{_PARTICLE}[^\S\n]+|[A-Z]\.?[^\S\n]+)?{_NAME_WORD}){{0,3}}"
_NAME_RE = re.compile(rf"\b{NAME}\b")

SPEECH_VERBS = (
    "said|says|added|adds|insisted|insists|admitted|admits|told|tells|explained|explains|"
    "claimed|claims|stated|states|argued|argues|warned|warns|noted|notes|continued|continues|"
    "asked|asks|replied|replies|stressed|stresses|declared|declares|commented|comments|"
    "revealed|reveals|confirmed|confirms|conceded|concedes|suggested|suggests|maintained|"
    "maintains|acknowledged|acknowledges|wrote|writes|joked|jokes|agreed|agrees|recalled|"
    "recalls|announced|announces|predicted|predicts|believes|believed|urged|urges|remarked|"
    "observed|responded|responds|complained|complains|boasted|promised|promises|vowed|vows|"
    "accused|accuses|described|describes|called|calls|defended|defends|pointed out|points out|"
    "say|tell|praised|praises|reiterated|countered|quipped|questioned|questions|concluded|concludes"
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
    "\\d+-year-old|man|woman|veteran|critic|campaigner|group|firm|company|report|statement|"
    # Sport's ways to name a player by standing: "the world number seven", "the top seed".
    "skipper|seed|favourite|number\\s+(?:one|two|three|four|five|six|seven|eight|nine|ten|\\d+)|"
    # Arts and media jobs: "The long-running presenter said:" is the Cat Deeley named before it.
    "presenter|host|broadcaster|comedian|musician|guitarist|drummer|bassist|frontman|rapper|"
    "novelist|writer|producer|journalist|editor|designer|chef|dj"
)

# Roles whose holder an article usually leaves unnamed ("a spokesman said ... the spokesman").
UNNAMED_ROLES = frozenset(
    """spokesman spokeswoman spokesperson spokespeople source sources insider official company
    firm group report statement""".split()  # noqa: SIM905
)

NOT_PERSON_WORDS = frozenset(
    """city united fc club league cup party government council ministry department bank
    commission association union corporation company group ltd inc plc news bbc street road
    trafford stadium centre center arena hall park university college school court house office agency board committee
    service trust fund institute market markets exchange airways airlines motors records
    studios pictures games festival awards award prize europe america britain england scotland
    wales ireland london paris monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november december the
    a an in on at for of and but or so if when while after before read more meanwhile however
    sources eyewitnesses premier champions world national labour conservative tory tories
    liberal democrats democrat republican republicans parliament commons lords senate congress
    olympic olympics grand prix internet web online microsoft apple google sony nintendo yahoo
    york angeles hong kong africa korea washington brussels beijing tokyo moscow berlin madrid
    rome dublin edinburgh glasgow cardiff belfast manchester liverpool birmingham leeds china
    japan india russia france germany italy spain iraq iran israel australia canada brazil
    mexico zealand arabia states kingdom downing whitehall westminster hollywood silicon valley
    wall city
    investments securities capital partners holdings international electronics communications
    systems technologies technology entertainment media networks network industries energy oil
    alliance federation foundation society chambers commerce organisation organization bureau
    authority reserve treasury airport airports telecom telecoms mobile pharmaceuticals software
    campaign chamber treaty
    later earlier without within speaking asked despite instead unlike until sea inside""".split()  # noqa: SIM905
)


@dataclass(frozen=True)
class Mention:
    """One place where a person is named, resolved to their canonical (full) name."""

    start: int
    end: int
    name: str
    subject: bool
    # Named where it cannot be the one speaking: after a preposition, or as what was said.
    aside: bool = False


_TITLE_WORDS = frozenset(
    """secretary minister president chancellor chairman chairwoman chief executive manager boss
    coach striker defender midfielder goalkeeper captain prime shadow deputy director governor
    mayor senator spokesman spokeswoman leader commissioner general analyst economist
    prosecutor attorney lawyer writer author director producer singer actor actress star
    founder head editor correspondent officer official presenter host guitarist drummer bassist
    musician comedian rapper designer
    sprinter athlete hurdler golfer jockey promoter batsman wicketkeeper referee umpire skipper
    flanker opener paceman spinner seamer all-rounder fly-half scrum-half full-back""".split()  # noqa: SIM905 (not words that are also surnames: Driver, Boxer, Hooker, Winger)
)

# Sentence-initial words that a capitalised run can swallow ("But David Frost said").
_LEADING_NOISE = frozenset(
    """but and or so yet however meanwhile former ex then now when while after before if also
    although though as at in on for of by with from to writer author director festival the a an
    this that these those his her their its rival other fellow
    american british english scottish welsh irish french german italian spanish dutch belgian
    swiss swedish danish norwegian finnish russian polish greek turkish japanese chinese korean
    indian pakistani australian canadian brazilian argentine mexican african european israeli
    iraqi iranian egyptian nigerian portuguese austrian hungarian czech
    croatian serbian ukrainian romanian bulgarian slovak slovenian bosnian ghanaian cameroonian
    senegalese ivorian moroccan algerian tunisian kenyan ethiopian zimbabwean zambian argentinian
    uruguayan chilean colombian peruvian jamaican bangladeshi samoan tongan fijian icelandic
    estonian latvian lithuanian
    us uk eu veteran leading top senior chief outgoing incoming acting
    agent backbencher broadcaster farmer constable speaker since judge judges
    substitute replacement trainer wing centre prop heavyweight cruiserweight middleweight
    welterweight lightweight featherweight bantamweight welshman scotsman englishman irishman
    frenchman yorkshireman""".split()  # noqa: SIM905
)


def is_title_word(word: str) -> bool:
    """A job title ("Chairman", "Spokesman") written with a capital: never a name by itself."""
    return word.lower() in _TITLE_WORDS


# Nationalities of two words written before a name ("South African Mokoena"; those of one word
# are leading noise).
_LEADING_NATIONALITY = re.compile(
    r"(?:South\s+African|Sri\s+Lankan|West\s+Indian|Costa\s+Rican|New\s+Zealand|Northern\s+Irish)\s+(?=[A-Z])"
)


def strip_honorific(name: str) -> str:
    """The bare name: no leading connective, honorific, or job title written before it."""
    tokens = name.strip().split()
    while len(tokens) > 1 and tokens[0].lower() in _LEADING_NOISE:
        tokens = tokens[1:]
    # "Liberal Democrat Paul Tyler", "Tories Ken Clarke": a party or place before a full name.
    while len(tokens) > 2 and tokens[0].lower() in NOT_PERSON_WORDS and tokens[1][:1].isupper():
        tokens = tokens[1:]
    # "SNP's Nicola Sturgeon", "Britain's Tony Blair", "Iron Maiden's Bruce Dickinson": whose the
    # person is comes before their name.
    owners = [i for i, token in enumerate(tokens[:-2]) if token.replace("’", "'").endswith("'s")]
    if owners:
        tokens = tokens[owners[-1] + 1 :]
    tokens = re.sub(rf"^{HONORIFICS}\s+", "", " ".join(tokens)).strip().split()
    for index in range(len(tokens) - 1, -1, -1):
        if tokens[index].lower() in _TITLE_WORDS:
            rest = tokens[index + 1 :]
            # "Jockey Club" is a body, not a job and a name.
            if not rest or not all(token.lower() in NOT_PERSON_WORDS for token in rest):
                tokens = rest
            break
    # "South African Mokoena", "Sri Lankan Kusal Amarasekera": a nationality before a name.
    nationality = _LEADING_NATIONALITY.match(" ".join(tokens))
    if nationality and len(tokens) > 2:
        tokens = tokens[2:]
    return " ".join(tokens)


_POSSESSIVE_END = re.compile(r"(?<=\w)['’]s$")


def without_possessive(name: str) -> str:
    """A name without the "'s" it was written with ("Okoro's" -> "Okoro")."""
    return _POSSESSIVE_END.sub("", name)


def _looks_like_person(candidate: str) -> bool:
    tokens = strip_honorific(candidate).replace("’", "'").split()
    if not tokens or tokens[0].lower() in {"the", "a", "an", "and", "but"}:
        return False
    # "Swiss-based Xstrata" is a company, wherever it is based.
    return not any(token.lower().strip("'s") in NOT_PERSON_WORDS or "-based" in token.lower() for token in tokens)


# What may open a sentence before the name of its subject: capitalised words and a job
# ("Wakefield coach ", "Saints manager "), nothing else ("Gilchrist also felt " is a sentence
# about Gilchrist).
_JOB_BEFORE_NAME = re.compile(rf"(?:(?:[A-Z][\w’'\-]*|{ROLE_NOUNS}|of|the)\s+){{0,4}}")

# A sentence's "he" or "she" reporting speech in a clause of its own ("..., and he admitted he had
# considered quitting", "... - he told refugees"); not the attribution closing someone's words
# ('Mr Blair's government was a "bossy ... government," he added': Mr Howard's).
_PRONOUN_SPEAKS = re.compile(
    r"(?:,\s*(?:and|although|but|though|while)|\s[-–—]+|;)\s+(?:he|she)\s+"
    r"(?:admitted|admits|said|says|revealed|insisted|added|told|explained|conceded|confessed)\b"
)
# "of France", "from the CEA": between a name and its verb, it leaves the name the subject.
_AFFILIATION = (
    r"\s+(?:of|from|at)\s+(?:the\s+)?[A-Z][\w’'\-]*(?:\s+(?:(?:for|of|and|on|the)\s+)*[A-Z][\w’'\-]*){0,5}\s+"
)
# A name that is the object of a preposition, with the capitalised words of an organisation
# between them ("of the Campaign for ", "at ", "of the so-called ").
_AFTER_PREPOSITION = re.compile(
    r"\b(?:of|for|at|from|with|by)\s+(?:the\s+)?(?:so-called\s+)?(?:[A-Z][\w’'\-]*\s+){0,4}"
    # ... and a job after them: "Kilbride was unhappy with Swedish referee Anders Lindqvist".
    rf"(?:(?:{ROLE_NOUNS}|referee|umpire|team-mate|teammate)\s+)?$"
)
# A verb of saying, which ends any apposition: "Bryn Caddick, said the champion had …".
_SAYING_WORD = re.compile(rf"\b(?:{SPEECH_VERBS})\b")
# Past tenses that do not end in -ed: "Swank, who won the Oscar for Boys Don't Cry, paid tribute".
_IRREGULAR_PAST = (
    r"(?:paid|made|gave|took|won|led|met|sent|spent|went|came|became|left|kept|felt|thought|brought|bought"
    r"|sold|held|spoke|wrote|saw|got|lost|found|chose|knew|stood|fell|drew|rose|struck|threw|began|ran"
    # Sport's: "although Mossop beat the count".
    r"|beat|hit|put|set|quit|shot|broke|drove|rode|fought|caught)\b"
)
# Present tenses of opinion that make the name before them its subject, as a past tense does:
# "Screen International's US editor Mike Goodridge thinks 2004's films …", "Prof Etzioni criticises".
_PRESENT_OPINION = (
    r"(?:thinks|feels|fears|hopes|wants|knows|expects|reckons|criticises|criticizes|accepts|denies|doubts"
    r"|blames|welcomes|wonders|worries|sees)\b"
)
# When something was said, between a name and its verb: "Mr Hilton on Tuesday said".
_WHEN = (
    r"(?:on\s+(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)(?:\s+(?:morning|afternoon|evening|night))?"
    r"|yesterday|last\s+(?:week|month|year|night)|this\s+(?:week|month|year|morning|afternoon|evening))"
)
# Words of a job that may stand between a verb of saying and the name it makes the speaker
# ("said chief executive officer John Woodward"); not "the" ("said the Special Advocates' concern").
# Whose job it is, before the job words: "Sun's", "Arsenal's", "the BBC's".
_EMPLOYER = r"(?:the\s+)?[A-Z][\w&\-]*(?:\s+[A-Z][\w&\-]*){0,3}"
_JOB_WORD = re.compile(
    rf"(?:{ROLE_NOUNS}|{'|'.join(sorted(_TITLE_WORDS))}|vice|deputy|senior|managing|general|former"
    # "chief operating officer", "assistant manager", "technical director"
    r"|operating|financial|technical|technology|information|creative|commercial|marketing|assistant|first-team|sporting)"
)
# "Speaking to the Radio Times, the Two Ronnies star said": the outlet is no speaker.
_SPOKEN_TO = re.compile(
    r"\b(?:[Ss]peaking|[Tt]alking|[Ww]riting)\s+(?:to|in|on|for)\s+(?:the\s+)?(?:[A-Z][\w’'\-]*\s+){0,3}$"
)
# Inside a clause about someone else: "Paul Jones, who sang hits such as Come Tomorrow, said".
IN_RELATIVE_CLAUSE = re.compile(
    r",\s+(?:who|which|whose)\s+(?:[^,.;:\"“”]*"
    # "The actor, whose films include Schindler's List, Michael Collins and Star Wars: The Phantom
    # Menace, said": a clause that lists things may hold commas and a title's colon.
    r"|[^,.;:\"“”]*\b(?:include|includes|included|including|such as)\b[^.;\"“”]*)$"
)
# "... said Charles was ...": a name right after a verb of speech and before a verb is what was said.
_REPORT_VERB_BEFORE = re.compile(rf"\b(?:{SPEECH_VERBS})\s+(?:that\s+)?$")
# "He told BBC Radio 4's Today programme that Mr Clarke had been …": the one spoken to may
# stand between the verb and "that".
_INSIDE_THAT_CLAUSE = re.compile(rf"\b(?:{SPEECH_VERBS})\s+(?:[^.!?;:\"“”]{{1,60}}?\s+)?that\b[^.!?;:\"“”]*$")
# A name inside a subordinate clause ("Mr Clarke said he had supported the plans when Mr Blunkett
# argued for them") is not who the sentence is about.
_SUBORDINATE_BEFORE = re.compile(
    r"(?:\b(?:when|while|after|before|because|since|although|though|until|unless|whereas)"
    # "Peter Zombic said he did not feel the situation was as "dramatic" as Mr Renner believed"
    # (a comparison; "His comments came as President Bush said" is a new subject).
    r"|\bas\s[^.!?]{1,40}\bas|\bthan)\s+$"
)
_SPEECH_VERB = re.compile(rf"\b(?:{SPEECH_VERBS})\b")
# A name that is the whole of a phrase in quote marks ("the Next Big Thing") is a label.
_QUOTED_LABEL_BEFORE = re.compile(r"[\"“](?:the\s+|a\s+|an\s+)?$", re.IGNORECASE)
_CLOSING_MARK = re.compile(r"[\"”]")
# "The" with a capital inside a sentence starts a title ("The Incredibles"), not a person's name.
_INSIDE_SENTENCE = re.compile(r"[^.!?\"“”\s]\s*$")
_FINITE_AFTER = re.compile(r"\s+(?:was|is|were|are|had|has|have|would|will|could|should|must|might)\b")


# Words for one job that reports use in turn: "Chelsea manager Jose Mourinho" is "the Chelsea boss".
SAME_JOB = frozenset({"manager", "boss", "coach"})
# Words before a job that make it another job: a deputy mayor is not "the mayor".
_RANK_QUALIFIERS = frozenset({"deputy", "vice", "assistant", "shadow", "former", "ex", "acting"})

# Honorifics that tell whether "he" or "she" can refer to a person.
_GENDERED_HONORIFIC = re.compile(r"\b(Mr|Mrs|Ms|Miss|Sir|Dame|Lord|Lady)\.?\s+([A-Z][\w’'\-]+)")
_FEMININE = frozenset({"mrs", "ms", "miss", "dame", "lady"})
# Words for a woman or a man written right before a name ("his mother Katherine Jackson",
# "actress Imelda Staunton"): the article's own word for who they are, not a guess from a first
# name. Only words that are never said of the other: not "chairman", not "actor".
_FEMININE_NOUNS = (
    "mother|wife|daughter|sister|actress|businesswoman|chairwoman|spokeswoman|congresswoman|sportswoman"
    "|policewoman|queen|princess|duchess|countess|baroness|girl|woman|grandmother|granddaughter|aunt|niece"
    "|widow|girlfriend|heiress|mum|stepmother|songstress|comedienne|ballerina"
)
_MASCULINE_NOUNS = (
    "father|husband|son|brother|businessman|congressman|sportsman|policeman|king|prince|duke|earl|boy|man"
    "|grandfather|grandson|uncle|nephew|widower|boyfriend|dad|stepfather"
)
_GENDERED_NOUN = re.compile(
    rf"\b(?:(?P<she>{_FEMININE_NOUNS})|(?P<he>{_MASCULINE_NOUNS}))(?:,)?\s+(?P<name>[A-Z][\w’'\-]+(?:\s+[A-Z][\w’'\-]+)*)"
)


class People:
    """The people of one article, built once per article from its text."""

    def __init__(
        self,
        text: str,
        speaker_names: list[str],
        not_people: NotPeople | None = None,
        quoted: Sequence[tuple[int, int]] = (),
    ) -> None:
        self.text = text
        self.not_people = not_people or NotPeople()
        # (start, end) of the words inside quote marks: a name there is in someone's speech, not
        # the reporter's, so never whom the reporter's "he" means.
        self._quoted = sorted(quoted)
        self._quoted_starts = [start for start, _ in self._quoted]
        self.full_names: list[str] = []
        self._collect_full_names(speaker_names)
        self.mentions = self._find_mentions()
        self.genders = self._genders()

    def _genders(self) -> dict[str, str]:
        """Each person's "he" or "she", where the article gives it by an honorific ("Ms Taylor",
        "Sir Digby") or a word for a woman or a man before the name ("his mother Katherine
        Jackson"); a surname shared by a man and a woman gives neither."""
        by_surname: dict[str, set[str]] = {}
        for match in _GENDERED_HONORIFIC.finditer(self.text):
            gender = "she" if match.group(1).lower() in _FEMININE else "he"
            by_surname.setdefault(match.group(2).replace("’", "'").removesuffix("'s"), set()).add(gender)
        for match in _GENDERED_NOUN.finditer(self.text):
            gender = "she" if match.group("she") else "he"
            words = match.group("name").replace("’", "'").split()
            by_surname.setdefault(words[-1].removesuffix("'s"), set()).add(gender)
        genders: dict[str, str] = {}
        for full in self.full_names:
            found = by_surname.get(full.split()[-1], set()) | by_surname.get(full.split()[0], set())
            if len(found) == 1:
                genders[full] = next(iter(found))
        return genders

    def _collect_full_names(self, speaker_names: list[str]) -> None:
        role_before = re.compile(rf"\b(?i:{ROLE_NOUNS}|prime minister|chief executive)\s+({NAME})")
        candidates: list[str] = list(speaker_names)
        for match in _NAME_RE.finditer(self.text):
            name = match.group(0)
            if re.match(HONORIFICS + r"\s", name) or len(name.split()) >= 2:
                candidates.append(name)
        for match in role_before.finditer(self.text):
            candidates.append(match.group(1))
        singles: list[str] = []
        for candidate in candidates:
            # "Bill Conti's job": Bill Conti. "Mr Brown's Budget" is no one's name.
            bare = without_possessive(strip_honorific(candidate))
            # "Under Mr Tellier" at the start of a sentence: the name begins at the honorific.
            inner_honorific = re.search(rf"\s(?={HONORIFICS}\s)", bare)
            if inner_honorific:
                candidate = bare[inner_honorific.end() :]
                bare = strip_honorific(candidate)
            if re.search(r"['’]s\s", bare):
                continue
            if len(bare.split()) >= 2 and _looks_like_person(bare) and bare not in self.full_names:
                self.full_names.append(bare)
            elif len(bare.split()) == 1 and re.match(HONORIFICS + r"\s", candidate) and _looks_like_person(bare):
                singles.append(bare)
        # "Lord Kinnock" with no full name anywhere: the surname alone is who they are.
        known_surnames = {full.split()[-1] for full in self.full_names}
        # "Sir Digby" after "Sir Digby Jones" is him, by the first name a knight is called by.
        known_firsts = {word for full in self.full_names for word in full.split()[:-1]}
        for single in dict.fromkeys(singles):
            if single in known_firsts:
                continue
            if single not in known_surnames and not any(one_edit_apart(k, single) for k in known_surnames):
                self.full_names.append(single)

    def canonical(self, written: str, before: int | None = None) -> str:
        """The full name a written reference ("Mourinho", "Mr Smith") stands for.

        When two people share a surname (Simon and Tony Cowell), the one mentioned most
        recently before ``before`` wins.
        """
        bare = strip_honorific(written) or written
        if bare in self.full_names:
            return bare
        last = bare.split()[-1] if bare.split() else bare
        matches = [full for full in self.full_names if full.split()[-1] == last]
        if not matches and len(bare.split()) == 1:
            matches = [full for full in self.full_names if bare in full.split()]
        if not matches and len(last) >= 5:
            # A misspelt surname ("Mr Barot" for Jacques Barrot) still means that person.
            matches = [full for full in self.full_names if one_edit_apart(full.split()[-1], last)]
        if len(matches) > 1 and before is not None:
            recent = [m.name for m in self.mentions if m.start < before and m.name in matches]
            if recent:
                return recent[-1]
        return matches[0] if matches else bare

    def _find_mentions(self) -> list[Mention]:
        surnames: dict[str, str] = {}
        firsts: dict[str, list[str]] = {}
        for full in self.full_names:
            surnames.setdefault(full.split()[-1], full)
            if len(full.split()) >= 2:
                firsts.setdefault(full.split()[0], []).append(full)
        found: list[Mention] = []
        for match in _NAME_RE.finditer(self.text):
            label_start = max(0, match.start() - 5)
            if _QUOTED_LABEL_BEFORE.search(self.text, label_start, match.start()) and _CLOSING_MARK.match(
                self.text, match.end()
            ):
                continue  # "make podcasting "the Next Big Thing"": a phrase in quote marks, nobody
            if match.group(0).startswith("The ") and _INSIDE_SENTENCE.search(
                self.text, max(0, match.start() - 5), match.start()
            ):
                continue  # "a podcast called The Daily Source Code", "Star Wars: The Phantom Menace"
            written = match.group(0)
            bare = without_possessive(strip_honorific(written))
            name = ""
            if not bare:
                continue
            if bare in self.full_names:
                name = bare
                # Two people with one surname (Simon and Tony Cowell): "Cowell" alone means
                # whichever of them was named in full most recently.
                surnames[bare.split()[-1]] = bare
            elif bare.split()[-1] in surnames and _looks_like_person(bare):
                name = surnames[bare.split()[-1]]
            elif bare in surnames:
                name = surnames[bare]
            elif len(firsts.get(bare, [])) == 1:
                name = firsts[bare][0]  # "His wife Sharon" after "Sharon Osbourne"
            if name:
                aside = self._in_affiliation_or_report(match.start(), match.end(), found[-1] if found else None)
                # "Mr Livingstone's comments were …": the possessor is not the subject.
                # ("Mr Blair's was asked": a slip for "Mr Blair was", the subject after all.)
                possessive = bool(_POSSESSIVE_END.search(written)) and not _FINITE_AFTER.match(self.text, match.end())
                subject = not aside and (
                    (possessive and self._possessor_speaks(match.start(), match.end()))
                    or (
                        not possessive
                        and (
                            self._is_subject(match.end())
                            or self._named_by_verb(match.start())
                            or self._opens_with_auxiliary(match.start(), match.end())
                        )
                    )
                )
                found.append(Mention(match.start(), match.end(), name, subject, aside))
        return found

    def _possessor_speaks(self, start: int, end: int) -> bool:
        """Whether a possessive opening its sentence names the one the sentence's "he" or "she"
        then reports speaking: "Redfearn's previous best finish was second at the 2002 Dutch Open,
        and he admitted he had considered quitting" is about Redfearn, who speaks (round 31)."""
        if self.text[sentence_start(self.text, start, max(0, start - 40)) : start].strip():
            return False
        return bool(_PRONOUN_SPEAKS.search(self.text, end, sentence_end(self.text, end, end + 300)))

    def _in_affiliation_or_report(self, start: int, end: int, previous: Mention | None) -> bool:
        """Whether a name stands where it is not the one speaking: in the affiliation of the
        person named just before ("William Corr of the Campaign for Tobacco-Free Kids urged", "Ann
        Simpson, marketing manager at Snappy Snaps believes"; but not "minister for Europe Denis
        MacShane said"), inside a relative clause ("Paul Jones, who sang hits such as Come
        Tomorrow, said"), or as the subject of what someone said ("... said Charles was one of
        his heroes")."""
        before = self.text[max(0, start - 110) : start]
        if IN_RELATIVE_CLAUSE.search(before) or _SPOKEN_TO.search(before):
            return True
        preposition = _AFTER_PREPOSITION.search(before)
        if preposition and previous is not None:
            at = start - len(before) + preposition.start()  # where the preposition stands in the text
            if previous.end <= at and not re.search(r"[.!?;:\"“”]", self.text[previous.end : at]):
                return True
        if _INSIDE_THAT_CLAUSE.search(before):
            return True  # "Lord Heseltine said that, despite their differences, Lord Callaghan became"
        if _SUBORDINATE_BEFORE.search(before) and _SPEECH_VERB.search(re.split(r"[.!?]\s", before)[-1]):
            # "Mr Clarke said he had supported the plans when Mr Blunkett argued for them": the
            # sentence's speaker came first. ("… come after Mr Blair told Labour members" has none.)
            return True
        return bool(_REPORT_VERB_BEFORE.search(before) and _FINITE_AFTER.match(self.text, end))

    def _named_by_verb(self, start: int) -> bool:
        """`," said Foxx` makes Foxx the speaker, the subject of what follows (but "told Gordon
        Brown", "asked Mr Howard" and "accused Fannie Mae" name the one spoken to or of); so does
        "came from" ("One dissenting opinion came from Brian Gammage … He said:")."""
        before = self.text[max(0, start - 80) : start]
        # "said chief executive officer John Woodward": job words may stand between verb and name,
        # after whose job it is ("said Sun's chief operating officer Jonathan Schwartz").
        verb = re.search(
            rf"\b(?P<verb>{SPEECH_VERBS}|came\s+from|comes\s+from)\s+(?:{_EMPLOYER}['’]s\s+)?"
            rf"(?P<job>(?:[a-z][\w\-]*\s+){{0,4}})$",
            before,
        )
        if not verb or not all(_JOB_WORD.fullmatch(word) for word in verb.group("job").split()):
            return False
        return not re.fullmatch(
            r"told|tells|tell|asked|asks|ask|accused|accuses|urged|urges|praised|praises|called|calls"
            r"|described|describes|defended|defends|questioned|questions|promised|promises",
            verb.group("verb"),
        )

    def _opens_with_auxiliary(self, start: int, end: int) -> bool:
        """Whether a name opening its sentence (after a job at most: "Wakefield coach Mark
        Penhall did not attempt to hide his anger") is followed by "did", "does", "must",
        "should" or "might", which make it the subject there (round 26). Further into a
        sentence they often follow a name that is no one's subject ("what had happened with
        Ball did not affect the album", "the tools in My Ask Jeeves should stop them")."""
        opens = sentence_start(self.text, start, max(0, start - 60))
        return bool(
            _JOB_BEFORE_NAME.fullmatch(self.text, opens, start)
            and re.match(r"\s+(?:did|does|must|should|might)\b", self.text[end : end + 12])
        )

    def _is_subject(self, end: int) -> bool:
        # "Nicolas Sarkozy of France said": an affiliation may stand between name and verb.
        after = self.text[end : end + 160]
        return bool(
            re.match(
                # ("Markopoulou, the favourite after running 7.12 in Athens, led": a number's
                # point or thousands comma ends no clause.)
                rf"\s*(?:(?:,(?:[^,.]|(?<=\d)[.,](?=\d)){{1,110}}){{1,2}},\s*|,\s*|{_AFFILIATION}"
                # "Mr Kennedy, whose party opposes the plan as "deeply flawed" said": a relative
                # clause the writer did not close with a comma.
                rf"|,\s+(?:who|whose)\b[^,.;:]{{1,110}}?\s+(?=(?:{SPEECH_VERBS})\b)"
                # "Peter Misselbrook, executive partner of Tods Murray said": an apposition the
                # writer did not close, right before a verb of saying.
                rf"|,\s+(?!(?:and|but|or|as|while|when|where|after|before|he|she|they|it|we|i|you)\b)[a-z][^,.;:\"“”]{{0,80}}?\s+(?=(?:{SPEECH_VERBS})\b)"
                # "Mr Herron   who gained fame as …   said": a dash apposition (the corpus writes
                # its dashes as three spaces).
                rf"|\s{{3}}[^.;:]{{1,200}}?\s{{3}}(?=(?:{SPEECH_VERBS})\b))?"
                # "Mr Hilton on Tuesday said": when it was said may stand between name and verb.
                rf"(?:{_WHEN}\s+)?"
                rf"(?:has |had |have |also |later |then |now |previously |recently |again |however )?"
                rf"(?:{SPEECH_VERBS}|was|is|has|had|will|would|"
                rf"could|can|\w+ed\b|{_IRREGULAR_PAST}|{_PRESENT_OPINION})",
                after,
            )
        )

    def reference_mention(
        self, before: int, exclude: set[str], window: int = 1500, pronoun: str = ""
    ) -> Mention | None:
        """The mention that ``resolve_reference`` picks, with where it stands.

        The most recent person in subject position wins. A name the NER model calls an
        organisation ("Mr Chernin told the FT that News Corp was finding it difficult") yields
        to a person in subject position earlier in the same sentence, and only there: the small
        model sometimes labels a person's name wrongly, and the rules alone were right then.
        For "he" or "she", a person the article calls the other ("Ms Taylor" for "he said") is
        no candidate.
        """
        wanted = pronoun.lower()
        recent = [
            m
            for m in self.mentions
            if before - window <= m.start < before
            and m.name not in exclude
            and not self._in_quote(m.start)
            and not (wanted in ("he", "she") and self.genders.get(m.name, wanted) != wanted)
        ]
        for index in range(len(recent) - 1, -1, -1):
            mention = recent[index]
            if not mention.subject or (
                wanted in ("he", "she") and not self._possessor(mention) and self._sentence_of_pronoun(mention, wanted)
            ):
                # (A possessor in subject position is the one its sentence's "he" speaks for.)
                continue
            if self.not_people.vetoes(mention.name):
                for earlier in reversed(recent[:index]):
                    if re.search(r"[.!?][\"”]?\s", self.text[earlier.end : mention.start]):
                        break
                    if earlier.subject and not self.not_people.vetoes(earlier.name):
                        return earlier
            return mention
        # No one in subject position: the latest person named, unless only as an aside.
        named = [m for m in recent if not m.aside] or recent
        return named[-1] if named else None

    def _possessor(self, mention: Mention) -> bool:
        return bool(_POSSESSIVE_END.search(self.text[mention.start : mention.end]))

    def _in_quote(self, position: int) -> bool:
        index = bisect.bisect_right(self._quoted_starts, position) - 1
        return index >= 0 and position < self._quoted[index][1]

    def _sentence_of_pronoun(self, mention: Mention, pronoun: str) -> bool:
        """Whether the mention's sentence belongs to someone called ``pronoun`` there: it opens
        with them ("And he repeated what a great man Gordon was") or is their reported speech
        ("And Tony Blair would be in the very front line, he said"). The pronoun then refers
        further back, past this mention: to whoever that sentence's "he" is."""
        start = sentence_start(self.text, mention.start, max(0, mention.start - 400))
        end = sentence_end(self.text, mention.end, mention.end + 400)
        sentence = self.text[start:end]
        if re.search(r"[\"“”]", sentence):
            return False  # a sentence with a quote is attributed by its own marks
        opens = re.match(
            rf"\s*(?:(?:And|But|So|Yet|Then|Now|Still|Instead|Later)\s+)?{pronoun}\s+[a-z]", sentence, re.IGNORECASE
        )
        reports = re.search(rf",\s+{pronoun}\s+(?:{SPEECH_VERBS})\b", sentence, re.IGNORECASE)
        return bool(opens or reports)

    def resolve_reference(self, before: int, exclude: set[str], window: int = 1500) -> str:
        """The person a pronoun or description used at ``before`` most likely refers to.

        News prose names the speaker as the subject of the sentence before "he said"; people
        named inside the quote itself are excluded because speakers rarely refer to themselves
        in the third person.
        """
        mention = self.reference_mention(before, exclude, window)
        return mention.name if mention else ""

    def resolve_description(self, description: str, before: int, exclude: set[str]) -> str:
        """Resolve "the City manager" via an apposition in the article, else by recency."""
        holder = self.description_holder(description, before, exclude)
        return self.resolve_reference(before, exclude) if holder is None else holder

    def description_holder(self, description: str, before: int, exclude: set[str]) -> str | None:
        """The person an apposition in the article gives the job of "the City manager"; "" for
        a job usually never named ("the spokesman"); None when no apposition gives it.

        Sport writes the same job several ways ("the Chelsea boss" of "Chelsea manager Jose
        Mourinho"), and a description's own name ("Chelsea") picks between two people with the
        job: the one named near it, else the first found."""
        words = [w for w in re.findall(r"[A-Za-z]+", description) if w.lower() not in {"the", "a", "an"}]
        if words:
            head = words[-1]
            heads = "|".join(sorted(SAME_JOB)) if head.lower() in SAME_JOB else re.escape(head.lower())
            qualifiers = [w for w in words[:-1] if w[0].isupper()]
            # A rank the description does not itself give ("deputy" of "the deputy mayor").
            other_ranks = _RANK_QUALIFIERS - {w.lower() for w in words}
            holders: list[str] = []
            for full in self.full_names:
                if full in exclude:
                    continue
                pattern = (
                    rf"(?:{heads})\s+(?:{HONORIFICS}\s+)?{re.escape(full)}"
                    rf"|(?P<apposed>{re.escape(full)}),\s+(?:the\s+)?[^,.]{{0,40}}\b(?:{heads})\b"
                )
                for match in re.finditer(pattern, self.text[:before], re.IGNORECASE):
                    # "the mayor" is not "Deputy Mayor Nicky Gavron" (nor "the shadow chancellor").
                    qualifier = re.search(r"(\w+)[\s-]+$", self.text[max(0, match.start() - 20) : match.start()])
                    if qualifier and qualifier.group(1).lower() in other_ranks:
                        continue
                    if match.group("apposed") and _AFTER_PREPOSITION.search(
                        self.text, max(0, match.start() - 60), match.start()
                    ):
                        continue  # "To an audience at Gateshead's Sage Centre, the chancellor said"
                    if match.group("apposed") and _SAYING_WORD.search(self.text, match.end("apposed"), match.end()):
                        continue  # "Bryn Caddick, said the champion had …" calls Caddick no champion
                    if self.not_people.vetoes(full):
                        break  # a place or a body is no one's job (asked only of a match: NER costs)
                    # The qualifier stands in the apposition's own sentence: "given Charlton an
                    # early lead. Magpies boss Iain McTavish" does not make McTavish Charlton's.
                    lead = self.text[max(0, match.start() - 40) : match.start()]
                    lead = re.split(r"[.!?][\"”]?\s+|\n", lead)[-1]
                    around = lead + match.group(0)
                    if not qualifiers or any(re.search(rf"\b{q}\b", around) for q in qualifiers):
                        return full
                    if full not in holders:
                        holders.append(full)
            # "The former Norwich defender said" is not "defender Ricky Stanford" of today's team:
            # a past job is only the apposition that names its club.
            if holders and not (qualifiers and re.search(r"(?i)\b(?:former|ex)\b", description)):
                # Two with the job and the description's club named by neither ("the Kilmarnock
                # manager" of "Killie boss Sandy Weir" beside "Falkirk manager Ally Murdoch"):
                # the one the sentences before are about, if one of them; else the first found.
                recent = self.resolve_reference(before, exclude) if len(holders) > 1 else ""
                return recent if recent in holders else holders[0]
            if head.lower() in UNNAMED_ROLES:
                return ""  # "the spokesman" is usually never named: do not guess a name
        return None

    def mentions_in(self, start: int, end: int) -> list[Mention]:
        """The mentions that start in ``text[start:end]``, in order."""
        return [m for m in self.mentions if start <= m.start < end]

    def subjects_in(self, start: int, end: int) -> set[str]:
        return {m.name for m in self.mentions_in(start, end) if m.subject}

    def names_in(self, start: int, end: int) -> set[str]:
        return {m.name for m in self.mentions_in(start, end)}


def one_edit_apart(a: str, b: str) -> bool:
    """True when ``b`` is ``a`` with one letter added, dropped or changed (same first letter)."""
    if a == b or a[:1] != b[:1] or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))
