"""Ingest reads articles in a second thread while the model embeds: what it stores and reports
is what one article at a time would give, whatever fails along the way, and the model gets
its threads back."""

from __future__ import annotations

import torch

from retrieval.library import Library, read_article
from retrieval.models import ArticleDraft


def _draft(number: int) -> ArticleDraft:
    return ArticleDraft(
        key=f"story-{number}",
        title=f"Council vote number {number}",
        text=(
            f"Council vote number {number}\n\n"
            f"The council voted on plan {number} on Tuesday after a long debate about the budget.\n\n"
            + " ".join(f"Ward {ward} of plan {number} gets a new road and a park." for ward in range(6))
            + "\n\n"
            f'"We have done what the town asked of us," said council leader Mary Jones of plan {number}.'
        ),
    )


def test_a_mixed_batch_stores_the_good_and_reports_the_rest_in_order(library: Library) -> None:
    good = [_draft(n) for n in range(40)]  # ~360 sentences: more than one embedding call
    binary = ArticleDraft(key="binary", title="A file", text="PK\x00\x03 not text")
    empty = ArticleDraft(key="empty", title="Nothing", text="   \n\n  ")
    drafts = [*good[:20], binary, good[0], empty, *good[20:]]
    threads = torch.get_num_threads()
    calls: list[tuple[int, int]] = []

    report = library.add_drafts(drafts, progress=lambda done, total: calls.append((done, total)))

    assert [key for key, _ in report.added] == [d.key for d in good]
    assert dict(report.failed) == {
        "binary": "the text has NUL bytes: it is a binary file, not an article",
        "empty": "no paragraphs of text",
    }
    assert report.unchanged == ["story-0"]  # the same draft twice in one batch is stored once
    assert calls == [(n, len(drafts)) for n in range(1, len(good) + 1)]
    assert torch.get_num_threads() == threads

    # Each article holds exactly what reading it alone gives: its quote, with its speaker.
    for draft, article_id in zip(good, report.article_ids, strict=True):
        reading = read_article(draft)
        assert not isinstance(reading, str)
        stored = library.store.quotes_of_articles([article_id])
        assert [(q.start, q.end, q.speaker) for q in stored] == [(q.start, q.end, q.speaker) for q in reading.quotes]
        assert stored and stored[0].speaker == "Mary Jones"


def test_a_failing_reader_leaves_the_library_as_it_was_and_the_threads_restored(library: Library) -> None:
    library.add_drafts([_draft(1)])
    before = library.store.article_count()
    threads = torch.get_num_threads()
    too_long = ArticleDraft(key="huge", title="Huge", text="word " * 70_000)

    report = library.add_drafts([too_long])

    assert report.failed and "the limit is 300,000" in report.failed[0][1]
    assert library.store.article_count() == before
    assert torch.get_num_threads() == threads
