"""Names and numbers of a question, and whether the library or an article has them.

Variants count: inflections, typos, swapped letters, accents, the parts of hyphenated names.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING

from retrieval.reading.people import one_edit_apart
from retrieval.reading.text import search_tokens

if TYPE_CHECKING:
    from retrieval.ports import Corpus

QUESTION_WORDS = frozenset("what who whom whose which when where why how did does do is are was were can could".split())


# A capitalised word is a name unless it starts the question or a sentence of it; so is a word
# with a capital inside ("iPhone", "eBay").
NAME_START = r"(?<!^)(?<![.?!] )"
NAME = r"(?:[A-Z][\w’'\-]+|[a-z]+[A-Z][\w’'\-]*)"


def question_name_tokens(text: str) -> list[str]:
    names = re.findall(rf"{NAME_START}\b{NAME}|\b\d{{2,}}\b", text.strip())
    return search_tokens(" ".join(n for n in names if n.lower() not in QUESTION_WORDS))


# A match score ("the 1-0 defeat at Goodison", "their 3-2 win") names one game as surely as a year
# names one season: not a formation ("4-4-2"), a season ("2004-05") or an age group ("under-21").
def _score(home: str, away: str) -> str:
    return rf"(?<![\w\-–]){home} ?[-–] ?{away}(?![\w\-–])"


_SCORE = _score(r"(\d{1,2})", r"(\d{1,2})")


def question_scores(text: str) -> list[tuple[str, str]]:
    return re.findall(_SCORE, text)


def score_in(score: tuple[str, str], text: str) -> bool:
    """Whether an article gives the score, in either order: the loser's "1-0 defeat" is the
    report's "Everton 1-0 Middlesbrough" or "lost 0-1"."""
    home, away = score
    return any(re.search(_score(a, b), text) for a, b in ((home, away), (away, home)))


def _question_name_phrases(text: str) -> list[list[str]]:
    """Names of several words ("Apple Watch", "London Olympics") or a name and a number
    ("PlayStation 3" is not "PlayStation 2"), as their stemmed tokens."""
    runs = re.findall(rf"{NAME_START}\b{NAME}(?:\s+(?:{NAME}|\d+\b))+", text.strip())
    phrases = [_split_hyphens(search_tokens(part)) for run in runs for part in _separate_names(run)]
    return [phrase for phrase in phrases if len(phrase) >= 2]


# A nationality before a name describes it; it is not part of it ("an American PG-13 certificate").
_NATIONALITIES = frozenset(
    "american british english scottish welsh irish european french german italian spanish dutch russian "
    "chinese japanese indian australian canadian korean".split()
)


_MONTH = re.compile(
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
    r"(?:-(?:January|February|March|April|May|June|July|August|September|October|November|December))?"
)


def _separate_names(run: str) -> list[str]:
    """The names in a run of capitalised words: a possessive ends one ("Oliver Stone's Alexander",
    "UKIP's European campaign"), a year is not part of one ("Apple's 2002 case"), and a
    nationality in front describes it ("American PG-13"). On all the natural questions (round 3)
    this answered 3 more fact questions and refused 2 fewer "detail absent" ones, whose wrong
    answers the run-together name had stopped by chance."""
    names: list[list[str]] = [[]]
    for word in run.split():
        # A date is not part of a name: "the 7 July London bombings", "its October-December quarter".
        if re.fullmatch(r"(?:19|20)\d\d", word) or _MONTH.fullmatch(word):
            names.append([])
            continue
        if not names[-1] and word.lower() in _NATIONALITIES:
            continue
        # A name with a word of description hyphened on ends there: "the McDonald's-sponsored
        # Advance Warning show", "a Google-owned site" (not "Kilroy-Silk", whose parts are names).
        described = re.fullmatch(r"(?P<name>.+?)-[a-z]+", word)
        if described:
            names[-1].append(described.group("name"))
            names.append([])
            continue
        names[-1].append(word)
        if re.search(r"['’]s?$", word):
            names.append([])
    return [" ".join(words) for words in names if words]


def capitalised_tokens(text: str) -> set[str]:
    return set(search_tokens(" ".join(re.findall(rf"\b{NAME}", text))))


def _split_hyphens(tokens: list[str]) -> list[str]:
    return [part for token in tokens for part in token.split("-") if part]


class MissingTerms:
    """Whether the names and numbers of a question are missing from an article, one lookup per
    article. Variants count as present: "Californian" for "California", "Arabs" for "Arab", a
    first name where the article has only the surname, "America" for "the US"."""

    def __init__(self, library: Corpus, text: str, names_as_names: bool = False) -> None:
        self.library = library
        self.wanted = {t for t in question_name_tokens(text) if len(t) >= 3}
        self.phrases = _question_name_phrases(text)
        # With ``names_as_names`` a name must be a name in the article too: "sales of the Switch"
        # is not in a story where players "switch between the two screens". (Only for topics: in
        # whole questions askers capitalise freely, "Who was Guy's Rival?", and on SQuAD the same
        # rule cost as many answers as it caught out-of-corpus questions.)
        self.capitalised = {t for t in capitalised_tokens(text) if len(t) >= 3} if names_as_names else set()
        # A first name may be missing where the article has only the surname: "What did Gordon
        # Brown say ..." of a story that calls him "Mr Brown".
        self.first_names = _first_names(text)
        self.scores = question_scores(text)
        self.checked: dict[int, bool] = {}
        self._texts: dict[int, str] = {}

    def from_article(self, article_id: int) -> bool:
        if not self.wanted and not self.phrases and not self.scores:
            return False
        if article_id not in self.checked:
            self.checked[article_id] = bool(self._missing(article_id)) or self._score_missing(article_id)
        return self.checked[article_id]

    def _score_missing(self, article_id: int) -> bool:
        if not self.scores:
            return False
        full_text = self._full_text(article_id)
        return not all(score_in(score, full_text) for score in self.scores)

    def _full_text(self, article_id: int) -> str:
        """The article's title and text, read from the store once for both checks."""
        if article_id not in self._texts:
            article = self.library.store.article(article_id, with_text=True)
            self._texts[article_id] = f"{article.title}\n{article.text}" if article else ""
        return self._texts[article_id]

    def _missing(self, article_id: int) -> list[str]:
        present = self.library.article_terms.of(article_id)  # with "arab" from "Norman-Arab"
        # Any name missing means the article is about something else: "When did Queen Elizabeth
        # II die?" is not answered by a story about the band Queen. (Allowing one missing name
        # let four of the 56 fitting questions through.)
        missing = [
            t
            for t in self.wanted - present
            if not _parts_present(t, lambda part: variant_in(part, present) or bool(aliases(part) & present))
            and not (t in self.first_names and self.first_names[t] in present)
        ]
        if missing and not any(t in _SPELLED_OUT for t in missing):
            return missing
        if not missing and not (self.phrases or self.capitalised):
            return missing
        full_text = self._full_text(article_id)
        # "GDP" of a story that spells out "gross domestic product".
        missing = [t for t in missing if not spelled_out(t, full_text)]
        if missing or not (self.phrases or self.capitalised):
            return missing
        # A name of several words is one name: "the Apple Watch" is not in a story that has
        # "Apple" and, elsewhere, "watch".
        words = _split_hyphens(search_tokens(full_text))
        names_of_article = capitalised_tokens(full_text)
        missing = [
            " ".join(phrase)
            for phrase in self.phrases
            # A first name the article never uses is excused ("Gordon Brown" of a story with only
            # "Mr Brown"); one it does use is not ("the Apple Watch" of a story about Apple).
            # An acronym the story writes out is not part of the name: "its Edgware HQ" of a story
            # about "the headquarters in Edgware".
            if not _phrase_in([t for t in phrase if not spelled_out(t, full_text)] or phrase, words)
            and not all(t in self.first_names and t not in present for t in phrase[:-1])
            # Names the asker ran together that the story has apart, each as a name: "the RCA
            # Secrets sale" of the RCA's "annual Secrets sale", "its October-December quarter".
            and not all(variant_in(t, names_of_article) for t in phrase)
        ]
        if self.capitalised:
            names = capitalised_tokens(full_text)
            names |= set(_split_hyphens(list(names)))
            missing += [
                t
                for t in self.capitalised
                if not _parts_present(t, lambda part: variant_in(part, names) or bool(aliases(part) & names))
            ]
        return missing


def _first_names(text: str) -> dict[str, str]:
    """Each leading word of a name of two or three words, with the name's last word:
    {"gordon": "brown"} for "Gordon Brown"."""
    found: dict[str, str] = {}
    for run in re.findall(rf"{NAME_START}\b[A-Z][a-z]+(?:\s+[A-Z][\w’'\-]+){{1,2}}", text.strip()):
        tokens = search_tokens(run)
        for token in tokens[:-1]:
            found[token] = tokens[-1]
    return found


# Other names people use for the same country or body: a question about "the US" is answered by a
# story that says "America", one about "the Tories" by one about the Conservatives.
_ALIAS_GROUPS = [
    "uk britain british brit brits england english",
    "us usa america american americans",
    "eu europe european",
    "tori tory conserv",
    "oscar academi",
    "china chines beij",
    "japan japanes",
    "russia russian moscow",
    "franc french",
    "germani german",
    "india indian",
    "iraq iraqi",
    "ireland irish",
    "scotland scottish scot",
    "wale welsh",
    "spain spanish",
    "itali italian",
    "australia australian",
    "netherland dutch holland",
    "korea korean",
    "pm premier",
    "mobil cellphon phone",
]


# Countries and the words for their people, as written (stemmed when the table is built).
_COUNTRY_GROUPS = [
    "sweden swedish swede swedes",
    "norway norwegian",
    "denmark danish dane danes",
    "finland finnish",
    "poland polish",
    "greece greek",
    "turkey turkish",
    "brazil brazilian",
    "mexico mexican",
    "canada canadian",
    "israel israeli",
    "iran iranian",
    "egypt egyptian",
    "switzerland swiss",
    "belgium belgian",
    "austria austrian",
    "portugal portuguese",
    "hungary hungarian",
    "pakistan pakistani",
    "afghanistan afghan",
    "ukraine ukrainian",
    "argentina argentine argentinian",
    "nigeria nigerian",
    "kenya kenyan",
    "jamaica jamaican",
    "scandinavia scandinavian",
]

# Clubs as fans shorten them ("Man Utd", "West Brom", "Spurs"), with a word of the name that
# reports write (stemmed when the table is built).
_CLUB_SHORT_NAMES = [
    "utd united",
    "brom bromwich",
    "boro middlesbrough",
    "spurs tottenham",
    "wolves wolverhampton",
    "man manchester",
]


# Cities and the clubs and grounds that fans name them by: "the winner in Turin" of a report on
# Juventus at the Stadio delle Alpi (round 26). Only where a city's clubs or grounds are known
# by other names; "Milan" and "Porto", clubs named as their cities, need none.
_CLUB_CITIES = [
    "turin juventus juve torino",
    "madrid bernabeu atletico",
    "barcelona barca nou camp",
    "munich bayern",
    "rome roma lazio",
    "genoa sampdoria",
    "lisbon benfica",
    "kiev dynamo",
    "donetsk shakhtar",
    "seville sevilla betis",
    "glasgow celtic rangers ibrox hampden",
    "edinburgh hearts hibs hibernian tynecastle murrayfield",
]


@cache
def _alias_table() -> dict[str, frozenset[str]]:
    table: dict[str, frozenset[str]] = {}
    groups = [frozenset(group.split()) for group in _ALIAS_GROUPS]
    groups += [frozenset(search_tokens(group)) for group in (*_COUNTRY_GROUPS, *_CLUB_SHORT_NAMES, *_CLUB_CITIES)]
    for members in groups:
        for member in members:
            table[member] = table.get(member, frozenset()) | (members - {member})
    return table


# Acronyms people ask with, and what news prose writes instead (stemmed tokens of the phrase).
_SPELLED_OUT = {
    "gdp": ["gross domestic product"],
    "ceo": ["chief executive"],
    "pmi": ["purchasing managers", "purchasing manager"],
    "cpi": ["consumer prices index", "consumer price index"],
    "ipo": ["flotation", "share offer", "stock market debut"],
    "hq": ["headquarters", "head office"],
    "nhs": ["health service"],
    "un": ["united nations"],
    "wto": ["world trade organization", "world trade organisation"],
    "imf": ["international monetary fund"],
    "mp": ["member of parliament"],
    "mps": ["members of parliament"],
    "tv": ["television"],
    # Sport's bodies and names, as fans write them.
    "fa": ["football association"],
    "rfu": ["rugby football union"],
    "icc": ["international cricket council"],
    "ioc": ["international olympic committee"],
    "f1": ["formula one"],
    "gb": ["great britain"],
    "spl": ["scottish premier league", "scottish premiership"],
    "epl": ["premiership", "premier league"],
    "odi": ["one-day international"],
}


def spelled_out(token: str, text: str) -> bool:
    """Whether ``text`` writes out an acronym of the question ("GDP" as "gross domestic
    product"): a closed list, since initials alone match too much ("great deal of pressure")."""
    phrases = _SPELLED_OUT.get(token)
    if not phrases:
        return False
    words = search_tokens(text)
    return any(_phrase_in(search_tokens(phrase), words) for phrase in phrases)


def aliases(token: str) -> frozenset[str]:
    """Stemmed words that name the same thing as ``token`` ("america" for "us")."""
    return _alias_table().get(token, frozenset())


def _phrase_in(phrase: list[str], words: list[str]) -> bool:
    """Whether the tokens of ``phrase`` (or variants of them) follow each other in ``words``."""

    def same(token: str, term: str) -> bool:
        # ... or another name of it: "West Brom" of "West Bromwich", "Man United" of "Manchester United".
        return token == term or (term[:1] == token[:1] and (_variant(token, term) or term in aliases(token)))

    return any(
        all(same(token, words[start + i]) for i, token in enumerate(phrase))
        for start in range(len(words) - len(phrase) + 1)
        if same(phrase[0], words[start])
    )


def _parts_present(token: str, present: Callable[[str], bool]) -> bool:
    """``present(token)``, or for a hyphenated token every part of it ("Diego-Carlsbad-San")."""
    if present(token):
        return True
    parts = [part for part in token.split("-") if part]
    # A one-letter part is what stemming left of a word ("US-led" stems to "us-l").
    kept = [part for part in parts if len(part) > 1 or part.isdigit()]
    # The stemmer stems only the last part of a hyphenated word: "October-December" is
    # "october-decemb", and the index holds "octob".
    return len(parts) > 1 and bool(kept) and all(present(part) or present(_stem(part)) for part in kept)


def _stem(word: str) -> str:
    stems = search_tokens(word)
    return stems[0] if stems else word


def variant_in(token: str, terms: Iterable[str]) -> bool:
    """Whether ``token`` or a variant of it (``_variant``) is among ``terms``."""
    return token in terms or any(_variant(token, term) for term in terms if term[:1] == token[:1])


def _variant(token: str, term: str) -> bool:
    """Whether ``term`` is ``token`` inflected or mistyped by one letter (stemmed words).

    A word of four letters or more matches a longer form of itself ("arab" / "arabic",
    "europ" / "european"); long words also match on a shared stem ("californian" /
    "california") or one added, dropped, changed or swapped letter ("Hatmanis" / "Hartmanis",
    "Carslbad" / "Carlsbad"). Numbers match only themselves.
    """
    if token.isdigit() or term.isdigit() or token == term:
        return False
    shared_stem = token.startswith(term) or term.startswith(token)
    if shared_stem and len(token) >= 6 and len(term) >= 6 and abs(len(term) - len(token)) <= 2:
        return True
    if len(token) >= 4 and term.startswith(token) and len(term) - len(token) <= 3:
        return True
    # The stemmer writes a final "y" as "i": "Mulrany" is "mulrani", one letter from "mulraney".
    spellings = {token, token[:-1] + "y"} if token.endswith("i") else {token}
    return len(token) >= 7 and any(one_edit_apart(term, t) or letters_swapped(term, t) for t in spellings)


def letters_swapped(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with two neighbouring letters swapped."""
    if len(a) != len(b):
        return False
    differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    if len(differ) != 2 or differ[1] != differ[0] + 1:
        return False
    i, j = differ
    return a[i] == b[j] and a[j] == b[i]


def names_absent(library: Corpus, text: str) -> bool:
    """Whether the question names something the corpus never mentions.

    A capitalised word or a number ("Greta Thunberg", "in 2018") that no passage contains
    means the answer is not here, however close the rest of the question comes. A variant
    counts as present: "Californian" for "California", "Hatmanis" for "Hartmanis", "British"
    for "Britain".
    """
    tokens = question_name_tokens(text)
    if not tokens:
        return False
    absent = [t for t, v in library.sparse.max_idf(tokens).items() if v == 0.0]
    if absent:  # rare, and the titles' terms cost ~0.2 s to gather at 27k articles after a change
        in_titles = library.article_terms.in_titles()
        absent = [t for t in absent if t not in in_titles]
    return any(
        not _parts_present(t, lambda part: _variant_present(library, part) or _alias_present(library, part))
        for t in absent
    )


def _alias_present(library: Corpus, token: str) -> bool:
    """Whether another name of the same country or body is stored ("British" for "Britain"), or
    the words an acronym stands for ("gross domestic product" for "GDP")."""
    found = aliases(token)
    if found and any(idf > 0 for idf in library.sparse.max_idf(sorted(found)).values()):
        return True
    for phrase in _SPELLED_OUT.get(token, []):
        words = search_tokens(phrase)
        if words and all(idf > 0 for idf in library.sparse.max_idf(words).values()):
            return True
    return False


def _variant_present(library: Corpus, token: str) -> bool:
    if library.sparse.max_idf([token]).get(token, 0.0) > 0:
        return True
    if token.isdigit() or len(token) < 4:
        return False
    vocabulary = _vocabulary(library)
    # Variants share the first letter (``_variant``); the scan checks lengths before letters.
    at = bisect.bisect_left(vocabulary, token[:1])
    while at < len(vocabulary) and vocabulary[at][:1] == token[:1]:
        term = vocabulary[at]
        if abs(len(term) - len(token)) <= 3 and _variant(token, term):
            return True
        at += 1
    return False


def _vocabulary(library: Corpus) -> list[str]:
    """The index's terms, sorted."""
    with library.lock:
        return library.sparse.sorted_terms()
