"""The digest builder: stories grouped right, every line verbatim and cited, exact windows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from retrieval.features.digest import build_digest, digest_to_json, parse_added_at
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from retrieval.models import Digest
from tests.conftest import BBC, bbc_library
from tests.digest_fixtures import BRIDGE_1, BRIDGE_2, BRIDGE_3, FOOTBALL, PHONE, STORY_DRAFTS, ingest

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SINCE = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)  # Tuesday 1 Dec 2026
ADDED = {
    BRIDGE_1.key: "2026-12-01T09:00:00.000000Z",  # exactly at `since`: inside the window
    BRIDGE_2.key: "2026-12-01T09:30:00.000000Z",
    BRIDGE_3.key: "2026-12-01T10:15:00.000000Z",
    FOOTBALL.key: "2026-12-01T10:00:00.000000Z",
    PHONE.key: "2026-12-01T08:59:59.999999Z",  # a microsecond before `since`: outside
}


@pytest.fixture(scope="module")
def stories_library(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[tuple[Library, dict]]:
    library = Library.open(tmp_path_factory.mktemp("digest") / "data", embedder)
    ids = ingest(library, STORY_DRAFTS, ADDED)
    yield library, ids
    library.close()


def assert_verbatim_and_cited(library: Library, digest: Digest) -> None:
    numbers = [c.n for c in digest.citations]
    assert numbers == list(range(1, len(numbers) + 1)), "citations numbered once, in order"
    for story in digest.stories:
        assert 1 <= len([s for s in story.spans if s.kind == "sentence"]) <= 2
        assert len([s for s in story.spans if s.kind == "quote"]) <= 1
        assert story.headline == story.articles[0].title
        for span in story.spans:
            article = library.store.article(span.article_id, with_text=True)
            assert article is not None
            assert article.text[span.start : span.end] == span.text
            citation = digest.citations[span.citation - 1]
            assert (citation.article_id, citation.paragraph) == (span.article_id, span.paragraph)
            assert span.article_id in {a.id for a in story.articles}
            if span.kind == "quote":
                assert span.speaker
            assert f"[{span.citation}]" in digest.text
            assert " ".join(span.text.split()) in digest.text


def test_same_story_grouped_and_others_apart(stories_library: tuple[Library, dict]) -> None:
    library, ids = stories_library
    digest = build_digest(library, "news", SINCE, NOW, NOW)
    groups = [{a.id for a in story.articles} for story in digest.stories]
    bridge = {ids[BRIDGE_1.key], ids[BRIDGE_2.key], ids[BRIDGE_3.key]}
    assert groups[0] == bridge, "the biggest story comes first"
    assert {ids[FOOTBALL.key]} in groups
    assert ids[PHONE.key] not in set().union(*groups)
    assert digest.article_count == 4
    assert digest.header == "since Tue 1 Dec, 09:00 — 4 articles — #news"
    assert digest.text.startswith(digest.header)
    assert "(3 articles)" in digest.text
    # The lead article (newest) gives headline, outlet and link.
    assert digest.stories[0].articles[0].id == ids[BRIDGE_3.key]
    assert "Ashworth Gazette" in digest.text and "https://example.org/bridge-3" in digest.text
    assert_verbatim_and_cited(library, digest)


def test_attributed_quote(stories_library: tuple[Library, dict]) -> None:
    library, _ = stories_library
    digest = build_digest(library, "news", SINCE, NOW, NOW)
    quotes = [s for story in digest.stories for s in story.spans if s.kind == "quote"]
    assert {q.speaker for q in quotes} >= {"Tom Barker"}, digest.text
    assert "” — Tom Barker [" in digest.text


def test_window_boundaries_are_exact(stories_library: tuple[Library, dict]) -> None:
    library, ids = stories_library
    until = parse_added_at(ADDED[BRIDGE_3.key])  # an article added exactly at `until` is outside
    digest = build_digest(library, "news", SINCE, until, NOW)
    included = {a.id for story in digest.stories for a in story.articles}
    assert included == {ids[BRIDGE_1.key], ids[BRIDGE_2.key], ids[FOOTBALL.key]}
    earlier = build_digest(library, "news", parse_added_at(ADDED[PHONE.key]), SINCE, NOW)
    assert [a.id for s in earlier.stories for a in s.articles] == [ids[PHONE.key]]


def test_empty_window_says_nothing_new(stories_library: tuple[Library, dict]) -> None:
    library, _ = stories_library
    since = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)
    digest = build_digest(library, "#news", since, datetime(2026, 12, 6, tzinfo=UTC), NOW)
    assert digest.stories == [] and digest.citations == [] and digest.article_count == 0
    assert digest.text == "Nothing new since Sat 5 Dec, 09:00 — #news"


def test_json_shape(stories_library: tuple[Library, dict]) -> None:
    library, _ = stories_library
    data = json.loads(json.dumps(digest_to_json(build_digest(library, "news", SINCE, NOW, NOW))))
    story = data["stories"][0]
    assert set(story["articles"][0]) >= {"article_id", "title", "source", "url", "published"}
    assert set(story["sentences"][0]) >= {"text", "speaker", "citation"}
    assert data["citations"][0]["n"] == 1 and data["text"].startswith("since ")


# Three steps of the Yukos saga: the US bankruptcy court case, argued and then ruled on. One
# topic, but not one event (the court's ruling is not the hearing): story grouping keeps them
# apart, where the older topic clustering made them one story.
BBC_SAGA = ["business/025", "business/192", "business/299"]
BBC_OTHERS = ["politics/001", "tech/003", "entertainment/002", "business/001"]


@pytest.mark.skipif(not BBC.is_dir(), reason="BBC News articles not present")
def test_bbc_steps_of_one_saga_and_others_are_separate_stories(tmp_path: Path, embedder: Embedder) -> None:
    with bbc_library(tmp_path, embedder, BBC_SAGA + BBC_OTHERS) as library:
        now = datetime.now(UTC)
        digest = build_digest(library, "bbc", datetime(2000, 1, 1, tzinfo=UTC), now, now)
        assert [len(story.articles) for story in digest.stories] == [1] * 7
        assert "also in:" not in digest.text
        assert_verbatim_and_cited(library, digest)


# The same tests over the embedded library and the cluster backend (PostgreSQL + Qdrant).
pytestmark = pytest.mark.backends("embedded", "cluster")
