"""The on-disk embedding cache: every (embedder identity, exact text) embedded once.

The cache directory (``default_cache_dir()``: ``$CHUNKEVAL_CACHE_DIR``, else
``<rootdir>/.chunkeval/cache``) holds one folder of packs per embedder identity;
the layout and a pack's format are in :mod:`pytest_chunkeval.embedders.packs`.
This module decides what to embed and when to store it; an identity's packs are
loaded once per :class:`EmbeddingCache` object (``engine/cache_dir.py`` keeps one
per directory for the process).

Concurrency (pytest-xdist workers, parallel CI jobs): writers never touch the same
file; a reader lists the directory, loads packs it has not seen (memoized per process),
and when a pack vanishes under it (merged by another process) lists again. Two
processes embedding the same text both store it: harmless duplicates, merged away.
A pack that is truncated or fails its checksum is reported with :class:`CacheWarning`
naming the file, set aside as ``*.corrupt``, and its texts are embedded again.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.config.defaults import CACHE_DIR_ENV
from pytest_chunkeval.embedders.base import (
    Embedder,
    FloatArray,
    PartialEmbedder,
    embedder_cache_identity,
    embedding_parts,
    identity_matches,
    l2_normalize,
    unit_vectors,
)
from pytest_chunkeval.embedders.packs import (
    CORRUPT_SUFFIX,
    DEFAULT_COMPACT_AFTER,
    IDENTITY_FILE,
    LOCK_FILE,
    PACK_SUFFIX,
    CacheStats,
    CacheWarning,
    IdentityInfo,
    IdentityStore,
    identity_dirname,
    read_keys,
    text_key,
)
from pytest_chunkeval.util.files import atomic_write_text
from pytest_chunkeval.util.picked import Picked
from pytest_chunkeval.util.progress import progress_bar
from pytest_chunkeval.util.terminate import keep_on_sigterm
from pytest_chunkeval.util.unwritable import cache_setting, refused_write
from pytest_chunkeval.util.verified import stop_storing

DEFAULT_BATCH_SIZE = 1024
# Computed vectors are written at least this often, so an interrupted long run
# (a slow model, a rate-limited API) keeps most of its work.
FLUSH_SECONDS = 30.0
# An auto progress bar appears only when embedding takes longer than this.
PROGRESS_DELAY_SECONDS = 2.0


def default_cache_dir(rootdir: Path | None = None) -> Path:
    """``$CHUNKEVAL_CACHE_DIR``, else ``<rootdir or cwd>/.chunkeval/cache``."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return (rootdir if rootdir is not None else Path.cwd()) / ".chunkeval" / "cache"


class EmbeddingCache:
    """Vectors on disk keyed by (embedder identity, exact text).

    :meth:`embed` returns the vectors of texts in order, embedding only unique texts
    that are not cached yet; the model is not loaded when everything is cached.
    """

    def __init__(
        self,
        directory: str | Path,
        *,
        compact_after: int = DEFAULT_COMPACT_AFTER,
        batch_size: int = DEFAULT_BATCH_SIZE,
        read_only: bool = False,
    ) -> None:
        if compact_after < 1 or batch_size < 1:
            raise ValueError("compact_after and batch_size must be >= 1")
        self.directory = Path(directory).expanduser()
        self.compact_after = compact_after
        self.batch_size = batch_size
        self.stats = CacheStats()
        self.read_only = read_only
        """Vectors (and search results, answers) are read, never stored: a
        read-only cache directory. New vectors are used for this run only."""
        self._warned_read_only = False
        # each identity's packs, loaded once by this object and refreshed
        self._loaded: dict[str, IdentityStore] = {}
        self._loaded_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.directory)!r})"

    def _store(self, identity: str) -> IdentityStore:
        with self._loaded_lock:
            store = self._loaded.get(identity)
            if store is None:
                store = IdentityStore(
                    self.directory / identity_dirname(identity), identity
                )
                self._loaded[identity] = store
            return store

    def _ensure_root(self) -> None:
        if self.directory.is_dir():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        # Like .pytest_cache: a cache created here is never committed by accident.
        atomic_write_text(
            self.directory / ".gitignore", "# created by pytest-chunkeval\n*\n"
        )
        atomic_write_text(
            self.directory / "CACHEDIR.TAG",
            "Signature: 8a477f597d28d172789f06886806bc55\n"
            "# This file is a cache directory tag created by pytest-chunkeval.\n",
        )

    def embed(
        self,
        embedder: Embedder,
        texts: Sequence[str],
        *,
        progress: bool | None = None,
    ) -> FloatArray:
        """``(len(texts), d)`` float32 unit vectors of ``texts``, in order.

        Identical texts are embedded once; cached ones are not embedded at all.
        ``progress``: True shows a tqdm bar, False never, None (default) shows one
        on an interactive stderr once embedding takes more than a moment.
        """
        if not isinstance(texts, Sequence):
            texts = list(texts)
        # Distinct texts by their keys, read one at a time: texts sliced from
        # their documents as read are never all held (docs/performance.md)
        slots: dict[bytes, int] = {}
        first: list[int] = []
        inverse = np.empty(len(texts), dtype=np.int64)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text #{i} is {type(text).__name__}, not str")
            slot = inverse[i] = slots.setdefault(text_key(text), len(first))
            if slot == len(first):
                first.append(i)
        keys = list(slots)
        unique_texts = Picked(texts, first)
        identity = embedder_cache_identity(embedder)
        if identity is None:  # computed every time: nothing read or stored
            self.stats.misses += len(unique_texts)
            every = list(range(len(unique_texts)))
            fresh = self._compute(embedder, None, unique_texts, [], every, progress)
            return _in_order(fresh, inverse)
        store = self._store(identity)
        found, out = self._cached(store, keys)
        missing = [i for i, code in enumerate(found) if code is None]
        self.stats.hits += len(keys) - len(missing)
        self.stats.misses += len(missing)
        out = self._compute(embedder, store, unique_texts, keys, missing, progress, out)
        return _in_order(out, inverse)

    @staticmethod
    def _cached(
        store: IdentityStore, keys: list[bytes]
    ) -> tuple[list[int | None], FloatArray | None]:
        """Each key's index value (None: not cached) and an array of one row
        per key with the cached rows filled in (None: no hit)."""
        while True:  # a failed gather forgets a pack: this ends
            with store.lock:
                store.refresh()
                found = [store.index.get(k) for k in keys]
                hit_rows = [i for i, code in enumerate(found) if code is not None]
                if not hit_rows:
                    return found, None
                # Gather now: a compaction while misses are computed renumbers
                # slots. Straight into the rows returned: no copy in between.
                assert store.dim is not None
                out = np.empty((len(keys), store.dim), dtype=np.float32)
                codes = np.fromiter(
                    (found[i] for i in hit_rows), dtype=np.int64, count=len(hit_rows)
                )
                if store.gather(codes, out, np.asarray(hit_rows, dtype=np.int64)):
                    return found, out

    def _compute(
        self,
        embedder: Embedder,
        store: IdentityStore | None,
        texts: Sequence[str],
        keys: list[bytes],
        missing: list[int],
        progress: bool | None,
        out: FloatArray | None = None,
    ) -> FloatArray:
        """``out`` (one row per text; allocated at the first batch, when the
        embedder's width is known) with the vectors of ``texts[missing]``
        written in, stored as they come (``store`` None: an embedder computed
        every time, nothing stored). Each batch goes straight into its rows
        (docs/performance.md, "Memory")."""
        # Longest first, as sentence-transformers does inside one call: batches of
        # similar length waste less padding, so chunked calls cost what one call does.
        order = sorted(missing, key=lambda i: -len(texts[i]))
        pending: list[int] = []
        bar = progress_bar(
            len(order),
            progress=progress,
            desc=f"embedding ({embedder.identity.split('@')[0]})",
            unit="text",
            delay=0.0 if progress else PROGRESS_DELAY_SECONDS,
            leave=False,
        )
        last_flush = time.monotonic()
        # A remote embedder's answers are stored as they arrive (docs/embedders.md)
        received = isinstance(embedder, PartialEmbedder)
        parts = embedding_parts(embedder, Picked(texts, order), self.batch_size)
        with keep_on_sigterm():
            try:
                for positions, part in parts:
                    batch = [order[p] for p in positions]
                    vectors = unit_vectors(part, len(batch), who=embedder.identity)
                    self._check_dim(store, vectors, embedder, out)
                    if out is None:
                        out = np.empty((len(texts), vectors.shape[1]), np.float32)
                    out[batch] = vectors
                    del vectors
                    pending.extend(batch)
                    if bar is not None:
                        bar.update(len(batch))
                    due = received or time.monotonic() - last_flush > FLUSH_SECONDS
                    if store is not None and due:
                        self._flush(store, keys, out, pending)
                        pending = []
                        last_flush = time.monotonic()
            finally:
                parts.close()  # no request left in flight when we return
                if bar is not None:
                    bar.close()
                # Also on Ctrl-C, SIGTERM or an API error: keep what was computed.
                if pending and store is not None and out is not None:
                    self._flush(store, keys, out, pending)
        if out is None:  # no text at all
            out = np.empty((len(texts), 0), dtype=np.float32)
        return out

    def _check_dim(
        self,
        store: IdentityStore | None,
        vectors: FloatArray,
        embedder: Embedder,
        out: FloatArray | None,
    ) -> None:
        got = vectors.shape[1]
        if store is not None and store.dim is not None and got != store.dim:
            raise ValueError(
                f"embedder {embedder.identity!r} returned {got}-dim "
                f"vectors but the cache at {store.directory} holds {store.dim}-dim "
                "ones under the same identity: give the embedder its own identity= "
                "or clear the cache (chunkeval cache clear)"
            )
        if out is not None and got != (before := out.shape[1]):
            raise ValueError(
                f"embedder {embedder.identity!r} returned {got}-dim vectors after "
                f"{before}-dim ones"
            )

    def _flush(
        self,
        store: IdentityStore,
        keys: list[bytes],
        out: FloatArray,
        rows: list[int],
    ) -> None:
        if self._skip_write():
            return
        vectors = out[rows]  # a copy the new pack keeps (packs.py ``add``)
        try:
            self._ensure_root()
            with store.lock:
                store.add([keys[i] for i in rows], vectors)
                if len(store.packs) > self.compact_after:
                    store.compact(threshold=self.compact_after)
        except OSError as exc:
            self._stop_storing(exc)

    def put(self, identity: str, texts: Sequence[str], vectors: Any) -> None:
        """Store precomputed vectors of ``texts`` (normalized here) as ``identity``."""
        texts = list(texts)
        if not texts:
            return
        arr = l2_normalize(vectors)
        if arr.shape[0] != len(texts):
            raise ValueError(f"{len(texts)} texts but {arr.shape[0]} vectors")
        unique: dict[str, int] = {}
        for i, t in enumerate(texts):
            unique.setdefault(t, i)
        store = self._store(identity)
        with store.lock:
            store.refresh()
            if store.dim is not None and arr.shape[1] != store.dim:
                raise ValueError(
                    f"{arr.shape[1]}-dimensional vectors for identity {identity!r}, "
                    f"whose cached vectors are {store.dim}-dimensional"
                )
            if self._skip_write():
                return
            try:
                self._ensure_root()
                store.add([text_key(t) for t in unique], arr[list(unique.values())])
            except OSError as exc:
                self._stop_storing(exc)

    def _skip_write(self) -> bool:
        """True (after one warning) when the cache cannot store anything."""
        if not self.read_only:
            return False
        if not self._warned_read_only:
            self._warned_read_only = True
            warnings.warn(
                CacheWarning(
                    f"chunkeval cache: {self.directory} is read-only: cached entries "
                    f"are used, new ones are not stored (set {cache_setting()} to a "
                    "writable directory to keep them)"
                ),
                stacklevel=4,
            )
        return True

    def _stop_storing(self, exc: OSError) -> None:
        """A write the disk refused (full, read-only): warn once and store
        nothing more in this run; any other error is a bug and propagates."""
        if not refused_write(exc):
            raise exc
        self.read_only = True
        if not self._warned_read_only:
            self._warned_read_only = True
            # one warning per directory, also when a chunking or token bounds
            # entry found the disk full first (util/verified.py)
            stop_storing(self.directory, "vectors", exc)

    def compact(self, identity: str | None = None) -> int:
        """Merge each identity's packs into one now; returns how many were merged."""
        done = 0
        for ident in [identity] if identity is not None else list(self.info()):
            store = self._store(ident)
            with store.lock:
                done += store.compact(force=True)
        return done

    def _identity_dirs(self) -> Iterator[tuple[str, Path]]:
        try:
            entries = sorted(p for p in self.directory.iterdir() if p.is_dir())
        except FileNotFoundError:
            return
        for path in entries:
            id_file = path / IDENTITY_FILE
            try:
                identity = id_file.read_text(encoding="utf-8").strip()
            except OSError:
                if not any(path.glob(f"*{PACK_SUFFIX}")):
                    continue  # not ours
                identity = path.name
            yield identity, path

    def info(self) -> dict[str, IdentityInfo]:
        """Per embedder identity: unique cached entries, bytes and files on disk."""
        result: dict[str, IdentityInfo] = {}
        for identity, path in self._identity_dirs():
            keys: set[bytes] = set()
            size = files = corrupt = 0
            dim: int | None = None
            for entry in path.iterdir():
                with contextlib.suppress(FileNotFoundError):
                    size += entry.stat().st_size
                    if entry.name.endswith(CORRUPT_SUFFIX):
                        corrupt += 1
                    if not entry.name.endswith(PACK_SUFFIX) or entry.name.startswith(
                        "."
                    ):
                        continue
                    files += 1
                    pack_keys, pack_dim = read_keys(entry)
                    keys.update(pack_keys)
                    dim = dim if dim is not None else pack_dim
            result[identity] = IdentityInfo(
                entries=len(keys),
                bytes=size,
                files=files,
                dimension=dim,
                corrupt=corrupt,
                path=str(path),
            )
        return result

    def clear(self, identity: str | None = None) -> int:
        """Delete the cached vectors of one identity (all if None; without its
        versions: every version's, ``embedders/base.py``); returns how many
        entries were removed. Only files the cache wrote are deleted."""
        removed = 0
        for ident, path in list(self._identity_dirs()):
            if identity is not None and not identity_matches(ident, identity):
                continue
            keys: set[bytes] = set()
            for entry in list(path.iterdir()):
                name = entry.name
                ours = (
                    name.endswith((PACK_SUFFIX, CORRUPT_SUFFIX))
                    or name in (IDENTITY_FILE, LOCK_FILE)
                    or (name.startswith(".") and name.endswith(".tmp"))
                )
                if not ours:
                    continue
                if name.endswith(PACK_SUFFIX) and not name.startswith("."):
                    with contextlib.suppress(FileNotFoundError):
                        keys.update(read_keys(entry)[0])
                with contextlib.suppress(FileNotFoundError):
                    entry.unlink()
            removed += len(keys)
            with contextlib.suppress(OSError):  # not empty: a concurrent writer
                path.rmdir()
        with self._loaded_lock:
            self._loaded.clear()
        return removed


def _in_order(out: FloatArray, inverse: npt.NDArray[np.int64]) -> FloatArray:
    """The rows of the unique texts' vectors ``out`` for the texts asked, in
    order: ``out`` itself when every text was distinct (no second copy)."""
    if inverse.size == out.shape[0]:  # each text its own row, in order
        return out
    return out[inverse]
