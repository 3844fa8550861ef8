"""The keys of the lower caches (docs/performance.md, "What a cache keys on"):
each document's token bounds and chunks, the copies of the excerpts' texts, a
store's collection and search rows; each begins with its cache's format
(``formats.py``)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pytest_chunkeval.embedders.base import embedder_cache_identity
from pytest_chunkeval.engine.keys.formats import CHUNKINGS, COPIES, SEARCH, TOKENS
from pytest_chunkeval.engine.keys.identities import (
    reranker_identity,
    store_identity,
    texts_digest,
)
from pytest_chunkeval.stores._base import vector_store_identity
from pytest_chunkeval.stores.rerank import Reranker
from pytest_chunkeval.util.verified import entry_key


def chunking_key(identity: str, document_hash: str) -> str:
    """One document's chunks by a chunker of ``identity``."""
    return entry_key(CHUNKINGS.version(), identity, document_hash)


def token_key(identity: str, document_hash: str) -> str:
    """One document's token bounds by a tokenizer of ``identity``."""
    return entry_key(TOKENS.version(), identity, document_hash)


def copies_key(corpus_hash: str, needles: Sequence[str]) -> str:
    """The occurrences of ``needles`` in a corpus (cheaper to hash the texts
    looked for than the query set, whose every field would be serialized)."""
    return entry_key(COPIES.version(), corpus_hash, texts_digest(needles))


def _vectors_of(embedder: Any, vectors: Callable[[], np.ndarray | None]) -> str:
    """An embedder's cache identity, else (computed every time) the digest of
    the vectors it gave: a persistent store reuses a collection by its key."""
    identity = embedder_cache_identity(embedder)
    if identity is not None:
        return identity
    given = vectors()
    if given is None:
        raise ValueError("an embedder without a cache identity gave no vectors")
    data = np.ascontiguousarray(given)
    return f"vectors:{hashlib.sha256(data.tobytes()).hexdigest()}"


def collection_key(
    chunking_digest: str, embedder: Any, vectors: Callable[[], np.ndarray | None]
) -> str:
    """A vector store's collection: the chunks and the embedder of their vectors
    (``vectors``, the chunks' vectors, read only for an embedder without a
    cache identity)."""
    return entry_key("collection", chunking_digest, _vectors_of(embedder, vectors))


def graph_key(
    relationship_texts: Sequence[str],
    embedder: Any,
    vectors: Callable[[], np.ndarray | None],
) -> str:
    """A relationship graph's collection: its texts in order and the embedder
    (as :func:`collection_key`)."""
    texts = texts_digest(relationship_texts)
    return entry_key("relationships", texts, _vectors_of(embedder, vectors))


def vector_search_key(
    store: object,
    collection: str,
    queries: np.ndarray,
    k: int,
    *,
    seed: int | None = None,
) -> str | None:
    """A vector store's top ``k`` for the query vectors (``seed``: an
    approximate store's index rebuilt with it, engine/rebuilds.py); None for a
    store without an identity (never cached)."""
    identity = store_identity(store)
    if identity is None:
        return None
    if seed is not None:
        identity = f"{identity}\0rebuild={seed}"
    vectors = np.ascontiguousarray(queries)
    h = hashlib.sha256(vectors.tobytes())
    return entry_key(
        SEARCH.version(),
        identity,
        collection,
        str(k),
        str(queries.shape),
        h.hexdigest(),
    )


def text_search_key(store: object, digests: tuple[str, str], k: int) -> str | None:
    """A text store's top ``k``: its identity (tokenization and scoring options)
    and the digests of the chunk texts and of the query texts; None for a
    user's store without a ``cache_version`` (searched every time)."""
    name = vector_store_identity(store)
    return entry_key(SEARCH.version(), "text", name, *digests, str(k)) if name else None


def rerank_key(
    reranker: Reranker, digests: tuple[str, str], candidates: np.ndarray
) -> str | None:
    """A reranker's order of the candidate rows of each query; None for a
    reranker without a cache identity (scored every time)."""
    identity = reranker_identity(reranker)
    if identity is None:
        return None
    rows = np.ascontiguousarray(candidates, dtype=np.int64)
    h = hashlib.sha256(rows.tobytes())
    return entry_key(
        SEARCH.version(),
        "rerank",
        identity,
        str(candidates.shape),
        *digests,
        h.hexdigest(),
    )
