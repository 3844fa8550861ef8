"""Retrieval results on disk, so a re-run with nothing changed skips the store.

A vector search is a pure function of (store spec, indexed vectors, query vectors, k):
the collection key already hashes the chunking and the embedder, and the query vectors
are hashed here. A text search (BM25) is keyed on the store's identity and the chunk
and query texts; the keys are ``engine/keys.py``'s; see ``retrieve.py`` for fusion
and reranking.
Results live beside the embedding cache as small ``.ids`` files written atomically:
a header (magic, shape, SHA-256 of the key and the body) and the int64 ids, then,
when the stage has them, each row's float64 score (a vector search's cosines, a
reranker's scores: what the decisive margins are measured on, see
``engine/margins.py``, so a warm run needs no chunk vector). An entry
that is unreadable, truncated, of another shape or whose checksum fails (a same-size
bit flip, a file copied under another key) is reported with ``CacheWarning``, set
aside as ``*.corrupt`` and searched again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import warnings
from pathlib import Path

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.embedders._packs import CacheWarning
from pytest_chunkeval.util.files import atomic_writer
from pytest_chunkeval.util.unwritable import refused_write, uncached_message

IdArray = npt.NDArray[np.int64]
ScoreArray = npt.NDArray[np.float64]

SUFFIX = ".ids"
_CORRUPT_SUFFIX = ".corrupt"
_MAGIC = b"CEVSRCH1"
_MAGIC_SCORED32 = b"CEVSRCH2"  # ids, then a float32 score per id (read only)
_MAGIC_SCORED = b"CEVSRCH3"  # ids, then a float64 score per id
_SCORE_TYPES = {_MAGIC_SCORED32: "<f4", _MAGIC_SCORED: "<f8"}
_HEADER = struct.Struct("<8sII32s")  # magic, queries, k, SHA-256 of key + ids


class SearchCache:
    """``(store, collection key, query vectors, k) -> (q, k)`` row ids."""

    def __init__(self, directory: str | Path, *, read_only: bool = False) -> None:
        self.directory = Path(directory) / "search"
        self.read_only = read_only
        """Results are read, never stored (a read-only cache directory)."""

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}{SUFFIX}"

    def get(self, key: str, n_queries: int, k: int) -> IdArray | None:
        """The ``(n_queries, k)`` ids stored under ``key`` (None: not stored)."""
        found = self.get_scored(key, n_queries, k)
        return None if found is None else found[0]

    def get_scored(
        self, key: str, n_queries: int, k: int
    ) -> tuple[IdArray, ScoreArray | None] | None:
        """The ids stored under ``key`` and their scores (None when the entry
        holds none); None when nothing valid is stored."""
        path = self._path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            problem: str | None = f"unreadable ({exc})"
        else:
            problem = _verify(data, key, n_queries, k)
        if problem is not None:
            warnings.warn(
                f"{path}: search cache entry not used ({problem}); it is set aside "
                f"as {path.name}{_CORRUPT_SUFFIX} and searched again",
                CacheWarning,
                stacklevel=2,
            )
            with contextlib.suppress(OSError):  # read-only, or moved by another
                os.replace(path, path.with_name(path.name + _CORRUPT_SUFFIX))
            return None
        size = n_queries * k
        ids = np.frombuffer(data, dtype="<i8", count=size, offset=_HEADER.size)
        scores = None
        score_type = _SCORE_TYPES.get(data[: len(_MAGIC)])
        if score_type is not None:
            offset = _HEADER.size + 8 * size
            raw = np.frombuffer(data, dtype=score_type, count=size, offset=offset)
            scores = raw.reshape(n_queries, k).astype(np.float64)
        return ids.reshape(n_queries, k).astype(np.int64), scores

    def entries(self) -> list[Path]:
        """Every stored result file."""
        return sorted(self.directory.glob(f"*/*{SUFFIX}"))

    def clear(self) -> int:
        """Remove every stored result; returns how many there were."""
        files = self.entries()
        for path in files:
            path.unlink(missing_ok=True)
        return len(files)

    def put(self, key: str, ids: IdArray, scores: ScoreArray | None = None) -> None:
        """Store ``ids`` (and, when given, one score per id) under ``key``."""
        if self.read_only:
            return
        payload = np.ascontiguousarray(ids, dtype="<i8")
        n_queries, k = payload.shape
        body = payload.tobytes()
        magic = _MAGIC
        if scores is not None:
            body += np.ascontiguousarray(scores, dtype="<f8").tobytes()
            magic = _MAGIC_SCORED
        head = _HEADER.pack(magic, n_queries, k, _digest(key, n_queries, k, body))
        try:
            with atomic_writer(self._path(key), "wb") as fh:
                fh.write(head + body)
        except OSError as exc:
            if not refused_write(exc):
                raise
            self.read_only = True  # one warning, then searched and not stored
            message = uncached_message("search results", self.directory, exc)
            warnings.warn(message, CacheWarning, stacklevel=3)


def _digest(key: str, n_queries: int, k: int, body: bytes) -> bytes:
    # The key is hashed in: a whole, valid entry copied under another name fails.
    h = hashlib.sha256(f"{key}\0{n_queries}\0{k}\0".encode())
    h.update(body)
    return h.digest()


def _verify(data: bytes, key: str, n_queries: int, k: int) -> str | None:
    """Why ``data`` is not the entry of ``key`` with ``(n_queries, k)`` ids."""
    magic = data[: len(_MAGIC)]
    if len(data) < _HEADER.size or magic not in (_MAGIC, *_SCORE_TYPES):
        return "not a chunkeval search result (bad or missing header)"
    _, rows, cols, digest = _HEADER.unpack_from(data)
    if (rows, cols) != (n_queries, k):
        return f"shape ({rows}, {cols}), expected ({n_queries}, {k})"
    per_row = {_MAGIC_SCORED32: 12, _MAGIC_SCORED: 16}.get(magic, 8)
    if len(data) != _HEADER.size + per_row * rows * cols:
        return f"truncated or padded: {len(data)} bytes"
    if _digest(key, rows, cols, data[_HEADER.size :]) != digest:
        return "checksum mismatch"
    return None
