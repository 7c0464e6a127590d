"""Sentence vectors in Qdrant: the ``ports.VectorIndex`` port over qdrant-client.

One collection of points, one per sentence: the point id is the sentence id, the vector the
sentence's unit-length embedding, compared by cosine distance (so scores are the same cosines
FAISS's inner product gives). The same code runs over Qdrant's local mode
(``QdrantClient(path=...)``: one process, the points kept in that folder) and over a Qdrant
server (``QdrantClient(url=...)``, shared by many workers). qdrant-client is an optional
dependency: ``pip install -e '.[cluster]'``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ApiException

from retrieval.errors import QdrantUnavailable
from retrieval.index.embedder import DIMENSION
from retrieval.ports import IdSet
from retrieval.storage.postgres import redacted

SENTENCES = "sentences"
# Points per upsert request: a server request of 512 384-d vectors is ~1.5 MB of JSON.
UPSERT_BATCH = 512
# Points per page when listing every id.
SCROLL_PAGE = 2048


def open_client(
    path: Path | None, url: str | None, api_key: str | None = None, timeout: int = 10
) -> tuple[QdrantClient, str]:
    """A client of local mode in the folder ``path`` or of the server at ``url`` (exactly one),
    and where that is, for messages. Raises ``QdrantUnavailable`` for a folder another client holds."""
    if (path is None) == (url is None):
        raise ValueError("give exactly one of path= (local mode) or url= (a Qdrant server)")
    if path is not None:
        path.mkdir(parents=True, exist_ok=True)
        # Local mode commits each point to SQLite on its own (measured here: 18 ms a point,
        # 25 s for 1,300), so a folder suits trying Byline out, not a real archive: use a
        # server for that.
        where = f"the Qdrant folder {path}"
        try:
            # Library serialises every index call under its lock, but from several threads
            # (the retrieval workers); local mode's SQLite file must allow that.
            return QdrantClient(path=str(path), force_disable_check_same_thread=True), where
        except RuntimeError as error:  # the folder is locked by another client
            raise QdrantUnavailable(
                f"Could not open {where}: {error} Stop the other process, or run a Qdrant server and set "
                "BYLINE_QDRANT_URL so that several processes can share it."
            ) from None
    assert url is not None
    # Compatibility is checked by the first real request, with a clear message, rather than by
    # the client's own warning at start-up.
    client = QdrantClient(url=url, api_key=api_key, timeout=timeout, check_compatibility=False)
    # The URL may carry credentials (https://user:pass@host): messages name it without them.
    return client, f"the Qdrant server at {redacted(url)}"


def ensure_or_close(client: QdrantClient, where: str, url: str | None, ensure: Callable[[], None]) -> None:
    """Run ``ensure`` (create the collections that are missing); if Qdrant cannot be reached or
    refuses, close the client and raise ``QdrantUnavailable`` saying where and what to do."""
    try:
        ensure()
    except (ApiException, OSError) as error:
        client.close()
        raise QdrantUnavailable(
            f"Could not reach {where} ({_no_url(error, url)}): start the server, or correct BYLINE_QDRANT_URL."
        ) from None
    except QdrantUnavailable:
        client.close()
        raise


def _no_url(error: BaseException, url: str | None) -> str:
    """An error's text with the server URL (and any credentials in it) taken out."""
    text = str(error)
    return text.replace(url, redacted(url)) if url else text


class QdrantIndex:
    """Sentence vectors by sentence id in a Qdrant collection, searched by cosine."""

    def __init__(self, client: QdrantClient, collection: str = SENTENCES, where: str = "Qdrant") -> None:
        self.client = client
        self.collection = collection
        self.where = where  # for messages: the folder or the server's URL

    @classmethod
    def in_memory(cls, collection: str = SENTENCES) -> QdrantIndex:
        """Local mode with nothing written anywhere: for tests and trying things out."""
        index = cls(QdrantClient(":memory:"), collection, "an in-memory Qdrant")
        index._ensure_collection()
        return index

    @classmethod
    def open(
        cls,
        *,
        path: Path | None = None,
        url: str | None = None,
        collection: str = SENTENCES,
        api_key: str | None = None,
        timeout: int = 10,
    ) -> QdrantIndex:
        """Open local mode in the folder ``path``, or the server at ``url`` (exactly one), and
        create the collection if it is missing. Raises ``QdrantUnavailable`` saying why."""
        client, where = open_client(path, url, api_key, timeout)
        index = cls(client, collection, where)
        ensure_or_close(client, where, url, index._ensure_collection)
        return index

    def _ensure_collection(self) -> None:
        if not self.client.collection_exists(self.collection):
            self.client.create_collection(
                self.collection,
                vectors_config=models.VectorParams(size=DIMENSION, distance=models.Distance.COSINE),
            )
            return
        params = self.client.get_collection(self.collection).config.params.vectors
        if not isinstance(params, models.VectorParams) or (params.size, params.distance) != (
            DIMENSION,
            models.Distance.COSINE,
        ):
            raise QdrantUnavailable(
                f"The collection {self.collection!r} in {self.where} holds other vectors than Byline's "
                f"({params}; Byline's are {DIMENSION}-d, cosine): give Byline its own collection or delete that one."
            )

    def close(self) -> None:
        self.client.close()

    @property
    def kind(self) -> str:
        return "qdrant"

    def needs_new_type(self) -> bool:
        return False  # Qdrant builds and grows its own HNSW graph

    def count(self) -> int:
        return int(self.client.count(self.collection, exact=True).count)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        id_list = np.asarray(ids, dtype=np.int64).tolist()
        rows = np.asarray(vectors, dtype=np.float32)
        for first in range(0, len(id_list), UPSERT_BATCH):
            last = first + UPSERT_BATCH
            batch = models.Batch(ids=id_list[first:last], vectors=rows[first:last].tolist())
            self.client.upsert(self.collection, points=batch, wait=True)

    def remove(self, ids: list[int]) -> None:
        if ids:
            selector = models.PointIdsList(points=[int(i) for i in ids])
            self.client.delete(self.collection, points_selector=selector, wait=True)

    def search(self, vector: np.ndarray, k: int, within: IdSet | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, cosine scores) of the ``k`` nearest sentences, best first; with ``within``, of
        those sentences only, by a ``has_id`` filter that Qdrant applies during its search."""
        if k <= 0 or (within is not None and not len(within)):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        query = np.asarray(vector, dtype=np.float32).reshape(-1).tolist()
        wanted = None if within is None else within.form("qdrant-filter", partial(_has_ids, within))
        points = self.client.query_points(
            self.collection, query=query, limit=k, query_filter=wanted, with_payload=False
        ).points
        return (
            np.fromiter((int(p.id) for p in points), dtype=np.int64, count=len(points)),
            np.fromiter((p.score for p in points), dtype=np.float32, count=len(points)),
        )

    def vectors(self, ids: list[int]) -> np.ndarray:
        if not ids:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        wanted = [int(i) for i in ids]
        found = self.client.retrieve(self.collection, ids=wanted, with_vectors=True, with_payload=False)
        # Qdrant returns the points it has, in no promised order, and drops unknown ids.
        by_id = {int(p.id): p.vector for p in found}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise KeyError(f"sentences {missing[:10]} are not in {self.where}")
        return np.asarray([by_id[i] for i in wanted], dtype=np.float32)

    def ids(self) -> np.ndarray:
        """Every sentence id held, sorted (to check the collection against the store)."""
        found: list[int] = []
        offset: models.ExtendedPointId | None = None
        while True:
            points, offset = self.client.scroll(
                self.collection, limit=SCROLL_PAGE, offset=offset, with_payload=False, with_vectors=False
            )
            found.extend(int(p.id) for p in points)
            if offset is None:
                break
        return np.sort(np.asarray(found, dtype=np.int64))


def _has_ids(within: IdSet) -> models.Filter:
    # Points carry no payload, so the filter names the sentence ids themselves (built once per
    # id set; a scope of a large share of a big library makes a large request, the price of
    # keeping points payload-free).
    return models.Filter(must=[models.HasIdCondition(has_id=within.ids.tolist())])
