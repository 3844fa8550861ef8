"""Qdrant stores (docs/stores.md): ``qdrant`` runs the Qdrant engine embedded
(Qdrant Edge, ``qdrant-edge-py``: the server's own segments, HNSW graph and
optimizer, in process) in a temporary folder; ``qdrant+http://HOST:PORT`` (or
``https``) a Qdrant server through ``qdrant-client``, its API key read from the
environment variable ``api_key_env`` names (``QDRANT_API_KEY``), never stored.

``index=hnsw`` (default) takes ``m`` (16), ``ef_construct`` (100), ``hnsw_ef``
(the search's ``ef``, 100), ``full_scan_threshold`` and ``indexing_threshold``
(KB, 10000 each: Qdrant's defaults). Below those thresholds Qdrant searches a
segment by a full scan, not its graph: on a small corpus the defaults search
exactly, as a production collection of that size would; a threshold of 1 makes
it build and use the graph. ``index=none`` asks Qdrant for an exact search.
On a server, the store creates its own collection per run and worker
(``_candidates.run_tag``; an existing name is an error) and deletes it when
closed. Libraries are imported on first use; candidates are re-ranked by the
plugin (``_candidates.py``).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time
import weakref
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.stores._base import FloatArray, IdArray, StoreError, as_vectors
from pytest_chunkeval.stores._candidates import (
    RecentIndexes,
    RerankedIndex,
    index_settings,
    need,
    package_version,
    run_tag,
    settings_text,
)

DEFAULT_API_KEY_ENV = "QDRANT_API_KEY"
DEFAULT_PORT = 6333
DEFAULTS: dict[str, dict[str, int]] = {
    "none": {},
    "hnsw": {
        "m": 16,
        "ef_construct": 100,
        "hnsw_ef": 100,
        "full_scan_threshold": 10000,
        "indexing_threshold": 10000,
    },
}
INDEXING_TIMEOUT = 600.0


class QdrantStore:
    """Qdrant embedded (``url=None``) or a server, one collection per key."""

    def __init__(
        self,
        index: str = "hnsw",
        settings: dict[str, int] | None = None,
        *,
        url: str | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        client: Any = None,
    ) -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", api_key_env):
            raise ConfigError(f"qdrant: api_key_env={api_key_env!r} is not a name")
        self.index_type = index
        self.settings = index_settings(index, dict(settings or {}), "qdrant", DEFAULTS)
        self.url = url
        self.api_key_env = api_key_env
        self.approximate = index != "none"
        shown = {"index": index, **self.settings}
        query = "?" + "&".join(f"{k}={v}" for k, v in shown.items())
        where = "qdrant" if url is None else f"qdrant+{url}"
        self.name = where + query
        self.portable_name = "qdrant" + query
        """The name without the server's address: a server and the engine
        embedded with the same settings are one configuration (docs/stores.md)."""
        self._lock = threading.RLock()
        self._built = RecentIndexes()
        # what the finalizer needs (at exit too), without a reference to self
        self._state: dict[str, Any] = {"client": client, "collections": []}
        weakref.finalize(self, _release, self._state)

    @property
    def identity(self) -> str:
        """Engine, every setting (defaults included) and the library version."""
        body = settings_text({"index": self.index_type, **self.settings})
        if self.url is None:
            return f"qdrant-edge/{package_version('qdrant-edge-py')}?{body}"
        return f"qdrant-server/{package_version('qdrant-client')}?{body}"

    def __repr__(self) -> str:
        return f"QdrantStore({self.name!r})"

    def close(self) -> None:
        """Delete what the store created (collections, its folder)."""
        with self._lock:
            self._built.clear()
            _release(self._state)

    def __enter__(self) -> QdrantStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def collections(self) -> list[str]:
        """The collections this store created and has not deleted."""
        return [name for name, _ in self._state["collections"]]

    def index(self, key: str, vectors: FloatArray) -> RerankedIndex:
        """A collection of ``vectors`` (point ids ``0..n-1``), reused when the
        same key and vectors were indexed a moment ago."""
        arr = as_vectors(vectors, what=f"vectors for key {key}")
        digest = RecentIndexes.digest(arr)
        with self._lock:
            held: RerankedIndex | None = self._built.get(key, digest)
            if held is not None:
                return held
            engine = self._build(key, arr)

            def again(vectors: FloatArray, seed: int) -> Any:
                with self._lock:
                    return self._build(key, vectors, seed)

            built = RerankedIndex(arr, engine, again)
            self._built.put(key, digest, built)
        return built

    def _build(self, key: str, arr: FloatArray, seed: int | None = None) -> Any:
        count = len(self._state["collections"])
        again = "" if seed is None else f"_r{seed}"
        name = f"chunkeval_{run_tag()}_{key[:12]}_{count}{again}"
        try:
            if self.url is None:
                return self._edge(name, arr)
            return self._server(name, arr)
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(
                f"{self.name}: Qdrant failed: {type(exc).__name__}: {exc}"
            ) from None

    # -- embedded: Qdrant Edge ------------------------------------------------------

    def _edge(self, name: str, arr: FloatArray) -> Any:
        qe: Any = need("qdrant_edge", extra="qdrant", store=self.name)
        n, dim = arr.shape
        s = self.settings
        if "folder" not in self._state:
            self._state["folder"] = tempfile.mkdtemp(prefix="chunkeval-qdrant-")
        hnsw = DEFAULTS["hnsw"] | s
        config = qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine),
            hnsw_config=qe.HnswIndexConfig(
                m=hnsw["m"],
                ef_construct=hnsw["ef_construct"],
                full_scan_threshold=hnsw["full_scan_threshold"],
                max_indexing_threads=1,
            ),
            optimizers=qe.EdgeOptimizersConfig(
                indexing_threshold=hnsw["indexing_threshold"], default_segment_number=1
            ),
        )
        shard = qe.EdgeShard.create(os.path.join(self._state["folder"], name), config)
        self._state["collections"].append((name, shard))
        for lo in range(0, n, 1024):
            points = [
                qe.Point(i, arr[i].tolist()) for i in range(lo, min(n, lo + 1024))
            ]
            shard.update(qe.UpdateOperation.upsert_points(points))
        shard.optimize()  # builds the graph where the thresholds say so
        params = qe.SearchParams(
            hnsw_ef=s.get("hnsw_ef"), exact=self.index_type == "none"
        )

        def engine(queries: FloatArray, depth: int) -> IdArray:
            requests = [
                qe.QueryRequest(
                    limit=depth, query=qe.Query.Nearest(q.tolist()), params=params
                )
                for q in queries
            ]
            with self._lock:
                found = shard.query_batch(qe.QueryBatchRequest(requests))
            return _rows(found, depth)

        return engine

    # -- a server: qdrant-client ----------------------------------------------------

    def _client(self) -> Any:
        if self._state["client"] is None:
            qc: Any = need("qdrant_client", extra="qdrant", store=self.name)
            key = os.environ.get(self.api_key_env) or None
            self._state["client"] = qc.QdrantClient(url=self.url, api_key=key)
        return self._state["client"]

    def _server(self, name: str, arr: FloatArray) -> Any:
        models: Any = need("qdrant_client.models", extra="qdrant", store=self.name)
        client = self._client()
        n, dim = arr.shape
        hnsw = DEFAULTS["hnsw"] | self.settings
        if client.collection_exists(name):
            raise StoreError(f"{self.name}: collection {name} already exists")
        client.create_collection(
            name,
            vectors_config=models.VectorParams(
                size=dim, distance=models.Distance.COSINE
            ),
            hnsw_config=models.HnswConfigDiff(
                m=hnsw["m"],
                ef_construct=hnsw["ef_construct"],
                full_scan_threshold=hnsw["full_scan_threshold"],
            ),
            optimizers_config=models.OptimizersConfigDiff(
                indexing_threshold=hnsw["indexing_threshold"]
            ),
        )
        self._state["collections"].append((name, None))
        for lo in range(0, n, 1024):
            rows = range(lo, min(n, lo + 1024))
            client.upsert(
                name,
                points=[models.PointStruct(id=i, vector=arr[i].tolist()) for i in rows],
                wait=True,
            )
        _wait_indexed(client, name, models)
        params = models.SearchParams(
            hnsw_ef=self.settings.get("hnsw_ef"), exact=self.index_type == "none"
        )

        def engine(queries: FloatArray, depth: int) -> IdArray:
            requests = [
                models.QueryRequest(query=q.tolist(), limit=depth, params=params)
                for q in queries
            ]
            found = client.query_batch_points(name, requests=requests)
            return _rows([r.points for r in found], depth)

        return engine


def _rows(found: list[Any], depth: int) -> IdArray:
    out = np.full((len(found), depth), -1, dtype=np.int64)
    for row, points in enumerate(found):
        ids = [int(p.id) for p in points][:depth]
        out[row, : len(ids)] = ids
    return out


def _wait_indexed(client: Any, name: str, models: Any) -> None:
    """Wait until the server's optimizer has indexed the collection (green)."""
    deadline = time.monotonic() + INDEXING_TIMEOUT
    while time.monotonic() < deadline:
        status = client.get_collection(name).status
        if status == models.CollectionStatus.GREEN:
            return
        time.sleep(0.2)
    raise StoreError(f"collection {name} not indexed after {INDEXING_TIMEOUT:.0f} s")


def _release(state: dict[str, Any]) -> None:
    """Delete a store's collections and folder (also at exit)."""
    client, collections = state.get("client"), state["collections"]
    for name, shard in list(collections):
        try:
            if shard is not None:
                shard.close()
            elif client is not None:
                client.delete_collection(name)
        except Exception:  # the server is gone: nothing left to delete there
            pass
    collections.clear()
    folder = state.pop("folder", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


def _server_url(rest: str, scheme: str) -> str:
    if not rest.startswith("//"):
        raise ValueError(f"expected qdrant+{scheme}://HOST:PORT, got {rest!r}")
    parts = urlsplit(f"{scheme}:{rest}")
    if not parts.hostname or parts.path not in ("", "/") or parts.query:
        raise ValueError(f"expected qdrant+{scheme}://HOST:PORT, got {rest!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{scheme}://{host}:{parts.port or DEFAULT_PORT}"


def qdrant_from_spec(index: str = "hnsw", **settings: int) -> QdrantStore:
    """Factory for ``qdrant[?index=hnsw|none&m=..&hnsw_ef=..]`` (embedded)."""
    return QdrantStore(index, settings)


def qdrant_http_from_spec(
    location: str,
    index: str = "hnsw",
    api_key_env: str = DEFAULT_API_KEY_ENV,
    **settings: int,
) -> QdrantStore:
    """Factory for ``qdrant+http://HOST:PORT[?...]``."""
    url = _server_url(location, "http")
    return QdrantStore(index, settings, url=url, api_key_env=api_key_env)


def qdrant_https_from_spec(
    location: str,
    index: str = "hnsw",
    api_key_env: str = DEFAULT_API_KEY_ENV,
    **settings: int,
) -> QdrantStore:
    """Factory for ``qdrant+https://HOST:PORT[?...]``."""
    url = _server_url(location, "https")
    return QdrantStore(index, settings, url=url, api_key_env=api_key_env)
