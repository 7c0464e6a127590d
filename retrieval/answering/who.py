"""Who a speaker question means: the stored speakers that a name, as people write it, refers to.

People name someone after their organisation ("Bank of America's Robert Sinche"), before an
affiliation ("Oliver Irsh from Stuff magazine"), with a job ("the Aston Martin boss Ulrich
Bez"), by surname alone or with a typo; the library stores speakers as the articles name them.
This module maps one onto the other; ``speaker.py`` then ranks the quotes of those found.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from retrieval.answering.names import letters_swapped
from retrieval.reading.people import SAME_JOB, is_title_word, one_edit_apart
from retrieval.reading.text import search_tokens, without_accents

if TYPE_CHECKING:
    from retrieval.ports import Corpus

# Words that are never part of how a stored speaker is named.
_NOT_NAME_WORDS = frozenset(
    """the a an mr mrs ms miss dr sir dame lord lady prof professor rev reverend""".split()  # noqa: SIM905
)
_CAPITALISED_RUN = re.compile(r"(?:[A-Z][\w’'\-]*[a-z][\w’'\-]*)(?:\s+(?:de|van|von|der|la|le|da)?\s*[A-Z][\w’'\-]*)*")


# A job at a club or body, or someone's, with no name: "the Celtic manager", "the Everton club
# doctor", "England captain", "Ferrier's coach". (With a name, "the Basel coach Imboden", the name
# decides.)
_DESCRIPTION = re.compile(
    r"^(?:the\s+)?(?P<at>(?:[A-Z][\w'’\-]*\s+){1,3})(?P<job>(?:[a-z][\w\-]*\s+){0,2}[a-z][\w\-]*)$"
)
# Sport writes one job several ways: "the Celtic boss" is "Celtic manager Hugh Mallory" (and
# fans say "gaffer", which articles rarely do).
_SAME_JOB = SAME_JOB | {"gaffer"}
_FULL_NAME = r"(?:[A-Z][\w'’\-]+\s+){1,2}[A-Z][\w'’\-]+"
# How many keyword-ranked passages are read for the people a description names.
_DESCRIBED_PASSAGES = 40
# How close the club or person must be to a job written alone ("His coach, Dougie Rennison, who
# has worked with Ferrier since ...").
_DESCRIBED_NEAR = 200


# A description typed in lower case, "the brondby coach": the club's words are capitalised to
# be found as the articles write them (round 30). Not words that make it another job or no club's.
_LOWER_DESCRIPTION = re.compile(
    r"^(?:the\s+)?(?P<at>(?!(?:new|old|club|team|national|former|caretaker|interim|assistant|opposition|home|away"
    r"|current|same|other)\b)[a-z][\w'’\-]*(?:\s+[a-z][\w'’\-]*)?)\s+(?P<job>manager|boss|coach|gaffer|captain|chairman"
    r"|skipper)$"
)


def _owner_capitalised(who: str) -> str:
    """``who`` with the club of a lower-case description capitalised, else as it is."""
    lower = _LOWER_DESCRIPTION.match(who)
    if lower is None:
        return who
    return f"the {lower.group('at').title()} {lower.group('job')}"


def described_speakers(library: Corpus, who: str) -> list[str]:
    """The stored speaker a job description names ("the Celtic manager" -> Hugh Mallory): the
    person the library's articles most often write with that job ("Celtic manager Hugh Mallory",
    "Hugh Mallory, the Celtic manager"); none when the phrase is not a description or no
    article names anyone so."""
    match = _DESCRIPTION.match(who.strip()) or _DESCRIPTION.match(_owner_capitalised(who.strip()))
    if match is None:
        return []
    # ("Ferrier's coach" is the coach in a story of Ferrier's.)
    owner = [re.sub(r"['’]s$", "", word) for word in match.group("at").split()]
    at = re.escape(" ".join(owner))
    job = match.group("job").split()
    heads = "|".join(sorted(_SAME_JOB)) if job[-1].lower() in _SAME_JOB else re.escape(job[-1])
    between = r"(?:[a-z][\w\-]*\s+){0,2}"
    pattern = re.compile(
        rf"\b{at}(?:['’]s)?\s+{between}(?:{heads}),?\s+(?P<named>{_FULL_NAME})"
        rf"|(?P<apposed>{_FULL_NAME}),\s+(?:the\s+)?{at}\s+{between}(?:{heads})\b"
    )
    # Else the job alone: "His coach, Dougie Rennison, who has worked with Ferrier since ...",
    # "Club doctor Ian Moffatt said" of an Everton story.
    job_alone = re.compile(rf"(?i:\b{between}(?:{heads})),?\s+(?P<named>{_FULL_NAME})")
    hits = library.sparse.search(search_tokens(who), _DESCRIBED_PASSAGES)
    articles = dict.fromkeys(library.store.article_ids_of_passages([pid for pid, _ in hits]).values())
    texts = [article.text for a in articles if (article := library.store.article(a, with_text=True)) is not None]
    near_name = re.compile(rf"\b{at}\b")
    with_name = [text for text in texts if near_name.search(text)]
    # The description whole; then the job alone near the name; then anywhere in a story with it.
    tries: list[tuple[re.Pattern[str], list[str], int | None]] = [
        (pattern, texts, None),
        (job_alone, texts, _DESCRIBED_NEAR),
        (job_alone, with_name, None),
    ]
    for wanted, where, near in tries:
        counts: Counter[str] = Counter()
        for text in where:
            for found in wanted.finditer(text):
                person = found.group("named") or found.groupdict().get("apposed") or ""
                if set(person.split()) & set(owner):
                    continue  # "Ferrier's coach" is not Colin Ferrier
                if near is not None and not near_name.search(text[max(0, found.start() - near) : found.end() + near]):
                    continue
                if person in library.speakers:
                    counts[person] += 1
        if counts:
            return [counts.most_common(1)[0][0]]
    return []


def resolve_speakers(library: Corpus, who: str) -> list[str]:
    """Stored speakers the person named in a question refers to.

    Tries the name as asked, then the person the phrase is about (its head), then the names
    inside it, longest first ("the Microsoft boss Bill Gates" -> "Bill Gates", "Tony Blair's
    spokesman" -> "Tony Blair"), then the last words of each ("Daiwa's Michael Moran" ->
    "Michael Moran", then "Moran"), then the words of it that any stored speaker has
    ("chancellor gordon brown" -> "gordon brown").
    """
    head, rest = _head_and_rest(re.sub(r"['’]s\b", "", who), who)
    by_word = _speaker_words(library)
    for candidate, whole in _name_candidates(who, head, rest):
        found = match_speakers(library, candidate)
        if whole:
            # The surname of a fuller name asked ("Jackson" of "Michael Jackson's doctor"): not
            # someone its first name rules out (Katherine Jackson), only that name or the surname.
            found = [speaker for speaker in found if set(name_words(speaker)) <= whole]
        if found:
            return _misspelled_person(library, head, found, by_word) or _with_shorter_names(library, found)
    words = name_words(head)
    if not words:
        return []
    # The surname decides: "Rob Partridge" is not every stored Rob when nobody quoted is called
    # Partridge (the topic then picked some Rob's quote about something else). A surname a
    # letter away from a stored one is that one ("Trevor Philips" for Trevor Phillips); with
    # the first name given, two letters away too ("Dave Prentice" for Dave Prentis).
    # The other words narrow it when they belong to the name ("chancellor gordon brown"), and
    # are dropped when they do not ("the symantec guy hogan": Symantec is a speaker too).
    others = [word for word in words[:-1] if word in by_word]
    spellings = _stored_spellings(words[-1], by_word, with_first_name=bool(others))
    for surname in spellings if others else []:
        found = match_speakers(library, " ".join([*others, surname]))
        if found:
            return found
    for surname in spellings:
        found = match_speakers(library, surname)
        # Without its first name a mistyped surname may be someone else's ("Trevor Philips" is
        # not Philip French): a corrected spelling alone counts only for someone of that name.
        if found and (surname == words[-1] or not others or _shares_a_word(found, others)):
            return found
    return []


def _misspelled_person(library: Corpus, head: str, found: list[str], by_word: dict[str, set[str]]) -> list[str]:
    """The speakers of the head's last name, mistyped, when the speakers ``found`` are of another
    of its names: "Brondby coach Kjaergard" is Ole Kjaergaard, not the club's statement found by
    "Brondby" (round 30). Empty when the last name is spelt as stored or has no close spelling."""
    runs = _CAPITALISED_RUN.findall(head)
    surname = name_words(runs[-1])[-1:] if runs else []
    if not surname or surname[0] in by_word or any(surname[0] in name_words(speaker) for speaker in found):
        return []
    for spelling in _stored_spellings(surname[0], by_word):
        corrected = match_speakers(library, spelling)
        if corrected:
            return corrected
    return []


def _with_shorter_names(library: Corpus, found: list[str]) -> list[str]:
    """The speakers found, and those stored under part of one of their names that holds the
    surname ("McConnell", "Le Bon"): an article that never gives the full name near a quote
    stores it under the name it does give."""
    by_word = _speaker_words(library)
    shorter = []
    for speaker in found:
        words = name_words(speaker)
        if len(words) < 2:
            continue
        for other in by_word.get(words[-1], set()):
            other_words = name_words(other)
            if other not in found and len(other_words) < len(words) and set(other_words) <= set(words):
                shorter.append(other)
    return found + sorted(set(shorter))


def _shares_a_word(speakers: list[str], words: list[str]) -> bool:
    return any(set(words) & set(name_words(speaker)) for speaker in speakers)


# Where the person a phrase names is said to belong somewhere: "William Corr of the Campaign
# for Tobacco-Free Kids", "Kurt Karl at Swiss Re", "meighan from kasabian".
_AFFILIATION = re.compile(r"\s+(?:of|from|at|with|for|in)\s+")
# Where the person follows their organisation or whose they are: "Bank of America's Robert
# Sinche", "Ferrier's coach Dougie Rennison".
_POSSESSIVE_BEFORE_NAME = re.compile(r"^.*['’]s\s+(?:[a-z][\w\-]*\s+){0,3}(?=[A-Z])")


def _head_and_rest(who: str, asked: str) -> tuple[str, str]:
    """The part of a phrase that names the person, and the rest (their organisation or
    affiliation, whose own names are tried only when the head names nobody)."""
    if "," in who:
        # An apposition: "Clement, the German economy minister", or the other way round, "the
        # head of the Fenice foundation, Vianello".
        first, after = who.split(",", 1)
        if first.strip()[:1].islower() and _CAPITALISED_RUN.fullmatch(after.strip()):
            return after.strip(), first
        if _CAPITALISED_RUN.search(first):
            return first, after
    possessive = _POSSESSIVE_BEFORE_NAME.match(asked)
    if possessive:
        return asked[possessive.end() :], asked[: possessive.end()]
    parts = _AFFILIATION.split(who, maxsplit=1)
    if len(parts) == 2 and parts[0].strip() and parts[0].split()[-1].lower() not in _NOT_NAME_WORDS:
        return parts[0], parts[1]
    return who, ""


def _stored_spellings(word: str, by_word: dict[str, set[str]], with_first_name: bool = False) -> list[str]:
    """``word`` if a stored speaker's name has it, then the stored words a letter away from it
    or with two letters swapped ("Schnieder"; five letters or more, so "Rob" is not "Bob").
    With the first name given, shorter words ("Oliver Irsh", "Nick Bub") and, from five letters, words two
    letters away ("Prentice" for "Prentis", "Lenny" for "Lennie") count too: the first name then vouches for them."""
    exact = [word] if word in by_word else []
    if len(word) < (3 if with_first_name else 5):
        return exact
    close = [
        w
        for w in by_word
        if w != word
        and abs(len(w) - len(word)) <= 2
        and (
            one_edit_apart(w, word)
            or letters_swapped(w, word)
            or (with_first_name and len(word) >= 5 and _two_edits_apart(w, word))
        )
    ]
    # A surname asked alone is more often a mistyped surname than a first name: "Brenan" is Tony
    # Brennan before any Brendan (round 30).
    return exact + sorted(close, key=lambda w: (not _is_a_surname(w, by_word), w))


def _is_a_surname(word: str, by_word: dict[str, set[str]]) -> bool:
    return any(name_words(speaker)[-1:] == [word] for speaker in by_word.get(word, ()))


def is_stored_surname(library: Corpus, word: str) -> bool:
    """Whether a stored speaker's last name is ``word`` (any case)."""
    return _is_a_surname(word.lower(), _speaker_words(library))


def _two_edits_apart(a: str, b: str) -> bool:
    """Whether two words of the same first letter are at most two letters added, dropped or
    changed apart (Levenshtein distance <= 2)."""
    if a[:1] != b[:1]:
        return False
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1] <= 2


def _name_candidates(who: str, head: str, rest: str) -> list[tuple[str, frozenset[str]]]:
    """The name as asked, then the names of its head, each run followed by its last words
    ("Daiwa Michael Moran", "Michael Moran", "Moran"), the last run first ("the Aston Martin
    boss Ulrich Bez"); the rest's names only when the head has none ("Tony Blair's spokesman").
    With each, the words of the fuller name it was cut from (titles aside), when it was."""
    candidates: dict[str, frozenset[str]] = {who.strip(): frozenset(), head.strip(): frozenset()}
    runs = _CAPITALISED_RUN.findall(head)
    if not runs:
        runs = _CAPITALISED_RUN.findall(rest)
    ordered = sorted(reversed(runs), key=lambda run: -len(run.split())) if runs else []
    for run in ordered:
        words = run.split()
        named = frozenset(w for w in name_words(run) if not is_title_word(w))
        for i in range(len(words)):
            part = " ".join(words[i:])
            cut = len(name_words(part)) < len(named)
            candidates.setdefault(part, named if cut else frozenset())
    return [(c, whole) for c, whole in candidates.items() if c]


def name_words(who: str) -> list[str]:
    # "Kilroy-Silk" is stored as "Robert Kilroy Silk" by one article and "Kilroy-Silk" by another.
    words = without_accents(who).replace("’", "'").replace("-", " ").split()
    return [w.lower() for w in words if w.lower() not in _NOT_NAME_WORDS]


def match_speakers(library: Corpus, who: str) -> list[str]:
    """Stored speakers a name refers to ("Mourinho" -> "Jose Mourinho"; "Jose" -> every stored
    speaker called Jose: the topic then chooses among them)."""
    wanted = name_words(who)
    if not wanted:
        return []
    by_word = _speaker_words(library)
    candidates = set.intersection(*(by_word.get(w, set()) for w in wanted))
    matches = []
    for speaker in sorted(candidates):
        parts = without_accents(speaker).lower().replace("’", "'").replace("-", " ").split()
        if all(w in parts for w in wanted):
            matches.append(speaker)
    return matches


_SPEAKER_WORDS: list[tuple[dict[str, int], dict[str, set[str]]]] = []


def _speaker_words(library: Corpus) -> dict[str, set[str]]:
    """Capitalised stored speakers by each lower-cased word of their name, built once per ingest.

    ``library.speakers`` is replaced (a new dict) whenever articles change, so the dict itself
    is the cache key; scanning thousands of speakers per question would cost milliseconds.
    """
    speakers = library.speakers
    for known, index in _SPEAKER_WORDS:
        if known is speakers:
            return index
    built: dict[str, set[str]] = {}
    for speaker in speakers:
        if speaker[:1].isupper():
            for part in without_accents(speaker).lower().replace("’", "'").replace("-", " ").split():
                built.setdefault(part, set()).add(speaker)
    # Keep the last few (one per open library); holding the dict keeps its identity unique.
    _SPEAKER_WORDS[:] = [*_SPEAKER_WORDS[-3:], (speakers, built)]
    return built
