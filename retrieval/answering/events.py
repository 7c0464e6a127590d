"""Events a story must report for a question about them to be answered from it.

"Why did Charles Kennedy stand down?", "Who took over from Terry Semel at Yahoo?", "When did
Britney Spears get divorced?": readers ask what happened next, and the library holds the story
as it stood before. The closest sentences are then about the person, not the event; a story
that reports the event uses one of its words (in some form), whatever else it paraphrases.
"""

from __future__ import annotations

import re

# Each group: the words of one kind of event, any of which a story reporting it would use.
_EVENTS = [
    # Leaving a post: "quit", "stood down", "resignation".
    re.compile(
        r"\b(?:resign\w*|quit\w*|(?:step|steps|stepped|stepping|stand|stands|stood|standing)\s+down"
        r"|retir\w*|ousted|sacked|sacking|fired|dismissed|departure"
        # Leaving somewhere, not what is "left independent" or "left unaffected".
        r"|(?:leaves|left)\s+(?:the|his|her|their|its|office|post|job|government|cabinet|parliament|power))\b",
        re.I,
    ),
    # Someone taking over: "replaced by", "his successor", "named as the new chief".
    re.compile(
        r"\b(?:replac\w*|succe(?:ed|eds|eded|eding|ssor|ssors|ssion)|(?:take|takes|took|taken|taking)\s+over"
        r"|new\s+(?:chief|boss|head|leader|chairman|president|manager|director|editor|guitarist|bassist|singer|drummer)"
        r"|appoint\w*)\b",
        re.I,
    ),
    # A trial's end: "found guilty", "cleared", "the verdict".
    re.compile(r"\b(?:verdict|convict\w*|acquit\w*|guilty|jail\w*|prison\w*|sentenc\w*|cleared)\b", re.I),
    # Charged with a crime, not a fee "charged each month" ("How much are residents charged ...?").
    re.compile(r"\b(?:arrest\w*|detained|held by police|charged(?=\s+(?:with|over|in\s+connection)\b|\s*\?))", re.I),
    # Not "their separate identity": the adjective is no separation.
    re.compile(r"\b(?:divorc\w*|split\s+up|separated|separation|separating)\b", re.I),
    # Set free; not a film's or a record's release ("How much will a new release cost to rent?").
    re.compile(r"\b(?:freed|set free|escaped|(?:was|were|been|be|being|get|got)\s+released)\b", re.I),
]


# An event that did not, may not or is still to happen is not one a story must report: "when he
# nearly quit snooker" ("I almost walked away"), "whether he'd step down" (the story has "my
# future"), "Is Hollmann going to quit?" ("I am not a man who runs away"), "did he say anything
# about quitting?" ("I will not walk away").
_NOT_HAPPENED = re.compile(
    r"\b(?:nearly|almost|whether|if|would|might|could|may|should|considering|consider|considered|thinking\s+of"
    r"|thoughts?\s+of|talk\s+of|threat(?:ened)?\s+to|going\s+to|will|set\s+to)\s+(?:\w+\s+){0,2}$"
    r"|['’]d\s+(?:\w+\s+){0,1}$"
    # Asked about, not said to have happened: "did Lareo say anything about quitting?" (round 30).
    r"|\b(?:anything|think|thinking|talk|talked|talking|speak|spoke)\s+about\s+(?:\w+\s+){0,1}$",
    re.I,
)


def asked_events(question: str) -> list[re.Pattern[str]]:
    """The kinds of event a question asks about as having happened (usually none)."""
    return [
        event
        for event in _EVENTS
        if any(not _NOT_HAPPENED.search(question, 0, match.start()) for match in event.finditer(question))
    ]


def unreported(events: list[re.Pattern[str]], story: str) -> bool:
    """Whether the story lacks the words of any event asked about."""
    return any(not event.search(story) for event in events)
