"""How the names of a question are read and matched (retrieval.answering.names)."""

from retrieval.answering.names import (
    _parts_present,
    _question_name_phrases,
    aliases,
    capitalised_tokens,
    variant_in,
)
from retrieval.reading.text import search_tokens


def test_a_month_is_not_part_of_a_name() -> None:
    # "July London" would need the two words side by side in the story.
    assert _question_name_phrases("What did Tony Blair say after the 7 July London bombings?") == [["toni", "blair"]]
    assert _question_name_phrases("What did BA spend in its October-December 2004 quarter?") == []


def test_each_part_of_a_hyphenated_name_is_stemmed_before_lookup() -> None:
    # The stemmer stems only the last part: "october-decemb", while the index holds "octob".
    present = set(search_tokens("In October fuel costs rose; by December they had doubled"))
    token = search_tokens("October-December")[0]
    assert _parts_present(token, lambda part: part in present)
    assert not _parts_present(token, lambda part: part in {"decemb"})


def test_names_run_together_are_found_apart_as_names() -> None:
    story = "the Royal College of Art's annual Secrets sale. Money goes to the RCA's fund."
    names = capitalised_tokens(story)
    assert all(variant_in(t, names) for t in ["rca", "secret"])


def test_a_city_is_in_a_report_that_names_its_club() -> None:
    # "the winner in Turin" of a report on Juventus at the Stadio delle Alpi (round 26).
    assert search_tokens("Juventus")[0] in aliases("turin")
    assert "turin" not in aliases(search_tokens("Cardiff")[0])


def test_a_name_mistyped_by_a_letter_before_a_final_y_is_a_variant() -> None:
    # The stemmer writes "Mulrany" as "mulrani": one letter from the article's "Mulraney" all the same.
    (typed,) = search_tokens("Mulrany")
    (stored,) = search_tokens("Mulraney")
    assert variant_in(typed, [stored])
    assert not variant_in(typed, search_tokens("Mulroney Mulligan"))
