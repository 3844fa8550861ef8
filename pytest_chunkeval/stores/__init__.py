"""Vector stores: where chunk vectors are indexed and searched by cosine similarity.

Spec strings (``get_store``):

- ``exact``: numpy brute force, the ground truth;
- ``chroma``: in-process Chroma (HNSW), the default;
- ``chroma:PATH``: Chroma persisted under ``PATH`` (warm re-runs reuse vectors);
- ``chroma+http://HOST:PORT`` (or ``https``): a Chroma server (``chroma run``).
"""

from __future__ import annotations

from pytest_chunkeval.config.registry import Registry
from pytest_chunkeval.stores._base import (
    FloatArray,
    IdArray,
    Store,
    StoreError,
    VectorIndex,
)
from pytest_chunkeval.stores.chroma import (
    ChromaIndex,
    ChromaStore,
    chroma_from_spec,
    chroma_http_from_spec,
    chroma_https_from_spec,
    collection_name,
)
from pytest_chunkeval.stores.exact import ExactIndex, ExactStore, exact_from_spec

__all__ = [
    "STORES",
    "ChromaIndex",
    "ChromaStore",
    "ExactIndex",
    "ExactStore",
    "FloatArray",
    "IdArray",
    "Store",
    "StoreError",
    "VectorIndex",
    "collection_name",
    "get_store",
]

STORES: Registry[Store] = Registry("store")
STORES.register("exact", exact_from_spec, "exact")
STORES.register("chroma", chroma_from_spec, "chroma | chroma:PATH")
# Registry.create splits on the first ':', so "chroma+http://h:p" arrives here as
# name "chroma+http" and rest "//h:p".
STORES.register("chroma+http", chroma_http_from_spec, "chroma+http://HOST:PORT")
STORES.register("chroma+https", chroma_https_from_spec, "chroma+https://HOST:PORT")


def get_store(spec: str | Store) -> Store:
    """The store a spec string names, or ``spec`` itself if it already is one."""
    if isinstance(spec, str):
        return STORES.create(spec)
    if isinstance(spec, Store):
        return spec
    raise TypeError(
        f"expected a store spec string or an object with .name and .index(), "
        f"got {type(spec).__name__}"
    )
