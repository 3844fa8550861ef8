"""Retrieval results on disk, so a re-run with nothing changed skips the store.

A vector search is a pure function of (store spec, indexed vectors, query vectors, k):
the collection key already hashes the chunking and the embedder, and the query vectors
are hashed here. A text search (BM25) is keyed on the store's identity and the chunk
and query texts; the keys are ``engine/keys/``'; see ``retrieve.py`` for fusion
and reranking.
Results are ``search/*/*.ids`` entries of the verify-on-read helper
(``util/verified.py``: written atomically, checked before use, set aside as
``*.corrupt`` and searched again when they fail). The payload is the shape and
the int64 ids, then, when the stage has them, each row's float64 score (a vector
search's cosines, a reranker's scores: what the decisive margins are measured
on, see ``engine/margins.py``, so a warm run needs no chunk vector). An entry of
another shape is set aside too.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.util.cache_kinds import verified_store
from pytest_chunkeval.util.verified import EntryRefused, VerifiedStore

IdArray = npt.NDArray[np.int64]
ScoreArray = npt.NDArray[np.float64]

_SHAPE = struct.Struct("<IIB7x")  # queries, k, 1 when a score follows each id


def search_store(cache_dir: str | Path, read_only: bool = False) -> VerifiedStore:
    """The search result entries of a cache directory."""
    return verified_store(cache_dir, "search", read_only)


class SearchCache:
    """``(store, collection key, query vectors, k) -> (q, k)`` row ids."""

    def __init__(
        self, directory: str | Path | VerifiedStore, *, read_only: bool = False
    ) -> None:
        self.entries_store = (
            directory
            if isinstance(directory, VerifiedStore)
            else search_store(directory, read_only)
        )

    @property
    def read_only(self) -> bool:
        """Results are read, never stored (a read-only cache directory)."""
        return self.entries_store.read_only

    @property
    def directory(self) -> Path:
        return self.entries_store.directory

    def get(self, key: str, n_queries: int, k: int) -> IdArray | None:
        """The ``(n_queries, k)`` ids stored under ``key`` (None: not stored)."""
        found = self.get_scored(key, n_queries, k)
        return None if found is None else found[0]

    def get_scored(
        self, key: str, n_queries: int, k: int
    ) -> tuple[IdArray, ScoreArray | None] | None:
        """The ids stored under ``key`` and their scores (None when the entry
        holds none); None when nothing valid is stored."""

        def decode(payload: memoryview) -> tuple[IdArray, ScoreArray | None]:
            return _decode(payload, n_queries, k)

        return self.entries_store.get(key, decode)

    def entries(self) -> list[Path]:
        """Every stored result file."""
        return self.entries_store.entries()

    def clear(self) -> int:
        """Remove every stored result; returns how many there were."""
        return self.entries_store.clear()

    def put(self, key: str, ids: IdArray, scores: ScoreArray | None = None) -> None:
        """Store ``ids`` (and, when given, one score per id) under ``key``."""
        if self.read_only:
            return
        payload = np.ascontiguousarray(ids, dtype="<i8")
        n_queries, k = payload.shape
        body = _SHAPE.pack(n_queries, k, scores is not None) + payload.tobytes()
        if scores is not None:
            body += np.ascontiguousarray(scores, dtype="<f8").tobytes()
        self.entries_store.put(key, body)


def _decode(
    payload: memoryview, n_queries: int, k: int
) -> tuple[IdArray, ScoreArray | None]:
    if len(payload) < _SHAPE.size:
        raise EntryRefused("no shape")
    rows, cols, scored = _SHAPE.unpack_from(payload)
    if (rows, cols) != (n_queries, k):
        raise EntryRefused(f"shape ({rows}, {cols}), expected ({n_queries}, {k})")
    size = rows * cols
    if len(payload) != _SHAPE.size + (16 if scored else 8) * size:
        raise EntryRefused(f"{len(payload)} bytes for shape ({rows}, {cols})")
    ids = np.frombuffer(payload, dtype="<i8", count=size, offset=_SHAPE.size)
    scores = None
    if scored:
        offset = _SHAPE.size + 8 * size
        raw = np.frombuffer(payload, dtype="<f8", count=size, offset=offset)
        scores = raw.reshape(rows, cols).astype(np.float64)
    return ids.reshape(rows, cols).astype(np.int64), scores
