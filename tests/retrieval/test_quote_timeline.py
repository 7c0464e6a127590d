"""The speaker timeline, the reactions roundup and their exports (issue 35, parts 2, 3 and 5),
over made-up dated articles (``quote_fixtures``) with the real model, FAISS and SQLite, and the
``byline`` CLI as a user runs it."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.cli.quotes import safe_cell
from retrieval.features.quote_pages import timeline_page
from retrieval.features.quote_timeline import speaker_timeline
from retrieval.features.quote_topics import RULE, TopicMatcher
from retrieval.features.reactions import reactions
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from tests.library_copies import copied_data_dir
from tests.quote_fixtures import write_article, write_articles

REFEREE_QUOTES = {
    "I only said what everybody saw: the officials were a disgrace that afternoon",
    "Referees must be able to explain their decisions to the public like everyone else",
    "The referee decided the game with that penalty",
    "I have never seen a decision like that in thirty years of football.",
}


@pytest.fixture(scope="module")
def quote_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """The fixture articles ingested once; tests that change it copy it."""
    root = tmp_path_factory.mktemp("quotes")
    library = Library.open(root / "data", embedder)
    try:
        report = library.ingest(write_articles(root / "articles"))
        assert len(report.article_ids) == 5
    finally:
        library.close()
    return root / "data"


@pytest.fixture(scope="module")
def quote_library(quote_data_dir: Path, embedder: Embedder) -> Iterator[Library]:
    library = Library.open(quote_data_dir, embedder)
    yield library
    library.close()


def texts(timeline_quotes: list) -> list[str]:
    return [q.quote.text for q in timeline_quotes]


def test_a_topic_keeps_only_the_speakers_quotes_on_it_newest_first(quote_library: Library) -> None:
    timeline = speaker_timeline(quote_library, "Mourinho", "referees")
    assert timeline.speakers == ["Jose Mourinho"]
    assert set(texts(timeline.quotes)) == REFEREE_QUOTES
    # Newest article first (10 April before 2 March), reading order within an article.
    assert texts(timeline.quotes) == [
        "I only said what everybody saw: the officials were a disgrace that afternoon",
        "Referees must be able to explain their decisions to the public like everyone else",
        "The referee decided the game with that penalty",
        "I have never seen a decision like that in thirty years of football.",
    ]
    assert [q.date for q in timeline.quotes] == ["2024-04-10", "2024-04-10", "2024-03-02", "2024-03-02"]
    # Every quote is a verbatim span of its stored article.
    for item in timeline.quotes:
        article = quote_library.store.article(item.article.id, with_text=True)
        assert article is not None and article.text[item.quote.start : item.quote.end] == item.quote.text
    # Guardiola's words about the referee are not Mourinho's.
    assert not any("excellent afternoon" in t for t in texts(timeline.quotes))


def test_a_quote_far_below_the_persons_best_on_the_topic_is_left_out(quote_library: Library) -> None:
    # A person's words on a topic stand out from their other words in the same stories: each
    # quote is judged against the best of that person's quotes too (TopicRule.margin).
    timeline = speaker_timeline(quote_library, "Mourinho", "referees", group=False)
    ranges = quote_library.store.speaker_quote_ranges(timeline.speakers)
    scores = TopicMatcher(quote_library, "referees").score_ranges(ranges)
    best = max(s.score for s in scores)
    assert min(s.below_best for s in scores) == 0.0
    for score in scores:
        assert score.below_best == pytest.approx(best - score.score)
    on_topic = {s.score for s in scores if s.on_topic()}
    assert len(on_topic) == len(REFEREE_QUOTES)
    # With no margin only the best quote is left; with an endless one, the threshold alone decides.
    assert sum(s.on_topic(replace(RULE, margin=0.0)) for s in scores) == 1
    assert {s.score for s in scores if s.on_topic(replace(RULE, margin=math.inf))} >= on_topic
    # A roundup of many people's quotes is not judged against one best.
    together = TopicMatcher(quote_library, "referees", one_person=False).score_ranges(ranges)
    assert {s.below_best for s in together} == {0.0}


def test_without_a_topic_every_quote_and_name_variants_find_the_same_person(quote_library: Library) -> None:
    everything = speaker_timeline(quote_library, "Jose Mourinho")
    assert len(everything.quotes) == 7 and everything.total_quotes == 7
    assert everything.quotes[0].date == "2024-05-01"  # the striker story is the newest
    assert [s.articles[0].title for s in everything.stories][0].startswith("Mourinho targets a new striker")
    for asked in ("mourinho", "Mr Mourinho", "Jose", "Mourino"):  # a typo a letter away
        assert texts(speaker_timeline(quote_library, asked).quotes) == texts(everything.quotes), asked
    since = speaker_timeline(quote_library, "Mourinho", since="2024-04-01")
    assert {q.date for q in since.quotes} == {"2024-05-01", "2024-04-10"}


@contextmanager
def library_with(
    quote_data_dir: Path, tmp_path: Path, embedder: Embedder, published: str, title: str, paragraphs: list[str]
) -> Iterator[Library]:
    """A copy of the fixture library with one more article ingested into it."""
    library = Library.open(copied_data_dir(quote_data_dir, tmp_path), embedder)
    try:
        library.ingest([write_article(tmp_path, "extra.md", published, title, paragraphs)])
        yield library
    finally:
        library.close()


def test_words_reprinted_in_a_later_article_are_shown_once_in_the_newest(
    quote_data_dir: Path, tmp_path: Path, embedder: Embedder
) -> None:
    # A follow-up that repeats one of the derby quotes word for word (its marks straight, not
    # curly) and adds a new one: the repeat is one entry, in the follow-up, counting the derby
    # report; the new words are their own entry.
    follow_up = [
        "Jose Mourinho returned to the derby on Monday.",
        '"The referee decided the game with that penalty," Mourinho said again. "Nobody has said sorry to us."',
    ]
    title = "Mourinho still angry about the derby referee"
    with library_with(quote_data_dir, tmp_path, embedder, "2024-07-01", title, follow_up) as library:
        timeline = speaker_timeline(library, "Mourinho", "referees")
        penalty = [q for q in timeline.quotes if "decided the game" in q.quote.text]
        assert len(penalty) == 1
        assert penalty[0].article.title == "Mourinho still angry about the derby referee"
        assert [a.title for a in penalty[0].reprinted_in] == ["Mourinho fumes at referee after derby defeat"]
        assert "1 repeat in older articles shown once" in timeline_page(timeline).text
        everything = speaker_timeline(library, "Mourinho")
        assert sum("decided the game" in t for t in texts(everything.quotes)) == 1
        assert len(everything.quotes) == 8  # seven before, the repeat folded in, one new


def test_a_surname_two_people_share_shows_the_most_quoted_and_names_the_other(
    quote_data_dir: Path, tmp_path: Path, embedder: Embedder
) -> None:
    father = [
        "Felix Mourinho, the manager's father and a former goalkeeper, spoke to a Lisbon radio station.",
        '"My son has always argued with referees, since he was a boy," Felix Mourinho said.',
    ]
    title = "Mourinho's father on his son's temper"
    with library_with(quote_data_dir, tmp_path, embedder, "2024-07-02", title, father) as library:
        timeline = speaker_timeline(library, "Mourinho", "referees")
        assert "Felix Mourinho" not in {q.quote.speaker for q in timeline.quotes}
        assert set(texts(timeline.quotes)) == REFEREE_QUOTES
        assert timeline.also_named == ["Felix Mourinho"]
        assert "Also quoted by that name: Felix Mourinho (ask by full name)" in timeline_page(timeline).text
        felix = speaker_timeline(library, "Felix Mourinho")
        assert texts(felix.quotes) == ["My son has always argued with referees, since he was a boy"]
        assert felix.also_named == []


def test_nobody_and_nothing_on_the_topic_say_so(quote_library: Library) -> None:
    nobody = timeline_page(speaker_timeline(quote_library, "Arsene Wenger"))
    assert nobody.stories == [] and "Nobody called “Arsene Wenger” is quoted in the 5 articles" in nobody.header
    off = timeline_page(speaker_timeline(quote_library, "Mourinho", "interest rates and inflation"))
    assert off.stories == [] and "None of Jose Mourinho's 7 quotes is on “interest rates and inflation”" in off.header


def test_pages_number_citations_once_and_say_how_to_get_the_next(quote_library: Library) -> None:
    timeline = speaker_timeline(quote_library, "Mourinho")
    first = timeline_page(timeline, 1, size=3, command="/quotes speaker:Mourinho")
    assert "page 1 of 3; next: /quotes speaker:Mourinho page:2" in first.header
    spans = [span for story in first.stories for span in story.spans]
    assert len(spans) == 3 and [c.n for c in first.citations] == list(range(1, len(first.citations) + 1))
    last = timeline_page(timeline, 3, size=3)
    assert [span.text for story in last.stories for span in story.spans] == [timeline.quotes[6].quote.text]
    assert "next:" not in last.header


def test_reactions_one_quote_per_speaker_most_quoted_first_people_apart_from_organisations(
    quote_library: Library,
) -> None:
    found = reactions(quote_library, "the Budget")
    speakers = [r.speaker for r in found.reactions]
    assert speakers[0] == "Tom Hale"  # four quotes in two articles
    assert found.reactions[0].quotes >= 3 and found.reactions[0].articles == 2
    assert "Rachel Pike" in speakers
    kinds = {r.speaker: r.kind for r in found.reactions}
    assert kinds["Tom Hale"] == kinds["Rachel Pike"] == "person"
    assert [r for r in found.reactions if r.kind == "organisation"], kinds  # the small businesses' spokesman
    assert len(speakers) == len(set(speakers))
    assert not any("Mourinho" in s for s in speakers)


def test_csv_cells_that_would_run_as_formulas_keep_an_apostrophe() -> None:
    assert [safe_cell(v) for v in ("=HYPERLINK(1)", "+3%", "-1", "@SUM(A1)", "\tx", "fine", 7)] == [
        "'=HYPERLINK(1)",
        "'+3%",
        "'-1",
        "'@SUM(A1)",
        "'\tx",
        "fine",
        7,
    ]


@pytest.fixture
def quote_cli_dir(quote_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = copied_data_dir(quote_data_dir, tmp_path)
    monkeypatch.setenv("BYLINE_DATA_DIR", str(copy))
    monkeypatch.chdir(tmp_path)
    return copy


def test_byline_ask_json_stays_an_answer_to_a_timeline_question(
    quote_cli_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # In chat "What has Mourinho said about referees?" is the timeline; `byline ask --json` is a
    # script's interface, and its output stays an answer's JSON (`byline quotes` is the timeline).
    assert main(["ask", "--json", "What has Mourinho said about referees?"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["answered"] and answer["spans"][0]["speaker"] == "Jose Mourinho"


def test_cli_quotes_json_csv_and_text(quote_cli_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["quotes", "--speaker", "Mourinho", "--topic", "referees", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["speakers"] == ["Jose Mourinho"] and {q["quote"] for q in data["quotes"]} == REFEREE_QUOTES
    first = data["quotes"][0]
    assert first["date"] == "2024-04-10" and first["paragraph"] == 2 and first["story"] == 1

    assert main(["quotes", "--speaker", "Tom Hale", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 4 and set(rows[0]) >= {"date", "speaker", "quote", "title", "paragraph", "article_id"}
    by_text = {row["quote"] for row in rows}
    # The quote that starts like a formula is kept as text; a title with a comma survives quoting.
    assert "'+3% growth a year is what this Budget needs, and nobody thinks it will happen" in by_text
    assert {row["title"] for row in rows} >= {"Budget numbers questioned a day after the chancellor's statement"}

    assert main(["quotes", "--speaker", "Mourinho", "--topic", "referees"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Jose Mourinho on “referees”: 4 quotes") and "Sources:" in text

    assert main(["quotes", "--speaker", "Nobody Atall", "--json"]) == 0
    assert "Nobody called" in json.loads(capsys.readouterr().out)["message"]
    assert main(["quotes", "--speaker", "Mourinho", "--since", "not a date"]) == 2
    assert "--since" in capsys.readouterr().err
    # An archive's dates reach back further than a digest's ten years.
    assert main(["quotes", "--speaker", "Mourinho", "--since", "1999-01-31", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["quotes"]) == 7
    assert main(["quotes", "--speaker", "Mourinho", "--since", "2024-02-30"]) == 2
    assert "is not a date" in capsys.readouterr().err


def test_cli_reactions_json(quote_cli_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reactions", "--topic", "the Budget", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    first = data["reactions"][0]
    assert first["speaker"] == "Tom Hale" and first["kind"] == "person" and first["citation"]["paragraph"] >= 1
    assert {r["kind"] for r in data["reactions"]} == {"person", "organisation"}


def test_cli_alerts_add_show_remove_as_the_operator(quote_cli_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["alerts", "add", "--channel", "slack:C0123ABC", "--speaker", "Mourinho", "--topic", "referees"]) == 0
    assert "Alert 1 added" in capsys.readouterr().out
    assert main(["alerts", "add", "--channel", "slack:C0123ABC", "--speaker", "Mourinho", "--topic", "referees"]) == 1
    assert "already has that alert" in capsys.readouterr().err
    assert main(["alerts", "add", "--channel", "nowhere", "--speaker", "Mourinho"]) == 2
    assert "platform:channel" in capsys.readouterr().err
    assert main(["alerts", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [(a["tenant"], a["platform"], a["channel_id"], a["speaker"]) for a in shown] == [
        ("operator", "slack", "C0123ABC", "Mourinho")
    ]
    assert main(["alerts", "remove", "1"]) == 0 and "Alert 1 removed" in capsys.readouterr().out
    assert main(["alerts", "remove", "1"]) == 1


def test_the_timeline_eval_skips_without_the_corpus_and_reads_its_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.quality.eval_quote_timeline import Pair, load_pairs, score
    from bench.quality.eval_quote_timeline import main as eval_main

    assert eval_main([str(tmp_path / "no-bbc")]) == 0
    assert "Skipped: no BBC corpus" in capsys.readouterr().out
    pairs = load_pairs()
    assert len(pairs) == 15 and sum(len(p.texts) for p in pairs) == 106
    pair = Pair("x", "X", "t", ["The referee decided the game", "thirty years"])
    tally = score(pair, ["“the referee decided the game” with that penalty", "something else"])
    assert (tally.found, tally.right, tally.returned) == (1, 1, 2)
