"""Quote attribution against hand labels, and a verbatim check of every extracted quote.

The label file is TSV: ``article`` (path under the BBC folder), ``quote_start`` (the first
words inside the quote marks, verbatim), ``speaker`` (full name, or a description such as
"a spokesman for the firm" when the article never names them). A label matches the extracted
quote segment whose text starts with ``quote_start``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from retrieval.library import Library
from retrieval.reading.loader import read_article_file
from retrieval.reading.quotes import FoundQuote, extract_quotes
from retrieval.reading.text import paragraphs


@dataclass(frozen=True)
class QuoteLabel:
    article: str
    quote_start: str
    speaker: str


@dataclass
class AttributionTally:
    labelled: int = 0
    found: int = 0
    attributed: int = 0
    correct: int = 0
    articles: int = 0
    quotes_checked: int = 0
    quotes_verbatim: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.correct / self.attributed if self.attributed else float("nan")

    @property
    def recall(self) -> float:
        return self.correct / self.labelled if self.labelled else float("nan")


def load_labels(path: Path) -> list[QuoteLabel]:
    with path.open(newline="") as handle:
        rows = csv.DictReader((line for line in handle if not line.startswith("#")), delimiter="\t")
        return [QuoteLabel(r["article"], r["quote_start"], r["speaker"]) for r in rows]


_TITLES = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "miss",
        "dr",
        "sir",
        "lord",
        "lady",
        "dame",
        "rev",
        "reverend",
        "prof",
        "professor",
        "a",
        "an",
        "the",
        "one",
    ]
)


def name_words(name: str) -> list[str]:
    return [w for w in name.lower().replace("’", "'").replace(".", "").split() if w not in _TITLES]


def same_person(predicted: str, gold: str) -> bool:
    """Same surname (last word), and one name's words contain the other's, titles ignored.

    "Writer Tony Cowell" matches "Tony Cowell" and "Mr Panke" matches "Helmut Panke";
    "Simon Cowell" does not match "Tony Cowell". An unnamed gold speaker ("a BaFin
    spokeswoman") matches a prediction that is also a description with the same role word.
    """
    a, b = name_words(predicted), name_words(gold)
    if not a or not b:
        return False
    if gold.split()[0].lower() in {"a", "an", "the", "one"}:
        described = predicted.split()[0].lower() in {"a", "an", "the", "one"}
        return described and b[-1] in a
    if a[-1] != b[-1]:
        return False
    return set(a) <= set(b) or set(b) <= set(a)


def article_quotes(path: Path) -> tuple[str, list[FoundQuote]]:
    draft = read_article_file(path)
    return draft.text, extract_quotes(draft.text, paragraphs(draft.text))


def run_attribution(labels: list[QuoteLabel], bbc: Path) -> AttributionTally:
    tally = AttributionTally()
    by_article: dict[str, list[QuoteLabel]] = {}
    for label in labels:
        by_article.setdefault(label.article, []).append(label)
    for article, wanted in by_article.items():
        text, quotes = article_quotes(bbc / article)
        tally.articles += 1
        for quote in quotes:
            tally.quotes_checked += 1
            if text[quote.start : quote.end] == quote.text and _inside_marks(text, quote):
                tally.quotes_verbatim += 1
            else:
                tally.errors.append(f"{article}: not verbatim: {quote.text[:40]!r}")
        for label in wanted:
            tally.labelled += 1
            match = next((q for q in quotes if q.text.startswith(label.quote_start)), None)
            if match is None:
                tally.errors.append(f"{article}: quote not found: {label.quote_start!r}")
                continue
            tally.found += 1
            if match.speaker:
                tally.attributed += 1
                if same_person(match.speaker, label.speaker):
                    tally.correct += 1
                else:
                    tally.errors.append(
                        f"{article}: {label.quote_start[:30]!r} -> {match.speaker!r}, want {label.speaker!r}"
                    )
            else:
                tally.errors.append(f"{article}: {label.quote_start[:30]!r} unattributed, want {label.speaker!r}")
    return tally


@dataclass
class NaturalAttribution:
    """Who the quote that a natural speaker or "who said" question expects is attributed to."""

    right: int = 0
    wrong: int = 0
    unattributed: int = 0
    not_found: int = 0  # the expected words are no quote Byline extracts (a missing quote mark)
    errors: list[str] = field(default_factory=list)

    @property
    def checked(self) -> int:
        return self.right + self.wrong + self.unattributed + self.not_found


def run_natural_attribution(expected: list[tuple[str, str, str]], bbc: Path) -> NaturalAttribution:
    """``expected`` rows are (article, expected words, speaker); each distinct one is checked once.

    Hand labels cover 44 articles; the natural questions' quotes (656 over the parts seen in round
    12) are a second, larger sample of what users ask about, found by its own readers."""
    tally = NaturalAttribution()
    articles: dict[str, tuple[str, list[FoundQuote]]] = {}
    for article, words, speaker in dict.fromkeys(expected):
        if article not in articles:
            articles[article] = article_quotes(bbc / article)
        quote = next((q for q in articles[article][1] if words.lower() in q.text.lower()), None)
        if quote is None:
            tally.not_found += 1
            tally.errors.append(f"{article}: no quote holds {words[:40]!r}")
        elif same_person(quote.speaker, speaker):
            tally.right += 1
        elif quote.speaker:
            tally.wrong += 1
            tally.errors.append(f"{article}: {words[:30]!r} -> {quote.speaker!r}, want {speaker!r}")
        else:
            tally.unattributed += 1
            tally.errors.append(f"{article}: {words[:30]!r} unattributed, want {speaker!r}")
    return tally


def _inside_marks(text: str, quote: FoundQuote) -> bool:
    """The quote's words sit inside an opening mark (its own or its run-on's) in the article."""
    before = text[: quote.start].rstrip()
    return bool(before) and before[-1] in '"“'


def stored_quotes_verbatim(library: Library) -> tuple[int, int]:
    """(quotes checked, quotes whose stored text is the article text at their offsets)."""
    checked = good = 0
    ids = library.store.article_ids().tolist()
    for start in range(0, len(ids), 200):
        batch = ids[start : start + 200]
        texts = {a.id: a.text for a in (library.store.article(i, with_text=True) for i in batch) if a}
        for quote in library.store.quotes_of_articles(batch):
            checked += 1
            good += texts.get(quote.article_id, "")[quote.start : quote.end] == quote.text
    return checked, good
