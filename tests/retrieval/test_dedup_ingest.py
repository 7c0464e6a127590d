"""Near-duplicates are caught on every ingest path, files and folders too (not only web pages)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from retrieval.library import Library
from retrieval.reading.dedup import signature, similarity
from tests.conftest import BBC

STORY = [
    "Sun Microsystems has launched a pay-as-you-go service which will allow customers requiring huge "
    "computing power to rent it by the hour.",
    "Sun Grid costs users $1 for an hour's worth of processing and storage power on systems maintained by Sun. "
    "So-called grid computing is the latest buzz phrase in a company which believes that computing capacity is "
    "as important a commodity as hardware and software.",
    "The company said the service would be available to customers in the United States first, with other "
    "countries to follow later in the year, and that prices would fall as more users signed up for it.",
    "Analysts said the move was a bold one for a firm that has struggled to sell its servers since the end of "
    "the dot-com boom, and that rivals such as IBM were already offering similar deals to their customers.",
]


def write(folder: Path, name: str, title: str, paragraphs: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(title + "\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    return path


def test_a_near_duplicate_pair_in_one_folder_is_stored_once(library: Library, tmp_path: Path) -> None:
    folder = tmp_path / "articles"
    write(folder, "a.txt", "Sun launches pay-as-you-go grid", STORY)
    # The same story again: hyphens dropped, one word changed, a new headline.
    edited = [p.replace("pay-as-you-go", "pay as you go").replace("So-called", "So called") for p in STORY]
    write(folder, "b.txt", "Sun launches grid service", edited)
    write(folder, "c.txt", "A different story", ["Nothing like the others: " + " ".join(reversed(STORY[0].split()))])
    report = library.ingest([folder])
    assert library.store.article_count() == 2
    assert len(report.duplicates) == 1 and "near-duplicate" in report.duplicates[0][1]
    # Again: nothing changes, nothing flips between the two copies.
    again = library.ingest([folder])
    assert library.store.article_count() == 2 and not again.added and not again.replaced


def test_a_file_that_nearly_duplicates_a_stored_article_replaces_it(library: Library, tmp_path: Path) -> None:
    first = write(tmp_path / "one", "a.txt", "Sun launches pay-as-you-go grid", STORY)
    library.ingest([first])
    corrected = [*STORY[:-1], STORY[-1] + " (Corrected.)"]
    second = write(tmp_path / "two", "b.txt", "Sun launches pay-as-you-go grid", corrected)
    report = library.ingest([second])
    assert library.store.article_count() == 1 and len(report.replaced) == 1
    stored = library.store.list_articles()[0]
    assert "(Corrected.)" in (library.store.article(stored.id, with_text=True) or stored).text
    assert [hit.passage.article_id for hit in library.search("computing power by the hour")][:1] == [stored.id]


@pytest.mark.skipif(not (BBC / "tech" / "060.txt").exists(), reason="BBC corpus not present")
def test_a_real_duplicate_pair_from_bbc_tech_is_stored_once(library: Library, tmp_path: Path) -> None:
    # 007.txt and 060.txt are one story: a headline word and a few hyphens differ.
    folder = tmp_path / "tech"
    folder.mkdir()
    for name in ("007.txt", "060.txt", "001.txt"):
        shutil.copy(BBC / "tech" / name, folder / name)
    a, b = ((folder / n).read_text(encoding="utf-8") for n in ("007.txt", "060.txt"))
    assert a != b and similarity(signature(a), signature(b)) >= 0.9
    report = library.ingest([folder])
    assert library.store.article_count() == 2, report
    assert len(report.duplicates) == 1
