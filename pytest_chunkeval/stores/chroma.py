"""Chroma stores: in-process (``chroma``), on disk (``chroma:PATH``), server
(``chroma+http://HOST:PORT``).

``chromadb`` is imported on first use, never at module import. Vectors are given to
Chroma directly (no embedding function, so Chroma never loads or downloads its
default ONNX model); telemetry is switched off.

Index parameters (``DEFAULT_HNSW``): cosine space, Chroma's default build
parameters (``ef_construction=100``, ``max_neighbors=16``, as in the report) and
``ef_search=200`` instead of 100. Measured against exact search on 10k clustered
384-d vectors, 500 queries, k=10: defaults gave 99.6-99.8% of lists identical and
99.6-100% the same sets; ``ef_search=200`` gave 99.8-100% identical and 100% same
sets, for ~50% more search time (well under a millisecond per query) and no build
cost. ``ef_construction=200`` or ``max_neighbors=32`` changed nothing measurable but
made indexing 30-60% slower. Its ``k + 8`` rows are re-ranked by the plugin
(``_candidates.py``, docs/stores.md): only what HNSW did not find differs.

Several processes on one ``chroma:PATH`` is not something Chroma supports; for
pytest-xdist, use the in-process store (one per worker) or a server.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.stores._base import (
    FloatArray,
    IdArray,
    ScoreArray,
    StoreError,
    as_vectors,
    empty_result,
)
from pytest_chunkeval.stores._candidates import Engine, RerankedIndex
from pytest_chunkeval.stores._chroma_client import (
    EPHEMERAL,
    close_client,
    holds,
    holds_prefix,
    http_client,
    is_connection_error,
    server_version,
    shared_client,
)

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.collection_configuration import CreateCollectionConfiguration
    from chromadb.api.models.Collection import Collection


COLLECTION_PREFIX = "chunkeval-"
DEFAULT_HNSW: Mapping[str, Any] = {
    "space": "cosine",
    "ef_construction": 100,
    "max_neighbors": 16,
    "ef_search": 200,
}
DEFAULT_PORT = 8000
EPHEMERAL_KEEP = 4
"""Idle collections an in-process store keeps for reuse before deleting the oldest."""


def collection_name(key: str) -> str:
    """The Chroma collection that holds the vectors indexed under ``key``.

    A hex digest ``key`` (16-64 digits) is used as is; anything else is hashed, so
    the name always satisfies Chroma's rules (3-512 chars of ``[a-zA-Z0-9._-]``).
    """
    if not re.fullmatch(r"[0-9a-f]{16,64}", key):
        key = hashlib.sha256(key.encode("utf-8")).hexdigest()
    return COLLECTION_PREFIX + key


def _candidates(collection: Collection, store: ChromaStore) -> Engine:
    """A collection's search: Chroma's ``depth`` nearest rows per query (HNSW,
    approximate), in its order, ``-1`` padded; the candidates the plugin
    re-ranks (``_candidates.py``)."""

    def engine(queries: FloatArray, depth: int) -> IdArray:
        out = empty_result(queries.shape[0], depth)
        with store._failures(f"searching collection {collection.name!r}"):
            batch = store.client.get_max_batch_size()
            for lo in range(0, queries.shape[0], batch):
                part = queries[lo : lo + batch]  # ids only, no documents
                got = collection.query(part, n_results=depth, include=[])
                for row, ids in enumerate(got["ids"], lo):
                    out[row, : len(ids)] = np.asarray(ids, dtype=np.int64)
        return out

    return engine


class ChromaIndex:
    """A Chroma collection holding rows ``0..n-1`` under ids ``"0".."n-1"``,
    searched for candidates that the plugin re-ranks (``_candidates.py``)."""

    content_ties = True  # search() takes tie keys (docs/baselines.md, "Ties")

    def __init__(
        self,
        collection: Collection,
        *,
        vectors: FloatArray,
        store: ChromaStore,
        reused: bool,
    ) -> None:
        self.collection = collection
        self.name: str = collection.name
        self.n: int = vectors.shape[0]
        self.dim: int = vectors.shape[1]
        self.store = store
        self.reused = reused
        """True when the collection already held these vectors (nothing was added)."""
        self.vectors = vectors
        """What it indexed: the re-ranking's cosines and :meth:`rebuild`'s input."""
        # the engine holds the collection, not this index: an idle index is
        # freed at once, and its collection evicted (``EPHEMERAL_KEEP``)
        self._ranked = RerankedIndex(vectors, _candidates(collection, store))

    def __len__(self) -> int:
        return self.n

    def rebuild(self, seed: int) -> ChromaIndex:
        """The same vectors in another collection, added in the order ``seed``
        draws (HNSW's graph depends on it; docs/baselines.md, "Repeats")."""
        order = np.random.default_rng(seed).permutation(self.n).astype(np.int64)
        return self.store.index_named(f"{self.name}-r{seed}", self.vectors, order)

    def search(
        self, queries: FloatArray, k: int, *, ties: IdArray | None = None
    ) -> IdArray:
        """Top-``k`` rows by cosine among Chroma's candidates, best first, equal
        cosines by the tie keys ``ties``, ``-1`` padded."""
        return self._ranked.search(queries, k, ties=ties)

    def search_scored(
        self, queries: FloatArray, k: int, *, ties: IdArray | None = None
    ) -> tuple[IdArray, ScoreArray]:
        """:meth:`search`'s rows with the float64 cosines they were ranked by."""
        return self._ranked.search_scored(queries, k, ties=ties)

    def __repr__(self) -> str:
        return f"ChromaIndex({self.name!r}, n={self.n}, store={self.store.name!r})"


class ChromaStore:
    """A Chroma client (in-process, persistent or HTTP) used as a vector store.

    Persistent and server stores keep their collections so that a warm re-run finds
    the vectors already indexed; an in-process store keeps the ``keep`` most recent.
    HNSW is approximate: its index is built again in other insertion orders
    (:meth:`ChromaIndex.rebuild`, docs/baselines.md, "Repeats").
    """

    approximate = True

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        host: str | None = None,
        port: int = DEFAULT_PORT,
        ssl: bool = False,
        hnsw: Mapping[str, Any] | None = None,
        connect_timeout: float = 5.0,
        timeout: float | None = 600.0,
        keep: int = EPHEMERAL_KEEP,
    ) -> None:
        if path is not None and host is not None:
            raise ConfigError("a Chroma store takes a path or a host, not both")
        self.path = None if path is None else Path(path).expanduser()
        self.host = host
        self.port = port
        self.ssl = ssl
        self.hnsw: dict[str, Any] = {**DEFAULT_HNSW, **(hnsw or {})}
        self.connect_timeout = connect_timeout
        self.timeout = timeout
        self.keep = keep
        self._client: ClientAPI | None = None
        self._finalizer: weakref.finalize[[ClientAPI], ChromaStore] | None = None
        self._lock = threading.Lock()
        self._server_version: str | None = None

    @property
    def name(self) -> str:
        """The canonical spec: where, and the HNSW settings that differ from
        :data:`DEFAULT_HNSW` (``chroma?ef_search=1``)."""
        if self.host is not None:
            return self._spec(f"chroma+{self.url}")
        if self.path is not None:
            return self._spec(f"chroma:{self.path}")
        return self._spec("chroma")

    @property
    def portable_name(self) -> str:
        """The name without a folder or server (``chroma:/home/ann/db`` and
        ``chroma+http://ci:8000`` search as ``chroma`` does): what a baseline
        records (docs/stores.md)."""
        return self._spec("chroma")

    @property
    def xdist_safe(self) -> bool:
        """pytest-xdist workers would write one local folder at once; in memory
        each worker has its own, and a server serves them all."""
        return self.path is None

    xdist_reason = (
        "a local Chroma folder cannot be shared by pytest-xdist workers (they "
        "would write one database at once); use exact or chroma (in memory, one "
        "per worker), or a Chroma server: chroma+http://HOST:PORT"
    )

    def _spec(self, where: str) -> str:
        changed = {
            k: v for k, v in sorted(self.hnsw.items()) if DEFAULT_HNSW.get(k) != v
        }
        query = "&".join(f"{k}={v}" for k, v in changed.items())
        return f"{where}?{query}" if query else where

    @property
    def identity(self) -> str:
        """What determines its results (docs/stores.md): the type, every HNSW
        setting, chromadb's version and a server's; not a path or host."""
        from pytest_chunkeval.util.versions import library_version

        parts = [f"chroma/{self.kind}", library_version("chromadb")]
        if self.host is not None:
            parts.append(f"server-{self.server_version()}")
        settings = "&".join(f"{k}={v}" for k, v in sorted(self.hnsw.items()))
        return "+".join(parts) + f"?{settings}"

    def server_version(self) -> str:
        """The Chroma server's version, asked once (``_chroma_client.py``)."""
        if self._server_version is None:
            self._server_version = server_version(self.url, self.connect_timeout)
        return self._server_version

    @property
    def kind(self) -> str:
        """``"ephemeral"``, ``"persistent"`` or ``"http"``."""
        if self.host is not None:
            return "http"
        return "ephemeral" if self.path is None else "persistent"

    @property
    def url(self) -> str:
        """The server's base URL (HTTP stores only)."""
        if self.host is None:
            raise AttributeError("only an HTTP Chroma store has a URL")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.ssl else 'http'}://{host}:{self.port}"

    def __repr__(self) -> str:
        return f"ChromaStore({self.name!r})"

    # -- connection ---------------------------------------------------------------

    @property
    def client(self) -> ClientAPI:
        """The chromadb client, connected on first use."""
        with self._lock:
            if self._client is None:
                self._client = self._connect()
                if self.kind != "ephemeral":
                    # chromadb never closes its HTTP connections or releases its
                    # SQLite system by itself; do it when this store goes away (or
                    # at exit), so nothing leaks an unclosed socket.
                    self._finalizer = weakref.finalize(self, close_client, self._client)
            return self._client

    def close(self) -> None:
        """Release the client's connections (a later use reconnects).

        In-process stores keep their collections: they live in a system shared by
        the whole process (see ``EPHEMERAL_KEEP``).
        """
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()
            self._client = None
            self._finalizer = None

    def __enter__(self) -> ChromaStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _where(self) -> str:
        if self.host is not None:
            return f"Chroma server {self.url}"
        if self.path is not None:
            return f"Chroma database {self.path}"
        return "in-process Chroma"

    @contextmanager
    def _failures(self, doing: str) -> Iterator[None]:
        """Turn a backend failure into one StoreError saying where and what."""
        try:
            yield
        except StoreError:
            raise
        except Exception as exc:
            if self.host is not None and is_connection_error(exc):
                raise StoreError(
                    f"lost the connection to Chroma server {self.url} while {doing}: "
                    f"{exc}"
                ) from None
            raise StoreError(
                f"{self._where()} failed while {doing}: {type(exc).__name__}: {exc}"
            ) from exc

    def _connect(self) -> ClientAPI:
        try:
            import chromadb
        except ImportError as exc:
            raise StoreError(
                f"the {self.name!r} store needs chromadb: "
                "pip install 'pytest-chunkeval[chroma]'"
            ) from exc
        if self.host is not None:
            return self._connect_http(chromadb)
        with self._failures("opening the client"):
            if self.path is not None:
                self.path.mkdir(parents=True, exist_ok=True)
                return shared_client(
                    lambda s: chromadb.PersistentClient(path=str(self.path), settings=s)
                )
            return shared_client(lambda s: chromadb.EphemeralClient(settings=s))

    def _connect_http(self, chromadb: Any) -> ClientAPI:
        with self._failures("connecting"):
            return http_client(
                chromadb,
                (self.host or "", self.port, self.ssl),
                connect_timeout=self.connect_timeout,
                timeout=self.timeout,
            )

    # -- indexing -----------------------------------------------------------------

    def index(self, key: str, vectors: FloatArray) -> ChromaIndex:
        """Index ``vectors`` in collection ``collection_name(key)``.

        An existing collection is reused when it holds exactly these ``n`` vectors
        (count and a spot check of the first and last); a partial one (an
        interrupted run, or another worker adding right now) is completed; anything
        else is rebuilt.
        """
        arr = as_vectors(vectors, what=f"vectors for key {key}")
        if dict(self.hnsw) != dict(DEFAULT_HNSW):  # a collection of its own
            key = f"{key}\0{sorted(self.hnsw.items())!r}"
        return self.index_named(collection_name(key), arr)

    def index_named(
        self, name: str, arr: FloatArray, order: IdArray | None = None
    ) -> ChromaIndex:
        """Index ``arr`` in collection ``name``, as :meth:`index` does; ``order``:
        the order its rows are added in when the collection is built."""
        n = arr.shape[0]
        client = self.client
        ephemeral = self.kind == "ephemeral"
        with EPHEMERAL.lock if ephemeral else nullcontext():
            with self._failures(f"indexing {n} vectors in collection {name!r}"):
                collection, reused = self._fill(client, name, arr, order)
            index = ChromaIndex(collection, vectors=arr, store=self, reused=reused)
            if ephemeral:
                EPHEMERAL.used(index)
                EPHEMERAL.evict(client, self.keep)
        return index

    def _open(self, client: ClientAPI, name: str) -> Collection:
        return client.get_or_create_collection(
            name,
            configuration=cast("CreateCollectionConfiguration", {"hnsw": self.hnsw}),
            embedding_function=None,
        )

    def _fill(
        self,
        client: ClientAPI,
        name: str,
        arr: FloatArray,
        order: IdArray | None = None,
    ) -> tuple[Collection, bool]:
        n = arr.shape[0]
        rows = np.arange(n, dtype=np.int64) if order is None else order
        collection = self._open(client, name)
        count = collection.count()
        if count == n and (n == 0 or holds(collection, arr)):
            return collection, True
        if 0 < count < n and holds_prefix(collection, arr):
            # Chroma ignores ids it already has, so completing is safe even when
            # another process is adding the same vectors at the same time.
            present = np.asarray(collection.get(include=[])["ids"], dtype=np.int64)
            missing = np.setdiff1d(np.arange(n, dtype=np.int64), present)
            self._add(client, collection, arr, missing)
        elif count:
            client.delete_collection(name)
            collection = self._open(client, name)
            self._add(client, collection, arr, rows)
        else:
            self._add(client, collection, arr, rows)
        if collection.count() != n:
            raise StoreError(
                f"collection {name!r} in {self._where()} holds {collection.count()} "
                f"vectors after indexing, expected {n}"
            )
        return collection, False

    def _add(
        self, client: ClientAPI, collection: Collection, arr: FloatArray, rows: IdArray
    ) -> None:
        batch = client.get_max_batch_size()
        for lo in range(0, rows.shape[0], batch):
            part = rows[lo : lo + batch]
            collection.add(ids=[str(i) for i in part.tolist()], embeddings=arr[part])

    # -- housekeeping -------------------------------------------------------------

    def collections(self) -> list[str]:
        """Names of the collections this plugin made in this store."""
        with self._failures("listing collections"):
            names = [c.name for c in self.client.list_collections()]
        return sorted(name for name in names if name.startswith(COLLECTION_PREFIX))

    def clear(self) -> int:
        """Delete every collection this plugin made here; return how many."""
        names = self.collections()
        with self._failures("deleting collections"):
            for name in names:
                self.client.delete_collection(name)
        if self.kind == "ephemeral":
            with EPHEMERAL.lock:
                for name in names:
                    EPHEMERAL.recent.pop(name, None)
        return len(names)
