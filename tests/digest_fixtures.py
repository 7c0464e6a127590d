"""Articles and a recording Poster for the digest tests (a platform stand-in, not a mock)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.delivery import DeliveryError
from bot.replies import Reply
from retrieval.library import Library
from retrieval.models import ArticleDraft

BRIDGE_1 = ArticleDraft(
    key="fixture:bridge-1",
    title="Ashworth river bridge collapses during morning rush hour",
    source="Ashworth Gazette",
    url="https://example.org/bridge-1",
    published="2026-12-01",
    text=(
        "The Ashworth river bridge collapsed during the morning rush hour on Tuesday, sending "
        "two cars into the water.\n\n"
        "Emergency crews pulled four people from the river and all of them were taken to Ashworth General Hospital.\n\n"
        '"We heard a terrible crack and then the whole middle section of the bridge simply dropped away," '
        "Margaret Hollis said.\n\n"
        "The council closed every road leading to the river crossing while engineers inspected "
        "the remains of the bridge."
    ),
)
BRIDGE_2 = ArticleDraft(
    key="fixture:bridge-2",
    title="Inquiry ordered into Ashworth bridge collapse",
    source="Northern Times",
    url="https://example.org/bridge-2",
    published="2026-12-01",
    text=(
        "An independent inquiry has been ordered into the collapse of the Ashworth river bridge, which fell into the "
        "water on Tuesday morning.\n\n"
        "Four people rescued from the river after the bridge collapse are recovering in Ashworth General Hospital.\n\n"
        '"The people of Ashworth deserve to know why this bridge failed and who knew it was unsafe," '
        "council leader David Okafor said.\n\n"
        "Engineers had inspected the river bridge in the spring and reported cracks in the supports of the "
        "crossing.\n\n"
        # Follow-ups restate the event itself, as real ones do: that is what ties them to it.
        "The Ashworth river bridge collapsed during the morning rush hour on Tuesday, sending two cars into the "
        "water.\n\n"
        "Emergency crews pulled four people from the river and all of them were taken to Ashworth General Hospital.\n\n"
        "The council closed every road leading to the river crossing while engineers inspected the remains of the "
        "bridge."
    ),
)
BRIDGE_3 = ArticleDraft(
    key="fixture:bridge-3",
    title="Ashworth bridge collapse: engineers warned of cracks",
    source="Ashworth Gazette",
    url="https://example.org/bridge-3",
    published="2026-12-02",
    text=(
        "Engineers warned the council about cracks in the Ashworth river bridge months before it collapsed into the "
        "water, documents show.\n\n"
        "The report said the supports of the bridge needed urgent repair, but "
        "the work on the crossing was postponed.\n\n"
        "The collapse on Tuesday sent two cars into the river and left four people in Ashworth General Hospital.\n\n"
        "The Ashworth river bridge collapsed during the morning rush hour on Tuesday, sending two cars into the "
        "water.\n\n"
        "Emergency crews pulled four people from the river and all of them were taken to Ashworth General Hospital."
    ),
)
FOOTBALL = ArticleDraft(
    key="fixture:football",
    title="Rovers beat City in late derby comeback",
    source="Sport Daily",
    url="https://example.org/derby",
    published="2026-12-01",
    text=(
        "Rovers scored twice in the final ten minutes to beat City 2-1 in the league derby at "
        "the stadium on Saturday.\n\n"
        "City had led through a first-half penalty from their striker before the home side pressed forward.\n\n"
        '"My players never stopped believing and the supporters carried us over the line tonight," '
        "Rovers manager Tom Barker said.\n\n"
        "The win lifts Rovers to third place in the league table, two points behind the leaders."
    ),
)
PHONE = ArticleDraft(
    key="fixture:phone",
    title="Chipmaker unveils foldable phone with week-long battery",
    source="Tech Weekly",
    url="https://example.org/phone",
    published="2026-12-01",
    text=(
        "A chipmaker has unveiled a foldable smartphone whose battery it says lasts a full week between charges.\n\n"
        "The handset uses a new low-power processor and a screen that folds to the size of a credit card.\n\n"
        "The phone will go on sale in the spring, priced slightly above current flagship models from rival makers."
    ),
)
STORY_DRAFTS = [BRIDGE_1, BRIDGE_2, BRIDGE_3, FOOTBALL, PHONE]


def ingest(library: Library, drafts: list[ArticleDraft], added_at: dict[str, str]) -> dict[str, int]:
    """Ingest drafts and set each one's ``added_at`` (store format), so windows are exact; key -> id."""
    report = library.add_drafts(drafts)
    assert not report.failed, report.failed
    ids: dict[str, int] = {}
    for draft in drafts:
        found = library.store.find_by_key(draft.key)
        assert found is not None
        ids[draft.key] = found[0]
    set_added_at(library, {ids[key]: moment for key, moment in added_at.items()})
    return ids


def set_added_at(library: Library, moments: dict[int, str]) -> None:
    if not moments:
        return  # a write would mark the index files stale for nothing
    with library.store.transaction() as connection:
        for article_id, moment in moments.items():
            connection.execute("UPDATE articles SET added_at=? WHERE id=?", (moment, article_id))


@dataclass
class RecordingPoster:
    """Records what would be posted to each channel; ``failing`` channels raise DeliveryError."""

    platform: str
    posts: list[tuple[str, Reply]] = field(default_factory=list)
    failing: set[str] = field(default_factory=set)

    def post(self, channel_id: str, reply: Reply) -> None:
        if channel_id in self.failing:
            raise DeliveryError(f"channel {channel_id} was deleted")
        self.posts.append((channel_id, reply))

    def to(self, channel_id: str) -> list[Reply]:
        return [reply for channel, reply in self.posts if channel == channel_id]
