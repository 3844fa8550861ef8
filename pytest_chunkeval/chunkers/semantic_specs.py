"""Spec strings of the semantic chunkers, registered by :func:`register_semantic`.

- ``cluster:MAX_TOKENS[:MIN_TOKENS][@EMBEDDER]``, e.g. ``cluster:400``,
  ``cluster:200:40``, ``cluster:400@openai:text-embedding-3-large``
- ``kamradt[:PERCENTILE[@EMBEDDER]]``, e.g. ``kamradt``, ``kamradt:90``,
  ``kamradt:95@openai:text-embedding-3-large``
- ``kamradt-modified:SIZE[:max|mean][@EMBEDDER]``, e.g. ``kamradt-modified:300``
  (no chunk over SIZE tokens, SPEC §6) or ``kamradt-modified:300:mean`` (chunks of
  SIZE tokens on average, as the report's code)
- ``llm:MODEL[?window=TOKENS&attempts=N]``, e.g. ``llm:gpt-4o``,
  ``llm:gpt-4o-mini?window=1200``

``EMBEDDER`` is an embedder spec string (everything after the first ``@``, options
included: ``cluster:400@sentence-transformers:all-MiniLM-L6-v2?device=cuda``); the
default is all-MiniLM-L6-v2. Vectors go through the default embedding cache
(``$CHUNKEVAL_CACHE_DIR`` or ``.chunkeval/cache``). The LLM chunker talks to
``OPENAI_BASE_URL`` (any OpenAI-compatible server) with ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import math

from pytest_chunkeval.chunkers.base import Chunker
from pytest_chunkeval.chunkers.cluster import ClusterSemanticChunker
from pytest_chunkeval.chunkers.llm import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_WINDOW_TOKENS,
    LLMSemanticChunker,
)
from pytest_chunkeval.chunkers.semantic import (
    TARGETS,
    KamradtModifiedChunker,
    KamradtSemanticChunker,
)
from pytest_chunkeval.config.registry import Registry, parse_options, positive_int


def _split_embedder(rest: str) -> tuple[str, str | None]:
    args, at, embedder = rest.partition("@")
    if at and not embedder.strip():
        raise ValueError("nothing after '@' (expected an embedder spec)")
    return args.strip(), (embedder.strip() if at else None)


def _int(value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{what} must be an integer, got {value!r}") from None


def _cluster(rest: str) -> Chunker:
    args, embedder = _split_embedder(rest)
    parts = args.split(":") if args else []
    if not 1 <= len(parts) <= 2:
        raise ValueError("expected MAX_TOKENS or MAX_TOKENS:MIN_TOKENS")
    max_tokens = _int(parts[0], "MAX_TOKENS")
    if len(parts) == 2:
        return ClusterSemanticChunker(
            max_tokens, _int(parts[1], "MIN_TOKENS"), embedder=embedder
        )
    return ClusterSemanticChunker(max_tokens, embedder=embedder)


def _kamradt(rest: str) -> Chunker:
    args, embedder = _split_embedder(rest)
    if not args:
        return KamradtSemanticChunker(embedder=embedder)
    try:
        percentile = float(args)
    except ValueError:
        raise ValueError(f"PERCENTILE must be a number, got {args!r}") from None
    if not math.isfinite(percentile):
        raise ValueError(f"PERCENTILE must be in [0, 100], got {args!r}")
    return KamradtSemanticChunker(percentile, embedder=embedder)


def _kamradt_modified(rest: str) -> Chunker:
    args, embedder = _split_embedder(rest)
    if not args:
        raise ValueError("SIZE is required")
    size, _, target = (part.strip() for part in args.partition(":"))
    target = target or "max"
    if target not in TARGETS:
        raise ValueError(
            f"the target after SIZE must be 'max' or 'mean', got {target!r}"
        )
    return KamradtModifiedChunker(
        _int(size, "SIZE"),
        target="mean" if target == "mean" else "max",
        embedder=embedder,
    )


_LLM_OPTIONS = ("attempts", "window")


def _llm(rest: str) -> Chunker:
    model, options = parse_options(rest, dict.fromkeys(_LLM_OPTIONS, positive_int))
    if not model:
        raise ValueError("MODEL is required")
    return LLMSemanticChunker(
        model,
        window_tokens=options.get("window", DEFAULT_WINDOW_TOKENS),
        max_attempts=options.get("attempts", DEFAULT_MAX_ATTEMPTS),
    )


def register_semantic(registry: Registry[Chunker]) -> None:
    """Register ``cluster``, ``kamradt``, ``kamradt-modified`` and ``llm``."""
    registry.register("cluster", _cluster, "cluster:MAX_TOKENS[:MIN_TOKENS][@EMBEDDER]")
    registry.register("kamradt", _kamradt, "kamradt[:PERCENTILE[@EMBEDDER]]")
    registry.register(
        "kamradt-modified",
        _kamradt_modified,
        "kamradt-modified:SIZE[:max|mean][@EMBEDDER]",
    )
    registry.register("llm", _llm, "llm:MODEL[?window=TOKENS&attempts=N]")
