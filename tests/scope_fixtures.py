"""A small library for scope tests: 99 wire stories of lenders raising mortgage rates, and one
local story (1% of the library) that answers the same questions in other words.

The 99 are written so that each is closer to the test questions than the local story is, in
meaning and in words: a filter applied after the indexes' top k (64 sentences, 32 passages)
finds nothing of the local story, so only a filter inside the search gets its answer.
"""

from __future__ import annotations

from pathlib import Path

from retrieval.index.embedder import Embedder
from retrieval.library import Library
from retrieval.models import ArticleDraft

LOCAL = "Ashworth Gazette"
WIRE = "Metro Wire"
COURIER = "Coast Courier"
LOCAL_KEY = "gazette:mortgage"
TOWNS = ["Northfield", "Riverside", "Kingsbury", "Elmstead", "Harcourt", "Westmoor", "Brackley", "Ferndale", "Oakham"]
KINDS = [
    "Bank",
    "Building Society",
    "Mutual",
    "Savings Bank",
    "Finance",
    "Home Loans",
    "Credit Union",
    "Trust",
    "Lending",
]
FIRST = ["Anna", "David", "Priya", "Tom", "Grace", "Omar", "Helen", "Luke", "Sofia", "Ben", "Maya"]
LAST = ["Carter", "Novak", "Singh", "Webb", "Ellis", "Haddad", "Moss", "Quinn", "Reyes", "Doyle", "Frost"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]

LOCAL_TEXT = (
    "Families in Ashworth face higher home loan bills after the town's building society lifted its standard "
    "variable rate to 6.1%, chief executive Margaret Hale confirmed.\n\n"
    '"Savers will welcome it, borrowers will not," Ms Hale said of the change. '
    '"We held off for as long as we could."\n\n'
    "About 12,000 households in the town borrow from the society."
)


def wire_story(n: int) -> ArticleDraft:
    lender = f"{TOWNS[n % len(TOWNS)]} {KINDS[n // len(TOWNS) % len(KINDS)]}"
    boss = f"{FIRST[n % len(FIRST)]} {LAST[(n * 7) % len(LAST)]}"
    rate = f"{4 + (n % 30) / 10:.1f}"
    text = (
        f"The lender {lender} raised its mortgage rate to {rate}% on {DAYS[n % 5]}, "
        f"its chief executive {boss} said.\n\n"
        f'"We raised our mortgage rate because our own costs rose," {boss} said. Lender {n} of the week to do so, '
        f"{lender} said {100 + n * 13} borrowers would pay more."
    )
    outlet, tags = (COURIER, ("local", "business")) if n % 10 == 0 else (WIRE, ("business",))
    return ArticleDraft(
        key=f"wire:{n}",
        title=f"{lender} raises mortgage rate to {rate}%",
        text=text,
        source=outlet,
        published=f"2005-02-{1 + n % 28:02d}",
        tags=tags,
    )


def local_story() -> ArticleDraft:
    return ArticleDraft(
        key=LOCAL_KEY,
        title="Home loan bills to rise in Ashworth",
        text=LOCAL_TEXT,
        source=LOCAL,
        published="2005-02-10",
        tags=("local", "business"),
    )


def a_quote_of_the_same_name() -> ArticleDraft:
    """A wire story quoting another Margaret Hale, closer to the topic than the local quote."""
    return ArticleDraft(
        key="wire:hale",
        title="Mortgage rates will keep rising, says lender",
        text=(
            "Mortgage rates will rise again this year, lender boss Margaret Hale said on Friday.\n\n"
            '"Borrowers will pay more and savers will welcome it, as mortgage rates keep going up," Margaret Hale said.'
        ),
        source=WIRE,
        published="2005-02-12",
        tags=("business",),
    )


def build_scope_library(data_dir: Path, embedder: Embedder) -> None:
    library = Library.open(data_dir, embedder)
    try:
        drafts = [wire_story(n) for n in range(98)] + [a_quote_of_the_same_name(), local_story()]
        report = library.add_drafts(drafts)
        assert len(report.added) == 100, report.summary()
    finally:
        library.close()
