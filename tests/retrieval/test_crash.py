"""kill -9 in the middle of an ingest: on restart the store and both indexes agree, and
running the ingest again finishes the job without storing anything twice."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from retrieval.index.embedder import Embedder
from retrieval.library import Library
from tests.conftest import BBC, PROJECT
from tests.fixture_articles import article_text

# Enough articles for several embedding batches, so the kill lands between commits.
ARTICLES = 80

CHILD = """
import sys
from pathlib import Path
from retrieval.library import Library

library = Library.open(Path(sys.argv[1]))
def progress(done, total):
    print(f"stored {done}", flush=True)
library.ingest([Path(sys.argv[2])], progress)
print("finished", flush=True)
"""


def test_kill_9_mid_ingest_leaves_everything_consistent(tmp_path: Path, embedder: Embedder) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    sources = sorted((BBC / "business").glob("*.txt"))[:ARTICLES]
    for number in range(ARTICLES):
        target = corpus / f"{number:03d}.txt"
        if number < len(sources):
            shutil.copy(sources[number], target)
        else:  # no shared data on this machine: made-up articles of the same shape
            target.write_text(article_text(number))
    data = tmp_path / "data"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(data), str(corpus)],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )
    assert child.stdout is not None
    try:
        # Wait for the first article to be committed, then kill while the rest are in flight.
        line = child.stdout.readline()
        assert line.startswith("stored"), f"the child ingest did not start: {line!r}"
        time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL

    library = Library.open(data, embedder)
    try:
        counts = library.store.counts()
        assert 0 < counts["articles"] < ARTICLES, "the kill should land mid-ingest"
        _assert_consistent(library)
        report = library.ingest([corpus])
        assert len(report.added) == ARTICLES - counts["articles"]
        assert len(report.unchanged) == counts["articles"] and not report.failed
        _assert_consistent(library)
        assert library.store.article_count() == ARTICLES
        again = library.ingest([corpus])
        assert not again.added and not again.replaced and len(again.unchanged) == ARTICLES
    finally:
        library.close()
    reopened = Library.open(data, embedder)
    try:
        _assert_consistent(reopened)
        assert not reopened.messages, "the index files saved after the ingest should be current"
    finally:
        reopened.close()


def _assert_consistent(library: Library) -> None:
    counts = library.store.counts()
    assert library.dense.count() == counts["sentences"], "a vector without its sentence, or the reverse"
    assert library.sparse.count() == counts["passages"], "a passage missing from the keyword index"
    connection = library.store._connect()
    orphans = connection.execute(
        "SELECT count(*) FROM articles a WHERE NOT EXISTS (SELECT 1 FROM passages p WHERE p.article_id = a.id)"
    ).fetchone()[0]
    assert orphans == 0, "a half-added article"
    unembedded = connection.execute(
        "SELECT count(*) FROM passages p WHERE NOT EXISTS (SELECT 1 FROM sentences s WHERE s.passage_id = p.id)"
    ).fetchone()[0]
    assert unembedded == 0, "a passage without vectors"
