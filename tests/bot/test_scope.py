"""Per-channel scope: which sources answer in a channel, filtered inside each index's search.

The library (``scope_fixtures``) is 99 wire stories and one local story, so ``outlet:Ashworth
Gazette`` holds 1% of it, and the wire stories are closer to the questions than the local one:
a filter after the top k would find nothing of the scope.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import faiss
import numpy as np
import pytest

from bot.app import add_features
from bot.commands.scope import split_entries
from bot.limits import LimitSettings
from bot.replies import AnswerReply, SearchReply, SourcesReply, TextReply
from bot.service import Asker, Service
from bot.state.store import STATE_FILE, BotState
from retrieval.index.dense import DenseIndex
from retrieval.index.embedder import DIMENSION, Embedder
from retrieval.index.sparse import SparseIndex
from retrieval.library import Library
from retrieval.models import ArticleDraft
from retrieval.ports import IdSet
from retrieval.ranking import TUNING, _rank_passages
from retrieval.reading.text import search_tokens
from retrieval.scope import Scope, ScopeError, parse_entry, resolve_now
from tests.bot.test_slack import mention
from tests.fakes.discord_fake import CHANNEL_ID, DiscordFake, running_fake
from tests.platform_helpers import Bolt, checked_bolt
from tests.scope_fixtures import COURIER, LOCAL, LOCAL_KEY, WIRE, build_scope_library

# Best matched by 98 wire stories; answered, in other words, by the local story too.
LENDER_QUESTION = "Which lender raised its mortgage rate?"
HALE_QUESTION = "What did Margaret Hale say about borrowers?"
UNANSWERABLE = "What is the price of bitcoin?"
ADMIN = Asker("slack", "UADMIN", "C1", is_admin=True)


# -- the indexes filter while they search ---------------------------------------------------------


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _one_percent_far_from(query: np.ndarray, vectors: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """1% of the ids: the ones farthest from the query, so none is in the unfiltered top k."""
    order = np.argsort(vectors @ query)
    return np.sort(ids[order[: len(ids) // 100]])


def _ivf(ids: np.ndarray, vectors: np.ndarray) -> DenseIndex:
    # A small IVF index built as DenseIndex builds its big ones (direct map, few probed cells).
    quantizer = faiss.IndexFlatIP(DIMENSION)
    ivf = faiss.IndexIVFFlat(quantizer, DIMENSION, 64, faiss.METRIC_INNER_PRODUCT)
    ivf.train(vectors)
    ivf.set_direct_map_type(faiss.DirectMap.Hashtable)  # type: ignore[attr-defined]
    ivf.nprobe = 4
    index = DenseIndex(ivf, trained_for=len(ids))
    index.add(ids, vectors)
    return index


@pytest.mark.parametrize("layout", ["flat", "ivf", "qdrant"])
def test_vector_search_within_one_percent_gets_that_percents_nearest(layout: str) -> None:
    rng = np.random.default_rng(7)
    vectors = _unit(rng.normal(size=(6000, DIMENSION)))
    ids = np.arange(6000, dtype=np.int64) * 3 + 11  # sparse ids, as the store's are after deletions
    query = vectors[0]
    if layout == "flat":
        index = DenseIndex.build(ids, vectors)
    elif layout == "ivf":
        index = _ivf(ids, vectors)
    else:
        from retrieval.index.qdrant import QdrantIndex

        index = QdrantIndex.in_memory()  # type: ignore[assignment]
        index.add(ids, vectors)
    scope = IdSet(_one_percent_far_from(query, vectors, ids))
    unfiltered, _ = index.search(query, 64)
    assert not set(unfiltered.tolist()) & set(scope.ids.tolist())  # a filter after the top k finds nothing
    found, scores = index.search(query, 10, within=scope)
    in_scope = np.isin(ids, scope.ids)
    exact = ids[in_scope][np.argsort(-(vectors[in_scope] @ query))[:10]]
    assert found.tolist() == exact.tolist()
    assert np.all(np.diff(scores) <= 1e-6)
    assert index.search(query, 10, within=IdSet(np.zeros(0, dtype=np.int64)))[0].tolist() == []


def test_keyword_search_within_one_percent_masks_before_the_top_k() -> None:
    index = SparseIndex()
    for doc_id in range(1000):
        # The 10 passages of the scope mention the rate once among many other words; the rest
        # say little else, so they all score higher.
        tokens = ["rate", "rise"] if doc_id % 100 else ["rate", *[f"word{doc_id}x{i}" for i in range(30)]]
        index.add(doc_id * 2, search_tokens(" ".join(tokens)))
    scope = IdSet(np.arange(0, 2000, 200))
    assert not {doc for doc, _ in index.search(["rate"], 32)} & set(scope.ids.tolist())
    found = index.search(["rate"], 5, within=scope)
    assert len(found) == 5 and all(doc in scope for doc, _ in found)
    # Scores are the library's own: the same passage scores the same inside the scope.
    everything = dict(index.search(["rate"], 1000))
    assert all(abs(everything[doc] - score) < 1e-6 for doc, score in found)


# -- the library ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scope_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    directory = tmp_path_factory.mktemp("scope") / "data"
    build_scope_library(directory, embedder)
    return directory


@pytest.fixture
def scope_library(scope_data_dir: Path, tmp_path: Path, embedder: Embedder) -> Iterator[Library]:
    copy = tmp_path / "scoped"
    shutil.copytree(scope_data_dir, copy)
    opened = Library.open(copy, embedder)
    yield opened
    opened.close()


def sources_of(answer_citations: list) -> set[str]:  # type: ignore[type-arg]
    return {c.source for c in answer_citations}


def test_a_scope_of_one_percent_answers_from_its_article_though_the_best_match_is_outside(
    scope_library: Library,
) -> None:
    local = Scope(outlets=(LOCAL,))
    resolved = scope_library.resolve_scope(local)
    assert resolved is not None and resolved.article_count == 1 and scope_library.store.article_count() == 100
    vector = scope_library.embedder.encode_one(LENDER_QUESTION)
    unscoped = _rank_passages(scope_library, vector, search_tokens(LENDER_QUESTION), TUNING)
    assert unscoped and not [pid for pid, _ in unscoped if pid in resolved.passages]  # post-top-k: nothing
    everywhere = scope_library.ask(LENDER_QUESTION)
    assert everywhere.answered and sources_of(everywhere.citations) == {WIRE}
    scoped = scope_library.ask(LENDER_QUESTION, scope=local)
    assert scoped.answered and sources_of(scoped.citations) == {LOCAL}
    assert "6.1%" in scoped.text and "Margaret Hale" in scoped.text
    hits = scope_library.search("lender raised mortgage rate", 5, scope=local)
    assert hits and {hit.citation.source for hit in hits} == {LOCAL}


def test_what_a_person_said_is_scoped_too(scope_library: Library) -> None:
    everywhere = scope_library.ask(HALE_QUESTION)
    assert everywhere.answered and WIRE in sources_of(everywhere.citations)
    scoped = scope_library.ask(HALE_QUESTION, scope=Scope(outlets=(LOCAL,)))
    assert scoped.answered and sources_of(scoped.citations) == {LOCAL}
    assert "borrowers will not" in scoped.text
    # Quoted nowhere in the scope: no answer from outside it, and the scope is named.
    elsewhere = scope_library.ask(HALE_QUESTION, scope=Scope(outlets=(COURIER,)))
    assert not elsewhere.answered and elsewhere.citations == []
    assert f"the 10 articles from {COURIER} this channel follows" in elsewhere.message
    assert {hit.citation.source for hit in elsewhere.closest} <= {COURIER}


def test_an_abstention_names_the_scope_and_its_article_count(scope_library: Library) -> None:
    answer = scope_library.ask(UNANSWERABLE, scope=Scope(tags=("local",)))
    assert not answer.answered and answer.article_count == 11
    assert "in the 11 articles tagged local this channel follows" in answer.message
    assert answer.closest and {hit.citation.source for hit in answer.closest} <= {LOCAL, COURIER}
    assert "in the 100 articles I have" in scope_library.ask(UNANSWERABLE).message


def test_entries_of_one_kind_are_ored_and_of_different_kinds_anded(scope_library: Library) -> None:
    store = scope_library.store
    assert resolve_now(store, Scope(outlets=(LOCAL, COURIER))).article_count == 11
    assert resolve_now(store, Scope(outlets=(COURIER, WIRE), tags=("local",))).article_count == 10
    assert resolve_now(store, Scope(outlets=(LOCAL,), tags=("local", "business"))).article_count == 1
    assert resolve_now(store, Scope(outlets=(WIRE,), tags=("local",))).article_count == 0
    # A date window counts the published date (2005-02-01 .. 2005-02-28 here).
    window = resolve_now(store, Scope(outlets=(LOCAL,), since_days=5), now=datetime(2005, 2, 12, tzinfo=UTC))
    assert window.article_count == 1
    stale = resolve_now(store, Scope(outlets=(LOCAL,), since_days=1), now=datetime(2005, 2, 20, tzinfo=UTC))
    assert stale.article_count == 0
    assert scope_library.ask(LENDER_QUESTION, scope=Scope(outlets=(WIRE,), tags=("local",))).message.startswith(
        "This channel follows articles from Metro Wire, tagged local, and I have none of those yet."
    )


def test_unknown_entries_are_refused_with_the_known_ones(scope_library: Library) -> None:
    store = scope_library.store
    with pytest.raises(ScopeError, match=f"Known outlets: {LOCAL}, {COURIER}, {WIRE}"):
        parse_entry(store, "outlet:BBC Sport")
    with pytest.raises(ScopeError, match="Known tags: business, local"):
        parse_entry(store, "tag:football")
    with pytest.raises(ScopeError, match="no feeds yet"):
        parse_entry(store, "feed:https://example.com/rss")
    with pytest.raises(ScopeError, match="since:30d"):
        parse_entry(store, "since:forever")
    with pytest.raises(ScopeError, match="not a scope entry"):
        parse_entry(store, "BBC Sport")
    assert parse_entry(store, "outlet:ashworth  gazette") == ("outlet", LOCAL)
    assert parse_entry(store, "section:LOCAL") == ("tag", "local")
    assert parse_entry(store, "since:2w") == ("since", 14)
    assert split_entries("outlet:Ashworth Gazette tag:local | since:30d") == [
        "outlet:Ashworth Gazette",
        "tag:local",
        "since:30d",
    ]


def test_a_resolved_scope_is_reused_until_the_articles_change(scope_library: Library) -> None:
    local = Scope(outlets=(LOCAL,))
    first = scope_library.resolve_scope(local)
    assert scope_library.resolve_scope(local) is first  # no store read for the next question
    scope_library.add_drafts(
        [ArticleDraft("gazette:2", "Market to double", "Ashworth's market will double to 80 stalls.", source=LOCAL)]
    )
    again = scope_library.resolve_scope(local)
    assert again is not first and again is not None and again.article_count == 2


# -- the chat side ---------------------------------------------------------------------------------


def service_over(library: Library, state_path: Path | None = None) -> Service:
    limits = LimitSettings(user_burst=10_000, channel_burst=10_000)
    return add_features(Service(library, BotState(state_path or library.data_dir / STATE_FILE), limits))


@pytest.fixture
def scope_service(scope_library: Library) -> Iterator[Service]:
    service = service_over(scope_library)
    yield service
    service.state.close()


def test_scope_is_for_admins_survives_a_restart_and_scopes_search_sources_and_digests(
    scope_service: Service, scope_library: Library
) -> None:
    member = Asker("slack", "U1", "C1")
    refused = scope_service.run_command(f"/scope add outlet:{LOCAL}", member)
    assert isinstance(refused, TextReply) and refused.error and "admins can" in refused.text
    assert scope_service.state.channel_scope("slack", "C1") is None
    added = scope_service.run_command(f"/scope add outlet:{LOCAL} tag:local", ADMIN)
    assert isinstance(added, TextReply) and not added.error
    assert "1 article from Ashworth Gazette, tagged local" in added.text
    # One bad entry changes nothing.
    bad = scope_service.run_command("/scope add tag:business outlet:Nowhere", ADMIN)
    assert isinstance(bad, TextReply) and bad.error and "Nothing was changed" in bad.text
    shown = scope_service.run_command("/scope", member)
    assert isinstance(shown, TextReply) and f"`outlet:{LOCAL}`, `tag:local`" in shown.text
    assert "tag:business" not in shown.text

    search = scope_service.search("lender raised mortgage rate", member)
    assert isinstance(search, SearchReply) and {h.citation.source for h in search.hits} == {LOCAL}
    sources = scope_service.sources(1, member)
    assert isinstance(sources, SourcesReply) and sources.total == 1 and sources.articles[0].key == LOCAL_KEY
    other = scope_service.sources(1, Asker("slack", "U1", "C2"))
    assert isinstance(other, SourcesReply) and other.total == 100  # another channel is not scoped

    scheduler = scope_service.scheduler
    assert scheduler is not None
    since = datetime.now(UTC) - timedelta(days=1)
    digest = scheduler.on_demand("slack", "C1", since)
    assert digest.article_count == 1 and {a.key for s in digest.stories for a in s.articles} == {LOCAL_KEY}
    assert "Ashworth Gazette" in digest.header
    assert scheduler.on_demand("slack", "C2", since).article_count == 100

    # A restart: a new state and service over the same files.
    scope_service.state.close()
    restarted = service_over(scope_library)
    try:
        answer = restarted.ask(LENDER_QUESTION, member)
        assert isinstance(answer, AnswerReply) and sources_of(answer.answer.citations) == {LOCAL}
        abstained = restarted.ask(UNANSWERABLE, member)
        assert isinstance(abstained, AnswerReply)
        assert "the 1 article from Ashworth Gazette, tagged local this channel follows" in abstained.answer.message
        cleared = restarted.run_command("/scope clear", ADMIN)
        assert isinstance(cleared, TextReply) and "all 100 articles" in cleared.text
        answer = restarted.ask(LENDER_QUESTION, member)
        assert isinstance(answer, AnswerReply) and sources_of(answer.answer.citations) == {WIRE}
    finally:
        restarted.state.close()
        scope_service.state = BotState(scope_library.data_dir / STATE_FILE)  # for the fixture to close


@pytest.fixture
def slack_bolt(scope_service: Service, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[Bolt]:
    with checked_bolt(scope_service, tmp_path, caplog) as served:
        yield served


def test_slack_byline_scope_add_show_clear_and_a_scoped_answer(slack_bolt: Bolt) -> None:
    refused = slack_bolt.response(slack_bolt.command("/byline", f"scope add outlet:{LOCAL}", user="U1"))
    assert refused["response_type"] == "ephemeral" and "admins can" in refused["text"]
    unknown = slack_bolt.response(slack_bolt.command("/byline", "scope add outlet:BBC Sport", user="UADMIN"))
    assert f"Known outlets: {LOCAL}, {COURIER}, {WIRE}" in json.dumps(unknown, ensure_ascii=False)
    added = slack_bolt.response(slack_bolt.command("/byline", f"scope add outlet:{LOCAL}", user="UADMIN"))
    assert "This channel now follows" in json.dumps(added, ensure_ascii=False)
    shown = slack_bolt.response(slack_bolt.command("/byline", "scope show", user="U1"))
    assert f"outlet:{LOCAL}" in json.dumps(shown, ensure_ascii=False)

    assert slack_bolt.event(mention(LENDER_QUESTION, "1700000002.000100")) == (200, "")
    posted = json.dumps(slack_bolt.fake.wait_call("chat.postMessage").params, ensure_ascii=False)
    assert LOCAL in posted and WIRE not in posted and "6.1%" in posted

    searched = slack_bolt.response(slack_bolt.command("/byline", "search lender raised mortgage rate"))
    text = json.dumps(searched, ensure_ascii=False)
    assert LOCAL in text and WIRE not in text

    cleared = slack_bolt.response(slack_bolt.command("/byline", "scope clear", user="UADMIN"))
    assert "all 100 articles" in json.dumps(cleared, ensure_ascii=False)


def test_discord_scope_commands_and_a_scoped_answer(scope_service: Service) -> None:
    from tests.bot.test_discord import callback, followups, mention, start_bot, text_of

    fake: DiscordFake
    with running_fake() as fake:
        bot = start_bot(fake, scope_service)
        try:
            add = [{"name": "add", "type": 1, "options": [{"name": "entries", "type": 3, "value": f"outlet:{LOCAL}"}]}]
            denied = fake.command("scope", add)
            fake.dispatch("INTERACTION_CREATE", denied)
            body = callback(fake, denied)["data"]
            assert body["flags"] & 64 and "admins can" in body["content"]
            allowed = fake.command("scope", add, permissions=1 << 4)  # Manage Channels
            fake.dispatch("INTERACTION_CREATE", allowed)
            assert "This channel now follows" in callback(fake, allowed)["data"]["content"]
            show = fake.command("scope", [{"name": "show", "type": 1, "options": []}])
            fake.dispatch("INTERACTION_CREATE", show)
            assert f"outlet:{LOCAL}" in callback(fake, show)["data"]["content"]

            mention(fake, LENDER_QUESTION)
            answer = fake.wait_request("POST", f"/channels/{CHANNEL_ID}/messages")[0].body
            text = json.dumps(answer, ensure_ascii=False)
            assert LOCAL in text and WIRE not in text

            search = fake.command("search", [{"name": "query", "type": 3, "value": "lender raised mortgage rate"}])
            fake.dispatch("INTERACTION_CREATE", search)
            found = text_of(followups(fake, search)[0])
            assert LOCAL in found and WIRE not in found
        finally:
            bot.close()


# The same tests over the embedded library and the cluster backend (PostgreSQL + Qdrant).
pytestmark = pytest.mark.backends("embedded", "cluster")
