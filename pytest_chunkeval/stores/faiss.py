"""``faiss``: FAISS indexes in process (docs/stores.md): ``index=flat`` (exact),
``hnsw`` (``M``, ``efConstruction``, ``efSearch``) or ``ivf`` (``nlist``,
``nprobe``), all by inner product on the L2-normalized vectors (= cosine).

``faiss-cpu`` is imported on first use. Defaults are FAISS's own
(``IndexHNSWFlat``: ``M=32``, ``efConstruction=40``, ``efSearch=16``;
``IndexIVFFlat``: ``nprobe=1``; ``nlist`` has none in FAISS, 100 here). The
vectors are added on one thread, so an index is the same on every run; an IVF
index trains its ``nlist`` centroids on the vectors, and fewer vectors than
``nlist`` is a clear error. The engine's candidates are re-ranked by the plugin
(``_candidates.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_chunkeval.stores._base import FloatArray, IdArray, StoreError, as_vectors
from pytest_chunkeval.stores._candidates import (
    RecentIndexes,
    RerankedIndex,
    index_settings,
    need,
    package_version,
    settings_text,
)

INDEX_TYPES = ("flat", "hnsw", "ivf")
DEFAULTS: dict[str, dict[str, int]] = {
    "flat": {},
    "hnsw": {"M": 32, "efConstruction": 40, "efSearch": 16},
    "ivf": {"nlist": 100, "nprobe": 1},
}


class FaissStore:
    """A FAISS index per collection key, built in process."""

    def __init__(self, index: str = "hnsw", **settings: int | None) -> None:
        self.index_type = index
        self.settings = index_settings(index, settings, "faiss", DEFAULTS)
        self.approximate = index != "flat"
        self._built = RecentIndexes()
        shown = {"index": index, **self.settings}
        self.name = "faiss?" + "&".join(f"{k}={v}" for k, v in shown.items())

    @property
    def identity(self) -> str:
        """Type, every setting (defaults included) and the library version."""
        body = settings_text({"index": self.index_type, **self.settings})
        return f"faiss/{package_version('faiss-cpu')}?{body}"

    def __repr__(self) -> str:
        return f"FaissStore({self.name!r})"

    def index(self, key: str, vectors: FloatArray) -> RerankedIndex:
        """The FAISS index of ``vectors``, reused when the same key and vectors
        were indexed by this store a moment ago."""
        arr = as_vectors(vectors, what=f"vectors for key {key}")
        digest = RecentIndexes.digest(arr)
        held: RerankedIndex | None = self._built.get(key, digest)
        if held is not None:
            return held
        built = RerankedIndex(arr, self._build(arr), self._build)
        self._built.put(key, digest, built)
        return built

    def _build(self, arr: FloatArray, seed: int | None = None) -> Any:
        faiss: Any = need("faiss", extra="faiss", store=self.name)
        n, dim = arr.shape
        s = self.settings
        if self.index_type == "flat":
            index = faiss.IndexFlatIP(dim)
        elif self.index_type == "hnsw":
            index = faiss.IndexHNSWFlat(dim, s["M"], faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = s["efConstruction"]
            index.hnsw.efSearch = s["efSearch"]
        else:
            if n < s["nlist"]:
                raise StoreError(
                    f"{self.name}: an IVF index trains nlist={s['nlist']} centroids "
                    f"and needs at least that many vectors, got {n}; lower nlist= "
                    "(FAISS suggests 39 vectors per centroid) or use index=flat"
                )
            index = faiss.IndexIVFFlat(
                faiss.IndexFlatIP(dim), dim, s["nlist"], faiss.METRIC_INNER_PRODUCT
            )
            index.nprobe = s["nprobe"]
            if seed is not None:
                index.cp.seed = seed  # the k-means of a rebuild
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)  # one thread: the same graph on every run
        try:
            if n and not index.is_trained:
                index.train(arr)
            if n:
                index.add(arr)
        except RuntimeError as exc:
            raise StoreError(f"{self.name}: FAISS failed to build: {exc}") from None
        finally:
            faiss.omp_set_num_threads(threads)

        def engine(queries: FloatArray, depth: int) -> IdArray:
            _, rows = index.search(np.ascontiguousarray(queries), depth)
            return np.asarray(rows, dtype=np.int64)

        return engine


def faiss_from_spec(
    index: str = "hnsw",
    M: int | None = None,
    efConstruction: int | None = None,
    efSearch: int | None = None,
    nlist: int | None = None,
    nprobe: int | None = None,
) -> FaissStore:
    """Factory for ``faiss[?index=flat|hnsw|ivf&M=..&efSearch=..&nlist=..]``."""
    return FaissStore(
        index,
        M=M,
        efConstruction=efConstruction,
        efSearch=efSearch,
        nlist=nlist,
        nprobe=nprobe,
    )
