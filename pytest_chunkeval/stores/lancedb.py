"""``lancedb``: LanceDB embedded (docs/stores.md), in a temporary folder of its
own: ``index=none`` (a flat scan: exact), ``ivf_flat`` (``num_partitions``,
``nprobes``), ``ivf_pq`` (also ``num_sub_vectors``, ``refine_factor``) or
``ivf_hnsw_sq`` (also ``m``, ``ef_construction``, ``ef``), all by cosine.

``lancedb`` (and ``pyarrow``) are imported on first use. A PQ index trains 256
centroids per sub-vector: fewer than 256 vectors, or a dimension that
``num_sub_vectors`` does not divide, is a clear error; so is an IVF index with
fewer vectors than partitions. The folder is removed when the store is closed
(or at exit). The engine's candidates are re-ranked by the plugin
(``_candidates.py``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import weakref
from typing import Any

import numpy as np

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

PQ_CENTROIDS = 256
DEFAULTS: dict[str, dict[str, int]] = {
    "none": {},
    "ivf_flat": {"num_partitions": 8, "nprobes": 20},
    "ivf_pq": {
        "num_partitions": 8,
        "num_sub_vectors": 16,
        "nprobes": 20,
        "refine_factor": 0,
    },
    "ivf_hnsw_sq": {
        "num_partitions": 8,
        "nprobes": 20,
        "m": 20,
        "ef_construction": 300,
        "ef": 40,
    },
}
ZERO_ALLOWED = frozenset({"refine_factor"})
"""Settings where 0 means "off" (no refinement)."""


class LanceDBStore:
    """An embedded LanceDB in a temporary folder, one table per collection key."""

    def __init__(self, index: str = "none", **settings: int) -> None:
        self.index_type = index
        self.settings = index_settings(index, dict(settings), "lancedb", DEFAULTS)
        self.approximate = index != "none"
        shown = {"index": index, **self.settings}
        self.name = "lancedb?" + "&".join(f"{k}={v}" for k, v in shown.items())
        self._db: Any = None
        self._lock = threading.RLock()
        self._built = RecentIndexes()
        self._folder: dict[str, str] = {}
        weakref.finalize(self, _remove, self._folder)

    @property
    def identity(self) -> str:
        """Type, every setting (defaults included) and the library version."""
        body = settings_text({"index": self.index_type, **self.settings})
        return f"lancedb/{package_version('lancedb')}?{body}"

    def __repr__(self) -> str:
        return f"LanceDBStore({self.name!r})"

    def close(self) -> None:
        """Remove the store's folder and every table in it."""
        with self._lock:
            self._db = None
            self._built.clear()
            _remove(self._folder)

    def __enter__(self) -> LanceDBStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def index(self, key: str, vectors: FloatArray) -> RerankedIndex:
        """A table of ``vectors`` (rows ``0..n-1``) with this store's index,
        reused when the same key and vectors were indexed a moment ago."""
        arr = as_vectors(vectors, what=f"vectors for key {key}")
        digest = RecentIndexes.digest(arr)
        with self._lock:
            held: RerankedIndex | None = self._built.get(key, digest)
            if held is not None:
                return held

            def again(vectors: FloatArray, seed: int) -> Any:
                with self._lock:
                    return self._engine(self._table(key, vectors, seed))

            built = RerankedIndex(arr, self._engine(self._table(key, arr)), again)
            self._built.put(key, digest, built)
        return built

    def _connect(self) -> Any:
        if self._db is None:
            # Lance's Rust log warns about small tables on stderr: errors only
            os.environ.setdefault("LANCEDB_LOG", "error")
            lancedb: Any = need("lancedb", extra="lancedb", store=self.name)
            if "path" not in self._folder:
                self._folder["path"] = tempfile.mkdtemp(prefix="chunkeval-lancedb-")
            self._db = lancedb.connect(self._folder["path"])
        return self._db

    def _check(self, n: int, dim: int) -> None:
        s = self.settings
        if self.index_type == "none" or n == 0:
            return
        if n < s["num_partitions"]:
            raise StoreError(
                f"{self.name}: an IVF index of num_partitions={s['num_partitions']} "
                f"needs at least that many vectors, got {n}; lower num_partitions= "
                "or use index=none"
            )
        if self.index_type == "ivf_pq":
            if n < PQ_CENTROIDS:
                raise StoreError(
                    f"{self.name}: a PQ index trains {PQ_CENTROIDS} centroids per "
                    f"sub-vector and needs at least {PQ_CENTROIDS} vectors, got {n}; "
                    "use index=ivf_flat or index=none"
                )
            if dim % s["num_sub_vectors"]:
                raise StoreError(
                    f"{self.name}: num_sub_vectors={s['num_sub_vectors']} does not "
                    f"divide the vectors' dimension {dim}"
                )

    def _table(self, key: str, arr: FloatArray, seed: int | None = None) -> Any:
        n, dim = arr.shape
        self._check(n, dim)
        pa: Any = need("pyarrow", extra="lancedb", store=self.name)
        db = self._connect()
        self._count = getattr(self, "_count", 0) + 1
        again = "" if seed is None else f"_r{seed}"
        name = f"chunkeval_{run_tag()}_{key[:12]}_{self._count}{again}"
        data = pa.table(
            {
                "id": pa.array(np.arange(n, dtype=np.int64)),
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(arr.reshape(-1)), dim
                ),
            }
        )
        try:
            table = db.create_table(name, data, mode="create")
            if self.index_type != "none" and n:
                table.create_index("vector", config=self._config(), replace=True)
        except Exception as exc:
            raise StoreError(
                f"{self.name}: LanceDB failed to build: {type(exc).__name__}: {exc}"
            ) from None
        return table

    def _config(self) -> Any:
        index: Any = need("lancedb.index", extra="lancedb", store=self.name)
        s = self.settings
        common = {"distance_type": "cosine", "num_partitions": s["num_partitions"]}
        if self.index_type == "ivf_flat":
            return index.IvfFlat(**common)
        if self.index_type == "ivf_pq":
            return index.IvfPq(**common, num_sub_vectors=s["num_sub_vectors"])
        return index.IvfHnswSq(**common, m=s["m"], ef_construction=s["ef_construction"])

    def _engine(self, table: Any) -> Any:
        s = self.settings

        def engine(queries: FloatArray, depth: int) -> IdArray:
            out = np.full((len(queries), depth), -1, dtype=np.int64)
            try:
                query = (
                    table.search(list(queries))
                    .distance_type("cosine")
                    .limit(depth)
                    .select(["id"])
                )
                if self.index_type != "none":
                    query = query.nprobes(s["nprobes"])
                if s.get("refine_factor"):
                    query = query.refine_factor(s["refine_factor"])
                if "ef" in s:  # LanceDB refuses an ef below the rows asked
                    query = query.ef(max(s["ef"], depth))
                found = query.to_arrow()
            except Exception as exc:
                raise StoreError(
                    f"{self.name}: LanceDB search failed: {type(exc).__name__}: {exc}"
                ) from None
            cols = found.column_names
            qidx = (
                np.asarray(found.column("query_index"), dtype=np.int64)
                if "query_index" in cols
                else np.zeros(found.num_rows, dtype=np.int64)
            )
            ids = np.asarray(found.column("id"), dtype=np.int64)
            for q in range(len(queries)):
                rows = ids[qidx == q][:depth]
                out[q, : len(rows)] = rows
            return out

        return engine


def _remove(folder: dict[str, str]) -> None:
    path = folder.pop("path", None)
    if path:
        shutil.rmtree(path, ignore_errors=True)


def lancedb_from_spec(index: str = "none", **settings: int) -> LanceDBStore:
    """Factory for ``lancedb[?index=none|ivf_flat|ivf_pq|ivf_hnsw_sq&...]``."""
    return LanceDBStore(index, **settings)
