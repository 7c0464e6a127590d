"""The core must-holds: seed answers, idempotent ingest, bad input, broken index files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval.errors import BadQuestion
from retrieval.index.embedder import Embedder
from retrieval.library import DENSE_FILE, QUOTE_RULES_KEY, SPARSE_FILE, Library
from retrieval.models import Answer
from tests.conftest import PROJECT, SEED_FILE, SEEDS


def assert_verbatim(library: Library, answer: Answer) -> None:
    for span in answer.spans:
        article = library.store.article(span.article_id, with_text=True)
        assert article is not None
        assert article.text[span.start : span.end] == span.text
        assert answer.citations[span.citation - 1].article_id == span.article_id
        assert answer.citations[span.citation - 1].paragraph == span.paragraph


def test_mourinho_on_the_referee(seed_library: Library) -> None:
    answer = seed_library.ask("what did Mourinho say about the referee?")
    assert answer.answered
    quotes = [s for s in answer.spans if s.kind == "quote"]
    assert quotes and all(s.speaker == "Jose Mourinho" for s in quotes)
    joined = " ".join(s.text for s in quotes)
    assert "I feel sorry for referee Michael Oliver" in joined or "the unlucky decision of Michael [Oliver]" in joined
    assert_verbatim(seed_library, answer)
    assert answer.citations[0].title.startswith("Mourinho")
    assert "Jose Mourinho said" in answer.text and "[1]" in answer.text


def test_guardiola_on_kompany(seed_library: Library) -> None:
    answer = seed_library.ask("What did Guardiola say about Kompany?")
    assert answer.answered
    assert answer.spans and all(s.kind == "quote" and s.speaker == "Pep Guardiola" for s in answer.spans)
    assert any("Kompany" in s.text or "Vinny" in s.text for s in answer.spans)
    assert_verbatim(seed_library, answer)


def test_cut_above_the_eyebrow(seed_library: Library) -> None:
    answer = seed_library.ask("Who was cut above the eyebrow?")
    assert answer.answered
    assert "Mikel Arteta" in answer.spans[0].text and "cut above the eyebrow" in answer.spans[0].text
    assert answer.citations[0].paragraph == answer.spans[0].paragraph
    assert_verbatim(seed_library, answer)


def test_out_of_corpus_question_is_not_answered(seed_library: Library) -> None:
    answer = seed_library.ask("Who won the Champions League in 2005?")
    assert not answer.answered
    assert not answer.spans
    assert "couldn't find that in the 1 article I have" in answer.message
    assert answer.closest, "the closest passages are listed instead"


def test_follow_up_keeps_the_thread_context(seed_library: Library) -> None:
    answer = seed_library.ask("and what did Guardiola say?", ["what did Mourinho say about the referee?"])
    assert answer.answered
    assert all(s.speaker == "Pep Guardiola" for s in answer.spans)
    # His words are about Kompany, not the referee, in a story about the referee: the answer says so.
    assert answer.message == (
        "These words of Guardiola are from a story about the referee; they may not speak to it directly."
    )


def test_cli_ask_json_on_a_fresh_data_directory(tmp_path: Path) -> None:
    env = {**os.environ, "BYLINE_DATA_DIR": str(tmp_path / "fresh")}
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "ask", "--json", "what did Mourinho say about the referee?"],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["answered"] is True
    span = data["spans"][0]
    assert {"text", "speaker", "citation", "article_id", "paragraph", "start", "end"} <= span.keys()
    assert span["speaker"] == "Jose Mourinho"
    citation = data["citations"][0]
    assert {"n", "article_id", "title", "source", "url", "published", "paragraph"} <= citation.keys()
    body = SEED_FILE.read_text().split("---\n", 2)[2]
    assert body[span["start"] : span["end"]] == span["text"]
    assert "Traceback" not in result.stderr


def test_ingest_is_idempotent_and_replaces_changed_files(library: Library, tmp_path: Path) -> None:
    folder = tmp_path / "articles"
    folder.mkdir()
    article = folder / "story.txt"
    article.write_text("Harbour bridge reopens\n\nThe old harbour bridge reopened on Tuesday after repairs.\n")
    first = library.ingest([folder])
    second = library.ingest([folder, article])
    assert len(first.added) == 1 and not second.added and second.unchanged
    assert library.store.counts()["articles"] == 1

    article.write_text("Harbour bridge reopens\n\nThe harbour bridge stayed shut on Tuesday as the cranes failed.\n")
    third = library.ingest([folder])
    assert len(third.replaced) == 1
    counts = library.store.counts()
    assert counts["articles"] == 1
    assert library.dense.count() == counts["sentences"] and library.sparse.count() == counts["passages"]
    hits = library.search("cranes failed")
    assert hits and "cranes" in hits[0].passage.text
    assert all("reopened" not in hit.passage.text for hit in library.search("bridge reopened after repairs"))


def test_front_matter_markdown_and_html(library: Library, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "---\ntitle: Rail fares rise\noutlet: The Courier\nurl: https://example.org/fares\npublished: 2024-01-02\n"
        "author: A. Writer\n---\nFares will rise by 5%, the operator said.\n\nCommuters were unhappy.\n"
    )
    (tmp_path / "b.html").write_text(
        "<html><head><title>Library opens late</title><script>var x = 'ad';</script></head><body>"
        "<nav>Home | News</nav><article><h1>Library opens late</h1><p>The city library will open until ten at night "
        "from March, the council announced on Monday.</p><p>Readers welcomed the longer hours at the central branch "
        "and asked for more weekend sessions too.</p></article><footer>Cookies</footer></body></html>"
    )
    report = library.ingest([tmp_path])
    assert len(report.added) == 2, report.failed
    articles = {a.title: a for a in library.store.list_articles(limit=10)}
    fares = articles["Rail fares rise"]
    assert (fares.source, fares.url, fares.published, fares.author) == (
        "The Courier",
        "https://example.org/fares",
        "2024-01-02",
        "A. Writer",
    )
    html_article = library.store.article(articles["Library opens late"].id, with_text=True)
    assert html_article is not None and "ten at night" in html_article.text and "var x" not in html_article.text


def test_long_paragraphs_are_split_at_sentences_without_losing_text(library: Library, tmp_path: Path) -> None:
    sentence = "The committee reviewed the long report on regional transport spending in detail. "
    (tmp_path / "long.txt").write_text("Long report\n\n" + sentence * 60 + "\n\nShort closing paragraph.\n")
    library.ingest([tmp_path])
    article = library.store.list_articles()[0]
    stored = library.store.article(article.id, with_text=True)
    assert stored is not None
    sentences = library.store.sentences_of_articles([article.id])
    passages = library.store.passages(sorted({s.passage_id for s in sentences}))
    assert len(passages) >= 4
    assert all(len(p.text.split()) <= 180 for p in passages.values())
    covered = "".join(stored.text[s.start : s.end] for s in sentences)
    assert covered.replace(" ", "") == stored.text.replace(" ", "").replace("\n", "")


def test_bad_questions_get_clear_messages(seed_library: Library) -> None:
    with pytest.raises(BadQuestion, match="Ask a question"):
        seed_library.ask("   ")
    with pytest.raises(BadQuestion, match="characters long"):
        seed_library.ask("why " * 12_500)


def test_bad_files_are_skipped_with_reasons_and_good_ones_kept(library: Library, tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    shutil.copy(SEED_FILE, folder / "seed.txt")
    (folder / "binary.txt").write_bytes(bytes(range(256)) * 40)
    (folder / "empty.md").write_text("")
    (folder / "scripts.html").write_text("<html><body>" + "<script>alert('x')</script>" * 200 + "</body></html>")
    report = library.ingest([folder])
    assert [title for _, title in report.added] == [library.store.list_articles()[0].title]
    reasons = dict(report.failed)
    assert "binary" in reasons[str(folder / "binary.txt")]
    assert "empty" in reasons[str(folder / "empty.md")]
    assert "no article text" in reasons[str(folder / "scripts.html")]


def test_broken_index_files_are_rebuilt_from_the_store(seed_library: Library, embedder: Embedder) -> None:
    data_dir = seed_library.data_dir
    before = seed_library.store.counts()
    seed_library.close()
    dense = data_dir / DENSE_FILE
    dense.write_bytes(dense.read_bytes()[: dense.stat().st_size // 3])
    (data_dir / SPARSE_FILE).unlink()
    reopened = Library.open(data_dir, embedder)
    try:
        assert len(reopened.messages) == 2
        assert all("\n" not in m and "rebuilt" in m for m in reopened.messages)
        assert reopened.store.counts() == before
        assert reopened.dense.count() == before["sentences"]
        assert reopened.ask("what did Mourinho say about the referee?").answered
    finally:
        reopened.close()
    again = Library.open(data_dir, embedder)
    assert again.messages == []  # the rebuilt files were saved
    again.close()


def test_quotes_from_older_attribution_rules_are_read_again(seed_library: Library, embedder: Embedder) -> None:
    # As a data directory written by an older Byline would be: a wrong speaker, an older marker.
    data_dir = seed_library.data_dir
    before = seed_library.store.counts()
    with seed_library.store.transaction(reindex=False) as connection:
        connection.execute("UPDATE quotes SET speaker = 'Somebody Else' WHERE speaker = 'Jose Mourinho'")
        connection.execute("UPDATE meta SET value = '1' WHERE key = ?", (QUOTE_RULES_KEY,))
    seed_library.close()
    reopened = Library.open(data_dir, embedder)
    try:
        assert reopened.messages == ["Re-reading the quotes of 1 article with updated attribution rules (once)."]
        assert reopened.store.counts() == before  # nothing lost, nothing re-embedded or re-indexed
        assert "Somebody Else" not in reopened.speakers
        answer = reopened.ask("what did Mourinho say about the referee?")
        assert answer.answered and answer.spans[0].speaker == "Jose Mourinho"
    finally:
        reopened.close()
    again = Library.open(data_dir, embedder)
    assert again.messages == []
    again.close()


def test_a_failed_quote_re_read_keeps_the_old_quotes(seed_library: Library, embedder: Embedder) -> None:
    data_dir = seed_library.data_dir
    before = seed_library.store.counts()
    with seed_library.store.transaction(reindex=False) as connection:
        connection.execute("UPDATE meta SET value = '1' WHERE key = ?", (QUOTE_RULES_KEY,))
        # What a full disk does to the write, done by SQLite itself.
        connection.execute(
            "CREATE TRIGGER full_disk BEFORE INSERT ON quotes BEGIN SELECT RAISE(ABORT, 'disk is full'); END"
        )
    seed_library.close()
    reopened = Library.open(data_dir, embedder)
    try:
        assert any("Could not update the stored quotes (disk is full)" in m for m in reopened.messages)
        assert reopened.store.counts() == before
        assert reopened.ask("what did Mourinho say about the referee?").answered
        with reopened.store.transaction(reindex=False) as connection:
            connection.execute("DROP TRIGGER full_disk")
    finally:
        reopened.close()
    again = Library.open(data_dir, embedder)
    assert again.messages == ["Re-reading the quotes of 1 article with updated attribution rules (once)."]
    again.close()


def test_stale_index_is_detected(seed_library: Library, embedder: Embedder, tmp_path: Path) -> None:
    data_dir = seed_library.data_dir
    saved = {name: (data_dir / name).read_bytes() for name in (DENSE_FILE, SPARSE_FILE, "index.json")}
    (tmp_path / "extra.txt").write_text("Extra story\n\nA second article about a quiet village fete.\n")
    seed_library.ingest([tmp_path / "extra.txt"])
    seed_library.close()
    for name, data in saved.items():  # roll the index files back to before the ingest
        (data_dir / name).write_bytes(data)
    reopened = Library.open(data_dir, embedder)
    try:
        assert any("out of date" in m for m in reopened.messages)
        assert reopened.dense.count() == reopened.store.counts()["sentences"]
        assert reopened.search("village fete")[0].passage.text.startswith("A second article")
    finally:
        reopened.close()


def test_cli_reports_bad_paths_without_a_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "BYLINE_DATA_DIR": str(tmp_path / "d")}
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "ingest", str(tmp_path / "nope")],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "no such file or folder" in result.stderr and "Traceback" not in result.stderr


def test_seed_folder_exists() -> None:
    assert SEED_FILE.read_text().startswith("---\ntitle:") and SEEDS.is_dir()


def test_single_query_embedding_equals_the_batch_encoder(embedder: Embedder) -> None:
    assert embedder.query_encoder_kind == "TorchScript"  # the fast path is the one compared
    for text in ["what did Mourinho say about the referee?", "x", "é" * 600, "word " * 400]:
        single, batch = embedder.encode_one(text), embedder.encode([text])[0]
        assert single.dtype == batch.dtype and single.shape == batch.shape
        assert float(abs(single - batch).max()) < 1e-5
