"""Made-up news articles for tests that need realistic text but must not depend on
``../shared/data`` (which a user's machine does not have).

Each article is built deterministically from its number, so different numbers give different
stories (different people, places and events, so no two are near-duplicates).
"""

from __future__ import annotations

import random

PEOPLE = [
    ("Maria Okafor", "council leader"), ("Tom Brennan", "union spokesman"), ("Aiko Tanaka", "chief executive"),
    ("Luis Ferreira", "head coach"), ("Grace Mwangi", "health minister"), ("Piotr Nowak", "harbour master"),
    ("Sofia Lindqvist", "museum director"), ("Daniel Ashworth", "police chief"), ("Nadia Haddad", "economist"),
    ("Owen Pryce", "farm owner"), ("Ingrid Solberg", "festival organiser"), ("Ravi Menon", "software founder"),
]  # fmt: skip
PLACES = ["Ashford", "Brightwater", "Carrick", "Dunmore", "Eastleigh", "Fairhaven", "Glenrock", "Holloway",
          "Ivybridge", "Kingsmere", "Larkfield", "Marlow"]  # fmt: skip
EVENTS = [
    ("bridge", "a new footbridge over the river", "closed for repairs after a flood"),
    ("budget", "the annual transport budget", "cut by a fifth"),
    ("strike", "a walkout by bus drivers", "called off after late talks"),
    ("festival", "the summer lantern festival", "moved to the harbour front"),
    ("hospital", "the children's hospital wing", "opened two years late"),
    ("museum", "a rare Roman coin hoard", "put on display for the first time"),
    ("football", "the cup semi-final", "won on penalties"),
    ("floods", "spring floods along the valley", "forced hundreds from their homes"),
    ("software", "a ticketing app for trains", "crashed on its first morning"),
    ("harvest", "the apple harvest", "the best in a decade"),
]
VERBS = ["said", "added", "insisted", "admitted", "told reporters"]


def article(number: int) -> tuple[str, list[str]]:
    """(headline, paragraphs) of made-up article ``number``."""
    rng = random.Random(number)
    person, role = PEOPLE[number % len(PEOPLE)]
    other, other_role = PEOPLE[(number * 7 + 3) % len(PEOPLE)]
    place = PLACES[(number * 5) % len(PLACES)]
    topic, thing, outcome = EVENTS[number % len(EVENTS)]
    year = 2000 + number % 25
    headline = f"{place} {topic}: {thing} {outcome} (report {number})"
    surname = person.split()[-1]
    paragraphs = [
        f"In {place}, {thing} was {outcome} on a busy {rng.choice(['Monday', 'Tuesday', 'Friday'])} in {year}, "
        f"leaving residents with questions for the town's {role}.",
        f"{person}, the {role}, said the decision had been taken after weeks of discussion with local groups "
        f"and {rng.randint(3, 90)} written objections.",
        f"\u201cWe listened to everyone in {place} and this was the fairest outcome,\u201d {surname} "
        f"{rng.choice(VERBS)}. \u201cNobody wanted it to come to this, but the numbers were clear.\u201d",
        f"{other}, a {other_role}, disagreed and called the move \u201ca short-sighted mistake that {place} will "
        f"regret\u201d. She said a review of the {topic} plans would be requested by {rng.randint(2, 30)} "
        f"councillors.",
        f"Figures published by the town hall show the {topic} has cost \u00a3{rng.randint(2, 90)} million "
        f"since {year - rng.randint(1, 9)}, with a further review promised next spring.",
        f"Shop owners on {place}'s high street said trade had {rng.choice(['fallen', 'risen', 'barely changed'])} "
        f"since the {topic} news broke, and {rng.randint(10, 400)} people signed a petition within a week.",
        f"A public meeting about {thing} is planned for {rng.choice(['March', 'June', 'September'])} at the "
        f"{place} community centre, where {surname} is expected to answer questions from residents for the "
        f"first time since the announcement.",
        f"Neighbouring towns are watching closely: {PLACES[(number * 3 + 1) % len(PLACES)]} faces a similar "
        f"decision over its own {topic} next year, and its officials have asked to see the {place} figures.",
    ]
    return headline, paragraphs


def article_text(number: int) -> str:
    """The article as a Byline text file: headline, blank line, paragraphs."""
    headline, paragraphs = article(number)
    return "\n\n".join([headline, *paragraphs]) + "\n"
