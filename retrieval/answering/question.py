"""What a question asks: someone's words on a topic, who said something, or plain facts.

Also rewrites a follow-up ("and what did Guardiola say?") with what the earlier question in
the same conversation was about.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

MAX_QUESTION_CHARS = 2000

_LEAD = (
    r"^(?:and|but|so|ok|okay|also|then|hey|hi)?[\s,]*"
    # "After the Shakhtar game, what did Rennie say about Fairlie?": the occasion first (round 26).
    r"(?:(?P<occasion>(?:after|following|before|during|at|in|on|for)\s+[^,?]{3,60}),\s*)?"
)
_END = r"\s*[?.!]*$"
# Verbs of speech and opinion after "what did X ...". Not "mean": "What does W mean?" asks what
# a word means, not what someone said.
_SAY = (
    r"(?:say|said|tell|told|think|thought|claim|admit|reveal|comment|argue|insist|feel|add|predict"
    r"|suggest|warn|believe|want|hope|promise|expect|reckon|make|have\s+to\s+say|write|wrote|announce|call)"
)
# What joins a speaker to a topic; "after" and "when" keep the event as (part of) the topic.
_PREP = r"(?:about|on|of|regarding|concerning|after|over|when|to|re|at|in|during|for|with|that|as)"
_TOPIC = rf"(?:\s+{_PREP}\s+(?P<topic>.+?))?"
# A person's name as askers type it: up to three capitalised words ("Roy Penfold", "Whitcombe").
SHORT_NAME = r"[A-Z][\w’'\-]+(?:\s+[A-Z][\w’'\-]+){0,2}"
# Opinion nouns: "What was X's view on Y?", "What warning did X give about Y?"
_OPINION = (
    r"(?:comments?|remarks?|words|reactions?|quotes?|views?|response|take|opinion|opinions|verdict|position"
    r"|stance|thoughts|assessment|message|warning|warnings|advice|explanation|excuse|justification|defen[cs]e"
    r"|argument|arguments|prediction|predictions|promise|criticism|concerns?|fears?|hopes?|answer|reply"
    r"|point|case|reasoning|reason|feelings|attitude|outlook|forecast|plea|claim|claims|explanation|impressions?"
    # Not "complaint": "What did Ofcom rule on the Muslim Council of Britain's complaint …?" asks
    # for a ruling (natural questions, seen parts: it cost one such question and gained none).
    r"|worry|worries|gripes?|misgivings|objections?)"
)
_REACT = (
    r"(?:react|respond|reply|feel|describe|explain|justify|defend|view|see|sum\s+up|characteri[sz]e|rate"
    r"|assess|judge|rationali[sz]e|account\s+for|answer|greet|welcome|dismiss|criticise|criticize|joke|quip"
    # ("How does the UK compare with Germany?" measures the UK; "How did Blair compare Brown to
    # ..." is Blair's words.)
    r"|talk|speak|pay\s+tribute|sound|put\s+it|reflect|look\s+back|say|praise|compare(?!\s+(?:with|to|against)\b)"
    r"|read|interpret|portray"
    r"|recall|remember"
    # "How did Whitmarsh stick up for Hadfield?" (round 29)
    r"|stick\s+up\s+for|stand\s+up\s+for|play\s+down|brush\s+off|hit\s+back)"
)
# "Was X hopeful about Y?": a stance the person voiced.
_STANCE = (
    r"(?:hopeful|happy|unhappy|worried|optimistic|pessimistic|confident|concerned|pleased|angry|upset|critical"
    r"|positive|negative|keen|sure|satisfied|disappointed|surprised|excited|sorry|proud|nervous|sceptical"
    r"|skeptical|supportive|opposed|against|in\s+favou?r\s+of|bullish|gloomy|relaxed|frustrated|impressed|furious)"
)
# Jobs a person is named with ("the Villa physio Sandra Pell", "technical director Meulenbelt").
_NAMED_JOBS = (
    r"(?:physio|physiotherapist|doctor|director|manager|boss|coach|trainer|captain|skipper|chairman"
    r"|chairwoman|chief|executive|spokesman|spokeswoman|president|secretary|minister|agent|owner|promoter"
    r"|referee|pundit|team-mate|teammate)"
)
_SPEAKER_PATTERNS = [
    # What did X say about Y? / What else has X said? / What did X think of Y?
    re.compile(
        # (Not "What was Pilbeam's view on whether Winterbourne could get an England call?", round 26.)
        _LEAD + r"what\s+(?:else\s+|exactly\s+)?(?:did|does|do|has|have|had|would|will|is|was)\s+"
        rf"(?P<who>(?:(?!['’]s\s+(?:[\w\-]+\s+)?{_OPINION}\b).)+?)\s+"
        rf"(?:have\s+to\s+)?(?:actually\s+|really\s+)?{_SAY}(?:\s+of)?{_TOPIC}{_END}",
        re.I,
    ),
    # What did X say was the biggest impact? / What did X tell the crowds?
    re.compile(
        _LEAD + r"what\s+(?:else\s+)?(?:did|does|do|has|have|had)\s+(?P<who>.+?)\s+"
        r"(?:say|said|tell|told|reckon|think|believe|expect|claim|predict|hope|want|fear|warn|suggest|admit|insist)"
        r"\s+(?P<claim>.+?)" + _END,
        re.I,
    ),
    # What problems did X say were weighing on firms? (a noun asked for, then what X said of it)
    re.compile(
        _LEAD + r"what\s+(?:[a-z][\w\-]*\s+){1,2}(?:did|does|has|had)\s+(?P<who>.+?)\s+"
        r"(?:say|said|think|believe|expect|claim|predict|warn)\s+(?P<claim>.+?)" + _END,
        re.I,
    ),
    # How did X think Y could help Z? (what X thinks, in their words)
    re.compile(
        _LEAD + r"how\s+(?:did|does|do)\s+(?P<who>.+?)\s+(?:think|believe|expect)\s+(?P<claim>.+?)" + _END,
        re.I,
    ),
    # How did X react to Y? / How did X react when ...? / How did X describe Y?
    re.compile(
        _LEAD + rf"how\s+(?:did|does|do|has|have|had|was|is|would)\s+(?P<who>.+?)\s+{_REACT}"
        rf"(?:\s+(?:to|about|on|at|when|after|over)\b)?(?:\s+(?P<topic>.+?))?{_END}",
        re.I,
    ),
    # Why did X say Y? / Why does X think Y?
    re.compile(
        _LEAD + r"why\s+(?:did|does|do|has|have|had|is|was)\s+(?P<who>.+?)\s+"
        r"(?:say|think|believe|claim|argue|warn|insist|want|feel|suggest|predict|call|describe|criticise|criticize"
        r"|reckon|fear|hope)"
        r"(?:\s+(?:that|about|on|of)\b)?\s+(?P<claim>.+?)" + _END,
        re.I,
    ),
    # What warning did X give about Y? / What advice did X have for Y? / What reason did X give?
    re.compile(
        _LEAD + rf"(?:what|which)\s+(?:kind\s+of\s+|sort\s+of\s+)?{_OPINION}\s+(?:did|does|do|has|have|had)\s+"
        r"(?P<who>.+?)\s+(?:have|give|offer|issue|make|express|raise|share|sound|deliver|provide|voice|put\s+forward"
        r"|send|hold|get|say)(?:\s+(?:for|about|on|to|over|regarding|of|when|after|as|in)\b)?"
        r"(?:\s+(?P<topic>.+?))?" + _END,
        re.I,
    ),
    # What was X's view on Y? / X's reaction to Y? / What's X's take on Y? (Not "How much did
    # Ocean's Eleven take on its first weekend?": a quantity question is never this one.)
    re.compile(
        _LEAD + r"(?!how\s+(?:much|many|long|big|far|often|old|fast)\b)"
        r"(?:what\s+(?:were|are|was|is)\s+|what['’]s\s+|how\s+(?:was|is)\s+)?(?P<who>.+?)['’]s?\s+"
        rf"(?:[\w\-]+\s+)?{_OPINION}"
        # ("What's Wilson's take now on being sold?", round 27.)
        r"(?:\s+(?:now|today|these\s+days|then|really|exactly))?"
        # ("What's Thornbury's attitude going into the replay?", round 31.)
        r"(?:\s+(?:on|about|to|of|over|regarding|for|after|when|at|in|if|that|whether|going\s+into|heading\s+into"
        r"|ahead\s+of|before)\s+(?P<topic>.+?))?" + _END,
        re.I,
    ),
    # Did X say anything about Y? / Has X commented on Y? / Did X have anything to say about Y?
    re.compile(
        _LEAD + r"(?:did|has|have|does|had)\s+(?P<who>.+?)\s+(?:say|said|comment|commented|talk|talked|speak|spoken"
        r"|spoke|mention|mentioned|have\s+anything\s+to\s+say|give\s+(?:a|any)\s+(?:view|comment|reason)"
        # "Did X have any complaint about the stoppage?" asks for their words (round 28).
        r"|have\s+(?:a|any)\s+(?:complaints?|regrets?|qualms|criticism|doubts|concerns|sympathy))"
        r"(?:\s+(?:anything|something|much))?(?:\s+(?:about|on|regarding|over|when|after|of|how|whether|why|if)\s+"
        r"(?P<topic>.+?))?" + _END,
        re.I,
    ),
    # Did X think the fans could stop Glazer? / Does X believe ...? / Did X say his side would sit deep?
    re.compile(
        _LEAD + r"(?:did|does|do|has|had)\s+(?P<who>.+?)\s+(?:think|believe|expect|feel|reckon|predict|warn|claim|say"
        r"|admit|concede|accept|acknowledge|deny|agree|accuse|blame|criticise|criticize|praise|insist|suggest|complain"
        r"|regret)"
        r"(?:\s+that)?\s+(?P<claim>.+?)" + _END,
        re.I,
    ),
    # Why was X so angry about Y? / Why is X happy to ...? (the reason is in their words, round 26)
    re.compile(
        _LEAD + rf"why\s+(?:was|is|were|are)\s+(?P<who>.+?)\s+(?:so\s+|very\s+|really\s+)?{_STANCE}"
        r"(?:\s+(?:about|with|of|that|over|on|for|to|when|after|by)\s+(?P<topic>.+?))?" + _END,
        re.I,
    ),
    # How worried was X about Y? (round 27)
    re.compile(
        _LEAD + rf"how\s+{_STANCE}\s+(?:was|is|were|are)\s+(?P<who>.+?)"
        r"(?:\s+(?:about|with|of|that|over|on|for|to|when|after|by)\s+(?P<topic>.+?))?" + _END,
        re.I,
    ),
    # Was X hopeful about Y? / Is X worried that ...?
    re.compile(
        _LEAD + rf"(?:was|is|were|are)\s+(?P<who>.+?)\s+(?:very\s+|really\s+|at\s+all\s+)?{_STANCE}"
        r"(?:\s+(?:about|with|of|that|over|on|for|to)\s+(?P<topic>.+?))?" + _END,
        re.I,
    ),
    # What worries X about Y? / What pleased X about Y?
    re.compile(
        _LEAD + r"what\s+(?:worries|worried|concerns|concerned|bothers|bothered|annoys|annoyed|excites|excited"
        r"|pleases|pleased|upsets|upset|angers|angered|frustrates|frustrated)\s+(?P<who>.+?)"
        r"\s+(?:about|in|with|over)\s+(?P<topic>.+?)" + _END,
        re.I,
    ),
    # Quotes from X about Y / According to X, ...
    re.compile(
        _LEAD + r"(?:any\s+)?(?:quotes?|comments?)\s+(?:from|by)\s+(?P<who>.+?)"
        r"(?:\s+(?:about|on)\s+(?P<topic>.+?))?" + _END,
        re.I,
    ),
    # "Is Whitcombe planning to sign a stopgap?", "Would Rutherford hand Moffat a new deal?": what
    # a person means to do is in their words (a name of up to three capitalised words, without
    # "the": not "Is the merger going to go ahead?"; round 29).
    re.compile(
        rf"^(?i:is|was|are|were)\s+(?P<who>{SHORT_NAME})\s+"
        r"(?:planning|going|set|ready|willing|prepared|keen|hoping|intending)\s+to\s+(?P<claim>.+?)" + _END
    ),
    re.compile(
        rf"^(?i:would|will)\s+(?P<who>{SHORT_NAME})\s+"
        r"(?P<claim>(?:hand|give|offer|sign|sell|let|allow|consider|accept|quit|leave|stay|stand\s+down|step\s+down"
        r"|resign|retire|appeal|apologise|apologize)\b.+?)" + _END
    ),
    # "How is Lenczyk coping, according to the Villa physio Sandra Pell?": the words of a person
    # named with their job (not "according to the Observer", "according to Ofcom" or "analysts
    # Gartner": a paper, a body and a plural are no one's quotes; round 29).
    re.compile(
        _LEAD + r"(?P<claim>.+?),?\s+[Aa]ccording\s+to\s+"
        r"(?P<who>(?:(?:the|their|his|her|its)\s+)?(?:[\w’'\-]+\s+){0,2}?"
        rf"(?i:{_NAMED_JOBS})\s+(?:[A-Z][\w’'\-]*)(?:\s+[A-Z][\w’'\-]*){{0,2}})" + _END,
    ),
]
# "Who said …", "Which Ask Jeeves executive said …", "In the row over Sins, who said …": the
# person asked for, by what they said (a role of up to five words after "which": "Which Hollywood
# star at the Baftas said"), with an aside before the verb ("Which cabinet minister, asked about
# the email, joked ...") or after it ("Who said, when quitting his band, that ...").
_WHO_SAID = re.compile(
    _LEAD + r"(?:[^,?]{3,80},\s+)?(?:who(?:\s+(?:at|from|in)\s+(?:the\s+)?[\w’'\-]+(?:\s+[\w’'\-]+){0,3}?)?"
    r"|which(?:\s+(?!(?:was|is|were|are|has|have|had|did|does)\b)[\w’'\-]+){1,5}?)(?:,[^,?]{3,80},)?\s+"
    r"(?:said|says|claimed|claims|called|described|admitted|insisted"
    r"|complained|accused|warned|warns|argued|argues|suggested|predicted|believes|believed|thinks|thought|told|joked"
    r"|compared|dismissed|criticised|criticized|praised|questioned|reckons|reckoned|remarked|declared|stated|vowed"
    r"|promised|urged|admits|likened|thanked|talked|spoke|asked|used(?!\s+to\b)|explained|blamed|welcomed"
    r"|branded|hailed|conceded|attacked|condemned"
    # Verbs of a stance that writers use for a quote's gist ("Which manager brushed off
    # questions about his job?"); in every natural file "which/who refused to" asks for a quote.
    r"|(?:brushed|shrugged|laughed)\s+off|played\s+down|hit\s+back\s+at|mocked|ridiculed|boasted|bragged"
    r"|threatened|tipped|refused|rejected|dismisses|lamented|confessed|apologi[sz]ed|pledged|scoffed|rubbished"
    r"|slammed|defended|backed|quipped|(?:heaped|lavished)\s+praise|paid\s+tribute|poured\s+scorn|(?:hit|lashed)\s+out"
    r"|fumed|raged|gushed|enthused)(?:,[^,?]{3,80},)?\s+" + r"(?:that\s+)?(?P<topic>.+?)" + _END,
    re.I,
)
_SHORT_FOLLOW_UP = re.compile(
    _LEAD + r"(?:what\s+about|how\s+about)?\s*(?P<who>[A-Z][\w’'\-]+(?:\s+[A-Z][\w’'\-]+)*)\s*\?*$"
)
# "and about spam?", "what about the prices?", "how about on security?": a new topic for the
# same speaker (a capitalised name after "what about" is a new speaker, above, instead).
_TOPIC_FOLLOW_UP = re.compile(
    _LEAD + r"(?:(?:what|how)\s+)?(?:about|on|regarding|concerning)\s+(?:(?:about|on)\s+)?(?P<topic>.+?)" + _END,
    re.I,
)
_FOLLOW_UP_WORDS = 8
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
    # The topic is what the person said, not an event they spoke about: "Why did Katherine
    # Jackson say her son is not guilty?" asks for her words, not for a verdict.
    topic_is_claim: bool = False

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
        # A "who said" question is searched as a whole: the words before "said" often name the
        # story ("In the Bill Cosby case, who said ...", "Which Maldives official said ...").
        return self.text


def normalise(question: str) -> str:
    """Whitespace and invisible characters cleaned; what the user typed otherwise kept."""
    cleaned = "".join(ch for ch in question if ch.isprintable() or ch in " \t\n")
    return re.sub(r"\s+", " ", cleaned).strip()


# "Is Hollmann going to quit Hamburg? What did he say?": a question, then a request for the words
# of the person it names (round 27).
_THEN_WHAT_DID_HE_SAY = re.compile(
    r"^(?P<first>[^?]+)\?\s*(?:and\s+)?what\s+(?:did|has|does)\s+(?:he|she)\s+(?:say|said)(?:\s+about\s+it)?\s*\??$",
    re.I,
)


def _then_what_did_they_say(text: str) -> Question | None:
    """ "Is Hollmann going to quit Hamburg? What did he say?" as Hollmann's words on going to quit
    Hamburg: the first name after the first word, and the rest of the first question; None when
    the question is not of that shape or names no one."""
    compound = _THEN_WHAT_DID_HE_SAY.match(text)
    if not compound:
        return None
    first = compound.group("first")
    named = re.search(r"(?<=\s)[A-Z][\w’'\-]+(?:\s+[A-Z][\w’'\-]+)*", first)
    if not named:
        return None
    rest = re.sub(r"\s+", " ", first[: named.start()] + first[named.end() :]).strip()
    topic = re.sub(r"^(?:is|was|will|would|did|does|has|had|are|were|could)\s+", "", rest, flags=re.I)
    return Question(text, "speaker", named.group(), _clean_topic(topic))


def parse(question: str) -> Question:
    text = normalise(question)
    compound = _then_what_did_they_say(text)
    if compound is not None:
        return compound
    for pattern in _SPEAKER_PATTERNS:
        match = pattern.match(text)
        if match:
            who = _clean_who(match.group("who"))
            if who:
                # A pattern names its topic "claim" where it is the content of what was said
                # ("What did X say was …", "Why did X say …", "Did X think …").
                found = match.groupdict()
                topic = _clean_topic(found.get("topic") or found.get("claim") or "")
                if found.get("occasion"):
                    topic = f"{topic} ({found['occasion']})" if topic else found["occasion"]
                return Question(text, "speaker", who, topic, topic_is_claim="claim" in found)
    match = _WHO_SAID.match(text)
    if match:
        return Question(text, "who_said", topic=_clean_topic(match.group("topic")))
    return Question(text, "general")


def may_name_someone(who: str) -> bool:
    """Whether the "X" of "what did X say" may be a person or body whose words are asked for.
    "what did the report say about ..." (no capital) and "How did the UK's broadband take-up per
    100 people compare with ...?" (a number, more than five words) ask plain questions."""
    words = who.split()
    return any(w[:1].isupper() for w in words) and not any(ch.isdigit() for ch in who) and len(words) <= 5


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
    topic_only = _TOPIC_FOLLOW_UP.match(question.text)
    if (
        question.kind == "general"
        and topic_only
        and previous.kind == "speaker"
        and len(question.text.split()) <= _FOLLOW_UP_WORDS
    ):
        # "and about spam?" after "what did Bill Gates say?": Gates's words on spam, never
        # anyone else's (answered as a general question it quoted whoever mentioned spam).
        return Question(question.text, "speaker", previous.who, _clean_topic(topic_only.group("topic")))
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
