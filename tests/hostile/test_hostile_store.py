"""Attacks on the library's files (issue 16, #8, #9, #12, #13): a second process on the same
data directory, index files damaged or planted on disk, a corrupt SQLite store.

Second processes are real subprocesses running the real CLI or ``Library``; the model, FAISS
and SQLite are real. Every damaged index must be detected, reported in one line and rebuilt
from the store with answers unchanged; nothing on disk may ever run code when read.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from bot.serve import start_catch_up
from retrieval.index.embedder import Embedder
from retrieval.library import DENSE_FILE, INDEX_META_FILE, SPARSE_FILE, STORE_FILE, Library
from tests.conftest import PROJECT, SEEDS

QUESTION = "Where has the lantern festival moved to?"
NEW_WORDS = "Pendle Quarry"

OLD_FESTIVAL = """Harbour lantern festival plans announced

The harbour lantern festival will return this summer, the town council said on Monday.

Organisers said the festival would be held on the harbour wall as in previous years.

Tickets will go on sale in May, and local schools will make the lanterns.
"""

NEW_FESTIVAL = """Harbour lantern festival plans announced

The harbour lantern festival will return this summer, the town council said on Monday.

The lantern festival has moved to Pendle Quarry, because the harbour wall is being repaired.

Tickets will go on sale in May, and local schools will make the lanterns.
"""

OTHER_STORIES = [
    "Bakery wins award\n\nA family bakery on Mill Street won the regional bread prize for its rye loaf.\n",
    "Bridge closed for repairs\n\nThe river bridge will close for three weeks while engineers replace its joints.\n",
    "Library extends hours\n\nThe central library will open until nine in the evening from next month.\n",
    "Choir tours Norway\n\nThe town choir leaves for a ten-day tour of Norwegian cathedrals on Friday.\n",
]

# A child process: open the library, say so, wait for the go signal, ingest, say so.
INGEST_CHILD = """
import sys, time
from pathlib import Path
from retrieval.library import Library

data, go, paths = Path(sys.argv[1]), Path(sys.argv[2]), [Path(p) for p in sys.argv[3:]]
library = Library.open(data)
print("open", flush=True)
while not go.exists():
    time.sleep(0.01)
report = library.ingest(paths)
print("done", report.summary(), flush=True)
library.close()
"""


def _child_env(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(PROJECT), "BYLINE_DATA_DIR": str(data_dir)}


def _cli(data_dir: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """The real ``byline`` command line, in its own process."""
    return subprocess.run(
        [sys.executable, "-c", "from bot.cli.main import main; raise SystemExit(main())", *arguments],
        cwd=PROJECT,
        env=_child_env(data_dir),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


@pytest.fixture
def festival_dir(tmp_path: Path, embedder: Embedder) -> Path:
    """A data directory holding the festival story in its old version, from ``_festival_file``."""
    data = tmp_path / "data"
    library = Library.open(data, embedder)
    library.ingest([_write(tmp_path / "articles", "festival.txt", OLD_FESTIVAL)])
    library.close()
    return data


def _festival_file(tmp_path: Path, text: str = NEW_FESTIVAL) -> Path:
    """The festival story's file (an article's key is its path), rewritten: ingesting it replaces."""
    return _write(tmp_path / "articles", "festival.txt", text)


def _assert_indexes_match_store(library: Library) -> None:
    assert np.array_equal(library.dense.ids(), library.store.sentence_ids()), "stale or missing vectors"
    assert np.array_equal(library.sparse.ids(), library.store.passage_ids()), "stale or missing passages"


def _assert_new_words_answered(library: Library) -> None:
    answer = library.ask(QUESTION)
    assert answer.answered, answer.message
    assert NEW_WORDS in answer.text
    assert NEW_WORDS in library.search(NEW_WORDS)[0].passage.text


def _reopen_and_check(data: Path, embedder: Embedder) -> None:
    """The restart half of every multi-process test: indexes agree with the store, new words answered."""
    reopened = Library.open(data, embedder)
    try:
        texts = [text for _, text in reopened.store.article_texts()]
        assert sum("lantern festival" in text for text in texts) == 1, "replaced, not added beside the old one"
        _assert_indexes_match_store(reopened)
        _assert_new_words_answered(reopened)
    finally:
        reopened.close()


# -- #8: two processes on one data directory ----------------------------------------------------


def test_a_cli_replace_while_serve_runs_is_caught_up_and_survives_a_restart(
    festival_dir: Path, tmp_path: Path, embedder: Embedder
) -> None:
    serve = Library.open(festival_dir, embedder)
    try:
        assert NEW_WORDS not in serve.ask(QUESTION).text
        replaced = _cli(festival_dir, "ingest", str(_festival_file(tmp_path)))
        assert replaced.returncode == 0 and "1 updated" in replaced.stdout + replaced.stderr, replaced
        # The serving process then stores an article of its own (a feed round) and saves its
        # indexes: they must hold the CLI's replacement too, not the old sentences.
        serve.ingest([_write(tmp_path / "feed", "bakery.txt", OTHER_STORIES[0])])
        _assert_indexes_match_store(serve)
        _assert_new_words_answered(serve)
    finally:
        serve.close()
    _reopen_and_check(festival_dir, embedder)


def test_serve_sees_a_cli_ingest_without_a_restart(festival_dir: Path, tmp_path: Path, embedder: Embedder) -> None:
    serve = Library.open(festival_dir, embedder)
    stop = threading.Event()
    thread = start_catch_up(serve, 0.2, stop)  # what ``byline serve`` runs, on a short interval
    try:
        replaced = _cli(festival_dir, "ingest", str(_festival_file(tmp_path)))
        assert replaced.returncode == 0 and "1 updated" in replaced.stdout + replaced.stderr, replaced
        deadline = time.monotonic() + 30
        while serve.indexed_generation != serve.store.generation() and time.monotonic() < deadline:
            time.sleep(0.1)
        _assert_indexes_match_store(serve)
        _assert_new_words_answered(serve)
        assert not serve.catch_up(), "nothing more to catch up"
    finally:
        stop.set()
        thread.join(timeout=10)
        serve.close()
    _reopen_and_check(festival_dir, embedder)


def test_two_concurrent_ingests_lose_nothing(festival_dir: Path, tmp_path: Path, embedder: Embedder) -> None:
    first = [_festival_file(tmp_path), _write(tmp_path / "one", "a.txt", OTHER_STORIES[0])]
    second = [_write(tmp_path / "two", f"{n}.txt", story) for n, story in enumerate(OTHER_STORIES[1:])]
    go = tmp_path / "go"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", INGEST_CHILD, str(festival_dir), str(go), *map(str, paths)],
            cwd=PROJECT,
            env=_child_env(festival_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for paths in (first, second)
    ]
    try:
        for child in children:  # both hold the data directory open before either writes
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "open", child.stderr.read() if child.stderr else ""
        go.touch()
        for child in children:
            _, errors = child.communicate(timeout=300)
            assert child.returncode == 0, errors
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
    reopened = Library.open(festival_dir, embedder)
    try:
        assert reopened.store.article_count() == 1 + len(OTHER_STORIES)
        assert not reopened.messages, "the last process to save left current index files"
        for story in OTHER_STORIES:
            assert story.splitlines()[2] in reopened.search(story.splitlines()[2][:40])[0].passage.text
    finally:
        reopened.close()
    _reopen_and_check(festival_dir, embedder)


def test_index_files_saved_by_a_process_that_missed_a_replace_are_rebuilt(
    festival_dir: Path, tmp_path: Path, embedder: Embedder
) -> None:
    """What older versions left behind: files labelled current that hold a deleted article's
    sentences and miss the stored ones. Detected at open by their ids, and rebuilt."""
    saved = {name: (festival_dir / name).read_bytes() for name in (DENSE_FILE, SPARSE_FILE)}
    library = Library.open(festival_dir, embedder)
    library.ingest([_festival_file(tmp_path)])
    library.close()
    for name, data in saved.items():  # the old files, with a checksum and generation that say current
        (festival_dir / name).write_bytes(data)
        _record_checksum(festival_dir, name, data)
    reopened = Library.open(festival_dir, embedder)
    try:
        assert [m.split(":")[0] for m in reopened.messages] == [
            "Vector index held other sentences than the store",
            "Keyword index held other passages than the store",
        ]
    finally:
        reopened.close()
    _reopen_and_check(festival_dir, embedder)


# -- #9 and #12: index files damaged or planted on disk ------------------------------------------


def _record_checksum(data_dir: Path, name: str, data: bytes) -> None:
    """What someone with write access to the data directory can do: make index.json agree."""
    meta = json.loads((data_dir / INDEX_META_FILE).read_text())
    meta["files"][name]["sha256"] = hashlib.sha256(data).hexdigest()
    (data_dir / INDEX_META_FILE).write_text(json.dumps(meta))


@pytest.fixture
def seeded(seed_data_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "seeded"
    shutil.copytree(seed_data_dir, copy)
    return copy


SEED_QUESTIONS = ["what did Mourinho say about the referee?", "Who was cut above the eyebrow?"]


def _answers(data_dir: Path, embedder: Embedder) -> tuple[list[str], list[str]]:
    """(the answers to the seed questions, the messages the open produced)."""
    library = Library.open(data_dir, embedder)
    try:
        _assert_indexes_match_store(library)
        return [library.ask(q).text for q in SEED_QUESTIONS], library.messages
    finally:
        library.close()


def _assert_rebuilt_with_same_answers(
    data_dir: Path, embedder: Embedder, damage: Callable[[], None], expected_message: str
) -> None:
    before, _ = _answers(data_dir, embedder)
    damage()
    after, messages = _answers(data_dir, embedder)
    assert len(messages) == 1 and "\n" not in messages[0], messages
    assert messages[0].startswith(expected_message) and "rebuilt it from the store" in messages[0]
    assert after == before
    again, messages = _answers(data_dir, embedder)
    assert messages == [] and again == before, "the rebuilt file was saved"


def test_flipped_bytes_in_the_vector_index_are_detected(seeded: Path, embedder: Embedder) -> None:
    def flip() -> None:
        path = seeded / DENSE_FILE
        data = bytearray(path.read_bytes())
        rng = random.Random(16)
        for position in rng.sample(range(len(data)), 64):
            data[position] ^= rng.randrange(1, 256)
        path.write_bytes(bytes(data))

    _assert_rebuilt_with_same_answers(
        seeded, embedder, flip, "Vector index did not match its checksum in index.json (damaged on disk)"
    )


def _npz(**arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def _header(format_name: str = "byline-bm25-v3", terms: Sequence[object] = ("referee",)) -> np.ndarray:
    return np.frombuffer(json.dumps({"format": format_name, "terms": list(terms)}).encode(), dtype=np.uint8)


def _good_columns() -> dict[str, np.ndarray]:
    return {
        "offsets": np.array([0, 1]),
        "doc_ids": np.array([1]),
        "frequencies": np.array([1]),
        "length_ids": np.array([1]),
        "lengths": np.array([3]),
    }


WRONG_TYPES = {
    "float offsets": {**_good_columns(), "header": _header(), "offsets": np.array([0.0, 0.5])},
    "string passage ids": {**_good_columns(), "header": _header(), "doc_ids": np.array(["1"])},
    "numbers for terms": {**_good_columns(), "header": _header(terms=[17])},
    "a 2-d array": {**_good_columns(), "header": _header(), "lengths": np.array([[3]])},
    "header not JSON": {**_good_columns(), "header": np.frombuffer(b"\xff{", dtype=np.uint8)},
    "header missing": _good_columns(),
    "postings for absent passages": {**_good_columns(), "header": _header(), "doc_ids": np.array([99])},
}


@pytest.mark.parametrize("checksum_updated", [False, True], ids=["checksum-stale", "checksum-forged"])
@pytest.mark.parametrize("variant", sorted(WRONG_TYPES))
def test_wrong_types_in_the_keyword_index_are_detected(
    seeded: Path, embedder: Embedder, variant: str, checksum_updated: bool
) -> None:
    def plant() -> None:
        data = _npz(**WRONG_TYPES[variant])
        (seeded / SPARSE_FILE).write_bytes(data)
        if checksum_updated:
            _record_checksum(seeded, SPARSE_FILE, data)

    expected = "Keyword index was unreadable" if checksum_updated else "Keyword index did not match its checksum"
    _assert_rebuilt_with_same_answers(seeded, embedder, plant, expected)


class _RunsCode:
    """A pickle that, when loaded, creates a directory: the proof that loading ran code."""

    def __init__(self, canary: Path) -> None:
        self.canary = canary

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.mkdir, (str(self.canary),)


def test_a_pickled_keyword_index_is_never_unpickled(seeded: Path, tmp_path: Path, embedder: Embedder) -> None:
    canary = tmp_path / "pwned"

    def plant() -> None:
        data = pickle.dumps({"format": "byline-bm25-v2", "postings": _RunsCode(canary)})
        (seeded / SPARSE_FILE).write_bytes(data)
        _record_checksum(seeded, SPARSE_FILE, data)

    _assert_rebuilt_with_same_answers(seeded, embedder, plant, "Keyword index was in the old pickle format")
    assert not canary.exists(), "reading the index ran code"
    assert (seeded / SPARSE_FILE).read_bytes()[:2] == b"PK", "rewritten as .npz"


def test_a_keyword_index_of_an_older_format_version_is_rebuilt(seeded: Path, embedder: Embedder) -> None:
    def plant() -> None:
        data = _npz(**_good_columns(), header=_header("byline-bm25-v2"))
        (seeded / SPARSE_FILE).write_bytes(data)
        _record_checksum(seeded, SPARSE_FILE, data)

    _assert_rebuilt_with_same_answers(seeded, embedder, plant, "Keyword index was out of date")


def test_index_files_from_before_checksums_are_rebuilt_once(seeded: Path, embedder: Embedder) -> None:
    """An upgrade: index.json without checksums, the keyword index a pickle. Not trusted, not
    unpickled, rebuilt once."""
    (seeded / INDEX_META_FILE).write_text(json.dumps({"dense_generation": 1, "dense_kind": "flat"}))
    (seeded / SPARSE_FILE).write_bytes(pickle.dumps({"format": "byline-bm25-v2"}))
    _, messages = _answers(seeded, embedder)
    assert [m.split(":")[0] for m in messages] == [
        "Vector index had no checksum",
        "Keyword index was in the old pickle format (not read",
    ]
    assert _answers(seeded, embedder)[1] == []


# -- #13: a corrupt store ---------------------------------------------------------------------------


def _random_bytes(path: Path) -> None:
    path.write_bytes(random.Random(13).randbytes(path.stat().st_size))


def _truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


@pytest.fixture(params=[_random_bytes, _truncated], ids=["random-bytes", "truncated"])
def corrupt_store(request: pytest.FixtureRequest, seeded: Path) -> Iterator[tuple[Path, bytes]]:
    store = seeded / STORE_FILE
    for leftover in (seeded / f"{STORE_FILE}-wal", seeded / f"{STORE_FILE}-shm"):
        leftover.unlink(missing_ok=True)  # closed cleanly: the WAL was checkpointed
    request.param(store)
    yield seeded, store.read_bytes()


@pytest.mark.parametrize("command", [["ask", "who won?"], ["sources"], ["ingest", str(SEEDS)]])
def test_a_corrupt_store_gives_one_line_and_is_left_alone(
    corrupt_store: tuple[Path, bytes], command: list[str]
) -> None:
    data_dir, damaged = corrupt_store
    result = _cli(data_dir, *command)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert str(data_dir / STORE_FILE) in lines[0] and "damaged" in lines[0]
    assert "restore it from a backup" in lines[0] and "move it away" in lines[0]
    assert (data_dir / STORE_FILE).read_bytes() == damaged, "the damaged file must not be overwritten"
