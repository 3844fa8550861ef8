"""Spec strings of the semantic chunkers, registered by :func:`register_semantic`.

- ``cluster:MAX_TOKENS[:MIN_TOKENS][@EMBEDDER]``, e.g. ``cluster:400``,
  ``cluster:200:40``, ``cluster:400@openai:text-embedding-3-large``
- ``kamradt[:PERCENTILE[@EMBEDDER]]``, e.g. ``kamradt``, ``kamradt:90``,
  ``kamradt:95@openai:text-embedding-3-large``
- ``kamradt-modified:SIZE[:max|mean][@EMBEDDER]``, e.g. ``kamradt-modified:300``
  (no chunk over SIZE tokens, docs/chunkers.md#kamradt-modified-max-or-mean) or
  ``kamradt-modified:300:mean`` (chunks of SIZE tokens on average, as the report's code)
- ``llm:MODEL[?window=TOKENS&attempts=N]``, e.g. ``llm:gpt-4o``,
  ``llm:gpt-4o-mini?window=1200``

``EMBEDDER`` is an embedder spec string (everything after the first ``@``, options
included: ``cluster:400@sentence-transformers:all-MiniLM-L6-v2?device=cuda``); the
default is all-MiniLM-L6-v2, and ``@`` the default is the same chunker as no ``@``.
Vectors go through the default embedding cache
(``$CHUNKEVAL_CACHE_DIR`` or ``.chunkeval/cache``). The LLM chunker talks to
``OPENAI_BASE_URL`` (any OpenAI-compatible server) with ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import math
from typing import Any

from pytest_chunkeval.chunkers.base import Chunker
from pytest_chunkeval.chunkers.cluster import DEFAULT_MIN_TOKENS, ClusterSemanticChunker
from pytest_chunkeval.chunkers.llm import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_WINDOW_TOKENS,
    LLMSemanticChunker,
)
from pytest_chunkeval.chunkers.llm import DEFAULT_PIECE_TOKENS as LLM_PIECE_TOKENS
from pytest_chunkeval.chunkers.semantic import (
    DEFAULT_BUFFER,
    DEFAULT_PERCENTILE,
    DEFAULT_PIECE_TOKENS,
    TARGETS,
    KamradtModifiedChunker,
    KamradtSemanticChunker,
)
from pytest_chunkeval.config.defaults import DEFAULT_EMBEDDER
from pytest_chunkeval.config.registry import (
    Nested,
    Param,
    Registry,
    Signature,
    choice,
    integer,
    non_negative_int,
    positive_int,
)
from pytest_chunkeval.embedders.registry import EMBEDDERS
from pytest_chunkeval.tokenizers.base import DEFAULT_ENCODING, TOKENIZERS

TOKENIZER_OPTION = Param(
    "tokenizer", TOKENIZERS.label, default=DEFAULT_ENCODING, metavar="SPEC"
)
"""``?tokenizer=SPEC``: the tokenizer that counts a token chunker's sizes."""


def _percentile(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"must be in [0, 100], got {text!r}")
    return value


def _cluster(
    max_tokens: int, min_tokens: int, *, tokenizer: str, embedder: str | None
) -> Chunker:
    return ClusterSemanticChunker(
        max_tokens, min_tokens, embedder=embedder, encoding=tokenizer
    )


def _kamradt(percentile: float, *, buffer: int, embedder: str | None) -> Chunker:
    return KamradtSemanticChunker(percentile, buffer=buffer, embedder=embedder)


def _kamradt_modified(
    size: int,
    target: str,
    *,
    buffer: int | None,
    pieces: int,
    tokenizer: str,
    embedder: str | None,
) -> Chunker:
    return KamradtModifiedChunker(
        size,
        target="mean" if target == "mean" else "max",
        buffer=buffer,
        piece_tokens=pieces,
        embedder=embedder,
        encoding=tokenizer,
    )


def _llm(
    model: str, *, window: int, attempts: int, pieces: int, tokenizer: str
) -> Chunker:
    return LLMSemanticChunker(
        model,
        window_tokens=window,
        max_attempts=attempts,
        piece_tokens=pieces,
        encoding=tokenizer,
    )


def register_semantic(registry: Registry[Chunker]) -> None:
    """Register ``cluster``, ``kamradt``, ``kamradt-modified`` and ``llm``."""
    embedder = Nested("embedder", EMBEDDERS, DEFAULT_EMBEDDER)
    cluster = Signature(
        (
            Param("max_tokens", integer),
            Param("min_tokens", integer, default=DEFAULT_MIN_TOKENS),
        ),
        (TOKENIZER_OPTION,),
        nested=embedder,
    )
    registry.register(
        "cluster",
        _cluster,
        "cluster:MAX_TOKENS[:MIN_TOKENS][@EMBEDDER]",
        signature=cluster,
    )
    kamradt = Signature(
        (Param("percentile", _percentile, default=DEFAULT_PERCENTILE),),
        (Param("buffer", non_negative_int, default=DEFAULT_BUFFER, metavar="N"),),
        nested=embedder,
    )
    registry.register(
        "kamradt", _kamradt, "kamradt[:PERCENTILE][@EMBEDDER]", signature=kamradt
    )
    modified = Signature(
        (
            Param("size", integer),
            Param("target", choice(*TARGETS), default="max", metavar="max|mean"),
        ),
        (
            # The default buffer depends on the target: left to the chunker.
            Param("buffer", non_negative_int, default=None, metavar="N"),
            Param("pieces", positive_int, default=DEFAULT_PIECE_TOKENS, metavar="N"),
            TOKENIZER_OPTION,
        ),
        nested=embedder,
    )
    registry.register(
        "kamradt-modified",
        _kamradt_modified,
        "kamradt-modified:SIZE[:max|mean][@EMBEDDER]",
        signature=modified,
    )
    options: tuple[Any, ...] = (
        Param("attempts", positive_int, default=DEFAULT_MAX_ATTEMPTS, metavar="N"),
        Param("pieces", positive_int, default=LLM_PIECE_TOKENS, metavar="N"),
        TOKENIZER_OPTION,
        Param("window", positive_int, default=DEFAULT_WINDOW_TOKENS, metavar="TOKENS"),
    )
    llm = Signature((Param("model", rest=True),), options)
    registry.register(
        "llm", _llm, "llm:MODEL[?window=TOKENS&attempts=N]", signature=llm
    )
