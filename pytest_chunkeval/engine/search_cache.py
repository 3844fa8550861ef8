"""Retrieval results on disk, so a re-run with nothing changed skips the store.

A vector search is a pure function of (store spec, indexed vectors, query vectors, k):
the collection key already hashes the chunking and the embedder, and the query vectors
are hashed here. A text search (BM25) is keyed on the store's identity and the chunk
and query texts (``text_key``); see ``retrieve.py`` for fusion and reranking.
Results live beside the embedding cache as small ``.npy`` files written atomically;
one that cannot be read is reported and searched again.
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.engine.cache import CacheWarning
from pytest_chunkeval.util.files import atomic_writer

IdArray = npt.NDArray[np.int64]


class SearchCache:
    """``(store, collection key, query vectors, k) -> (q, k)`` row ids."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory) / "search"

    @staticmethod
    def key(
        store: str, collection: str, queries: npt.NDArray[np.float32], k: int
    ) -> str:
        h = hashlib.sha256(f"{store}\0{collection}\0{k}\0{queries.shape}".encode())
        h.update(np.ascontiguousarray(queries).tobytes())
        return h.hexdigest()

    @staticmethod
    def text_key(identity: str, chunk_texts: str, query_texts: str, k: int) -> str:
        """Key of a text store's search: its identity (tokenization and scoring
        options) and the digests of the chunk texts and of the query texts."""
        blob = f"text\0{identity}\0{chunk_texts}\0{query_texts}\0{k}"
        return hashlib.sha256(blob.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.npy"

    def get(self, key: str, n_queries: int, k: int) -> IdArray | None:
        path = self._path(key)
        if not path.exists():
            return None
        try:
            ids: IdArray = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            warnings.warn(
                f"{path}: unreadable search cache entry ({exc}); searching again",
                CacheWarning,
                stacklevel=2,
            )
            return None
        if ids.shape != (n_queries, k) or ids.dtype != np.int64:
            warnings.warn(
                f"{path}: search cache entry has shape {ids.shape}, expected "
                f"{(n_queries, k)}; searching again",
                CacheWarning,
                stacklevel=2,
            )
            return None
        return ids

    def entries(self) -> list[Path]:
        """Every stored result file."""
        return sorted(self.directory.glob("*/*.npy"))

    def clear(self) -> int:
        """Remove every stored result; returns how many there were."""
        files = self.entries()
        for path in files:
            path.unlink(missing_ok=True)
        return len(files)

    def put(self, key: str, ids: IdArray) -> None:
        with atomic_writer(self._path(key), "wb") as fh:
            np.save(fh, np.ascontiguousarray(ids, dtype=np.int64), allow_pickle=False)
