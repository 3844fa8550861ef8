"""Chunkings on disk: each document chunked once per (chunker, text), ever.

A chunker's ``cache_identity`` says what determines its chunks (class, sizes,
separators, the tokenizer's identity; the embedder's for the semantic and cluster
chunkers; model, sampling settings and prompt version for the LLM chunker: see
:func:`~pytest_chunkeval.chunkers.base.chunker_identity`). The spans of each
document are stored per (that identity, document hash) as ``chunkings/*/*.chk``
entries of the verify-on-read helper (``util/verified.py``): a changed document
is chunked again alone, a warm run chunks nothing. Never cached: a chunker
without an identity (a user's function without a ``cache_version``, an object of
a class we do not know), and an LLM chunking where any window fell back to the
plain split (the next run asks the model again).

The payload is the int64 ``[start, end)`` pairs; the decoder checks they are
non-empty spans inside the document.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

import numpy as np

from pytest_chunkeval.chunkers import (
    Chunker,
    ChunkerError,
    check_pieces,
    validate_chunks,
)
from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.data.corpus import Corpus, Document
from pytest_chunkeval.engine.keys import chunker_identity, chunking_key
from pytest_chunkeval.engine.token_cache import document_hashes, token_bounds
from pytest_chunkeval.tokenizers.base import Tokenizer, tokenizer_identity
from pytest_chunkeval.util.cache_kinds import verified_store
from pytest_chunkeval.util.progress import progress_phase
from pytest_chunkeval.util.verified import EntryRefused, VerifiedStore


def chunking_store(cache_dir: str | Path, read_only: bool = False) -> VerifiedStore:
    """The chunking entries of a cache directory."""
    return verified_store(cache_dir, "chunkings", read_only)


def _decode(payload: memoryview, length: int) -> IntArray:
    if len(payload) % 16:
        raise EntryRefused(f"{len(payload)} bytes is not a whole number of spans")
    spans = np.frombuffer(payload, dtype="<i8").reshape(-1, 2).astype(np.int64)
    if spans.size and (
        (spans[:, 0] < 0).any()
        or (spans[:, 1] <= spans[:, 0]).any()
        or int(spans[:, 1].max()) > length
    ):
        raise EntryRefused(f"spans outside a document of {length} characters")
    return spans


def chunk_document(
    chunker: Chunker, doc: Document, tokens: IntArray | None = None
) -> IntArray:
    """The chunker's spans of one document, checked (a :class:`ChunkerError`
    names the document); from its token bounds when given (see
    :func:`_with_tokens`)."""
    try:
        if tokens is not None:
            pieces = chunker.spans_from_tokens(doc.text, tokens)  # type: ignore[attr-defined]
        else:
            pieces = chunker.chunk_spans(doc.text)
        found = check_pieces(pieces, chunker.name)
        spans = np.asarray(found, dtype=np.int64)
    except ChunkerError as exc:
        raise ChunkerError(f"document {doc.id!r}: {exc}") from exc
    spans = spans.reshape(-1, 2)
    validate_chunks(doc.text, spans, chunker=chunker.name, doc_id=doc.id)
    return spans


def chunk_documents(
    chunker: Chunker,
    corpus: Corpus,
    cache_dir: str | Path | None = None,
    *,
    read_only: bool = False,
) -> tuple[list[IntArray], float | None]:
    """Each document's spans, in corpus order, and the share of a model-driven
    chunker's windows split by its fallback (None: it has none, or none fell
    back). Cached documents are read; the others are chunked (and stored)."""
    docs = corpus.documents
    identity = chunker_identity(chunker)
    store = None
    if cache_dir is not None and identity is not None:
        store = chunking_store(cache_dir, read_only)
    keys: list[str] = []
    spans: list[IntArray | None] = [None] * len(docs)
    if store is not None:
        keys = [chunking_key(str(identity), h) for h in document_hashes(corpus)]
        for i, doc in enumerate(docs):
            spans[i] = store.get(keys[i], partial(_decode, length=len(doc.text)))
    missing = [i for i, found in enumerate(spans) if found is None]
    share = None
    if missing:
        take_fallbacks = getattr(chunker, "take_fallbacks", None)
        if callable(take_fallbacks):
            take_fallbacks()  # count this chunking's windows only
        tokens = _with_tokens(chunker, corpus, missing, cache_dir, read_only)
        for i in missing:
            place = f"{docs[i].id} ({i + 1} of {len(docs)}) with {chunker.name}"
            with progress_phase(f"chunking {place}"):
                spans[i] = chunk_document(chunker, docs[i], next(tokens, None))
        if callable(take_fallbacks):
            share = _fallback_share(chunker, *take_fallbacks())
        if store is not None and share is None:
            for i in missing:
                store.put(keys[i], np.ascontiguousarray(spans[i], "<i8").tobytes())
    return [s for s in spans if s is not None], share


def _with_tokens(
    chunker: Chunker,
    corpus: Corpus,
    missing: list[int],
    cache_dir: str | Path | None,
    read_only: bool,
) -> Iterator[IntArray]:
    """The token bounds of the ``missing`` documents, through the token cache, for
    a chunker that chunks from whole-document tokens (``spans_from_tokens``: the
    fixed, sentence and recursive chunkers; the recursive one counts its pieces
    from them, ``chunkers/_doc_counts.py``): the unit map then reads them
    instead of tokenizing each document a second time. Nothing for other
    chunkers."""
    tokenizer = getattr(chunker, "tokenizer", None)
    if (
        cache_dir is None
        or not callable(getattr(chunker, "spans_from_tokens", None))
        or not isinstance(tokenizer, Tokenizer)
        or tokenizer_identity(tokenizer) is None
    ):
        return iter(())
    return token_bounds(corpus, tokenizer, cache_dir, read_only=read_only, only=missing)


def _fallback_share(chunker: Chunker, fell_back: int, windows: int) -> float | None:
    if windows and fell_back == windows:
        raise ChunkerError(
            f"chunker {chunker.name!r}: the model gave no usable answer for "
            f"any of the {windows} window(s), so every chunk would come from "
            "the fallback split, not from the model (is it the right model, "
            "a chat endpoint? see the LLMChunkerFallbackWarning messages)"
        )
    return fell_back / windows if fell_back else None
