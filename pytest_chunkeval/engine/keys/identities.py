"""What the keys read of the components and the code, read when a key is built
(never remembered from construction; docs/performance.md, "What a cache keys
on"): a component's identity, or None for one computed every time."""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pytest_chunkeval.chunkers.base import cache_identity
from pytest_chunkeval.embedders.base import embedder_cache_identity
from pytest_chunkeval.stores._base import (
    FusionStore,
    Store,
    TextStore,
    vector_store_identity,
)


def chunker_identity(chunker: Any) -> str | None:
    """The chunker's identity now (``chunkers/base.py`` ``cache_identity``), or
    None when it has none (never cached)."""
    return cache_identity(chunker)


def embedder_identity(embedder: Any) -> str | None:
    """An embedder's cache identity, with the versions of the code that
    computes its vectors where it declares them (``embedders/base.py``
    ``embedder_cache_identity``: its packs key on the same); None for one
    computed every time (a user's function without ``cache_version``: never
    cached)."""
    return embedder_cache_identity(embedder)


def reranker_identity(reranker: Any) -> str | None:
    """What determines a reranker's order: its ``cache_identity`` where it has
    one (None: a model not on disk yet, never cached), else its identity, read
    now; and the versions of the libraries that compute its scores where it
    declares them (``versions``: not in the identity, which baselines record)."""
    identity = getattr(reranker, "cache_identity", reranker.identity)
    if identity is None:
        return None
    versions = getattr(reranker, "versions", None)
    return f"{identity}\0{versions}" if isinstance(versions, str) else str(identity)


def store_identity(store: object) -> str | None:
    """What determines a store's results: a fused store's settings and legs, a
    text store's identity, a vector store's
    (:func:`~pytest_chunkeval.stores._base.vector_store_identity`); None for a
    store without one (never cached)."""
    if isinstance(store, FusionStore):
        legs = [(name, store_identity(leg)) for name, leg in store.legs.items()]
        if any(identity is None for _, identity in legs):
            return None
        parts = [f"{name}={identity}" for name, identity in legs]
        return "\0".join(
            ["fusion", store.name, store.identity, str(store.candidates), *parts]
        )
    identity = vector_store_identity(store)  # a user's store: its cache_version
    if isinstance(store, TextStore):
        return None if identity is None else f"text\0{identity}"
    if isinstance(store, Store) and identity is not None:
        return f"vector\0{identity}"
    return None


@functools.cache
def code_identity() -> str:
    """SHA-256 of the package's own source files (each relative path and its
    bytes, in path order), the Python version and numpy's: computed once per
    process (about 10 ms). Any edit of the package reads no older result."""
    root = Path(__file__).resolve().parents[2]  # the package: keys, engine, it
    h = hashlib.sha256(f"{sys.version}\0numpy {np.__version__}\0".encode())
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix().encode()
        data = path.read_bytes()
        for part in (name, data):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
    return h.hexdigest()


def texts_digest(texts: Sequence[str]) -> str:
    """SHA-256 of a list of texts (length-prefixed, so no two lists collide)."""
    h = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()
