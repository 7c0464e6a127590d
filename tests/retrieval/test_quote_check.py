"""The quote check (``retrieval/features/quote_check.py``) on made-up articles with the real library, and
``byline verify`` (one quote, ``--json``, ``--batch``) through the real CLI."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli.main import main
from retrieval.features.quote_check import QuoteCheck, QuoteCheckError, check_quote
from retrieval.features.quote_speakers import same_person
from retrieval.features.quote_text import parse_asked, words_of
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from tests.library_copies import copied_data_dir, ingested_data_dir
from tests.verify_fixtures import write_articles

REFEREE = "The referee decided the game with that penalty, and everybody in the stadium saw it"


@pytest.fixture(scope="module")
def verify_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    root = tmp_path_factory.mktemp("verify")
    return ingested_data_dir(root, embedder, write_articles)


@pytest.fixture
def verify_library(verify_data_dir: Path, tmp_path: Path, embedder: Embedder) -> Iterator[Library]:
    library = Library.open(copied_data_dir(verify_data_dir, tmp_path), embedder)
    yield library
    library.close()


def verbatim_spans(library: Library, check: QuoteCheck) -> None:
    """Every span shown is the article's text at its offsets, in the cited article."""
    for span in check.spans + check.closest:
        article = library.store.article(span.article_id, with_text=True)
        assert article is not None
        assert article.text[span.start : span.end] == span.text
        assert check.citations[span.citation - 1].article_id == span.article_id


# -- reading what was pasted ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("pasted", "pieces", "speaker"),
    [
        ("Mourinho: 'We were the better team'", ("We were the better team",), "Mourinho"),
        ("Jose Mourinho said: \u201cWe were the better team\u201d", ("We were the better team",), "Jose Mourinho"),
        ('"We were the better team" - Mourinho', ("We were the better team",), "Mourinho"),
        ("\u201cWe were the better team,\u201d said Mourinho", ("We were the better team,",), "Mourinho"),
        ("\u2018We were the better team\u2019 \u2014 Jose Mourinho", ("We were the better team",), "Jose Mourinho"),
        ("The referee decided … saw it", ("The referee decided", "saw it"), ""),
        ('"The referee decided ... saw it."', ("The referee decided", "saw it."), ""),
        ("They ask themselves: 'is it over?'", ("They ask themselves: 'is it over?'",), ""),
        ("He said it was over - and it was", ("He said it was over - and it was",), ""),
        # A title is part of the name written with the quote, not a reason to keep it in.
        ("We were the better team - Mr Mourinho", ("We were the better team",), "Mr Mourinho"),
        ('Dr Brydon: "We were the better team"', ("We were the better team",), "Dr Brydon"),
        ('Mr: "We were the better team"', ('Mr: "We were the better team"',), ""),
    ],
)
def test_parse_asked_finds_speaker_marks_and_ellipses(pasted: str, pieces: tuple[str, ...], speaker: str) -> None:
    asked = parse_asked(pasted)
    assert asked.pieces == pieces
    assert asked.speaker == speaker


@pytest.mark.parametrize(
    ("asked", "real", "same"),
    [
        ("Blair", "Tony Blair", True),
        ("Tony Blair", "Blair", True),
        ("Tony Blair", "Gordon Brown", False),
        ("a BBC spokesman", "a BBC spokesman", True),  # a description names nobody, but is the same
        ("BBC spokesman", "a BBC spokesman", True),
        ("Microsoft spokesman", "a spokesman for Google", False),
        ("Rory O'Neill", "Rory", True),  # the article wrote "Rory O' Neill"
        ("Marsh & McLennan", "Marsh", True),
        ("Tony Blair", "Cherie Blair", False),
    ],
)
def test_same_person_as_a_user_and_an_article_name_them(asked: str, real: str, same: bool) -> None:
    assert same_person(asked, real) is same


def test_words_ignore_case_marks_and_punctuation_but_not_apostrophes_or_numbers() -> None:
    def norms(text: str) -> list[str]:
        return [w.norm for w in words_of(text)]

    assert norms("We\u2019re HERE, José!") == norms("we're here jose")
    assert norms("we're") != norms("were")  # an apostrophe is a different word, not punctuation
    assert norms("£5.5m") != norms("$5.5m") and norms("5.5") != norms("55") and norms("1,000") == norms("1000")


# -- verdicts ------------------------------------------------------------------------------


def test_a_whole_quote_with_its_speaker_is_verbatim_with_citation_and_offsets(verify_library: Library) -> None:
    check = check_quote(verify_library, f"Mourinho: \u201c{REFEREE}\u201d")
    assert check.verdict == "verbatim"
    assert check.speaker == "Jose Mourinho"
    assert check.text == REFEREE
    citation = check.citation
    assert citation is not None and citation.title == "Mourinho fumes at referee after derby defeat"
    assert citation.paragraph == 2 and citation.published == "2024-03-02"
    verbatim_spans(verify_library, check)


@pytest.mark.parametrize(
    "pasted",
    [
        REFEREE.lower(),  # case
        REFEREE.replace(",", ""),  # punctuation
        f'"{REFEREE}."',  # straight marks
        "decided the game with that penalty",  # a partial quote
        "the better team for ninety",  # a partial quote of common words
        "The referee decided the game \u2026 everybody in the stadium saw it",  # an ellipsis
        "everybody in the stadium saw it... We were the better team",  # across two quote sentences
        "a night to forget for everyone in red",  # a quote attributed to nobody
    ],
)
def test_real_words_are_verbatim_however_they_are_written(verify_library: Library, pasted: str) -> None:
    check = check_quote(verify_library, pasted)
    assert check.verdict == "verbatim", check.to_json()
    verbatim_spans(verify_library, check)


def test_a_changed_word_is_altered_with_the_differences_marked(verify_library: Library) -> None:
    check = check_quote(verify_library, "The referee decided the match with that penalty", "Mourinho")
    assert check.verdict == "altered"
    assert check.changed_words == 1
    assert [(d.asked, d.real) for d in check.differences] == [("match", "game")]
    article = verify_library.store.article(check.spans[0].article_id, with_text=True)
    assert article is not None
    difference = check.differences[0]
    assert article.text[difference.real_start : difference.real_end] == "game"
    assert check.speaker == "Jose Mourinho"
    verbatim_spans(verify_library, check)


@pytest.mark.parametrize(
    ("pasted", "changed"),
    [
        ("We're the better team for ninety minutes", 1),  # "were" -> "we're"
        ("We were not the better team for ninety minutes", 1),  # a word added
        ("We were the team for ninety minutes", 1),  # a word dropped
        ("This Budget puts $5bn back into the pockets of working families", 1),  # a currency
        ("This Budget puts £6bn back into the pockets of hard working families", 2),
    ],
)
def test_no_altered_quote_is_ever_verbatim(verify_library: Library, pasted: str, changed: int) -> None:
    check = check_quote(verify_library, pasted)
    assert check.verdict == "altered", check.to_json()
    assert check.changed_words == changed


def test_real_words_asked_of_someone_else_are_misattributed(verify_library: Library) -> None:
    check = check_quote(verify_library, "We will come back stronger next season", "Pep Guardiola")
    assert check.verdict == "misattributed"
    assert check.speaker == "Jose Mourinho"  # "he added": resolved to the speaker before
    assert "not Pep Guardiola" in check.note
    inline = check_quote(verify_library, "Guardiola: 'The referee decided the game with that penalty'")
    assert inline.verdict == "misattributed" and inline.asked.speaker == "Guardiola"
    right = check_quote(verify_library, "\u201cgot the big calls right\u201d - Guardiola")
    assert right.verdict == "verbatim" and right.speaker == "Pep Guardiola"


def test_a_fabricated_quote_is_not_found_with_the_closest_quotes(verify_library: Library) -> None:
    check = check_quote(verify_library, "The referee was bribed by the other club and I will prove it in court")
    assert check.verdict == "not_found"
    assert check.articles_searched == 2 and not check.spans
    assert check.closest and check.closest[0].text.startswith("The referee")
    verbatim_spans(verify_library, check)
    paraphrase = check_quote(verify_library, "Mourinho said the penalty decision settled the match for everyone")
    assert paraphrase.verdict == "not_found"  # a paraphrase is no quote to correct


def test_pieces_from_different_quotes_are_not_one_quote(verify_library: Library) -> None:
    check = check_quote(verify_library, "The referee decided the game \u2026 got the big calls right")
    assert check.verdict == "altered" and check.joined_apart


def test_the_articles_own_words_are_found_but_not_as_a_quote(verify_library: Library) -> None:
    check = check_quote(verify_library, "The club will appeal against the red card")
    assert check.verdict == "verbatim" and not check.quoted and check.speaker == ""
    asked = check_quote(verify_library, "The club will appeal against the red card", "Mourinho")
    assert asked.verdict == "misattributed"


def test_unusable_quotes_get_a_clear_message(verify_library: Library) -> None:
    with pytest.raises(QuoteCheckError, match="Give the words"):
        check_quote(verify_library, '"  …  "')
    with pytest.raises(QuoteCheckError, match="at most 2,000"):
        check_quote(verify_library, "word " * 1000)


def test_a_check_takes_milliseconds(verify_library: Library) -> None:
    check_quote(verify_library, "warm up")
    started = time.perf_counter()
    for _ in range(10):
        check_quote(verify_library, "The referee decided the match with that penalty")
    assert (time.perf_counter() - started) / 10 < 0.2


def test_the_check_follows_newly_ingested_articles(verify_library: Library, tmp_path: Path) -> None:
    assert check_quote(verify_library, "Nobody expected the striker to score twice").verdict == "not_found"
    article = tmp_path / "late.md"
    article.write_text(
        "---\ntitle: Late winner\n---\nThe striker scored twice.\n\n"
        "\u201cNobody expected the striker to score twice,\u201d the coach Ana Ruiz said.\n",
        encoding="utf-8",
    )
    verify_library.ingest([article])
    check = check_quote(verify_library, "Nobody expected the striker to score twice")
    assert check.verdict == "verbatim" and check.speaker == "Ana Ruiz"


# -- byline verify ---------------------------------------------------------------------------


@pytest.fixture
def verify_cli(verify_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "cli-data"
    shutil.copytree(verify_data_dir, copy)
    monkeypatch.setenv("BYLINE_DATA_DIR", str(copy))
    monkeypatch.chdir(tmp_path)
    return copy


def test_cli_verify_json(verify_cli: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "The referee decided the match with that penalty", "--speaker", "Mourinho", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["verdict"] == "altered" and result["speaker"] == "Jose Mourinho"
    assert result["text"] == "The referee decided the game with that penalty"
    assert result["citation"]["title"] == "Mourinho fumes at referee after derby defeat"
    assert result["differences"] == [{"asked": "match", "real": "game"}] and result["changed_words"] == 1


def test_cli_verify_plain_marks_the_differing_words(verify_cli: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "Mourinho: 'The referee decided the match with that penalty'"]) == 0
    out = capsys.readouterr().out
    assert "Altered — 1 word differs from what Jose Mourinho said" in out
    assert "decided the [game] with" in out and "“match” — the article says “game”" in out


def test_cli_verify_batch_one_verdict_per_line(
    verify_cli: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "quotes.jsonl"
    lines = [
        json.dumps({"id": "a", "text": REFEREE, "speaker": "Mourinho"}),
        "not json at all",
        json.dumps({"text": "We will come back stronger next season", "speaker": "Guardiola"}),
        "",
        json.dumps(["a", "list"]),
        json.dumps({"speaker": "Mourinho"}),
        json.dumps({"text": "The moon is made of cheese and always was", "speaker": None}),
        json.dumps({"text": "ok", "speaker": 5}),
    ]
    batch.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["verify", "--batch", str(batch), "--json"]) == 1  # some lines were bad
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r.get("verdict", "error") for r in rows] == [
        "verbatim",
        "error",
        "misattributed",
        "error",
        "error",
        "not_found",
        "error",
    ]
    assert rows[0]["id"] == "a" and rows[0]["line"] == 1
    assert rows[1] == {"line": 2, "error": "not JSON (Expecting value)"}
    assert [r["line"] for r in rows] == [1, 2, 3, 5, 6, 7, 8]


def test_cli_verify_needs_a_quote(verify_cli: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--json"]) == 2
    assert "Give the quote" in json.loads(capsys.readouterr().out)["error"]


@pytest.mark.backends("embedded", "cluster")
def test_verdicts_on_every_backend(library: Library, tmp_path: Path) -> None:
    """The check reads only the store and the keyword index through their ports: the same
    verdicts from SQLite, FAISS and BM25 files as from PostgreSQL and Qdrant."""
    library.ingest(write_articles(tmp_path / "articles"))
    check = check_quote(library, REFEREE, "Mourinho")
    assert check.verdict == "verbatim" and check.speaker == "Jose Mourinho"
    verbatim_spans(library, check)
    assert check_quote(library, "The referee decided the match with that penalty").verdict == "altered"
    assert check_quote(library, "got the big calls right", "Mourinho").verdict == "misattributed"
    assert check_quote(library, "The moon is made of cheese and always was").verdict == "not_found"


def test_words_attributed_to_nobody_are_checked_against_who_is_named_before_them(
    verify_library: Library, tmp_path: Path
) -> None:
    # "Fans outside the ground called it "…"": the sentence says who spoke, and it is nobody asked.
    fans = check_quote(verify_library, "a night to forget for everyone in red", "Guardiola")
    assert fans.verdict == "misattributed"
    article = tmp_path / "press.md"
    article.write_text(
        "---\ntitle: Press conference\n---\nLena Park spoke to reporters on Friday.\n\n"
        "\u201cWe never gave up on the title.\u201d\n",
        encoding="utf-8",
    )
    verify_library.ingest([article])
    named = check_quote(verify_library, "We never gave up on the title", "Lena Park")
    assert named.verdict == "verbatim" and named.named_nearby
    assert check_quote(verify_library, "We never gave up on the title", "Jose Mourinho").verdict == "misattributed"
    # "Mr Ruiz's statement said: "…" It added: "…"": "it" is his statement, and it names nobody new.
    statement = tmp_path / "statement.md"
    statement.write_text(
        "---\ntitle: Campaign chief hits back\n---\nMr Howard hired Dan Ruiz as his campaign chief in May. "
        "Mr Ruiz's statement said: \u201cOur party has been setting the agenda all week.\u201d "
        "It added: \u201cOur rivals will do all they can to change the subject from the cost of living.\u201d\n",
        encoding="utf-8",
    )
    verify_library.ingest([statement])
    added = check_quote(verify_library, "do all they can to change the subject from the cost of living", "Ruiz")
    assert added.verdict == "verbatim", added.note
    asked_of_howard = check_quote(
        verify_library, "do all they can to change the subject from the cost of living", "Howard"
    )
    assert asked_of_howard.verdict == "misattributed"


def test_a_quote_pasted_without_its_attribution_in_the_middle_is_verbatim(verify_library: Library) -> None:
    # `"…saw it," Mourinho said. "We were the better team…"`, pasted as one quote.
    check = check_quote(verify_library, "Everybody in the stadium saw it. We were the better team for ninety minutes.")
    assert check.verdict == "verbatim" and check.speaker == "Jose Mourinho"
    assert [span.text for span in check.spans] == [
        "everybody in the stadium saw it",
        "We were the better team for ninety minutes",
    ]
    verbatim_spans(verify_library, check)
    # A word left out inside the quote marks is still an alteration.
    dropped = check_quote(verify_library, "Everybody in the saw it. We were the better team for ninety minutes.")
    assert dropped.verdict == "altered"


def test_speaker_after_according_to() -> None:
    asked = parse_asked("\u201cWe were the better team\u201d, according to Jose Mourinho.")
    assert asked.pieces == ("We were the better team",) and asked.speaker == "Jose Mourinho"


def test_words_skipped_in_the_articles_own_prose_are_not_a_quote(verify_library: Library) -> None:
    # "The club will appeal against the red card shown to its captain on Monday morning."
    check = check_quote(verify_library, "The club will appeal against the red card on Monday morning")
    assert check.verdict == "altered"


def test_a_channel_scope_limits_what_is_searched(verify_library: Library, tmp_path: Path) -> None:
    from retrieval.scope import Scope

    other = tmp_path / "other.md"
    other.write_text(
        "---\ntitle: Elsewhere\nsource: Other Paper\n---\nA quiet day.\n\n"
        "\u201cNothing much happened here today at all,\u201d Ana Ruiz said.\n",
        encoding="utf-8",
    )
    verify_library.ingest([other])
    scope = verify_library.resolve_scope(Scope(outlets=("Other Paper",)))
    assert scope is not None
    outside = check_quote(verify_library, REFEREE, "Mourinho", scope)
    assert outside.verdict == "not_found" and outside.articles_searched == 1
    assert all(span.article_id in scope.articles for span in outside.closest)
    inside = check_quote(verify_library, "Nothing much happened here today", "Ana Ruiz", scope)
    assert inside.verdict == "verbatim"
