"""Storage faults: a full disk while saving an index, and a busy SQLite database."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from retrieval.index.embedder import Embedder
from retrieval.library import DENSE_FILE, SPARSE_FILE, STORE_FILE, Library


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 2 MB filesystem (tmpfs), so that writes genuinely fail with ENOSPC."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)], capture_output=True)
    if result.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def _fill(disk: Path, leave_bytes: int) -> Path:
    filler = disk / "filler"
    free = shutil.disk_usage(disk).free
    with open(filler, "wb") as stream:
        stream.write(b"\0" * max(0, free - leave_bytes))
    return filler


def test_disk_full_while_saving_the_index_keeps_the_old_index(
    small_disk: Path, embedder: Embedder, tmp_path: Path
) -> None:
    data_dir = small_disk / "data"
    library = Library.open(data_dir, embedder)
    lines = [f"Line {i} of the council minutes records a vote on the new ring road budget." for i in range(150)]
    (tmp_path / "minutes.txt").write_text("Council minutes\n\n" + "\n\n".join(lines) + "\n")
    library.ingest([tmp_path / "minutes.txt"])
    old_files = {name: (data_dir / name).read_bytes() for name in (DENSE_FILE, SPARSE_FILE)}
    assert len(old_files[DENSE_FILE]) > 150_000

    filler = _fill(small_disk, leave_bytes=100_000)  # room for SQLite's pages, not for a new FAISS file
    (tmp_path / "late.txt").write_text(
        "Late item\n\nThe mayor announced a surprise lantern festival for the harbour.\n"
    )
    report = library.ingest([tmp_path / "late.txt"])
    assert len(report.added) == 1, "the article itself is stored"
    assert any("Could not save the search index" in m and "kept" in m for m in library.messages)
    assert {name: (data_dir / name).read_bytes() for name in old_files} == old_files
    assert not [p for p in data_dir.iterdir() if p.name.endswith(".tmp")], "no half-written files left"
    assert library.search("lantern festival")[0].passage.text.startswith("The mayor"), "this process still finds it"
    library.close()

    filler.unlink()
    reopened = Library.open(data_dir, embedder)
    try:
        assert any("out of date" in m for m in reopened.messages)
        assert reopened.search("lantern festival")[0].passage.text.startswith("The mayor")
        assert reopened.dense.count() == reopened.store.counts()["sentences"]
    finally:
        reopened.close()


def test_busy_database_is_waited_for(seed_library: Library, tmp_path: Path) -> None:
    blocker = sqlite3.connect(seed_library.data_dir / STORE_FILE, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")  # another process holding the write lock
    released = threading.Event()

    def release_later() -> None:
        time.sleep(1.5)
        blocker.execute("COMMIT")
        released.set()

    threading.Thread(target=release_later).start()
    (tmp_path / "busy.txt").write_text("Busy day\n\nThe market was busy with shoppers buying winter coats.\n")
    report = seed_library.ingest([tmp_path / "busy.txt"])
    assert released.is_set() and len(report.added) == 1
    blocker.close()
