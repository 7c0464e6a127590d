"""The article store's contract (``retrieval.ports.ArticleStore``, ``retrieval/storage/store.py``), over
SQLite and PostgreSQL.

The same test functions run on the embedded SQLite file and on a PostgreSQL database (the
cluster backend's article store, ``Backend.store_location``); a new engine adds a location to
``location`` and must pass the same list. The data are three small made-up articles written
through ``Store.put_article`` itself, with hand-cut passages, sentences, quotes and small
deterministic vectors, so that every id, offset and count can be checked exactly. The companion
stores over the same database (``FeedStore``, ``WebPageStore``, ``AuditLog``, ``ScopeStore``) are
held to it too.

Where the store promises no order (no ``ORDER BY``), rows are compared as sets.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from retrieval.backend import STORE_FILE
from retrieval.models import ArticleDraft
from retrieval.storage.audit import AuditLog
from retrieval.storage.database import DATABASE_ERRORS
from retrieval.storage.feeds import FeedStore, WebPageStore
from retrieval.storage.scopes import ScopeStore
from retrieval.storage.store import PassageRow, QuoteRow, SentenceRow, Store, StoredArticle

DIMENSION = 8  # the store keeps whatever width it is given; small keeps the checks exact


@dataclass(frozen=True)
class Made:
    """A made-up article: paragraphs as lists of sentences, and its quotes as
    (the words inside the quote marks, speaker, partial)."""

    key: str
    title: str
    paragraphs: list[list[str]]
    quotes: list[tuple[str, str, bool]] = field(default_factory=list)
    url: str = ""
    published: str = ""
    source: str = ""
    author: str = ""
    tags: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return "\n\n".join(" ".join(sentences) for sentences in self.paragraphs)


HARBOUR = Made(
    key="/news/harbour.md",
    title="Fairhaven harbour bridge closed for repairs",
    paragraphs=[
        ["The harbour bridge in Fairhaven closed on Monday.", "Engineers found cracks in two of its supports."],
        [
            "\u201cWe will reopen it before the summer,\u201d said harbour master Piotr Nowak.",
            "Asked if the work could take longer, he said: \u201cNever.\u201d",
        ],
    ],
    quotes=[("We will reopen it before the summer,", "Piotr Nowak", False), ("Never.", "Piotr Nowak", False)],
    url="https://coast.example/harbour-bridge",
    published="2024-03-02",
    source="Coast Gazette",
    author="Ana Reyes",
    tags=("local", "transport"),
)
BUDGET = Made(
    key="/news/budget.md",
    title="Council cuts the transport budget by a fifth",
    paragraphs=[
        ["The council cut the transport budget by a fifth.", "Bus routes will be reviewed in June."],
        [
            "\u201cThis budget puts buses last,\u201d said union spokesman Tom Brennan.",
            "A banner outside the town hall read \u201cSave our buses\u201d.",
        ],
    ],
    quotes=[("This budget puts buses last,", "Tom Brennan", True), ("Save our buses", "", False)],
    url="https://coast.example/budget",
    published="2024-06-01",
    source="Valley Post",
    tags=("politics", "transport"),
)
FESTIVAL = Made(
    key="/news/festival.md",
    title="Lantern festival moves to the harbour front",
    paragraphs=[
        ["The lantern festival moves to the harbour front this year."],
        [
            "\u201cThe old square is too small.",
            "The harbour has room for everyone,\u201d said organiser Ingrid Solberg.",
        ],
    ],
    quotes=[("The old square is too small. The harbour has room for everyone,", "Ingrid Solberg", False)],
)
ALL = (HARBOUR, BUDGET, FESTIVAL)


def vector_of(text: str) -> np.ndarray:
    """A deterministic unit vector for a sentence."""
    values = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(DIMENSION)
    return (values / np.linalg.norm(values)).astype(np.float32)


def draft_of(made: Made) -> ArticleDraft:
    return ArticleDraft(
        key=made.key,
        title=made.title,
        text=made.text,
        source=made.source,
        url=made.url,
        published=made.published,
        author=made.author,
        tags=made.tags,
    )


def rows_of(made: Made) -> tuple[list[PassageRow], list[SentenceRow], list[QuoteRow]]:
    """One passage per paragraph, the sentences as written, each quote found in the text."""
    text = made.text
    passages: list[PassageRow] = []
    sentences: list[SentenceRow] = []
    start = 0
    for number, paragraph in enumerate(made.paragraphs):
        end = start + len(" ".join(paragraph))
        passages.append(PassageRow(number, number, start, end))
        at = start
        for sentence in paragraph:
            sentences.append(SentenceRow(number, number, at, at + len(sentence), vector_of(sentence)))
            at += len(sentence) + 1
        start = end + 2
    quotes: list[QuoteRow] = []
    for group, (words, speaker, partial) in enumerate(made.quotes):
        where = text.index(words)
        in_paragraph = next(i for i, p in enumerate(passages) if p.start <= where < p.end)
        quotes.append(QuoteRow(in_paragraph, where, where + len(words), speaker, group, partial))
    return passages, sentences, quotes


def put(store: Store, made: Made, replace_id: int | None = None, content_hash: str = "") -> StoredArticle:
    passages, sentences, quotes = rows_of(made)
    return store.put_article(
        draft_of(made), content_hash or f"hash:{made.key}", passages, sentences, quotes, replace_id
    )


def put_all(store: Store) -> dict[str, StoredArticle]:
    return {made.key: put(store, made) for made in ALL}


def sorted_rows(table: np.ndarray) -> list[tuple[int, ...]]:
    return sorted(tuple(int(v) for v in row) for row in table.tolist())


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where the article store lives: the data directory's file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / STORE_FILE
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def store(location: Path | str) -> Iterator[Store]:
    opened = Store(location)
    yield opened
    opened.close()


# -- an empty store -----------------------------------------------------------------------------


def test_a_new_store_is_empty_at_generation_zero(store: Store) -> None:
    assert store.generation() == 0
    assert store.article_count() == 0
    assert store.counts() == {"articles": 0, "passages": 0, "sentences": 0, "quotes": 0}
    for ids in (store.article_ids(), store.passage_ids(), store.sentence_ids()):
        assert ids.dtype == np.int64 and ids.tolist() == []
    assert store.titles() == [] and store.speakers() == {}
    assert store.list_articles() == [] and store.recent_articles(5) == []
    assert list(store.article_texts()) == [] and list(store.iter_passage_texts()) == []
    assert list(store.iter_sentence_vectors()) == []
    assert store.article(1) is None and store.meta_value("no such key") is None


def test_empty_id_lists_read_nothing(store: Store) -> None:
    put_all(store)
    assert store.articles([]) == {} and store.passages([]) == {}
    assert store.sentences_of_passages([]) == [] and store.sentences_of_articles([]) == []
    assert store.sentences_by_ids([]) == {} and store.sentence_passages([]) == {}
    assert store.quotes_of_articles([]) == [] and store.quotes_by_speakers([]) == []
    assert store.quotes_by_ids([]) == {} and store.article_ids_of_passages([]) == {}
    for table in (store.speaker_quote_ranges([]), store.article_quote_ranges([])):
        assert table.shape == (0, 5) and table.dtype == np.int64


# -- articles -----------------------------------------------------------------------------------


def test_a_stored_article_reads_back_by_id_with_or_without_its_text(store: Store) -> None:
    stored = put(store, HARBOUR)
    assert stored.replaced is None
    article = store.article(stored.article_id)
    assert article is not None
    assert (article.id, article.key, article.title) == (stored.article_id, HARBOUR.key, HARBOUR.title)
    assert (article.source, article.url, article.published, article.author) == (
        HARBOUR.source,
        HARBOUR.url,
        HARBOUR.published,
        HARBOUR.author,
    )
    assert article.text == "", "the text is read only when asked for"
    assert article.added_at.endswith("Z") and len(article.added_at) == len("2024-01-01T00:00:00.000000Z")
    with_text = store.article(stored.article_id, with_text=True)
    assert with_text is not None and with_text.text == HARBOUR.text
    assert with_text.added_at == article.added_at


def test_articles_by_ids_leave_unknown_ids_out(store: Store) -> None:
    stored = put_all(store)
    harbour, budget = stored[HARBOUR.key].article_id, stored[BUDGET.key].article_id
    found = store.articles([budget, 999, harbour])
    assert set(found) == {harbour, budget}
    assert found[budget].title == BUDGET.title and found[budget].text == ""
    assert found[harbour] == store.article(harbour)
    assert store.article(999) is None


def test_text_outside_ascii_is_kept_exactly(store: Store) -> None:
    made = Made(
        key="/news/caf\u00e9.md",
        title="Caf\u00e9 \u201cL\u2019\u00c9t\u00e9\u201d reopens \U0001f389",
        paragraphs=[
            ["Z\u00fcrich\u2019s \u0441\u0442\u043e\u043b\u0438\u0446\u0430 caf\u00e9 reopened \u2014 finally."]
        ],
        source="K\u00f8benhavn Daily",
    )
    stored = put(store, made)
    article = store.article(stored.article_id, with_text=True)
    assert article is not None
    assert (article.key, article.title, article.source, article.text) == (made.key, made.title, made.source, made.text)
    assert [s.text for s in store.sentences_of_articles([stored.article_id])] == made.paragraphs[0]


def test_counts_and_id_lists_follow_the_stored_articles(store: Store) -> None:
    stored = put_all(store)
    assert store.article_count() == 3
    assert store.counts() == {"articles": 3, "passages": 6, "sentences": 11, "quotes": 5}
    assert store.article_ids().tolist() == sorted(s.article_id for s in stored.values())
    assert store.passage_ids().tolist() == sorted(p for s in stored.values() for p in s.passage_ids)
    assert store.sentence_ids().tolist() == sorted(i for s in stored.values() for i in s.sentence_ids)
    assert sorted(store.titles()) == sorted(made.title for made in ALL)
    assert list(store.article_texts()) == [(stored[made.key].article_id, made.text) for made in ALL]


def test_duplicates_are_found_by_key_and_by_content_hash(store: Store) -> None:
    stored = put(store, HARBOUR, content_hash="sha256:abc")
    assert store.find_by_key(HARBOUR.key) == (stored.article_id, "sha256:abc")
    assert store.find_by_hash("sha256:abc") == stored.article_id
    assert store.find_by_key("/news/elsewhere.md") is None
    assert store.find_by_hash("sha256:other") is None


def test_an_article_is_found_by_its_key_or_its_url(store: Store) -> None:
    stored = put_all(store)
    harbour = stored[HARBOUR.key].article_id
    assert store.article_id_by_key_or_url(HARBOUR.key) == harbour
    assert store.article_id_by_key_or_url(HARBOUR.url) == harbour
    assert store.article_id_by_key_or_url("https://coast.example/nothing") is None
    assert FESTIVAL.url == ""
    assert store.article_id_by_key_or_url("") is None, "an empty URL names no article"


def test_the_first_stored_article_answers_for_a_shared_url(store: Store) -> None:
    first = put(store, HARBOUR)
    put(store, Made(key="/mirror/harbour.md", title="Mirror", paragraphs=[["Copied."]], url=HARBOUR.url))
    assert store.article_id_by_key_or_url(HARBOUR.url) == first.article_id


def test_list_articles_is_newest_first_by_published_date_else_when_added(store: Store) -> None:
    stored = put_all(store)
    listed = store.list_articles()
    # The festival has no date: it sorts by when it was added (today), after every older date.
    assert [a.key for a in listed] == [FESTIVAL.key, BUDGET.key, HARBOUR.key]
    assert [a.id for a in listed] == [stored[k].article_id for k in (FESTIVAL.key, BUDGET.key, HARBOUR.key)]
    assert all(a.text == "" for a in listed)


def test_list_articles_pages_and_windows_by_when_added(store: Store) -> None:
    put_all(store)
    newest_first = [a.key for a in store.list_articles()]
    assert [a.key for a in store.list_articles(offset=1, limit=1)] == newest_first[1:2]
    assert store.list_articles(offset=3) == []
    added = {a.key: a.added_at for a in store.list_articles()}
    since = added[BUDGET.key]  # the second one stored
    assert [a.key for a in store.list_articles(since=since)] == [FESTIVAL.key, BUDGET.key]
    assert [a.key for a in store.list_articles(since=since, until=added[FESTIVAL.key])] == [BUDGET.key]
    assert store.list_articles(since="9999") == []


def test_recent_articles_are_the_last_stored_first(store: Store) -> None:
    stored = put_all(store)
    festival, budget = stored[FESTIVAL.key].article_id, stored[BUDGET.key].article_id
    assert store.recent_articles(2) == [(festival, FESTIVAL.key, ""), (budget, BUDGET.key, BUDGET.published)]
    assert len(store.recent_articles(10)) == 3


# -- passages and sentences ---------------------------------------------------------------------


def test_passages_and_sentences_are_cut_from_the_article_text(store: Store) -> None:
    stored = put(store, HARBOUR)
    passages = store.passages(stored.passage_ids)
    assert set(passages) == set(stored.passage_ids)
    text = HARBOUR.text
    for number, passage_id in enumerate(stored.passage_ids):
        passage = passages[passage_id]
        assert (passage.article_id, passage.paragraph_first, passage.paragraph_last) == (
            stored.article_id,
            number,
            number,
        )
        assert passage.text == text[passage.start : passage.end] == " ".join(HARBOUR.paragraphs[number])
    sentences = store.sentences_of_articles([stored.article_id])
    assert [s.id for s in sentences] == stored.sentence_ids, "in id order, which is text order"
    assert [s.text for s in sentences] == [s for paragraph in HARBOUR.paragraphs for s in paragraph]
    assert all(s.text == text[s.start : s.end] for s in sentences)
    assert [s.paragraph for s in sentences] == [0, 0, 1, 1]
    assert [s.passage_id for s in sentences] == [stored.passage_ids[i] for i in (0, 0, 1, 1)]


def test_sentences_and_passages_lead_to_each_other_and_their_article(store: Store) -> None:
    stored = put_all(store)
    harbour, budget = stored[HARBOUR.key], stored[BUDGET.key]
    second = budget.passage_ids[1]
    assert [s.id for s in store.sentences_of_passages([second])] == budget.sentence_ids[2:]
    assert [s.id for s in store.sentences_of_passages([second, harbour.passage_ids[0]])] == sorted(
        harbour.sentence_ids[:2] + budget.sentence_ids[2:]
    )
    by_id = store.sentences_by_ids([harbour.sentence_ids[3], 999])
    assert list(by_id) == [harbour.sentence_ids[3]] and by_id[harbour.sentence_ids[3]].text.endswith("\u201d")
    assert store.sentence_passages(harbour.sentence_ids) == dict(
        zip(harbour.sentence_ids, [harbour.passage_ids[i] for i in (0, 0, 1, 1)], strict=True)
    )
    assert store.article_ids_of_passages([*harbour.passage_ids, second, 999]) == {
        harbour.passage_ids[0]: harbour.article_id,
        harbour.passage_ids[1]: harbour.article_id,
        second: budget.article_id,
    }
    assert store.passage_texts_of_article(budget.article_id) == [
        (pid, " ".join(p)) for pid, p in zip(budget.passage_ids, BUDGET.paragraphs, strict=True)
    ]
    assert sorted(store.sentence_ids_of_article(budget.article_id)) == budget.sentence_ids
    every = dict(store.iter_passage_texts())
    assert list(every) == sorted(every) and every[second] == " ".join(BUDGET.paragraphs[1])


def test_sentence_vectors_come_back_float16_rounded_in_the_order_asked(store: Store) -> None:
    stored = put(store, HARBOUR)
    sentences = [s for paragraph in HARBOUR.paragraphs for s in paragraph]
    expected = {
        i: vector_of(s).astype(np.float16).astype(np.float32)
        for i, s in zip(stored.sentence_ids, sentences, strict=True)
    }
    asked = [stored.sentence_ids[2], stored.sentence_ids[0], stored.sentence_ids[2]]
    vectors = store.sentence_vectors(asked)
    assert vectors.dtype == np.float32 and vectors.shape == (3, DIMENSION)
    np.testing.assert_array_equal(vectors, np.stack([expected[i] for i in asked]))


def test_an_unknown_sentence_vector_is_a_key_error(store: Store) -> None:
    stored = put(store, HARBOUR)
    with pytest.raises(KeyError):
        store.sentence_vectors([stored.sentence_ids[0], 999])


def test_sentence_vectors_are_iterated_in_id_batches(store: Store) -> None:
    stored = put_all(store)
    batches = list(store.iter_sentence_vectors(batch=4))
    assert [len(ids) for ids, _ in batches] == [4, 4, 3]
    ids = np.concatenate([ids for ids, _ in batches])
    assert ids.dtype == np.int64 and ids.tolist() == sorted(i for s in stored.values() for i in s.sentence_ids)
    vectors = np.concatenate([vectors for _, vectors in batches])
    assert vectors.dtype == np.float32
    np.testing.assert_array_equal(vectors, store.sentence_vectors(ids.tolist()))


# -- quotes and speakers ------------------------------------------------------------------------


def test_quotes_read_back_by_article_speaker_and_id(store: Store) -> None:
    stored = put_all(store)
    budget = stored[BUDGET.key].article_id
    quotes = store.quotes_of_articles([budget])
    assert [(q.text, q.speaker, q.group, q.partial) for q in quotes] == [
        ("This budget puts buses last,", "Tom Brennan", 0, True),
        ("Save our buses", "", 1, False),
    ]
    assert all(q.article_id == budget and q.text == BUDGET.text[q.start : q.end] for q in quotes)
    assert [q.paragraph for q in quotes] == [1, 1]
    by_speaker = store.quotes_by_speakers(["Piotr Nowak", "Nobody"])
    assert [q.text for q in by_speaker] == ["We will reopen it before the summer,", "Never."]
    assert store.quotes_by_ids([quotes[1].id, 999]) == {quotes[1].id: quotes[1]}


def test_speakers_count_attributed_quotes_only(store: Store) -> None:
    put_all(store)
    assert store.speakers() == {"Piotr Nowak": 2, "Tom Brennan": 1, "Ingrid Solberg": 1}


def test_quote_ranges_hold_attributed_quotes_of_two_words_or_more(store: Store) -> None:
    stored = put_all(store)
    harbour, budget, festival = stored[HARBOUR.key], stored[BUDGET.key], stored[FESTIVAL.key]
    nowak = store.quotes_by_speakers(["Piotr Nowak"])
    # "Never." is one word: left out; (quote id, first sentence, last sentence, partial, article).
    assert sorted_rows(store.speaker_quote_ranges(["Piotr Nowak"])) == [
        (nowak[0].id, harbour.sentence_ids[2], harbour.sentence_ids[2], 0, harbour.article_id)
    ]
    (solberg,) = store.quotes_by_speakers(["Ingrid Solberg"])
    both = store.speaker_quote_ranges(["Ingrid Solberg", "Tom Brennan"])
    assert both.dtype == np.int64 and both.shape == (2, 5)
    (brennan,) = store.quotes_by_speakers(["Tom Brennan"])
    assert sorted_rows(both) == sorted(
        [
            # A quote over two sentences covers both.
            (solberg.id, festival.sentence_ids[1], festival.sentence_ids[2], 0, festival.article_id),
            (brennan.id, budget.sentence_ids[2], budget.sentence_ids[2], 1, budget.article_id),
        ]
    )
    # The unattributed "Save our buses" is in no range, by article either.
    assert sorted_rows(store.article_quote_ranges([budget.article_id, harbour.article_id])) == sorted(
        [
            (brennan.id, budget.sentence_ids[2], budget.sentence_ids[2], 1, budget.article_id),
            (nowak[0].id, harbour.sentence_ids[2], harbour.sentence_ids[2], 0, harbour.article_id),
        ]
    )
    assert store.speaker_quote_ranges(["Nobody"]).shape == (0, 5)


def test_replacing_every_quote_sets_the_marker_and_keeps_the_generation(store: Store) -> None:
    stored = put_all(store)
    generation = store.generation()
    harbour, budget = stored[HARBOUR.key].article_id, stored[BUDGET.key].article_id
    texts = dict(store.article_texts())
    old_ids = {q.id for q in store.quotes_of_articles(store.article_ids().tolist())}
    where = HARBOUR.text.index("We will")
    new_quote = QuoteRow(1, where, where + len("We will reopen it"), "P. Nowak", 0, True)
    store.replace_all_quotes(texts, {harbour: [new_quote], budget: []}, "quote_rules", "7")
    assert store.meta_value("quote_rules") == "7"
    assert store.generation() == generation, "the index files hold no quotes"
    assert store.counts()["quotes"] == 1
    assert store.speakers() == {"P. Nowak": 1}
    (quote,) = store.quotes_of_articles([harbour, budget, stored[FESTIVAL.key].article_id])
    assert (quote.text, quote.speaker, quote.partial) == ("We will reopen it", "P. Nowak", True)
    assert quote.id > max(old_ids), "a re-read quote never takes an id an earlier quote had"
    sentence = stored[HARBOUR.key].sentence_ids[2]
    assert sorted_rows(store.speaker_quote_ranges(["P. Nowak"])) == [(quote.id, sentence, sentence, 1, harbour)]


# -- bookkeeping --------------------------------------------------------------------------------


def test_every_article_write_raises_the_generation_and_bookkeeping_does_not(store: Store) -> None:
    first = put(store, HARBOUR)
    assert store.generation() == 1
    put(store, BUDGET)
    assert store.generation() == 2
    store.set_meta("index_generation", "2")
    FeedStore(store).add_if_new("https://coast.example/feed.xml")
    AuditLog(store).add([("2024-01-01T00:00:00.000000Z", "cli", "remove", "k", "t", "")])
    assert store.generation() == 2
    store.delete_article(first.article_id)
    assert store.generation() == 3


def test_meta_values_are_recorded_and_replaced(store: Store) -> None:
    assert store.meta_value("index_generation") is None
    store.set_meta("index_generation", "4")
    store.set_meta("quote_rules", "2")
    store.set_meta("index_generation", "5")
    assert (store.meta_value("index_generation"), store.meta_value("quote_rules")) == ("5", "2")
    assert store.meta_value("generation") == "0", "the generation is a meta value too"


def test_a_failed_write_leaves_nothing_behind(store: Store) -> None:
    put(store, HARBOUR)
    before = (store.generation(), store.counts(), store.article_ids().tolist())
    passages, sentences, quotes = rows_of(BUDGET)
    broken = [*sentences, SentenceRow(7, 1, 0, 3, vector_of("x"))]  # a passage that does not exist
    with pytest.raises(IndexError):
        store.put_article(draft_of(BUDGET), "hash:budget", passages, broken, quotes, None)
    assert (store.generation(), store.counts(), store.article_ids().tolist()) == before
    assert store.find_by_key(BUDGET.key) is None
    assert put(store, BUDGET).article_id > before[2][-1], "the store takes the next write"


# -- replacing and removing ---------------------------------------------------------------------


def test_replacing_an_article_keeps_one_version_under_its_key(store: Store) -> None:
    old = put(store, HARBOUR)
    assert store.article(old.article_id) is not None  # read once: cached
    changed = Made(
        key=HARBOUR.key,
        title="Fairhaven harbour bridge to reopen in May",
        paragraphs=[["The harbour bridge will reopen in May."]],
        url=HARBOUR.url,
    )
    new = put(store, changed, replace_id=old.article_id, content_hash="hash:v2")
    assert new.replaced == old.article_id
    assert new.article_id > old.article_id
    assert store.find_by_key(HARBOUR.key) == (new.article_id, "hash:v2")
    assert store.find_by_hash(f"hash:{HARBOUR.key}") is None
    assert store.article(old.article_id) is None and store.quotes_of_articles([old.article_id]) == []
    assert store.counts() == {"articles": 1, "passages": 1, "sentences": 1, "quotes": 0}
    assert store.speakers() == {}


def test_deleting_an_article_takes_everything_derived_from_it(store: Store) -> None:
    stored = put_all(store)
    harbour, budget = stored[HARBOUR.key], stored[BUDGET.key]
    assert store.article(harbour.article_id) is not None  # read once: cached
    store.delete_article(harbour.article_id)
    assert store.article(harbour.article_id) is None and store.articles([harbour.article_id]) == {}
    assert store.find_by_key(HARBOUR.key) is None and store.article_id_by_key_or_url(HARBOUR.url) is None
    assert store.passages(harbour.passage_ids) == {} and store.sentences_by_ids(harbour.sentence_ids) == {}
    assert store.sentences_of_articles([harbour.article_id]) == []
    assert store.quotes_of_articles([harbour.article_id]) == []
    assert store.counts() == {"articles": 2, "passages": 4, "sentences": 7, "quotes": 3}
    assert store.speakers() == {"Tom Brennan": 1, "Ingrid Solberg": 1}
    assert ScopeStore(store).tags() == ["politics", "transport"], "its own tag 'local' went with it"
    assert ScopeStore(store).outlets() == ["Valley Post"]
    # The others are untouched.
    assert [s.id for s in store.sentences_of_articles([budget.article_id])] == budget.sentence_ids
    assert store.article_ids().tolist() == sorted([budget.article_id, stored[FESTIVAL.key].article_id])


def test_deleting_an_unknown_article_changes_no_rows(store: Store) -> None:
    put_all(store)
    counts = store.counts()
    store.delete_article(999)
    assert store.counts() == counts


def test_ids_are_never_reused_after_a_delete_even_by_a_new_process(store: Store) -> None:
    first = put(store, HARBOUR)
    store.delete_article(first.article_id)
    again = Store(store.location)  # another process, knowing nothing of the first
    try:
        second = put(again, BUDGET)
    finally:
        again.close()
    assert second.article_id > first.article_id
    assert min(second.passage_ids) > max(first.passage_ids)
    assert min(second.sentence_ids) > max(first.sentence_ids)


def test_a_later_articles_quotes_have_higher_ids_than_every_stored_quote(store: Store) -> None:
    stored = put_all(store)
    store.delete_article(stored[FESTIVAL.key].article_id)
    kept = [q.id for q in store.quotes_of_articles(store.article_ids().tolist())]
    later = put(store, Made(key="/news/late.md", title="Late", paragraphs=[["\u201cLate words here,\u201d he said."]]))
    assert all(q.id > max(kept) for q in store.quotes_of_articles([later.article_id]))


def test_quote_ids_are_never_reused_after_a_delete(store: Store) -> None:
    first = put(store, HARBOUR)
    gone = {q.id for q in store.quotes_of_articles([first.article_id])}
    store.delete_article(first.article_id)
    second = put(store, BUDGET)
    assert not gone & {q.id for q in store.quotes_of_articles([second.article_id])}


def test_numpy_integer_ids_find_the_same_rows_as_python_ints(store: Store) -> None:
    stored = put_all(store)
    ids: list[Any] = list(store.article_ids())  # numpy int64s, as the store hands them out
    assert store.article(ids[0]) == store.article(int(ids[0]))
    assert set(store.articles(ids)) == {int(i) for i in ids}
    assert len(store.sentences_of_articles(ids)) == sum(len(s.sentence_ids) for s in stored.values())
    assert len(store.quotes_of_articles(ids)) == 5


# -- two handles, a reopen, two threads ---------------------------------------------------------


def test_everything_stored_is_there_when_the_store_is_opened_again(store: Store) -> None:
    stored = put_all(store)
    store.set_meta("index_generation", "3")
    before = (
        store.generation(),
        store.counts(),
        store.list_articles(),
        store.speakers(),
        store.quotes_of_articles(store.article_ids().tolist()),
        store.sentence_vectors(store.sentence_ids().tolist()),
    )
    store.close()
    again = Store(store.location)
    try:
        after = (
            again.generation(),
            again.counts(),
            again.list_articles(),
            again.speakers(),
            again.quotes_of_articles(again.article_ids().tolist()),
            again.sentence_vectors(again.sentence_ids().tolist()),
        )
        assert before[:5] == after[:5]
        np.testing.assert_array_equal(before[5], after[5])
        assert again.meta_value("index_generation") == "3"
        assert again.find_by_key(BUDGET.key) == (stored[BUDGET.key].article_id, f"hash:{BUDGET.key}")
    finally:
        again.close()


def test_a_second_handle_sees_new_articles_and_forgets_deleted_ones_when_told(store: Store) -> None:
    other = Store(store.location)  # another process on the same store
    try:
        stored = put(store, HARBOUR)
        assert other.article_count() == 1 and other.find_by_key(HARBOUR.key) is not None
        assert other.article(stored.article_id) is not None  # now cached there
        store.delete_article(stored.article_id)
        assert other.article_count() == 0 and other.find_by_key(HARBOUR.key) is None
        assert other.article(stored.article_id) is not None, "a cached article is kept until forgotten"
        other.forget_articles()
        assert other.article(stored.article_id) is None
    finally:
        other.close()


def test_two_threads_storing_at_once_get_distinct_ids(store: Store) -> None:
    errors: list[BaseException] = []
    results: list[StoredArticle] = []
    lock = threading.Lock()

    def writer(prefix: str) -> None:
        try:
            for number in range(4):
                made = Made(
                    key=f"/{prefix}/{number}.md", title=f"{prefix} {number}", paragraphs=[[f"{prefix} {number}."]]
                )
                stored = put(store, made)
                with lock:
                    results.append(stored)
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)
        finally:
            store.close()  # this thread's connection

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len({r.article_id for r in results}) == 8
    assert len({i for r in results for i in r.sentence_ids}) == 8
    assert store.article_count() == 8 and store.generation() == 8


# -- the companion stores over the same database ------------------------------------------------


def test_a_feed_is_subscribed_once_and_a_second_add_is_refused(store: Store) -> None:
    feeds = FeedStore(store)
    feeds.add("https://coast.example/feed.xml", "Coast Gazette")
    feeds.add_if_new("https://coast.example/feed.xml")  # left as it is
    feeds.add_if_new("https://valley.example/rss")
    with pytest.raises(DATABASE_ERRORS):
        feeds.add("https://valley.example/rss", "Valley Post")
    assert [(f.url, f.title) for f in feeds.feeds()] == [
        ("https://coast.example/feed.xml", "Coast Gazette"),
        ("https://valley.example/rss", ""),
    ]
    assert feeds.urls_and_titles() == [
        ("https://coast.example/feed.xml", "Coast Gazette"),
        ("https://valley.example/rss", ""),
    ]
    found = feeds.feed("https://valley.example/rss")
    assert found is not None and (found.failures, found.articles_added, found.last_error) == (0, 0, "")
    assert feeds.feed("https://nowhere.example/") is None


def test_a_feed_poll_counts_failures_until_a_success(store: Store) -> None:
    feeds = FeedStore(store)
    feeds.add("https://coast.example/feed.xml", "Coast Gazette")
    feed = feeds.feed("https://coast.example/feed.xml")
    assert feed is not None
    feeds.record_poll(feed.id, "timed out", "", "", "", 0, "")
    feeds.record_poll(feed.id, "HTTP 503", "", "", "", 0, "")
    failing = feeds.feed(feed.url)
    assert failing is not None and (failing.failures, failing.last_error, failing.last_success) == (2, "HTTP 503", "")
    feeds.record_poll(feed.id, "", "1 item had no link", '"v2"', "Mon, 01 Jan 2024", 3, "")
    feeds.record_poll(feed.id, "", "", '"v3"', "", 2, "Coast Gazette (new)")
    polled = feeds.feed(feed.url)
    assert polled is not None
    assert (polled.failures, polled.last_error, polled.etag, polled.articles_added) == (0, "", '"v3"', 5)
    assert polled.title == "Coast Gazette (new)" and polled.last_success == polled.last_fetch != ""


def test_seen_feed_items_are_remembered_and_go_with_their_feed(store: Store) -> None:
    feeds = FeedStore(store)
    feeds.add("https://coast.example/feed.xml", "")
    feed = feeds.feed("https://coast.example/feed.xml")
    assert feed is not None
    feeds.mark_seen(feed.id, [("g1", "https://coast.example/1", "2024-01-01", "k1"), ("g2", "", "", "k2")])
    feeds.mark_seen(feed.id, [("g1", "https://coast.example/1", "2024-01-02", "k1")])  # updated since
    assert feeds.seen_items(feed.id) == {"g1": "2024-01-02", "g2": ""}
    assert feeds.delete(feed.url) == 1 and feeds.delete(feed.url) == 0
    assert feeds.seen_items(feed.id) == {} and feeds.feeds() == []


def test_web_page_validators_are_remembered_and_outlive_their_article(store: Store) -> None:
    pages = WebPageStore(store)
    assert pages.validators(HARBOUR.url) == ("", "", "")
    stored = put(store, HARBOUR)
    pages.remember([(HARBOUR.url, HARBOUR.key, '"e1"', "")])
    pages.remember([(HARBOUR.url, HARBOUR.key, '"e2"', "Tue, 02 Jan 2024")])
    assert pages.validators(HARBOUR.url) == ('"e2"', "Tue, 02 Jan 2024", HARBOUR.key)
    store.delete_article(stored.article_id)
    # What web.fetch_page reads to fetch a removed article whole again.
    assert pages.validators(HARBOUR.url)[2] == HARBOUR.key and store.find_by_key(HARBOUR.key) is None


def test_the_audit_log_lists_newest_first_and_outlives_the_article(store: Store) -> None:
    stored = put(store, HARBOUR)
    log = AuditLog(store)
    log.add([("2024-05-01T10:00:00.000000Z", "slack:U1", "remove", HARBOUR.key, HARBOUR.title, "retracted")])
    log.add(
        [
            ("2024-05-02T10:00:00.000000Z", "cli", "remove", "k2", "t2", ""),
            ("2024-05-02T10:00:01.000000Z", "cli", "remove", "k3", "t3", ""),
        ]
    )
    store.delete_article(stored.article_id)
    entries = log.newest()
    assert [e.article_key for e in entries] == ["k3", "k2", HARBOUR.key]
    assert (entries[2].actor, entries[2].title, entries[2].detail) == ("slack:U1", HARBOUR.title, "retracted")
    assert [e.article_key for e in log.newest(limit=1)] == ["k3"]


def test_scope_reads_outlets_tags_and_the_ids_of_chosen_articles(store: Store) -> None:
    stored = put_all(store)
    harbour, budget, festival = (stored[m.key] for m in ALL)
    scopes = ScopeStore(store)
    assert scopes.outlets() == ["Coast Gazette", "Valley Post"]
    assert scopes.tags() == ["local", "politics", "transport"]
    every = [row[0] for row in scopes.article_dates([], [], [])]
    assert every == [festival.article_id, budget.article_id, harbour.article_id], "newest first"
    assert [row[0] for row in scopes.article_dates(["Coast Gazette"], [], ["transport"])] == [harbour.article_id]
    assert scopes.article_dates(["Coast Gazette"], [], ["politics"]) == []
    feeds = FeedStore(store)
    feeds.add("https://valley.example/rss", "")
    feed = feeds.feed("https://valley.example/rss")
    assert feed is not None
    feeds.mark_seen(feed.id, [("g", BUDGET.url, "", BUDGET.key)])
    dates = scopes.article_dates([], ["https://valley.example/rss"], [])
    assert dates == [
        (budget.article_id, BUDGET.published, store.articles([budget.article_id])[budget.article_id].added_at)
    ]
    chosen = np.array([harbour.article_id, festival.article_id], dtype=np.int64)
    assert sorted(scopes.passage_ids_of_articles(chosen).tolist()) == sorted(harbour.passage_ids + festival.passage_ids)
    assert sorted(scopes.sentence_ids_of_articles(chosen).tolist()) == sorted(
        harbour.sentence_ids + festival.sentence_ids
    )
    assert scopes.added_between("", "", chosen, 10) == [festival.article_id, harbour.article_id]
    assert scopes.added_between("", "", chosen, 1) == [festival.article_id]
    assert scopes.added_between("9999", "", chosen, 10) == []
