"""Which articles report the same story: one event, with the same actors, place and time.

Topic similarity alone puts "US interest rates rise" and "UK rates on hold" in one story: both
are about central banks and rates. A story here is narrower. Each pair of articles is judged on
evidence of one event, measured on the labelled BBC pairs of ``bench/eval_story.py``:

- the articles read alike as a whole: the cosine of the means of their stored sentence vectors;
- they state the same facts: the mean of the three best sentence matches between them (the
  cosine of each sentence with its closest sentence of the other article). Two reports of one
  event restate its facts ("rose by 0.25 points to 4.75%") sentence by sentence; two events of
  one topic share the topic, not the sentences;
- they are not about different places: a title or first sentence naming one country and the
  other naming only other countries are two events, however alike the words ("Japan's economy
  shrinks" and "German growth stalls");
- they are not days apart, when both publication dates are known.

Shared capitalised names and shared figures were measured too and left out: on the tuning pairs
they did not tell one event from another of the same actors (a takeover bid and its next round
name the same firms), so they added nothing to the two similarities.

Articles are then grouped by complete link: a story only takes an article that the pair rule
joins with every member already in it, so a chain (A like B, B like C) never glues two events.
Everything is computed from what the store already holds (sentence vectors and text): no model
is run, and sentence matches are computed only for pairs whose means are close enough to pass.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

import numpy as np

from .models import Sentence

# Best sentence matches averaged: one shared sentence can be boilerplate, three are facts.
MATCHES = 3


@dataclass(frozen=True)
class StoryRule:
    """The pair rule (tuned on the tuning half of bench/data/story_pairs; see bench/eval_story.py).

    Two articles are one story when ``cosine + match_weight * matches >= threshold`` and
    neither their places nor their dates rule them apart.
    """

    threshold: float = 1.9
    match_weight: float = 1.0
    max_days: int = 3


RULE = StoryRule()


@dataclass(frozen=True)
class StoryFeatures:
    """What the pair rule needs of one article."""

    mean: np.ndarray  # unit vector: the mean of the sentence vectors
    vectors: np.ndarray  # one unit vector per sentence
    places: frozenset[str]  # countries (and blocs) named in the title or first sentence
    published: date | None


# -- names, places and figures -------------------------------------------------------------

_CAPITALISED = re.compile(r"[A-Z][\w'’&-]*(?:[ \-](?:[A-Z][\w'’&-]*|of|de|von|van|al|y))*")
# Country and bloc names, adjectives and capitals that stand for them, mapped to one key.
_PLACE_WORDS = {
    "uk": "uk britain british united kingdom england english scotland scottish wales welsh london",
    "us": "us usa america american americans united states washington wall street",
    "eu": "eu european union europe european brussels eurozone euro zone",
    "russia": "russia russian russians moscow kremlin",
    "china": "china chinese beijing shanghai",
    "japan": "japan japanese tokyo",
    "germany": "germany german germans berlin",
    "france": "france french paris",
    "italy": "italy italian rome milan",
    "spain": "spain spanish madrid",
    "india": "india indian delhi mumbai",
    "australia": "australia australian sydney canberra",
    "canada": "canada canadian ottawa toronto",
    "brazil": "brazil brazilian",
    "mexico": "mexico mexican",
    "argentina": "argentina argentine argentinian",
    "ireland": "ireland irish dublin",
    "netherlands": "netherlands dutch holland amsterdam",
    "belgium": "belgium belgian",
    "switzerland": "switzerland swiss zurich geneva",
    "sweden": "sweden swedish",
    "norway": "norway norwegian",
    "denmark": "denmark danish",
    "poland": "poland polish",
    "greece": "greece greek athens",
    "turkey": "turkey turkish",
    "israel": "israel israeli",
    "iran": "iran iranian",
    "iraq": "iraq iraqi baghdad",
    "saudi": "saudi arabia",
    "egypt": "egypt egyptian",
    "nigeria": "nigeria nigerian",
    "south africa": "south africa african",
    "kenya": "kenya kenyan",
    "korea": "korea korean seoul",
    "taiwan": "taiwan taiwanese",
    "hong kong": "hong kong",
    "singapore": "singapore",
    "indonesia": "indonesia indonesian",
    "thailand": "thailand thai",
    "malaysia": "malaysia malaysian",
    "philippines": "philippines filipino",
    "pakistan": "pakistan pakistani",
    "ukraine": "ukraine ukrainian kiev",
    "venezuela": "venezuela venezuelan",
    "chile": "chile chilean",
    "new zealand": "new zealand zealander",
}
_MULTIWORD_PLACES = {
    "united kingdom": "uk",
    "united states": "us",
    "european union": "eu",
    "euro zone": "eu",
    "wall street": "us",
    "saudi arabia": "saudi",
    "south africa": "south africa",
    "south african": "south africa",
    "south korea": "korea",
    "north korea": "north korea",
    "hong kong": "hong kong",
    "new zealand": "new zealand",
}
PLACES = {
    word: key
    for key, words in _PLACE_WORDS.items()
    for word in words.split()
    if word not in {"united", "kingdom", "states", "union", "street", "wall", "zone", "south", "new", "zealand", "hong"}
    and word not in {"arabia", "kong", "african", "zealander", "euro"}
}


def _token(word: str) -> str:
    word = word.casefold().replace("’", "'")
    return word[:-2] if word.endswith("'s") else word.rstrip("'")


def _places_in(text: str) -> set[str]:
    found: set[str] = set()
    lowered = " ".join(re.findall(r"[\w']+", text.casefold().replace("’", "'")))
    for phrase, key in _MULTIWORD_PLACES.items():
        if re.search(rf"\b{phrase}\b", lowered):
            found.add(key)
    for match in _CAPITALISED.finditer(text):
        for word in re.split(r"[ \-]", match.group(0)):
            place = PLACES.get(_token(word))
            # "Us" starting a sentence is the pronoun; "US" is the country.
            if place and not (place == "us" and word != "US"):
                found.add(place)
    return found


def _published(text: str) -> date | None:
    try:
        return date.fromisoformat(text[:10]) if text else None
    except ValueError:
        return None


def article_features(
    title: str, text: str, sentences: Sequence[Sentence], vectors: np.ndarray, published: str = ""
) -> StoryFeatures:
    """An article's features from its title, text, stored sentences and their unit vectors (same order)."""
    first = min(sentences, key=lambda sentence: sentence.start, default=None)
    lead = text[first.start : first.end] if first is not None else ""
    mean = vectors.mean(axis=0) if len(vectors) else np.zeros(vectors.shape[1], dtype=np.float32)
    norm = float(np.linalg.norm(mean))
    return StoryFeatures(
        mean=(mean / norm if norm else mean).astype(np.float32),
        vectors=vectors,
        places=frozenset(_places_in(f"{title}\n{lead}")),
        published=_published(published),
    )


# -- the pair rule ---------------------------------------------------------------------------


def sentence_matches(a: np.ndarray, b: np.ndarray) -> float:
    """The mean of the best ``MATCHES`` sentence matches, each sentence of either article
    matched with its closest sentence of the other."""
    if not len(a) or not len(b):
        return 0.0
    similarity = a @ b.T
    best = np.concatenate([similarity.max(axis=1), similarity.max(axis=0)])
    return float(np.sort(best)[::-1][:MATCHES].mean())


@dataclass(frozen=True)
class PairEvidence:
    """The pair rule's inputs for every pair of articles (square matrices)."""

    cosine: np.ndarray
    matches: np.ndarray  # 0 where the means are too far apart for matches to matter
    apart: np.ndarray  # True where places or dates say two events

    def score(self, rule: StoryRule = RULE) -> np.ndarray:
        return self.cosine + rule.match_weight * self.matches

    def same(self, rule: StoryRule = RULE) -> np.ndarray:
        return (self.score(rule) >= rule.threshold) & ~self.apart


def evidence(features: Sequence[StoryFeatures], rule: StoryRule = RULE, floor: float | None = None) -> PairEvidence:
    """The evidence for every pair; sentence matches only where ``cosine >= floor`` (by default
    where the rule could still join the pair, since matches are at most 1)."""
    n = len(features)
    means = np.stack([f.mean for f in features]) if n else np.zeros((0, 1), dtype=np.float32)
    cosine = (means @ means.T).astype(np.float64)
    floor = rule.threshold - rule.match_weight if floor is None else floor
    matches = np.zeros((n, n))
    apart = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = features[i], features[j]
            if cosine[i, j] >= floor:
                matches[i, j] = matches[j, i] = sentence_matches(a.vectors, b.vectors)
            far = bool(a.places and b.places and not a.places & b.places)
            if a.published and b.published and abs((a.published - b.published).days) > rule.max_days:
                far = True
            apart[i, j] = apart[j, i] = far
    return PairEvidence(cosine, matches, apart)


def group_stories(features: Sequence[StoryFeatures], rule: StoryRule = RULE) -> list[list[int]]:
    """Articles (indexes) grouped into stories by complete link over the pair rule.

    Pairs are taken strongest first; two groups merge only when every pair across them is
    joined by the rule, so one article alike to two different events cannot merge them.
    """
    n = len(features)
    if n == 0:
        return []
    found = evidence(features, rule)
    same, score = found.same(rule), found.score(rule)
    group_of = list(range(n))
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    rows, cols = np.nonzero(np.triu(same, k=1))
    for k in np.argsort(-score[rows, cols], kind="stable"):
        a, b = group_of[int(rows[k])], group_of[int(cols[k])]
        if a == b or not same[np.ix_(members[a], members[b])].all():
            continue
        for index in members[b]:
            group_of[index] = a
        members[a] = sorted(members[a] + members.pop(b))
    return sorted(members.values())
