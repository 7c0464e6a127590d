"""Article files and folders into the library: read, drop near-duplicates, store in chunks.

Every file path (``byline ingest``, the seeds, the watched folder) comes through here, so
they all get the near-duplicate check web pages get (``dedup``): the BBC folders hold the
same story twice under two file names with a changed hyphen or headline. Articles are
stored a step (``CHUNK_ARTICLES``) at a time, and progress moves per article as each is stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from retrieval.errors import UnreadableArticle
from retrieval.models import IngestReport
from retrieval.reading.dedup import NearDuplicates, merge_near_duplicates
from retrieval.reading.loader import iter_article_files, not_an_article_file, read_article_file

if TYPE_CHECKING:
    from retrieval.models import Progress
    from retrieval.ports import IngestTarget

# Articles per store-and-index step. The library reads and embeds a step's articles as one stream
# (``Library.add_drafts``), and holds the writer lock for the whole step, saving the index files
# at its end: 500 articles (~1-2 minutes on two cores) keep the stream long enough that reading
# hides behind embedding, while another process waiting to write (the feed poller beside a big
# ``byline ingest``) waits minutes at most.
CHUNK_ARTICLES = 500


def ingest_files(
    library: IngestTarget, paths: Iterable[Path], progress: Progress | None = None, chunk: int = CHUNK_ARTICLES
) -> IngestReport:
    """Ingest article files and folders; bad files and near-duplicates are reported, not stored.

    ``progress(done, total)`` counts files: each one read, skipped or stored moves it on."""
    report = IngestReport()
    paths = list(paths)
    for path in paths:
        refusal = not_an_article_file(path)
        if refusal:
            report.failed.append((str(path), refusal))
    files = list(iter_article_files(paths))
    drafts = []
    for path in files:
        try:
            drafts.append(read_article_file(path))
        except UnreadableArticle as error:
            report.failed.append((str(path), str(error)))
    kept, duplicates = merge_near_duplicates(drafts, NearDuplicates(library.store))
    report.duplicates.extend(duplicates)
    total = len(files)
    base = total - len(kept)  # unreadable files and near-duplicates are done with already
    if progress and base:
        progress(base, total)
    for start in range(0, len(kept), chunk):

        def moved(done: int, _chunk_total: int, offset: int = base + start) -> None:
            if progress:
                progress(offset + done, total)

        library.add_drafts(kept[start : start + chunk], report, moved)
        # Unchanged articles never reach the library's progress callback: count them here.
        if progress:
            progress(base + min(start + chunk, len(kept)), total)
    return report
