"""The vector backend is chosen by BYLINE_VECTOR_BACKEND and the keyword backend by
BYLINE_KEYWORD_BACKEND, by the one rule in ``index_factory``; a wrong name, a missing extra, a
server that is not there or a folder already open each stop with a message that says what to do."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path

import numpy as np
import pytest

from retrieval.errors import BylineError
from retrieval.index.dense import DenseIndex
from retrieval.index.embedder import DIMENSION
from retrieval.index.factory import (
    EDGE_FOLDER,
    EDGE_KEYWORD_FOLDER,
    QDRANT_FOLDER,
    QDRANT_KEYWORD_FOLDER,
    UnknownBackend,
    keyword_backend_name,
    open_keyword_index,
    open_vector_index,
    vector_backend_name,
)
from retrieval.index.sparse import SparseIndex

needs_edge = pytest.mark.skipif(
    importlib.util.find_spec("qdrant_edge") is None,
    reason="qdrant-edge-py is not installed: install the test extra (pip install -e '.[test]'), which includes it",
)
needs_qdrant = pytest.mark.skipif(
    importlib.util.find_spec("qdrant_client") is None,
    reason="qdrant-client is not installed: install the test extra (pip install -e '.[test]'), which includes it",
)


@pytest.mark.parametrize("value", [None, "", "  ", "faiss", "FAISS"])
def test_faiss_is_the_default_and_its_own_name(tmp_path: Path, value: str | None) -> None:
    environ = {} if value is None else {"BYLINE_VECTOR_BACKEND": value}
    assert vector_backend_name(environ) == "faiss"
    index = open_vector_index(tmp_path, environ)
    assert isinstance(index, DenseIndex) and index.count() == 0
    assert not (tmp_path / QDRANT_FOLDER).exists()


def test_an_unknown_backend_names_the_ones_there_are(tmp_path: Path) -> None:
    with pytest.raises(UnknownBackend) as raised:
        open_vector_index(tmp_path, {"BYLINE_VECTOR_BACKEND": "milvus"})
    message = str(raised.value)
    assert "BYLINE_VECTOR_BACKEND='milvus'" in message and "faiss, qdrant, qdrant-edge" in message
    assert isinstance(raised.value, BylineError)


@needs_qdrant
def test_qdrant_without_a_url_is_local_mode_in_the_data_directory(tmp_path: Path) -> None:
    from retrieval.index.qdrant import QdrantIndex

    index = open_vector_index(tmp_path, {"BYLINE_VECTOR_BACKEND": "qdrant"})
    assert isinstance(index, QdrantIndex)
    try:
        assert index.kind == "qdrant"
        vector = np.zeros((1, DIMENSION), dtype=np.float32)
        vector[0, 0] = 1.0
        index.add(np.array([42]), vector)
        assert index.search(vector[0], 3)[0].tolist() == [42]
    finally:
        index.close()
    assert (tmp_path / QDRANT_FOLDER).is_dir()


@needs_qdrant
def test_a_local_qdrant_folder_open_elsewhere_says_to_use_a_server(tmp_path: Path) -> None:
    from retrieval.index.qdrant import QdrantIndex, QdrantUnavailable

    first = QdrantIndex.open(path=tmp_path / "qdrant")
    try:
        with pytest.raises(QdrantUnavailable) as raised:
            open_vector_index(tmp_path, {"BYLINE_VECTOR_BACKEND": "qdrant"})
        assert "BYLINE_QDRANT_URL" in str(raised.value) and str(tmp_path / "qdrant") in str(raised.value)
    finally:
        first.close()


@needs_qdrant
def test_a_qdrant_server_that_is_not_there_is_named_in_the_error(tmp_path: Path) -> None:
    from retrieval.index.qdrant import QdrantUnavailable

    with socket.socket() as probe:  # a port on 127.0.0.1 that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    environ = {"BYLINE_VECTOR_BACKEND": "qdrant", "BYLINE_QDRANT_URL": url}
    with pytest.raises(QdrantUnavailable) as raised:
        open_vector_index(tmp_path, environ)
    message = str(raised.value)
    assert url in message and "start the server, or correct BYLINE_QDRANT_URL" in message
    assert not (tmp_path / QDRANT_FOLDER).exists(), "a URL is used instead of local mode, not as well"


@needs_qdrant
def test_a_collection_of_other_vectors_is_refused(tmp_path: Path) -> None:
    from qdrant_client import QdrantClient, models

    from retrieval.index.qdrant import QdrantIndex, QdrantUnavailable

    client = QdrantClient(path=str(tmp_path / "q"))
    client.create_collection("sentences", vectors_config=models.VectorParams(size=8, distance=models.Distance.DOT))
    client.close()
    with pytest.raises(QdrantUnavailable) as raised:
        QdrantIndex.open(path=tmp_path / "q")
    assert "holds other vectors than Byline's" in str(raised.value)
    # The refusal let go of the folder: another client can open it (to delete that collection).
    QdrantClient(path=str(tmp_path / "q")).close()


def _unused_url() -> str:
    with socket.socket() as probe:  # a port on 127.0.0.1 that nothing listens on
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


@pytest.mark.parametrize("value", [None, "", "  ", "bm25", "BM25"])
def test_bm25_is_the_default_keyword_backend_and_its_own_name(tmp_path: Path, value: str | None) -> None:
    environ = {} if value is None else {"BYLINE_KEYWORD_BACKEND": value}
    assert keyword_backend_name(environ) == "bm25"
    index = open_keyword_index(tmp_path, environ)
    assert isinstance(index, SparseIndex) and index.count() == 0
    assert not (tmp_path / QDRANT_KEYWORD_FOLDER).exists()


def test_the_keyword_backend_is_chosen_apart_from_the_vector_backend(tmp_path: Path) -> None:
    environ = {"BYLINE_VECTOR_BACKEND": "qdrant"}
    assert keyword_backend_name(environ) == "bm25"
    assert vector_backend_name({"BYLINE_KEYWORD_BACKEND": "qdrant"}) == "faiss"


def test_an_unknown_keyword_backend_names_the_ones_there_are(tmp_path: Path) -> None:
    with pytest.raises(UnknownBackend) as raised:
        open_keyword_index(tmp_path, {"BYLINE_KEYWORD_BACKEND": "elastic"})
    message = str(raised.value)
    assert "BYLINE_KEYWORD_BACKEND='elastic'" in message and "bm25, qdrant" in message
    assert isinstance(raised.value, BylineError)


@needs_qdrant
def test_qdrant_keywords_without_a_url_are_local_mode_beside_the_vectors(tmp_path: Path) -> None:
    from retrieval.index.qdrant import QdrantIndex
    from retrieval.index.qdrant_keywords import QdrantKeywordIndex

    environ = {"BYLINE_VECTOR_BACKEND": "qdrant", "BYLINE_KEYWORD_BACKEND": "qdrant"}
    vectors = open_vector_index(tmp_path, environ)
    keywords = open_keyword_index(tmp_path, environ)  # its own folder: the vectors' one is locked
    assert isinstance(vectors, QdrantIndex) and isinstance(keywords, QdrantKeywordIndex)
    try:
        keywords.add(7, ["mourinho", "referee"])
        assert [doc_id for doc_id, _ in keywords.search(["referee"], 3)] == [7]
        assert keywords.sorted_terms() == ["mourinho", "referee"]
    finally:
        keywords.close()
        vectors.close()
    assert (tmp_path / QDRANT_KEYWORD_FOLDER).is_dir() and (tmp_path / QDRANT_FOLDER).is_dir()


@needs_qdrant
def test_a_local_keyword_folder_open_elsewhere_says_to_use_a_server(tmp_path: Path) -> None:
    from retrieval.index.qdrant import QdrantUnavailable
    from retrieval.index.qdrant_keywords import QdrantKeywordIndex

    first = QdrantKeywordIndex.open(path=tmp_path / QDRANT_KEYWORD_FOLDER)
    try:
        with pytest.raises(QdrantUnavailable) as raised:
            open_keyword_index(tmp_path, {"BYLINE_KEYWORD_BACKEND": "qdrant"})
        assert "BYLINE_QDRANT_URL" in str(raised.value) and str(tmp_path / QDRANT_KEYWORD_FOLDER) in str(raised.value)
    finally:
        first.close()


@needs_qdrant
@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
def test_a_keyword_qdrant_server_that_is_not_there_is_named_in_the_error(tmp_path: Path) -> None:
    from retrieval.index.qdrant import QdrantUnavailable

    url = _unused_url()
    environ = {"BYLINE_KEYWORD_BACKEND": "qdrant", "BYLINE_QDRANT_URL": url, "BYLINE_QDRANT_API_KEY": "s3cret-key"}
    with pytest.raises(QdrantUnavailable) as raised:
        open_keyword_index(tmp_path, environ)
    message = str(raised.value)
    assert url in message and "start the server, or correct BYLINE_QDRANT_URL" in message
    assert "s3cret-key" not in message, "the API key never appears in a message"
    assert not (tmp_path / QDRANT_KEYWORD_FOLDER).exists(), "a URL is used instead of local mode, not as well"


@needs_edge
def test_qdrant_edge_is_one_entry_of_the_factory_for_both_ports(tmp_path: Path) -> None:
    """The in-process Qdrant engine is named by the factory like the others (in a folder of the
    data directory per index), so nothing but the factory imports an engine."""
    from retrieval.index.qdrant_edge import EdgeKeywordIndex, EdgeVectorIndex

    environ = {"BYLINE_VECTOR_BACKEND": "qdrant-edge", "BYLINE_KEYWORD_BACKEND": "qdrant-edge"}
    vectors = open_vector_index(tmp_path, environ)
    keywords = open_keyword_index(tmp_path, environ)
    try:
        assert isinstance(vectors, EdgeVectorIndex) and isinstance(keywords, EdgeKeywordIndex)
        assert (tmp_path / EDGE_FOLDER).is_dir() and (tmp_path / EDGE_KEYWORD_FOLDER).is_dir()
        vector = np.zeros((1, DIMENSION), dtype=np.float32)
        vector[0, 3] = 1.0
        vectors.add(np.array([7]), vector)
        ids, _ = vectors.search(vector[0], 1)
        assert ids.tolist() == [7]
        keywords.add(11, ["budget", "chancellor"])
        assert [passage for passage, _ in keywords.search(["budget"], 5)] == [11]
    finally:
        vectors.close()  # type: ignore[attr-defined]
        keywords.close()  # type: ignore[attr-defined]
