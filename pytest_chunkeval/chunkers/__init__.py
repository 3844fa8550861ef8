"""Chunkers: documents to character spans.

Built-ins by spec string (:data:`CHUNKERS`): ``fixed:SIZE[:OVERLAP]``,
``recursive:SIZE[:OVERLAP]``, ``sentence:SIZE``; anything else through
:func:`as_chunker`.

Stage: after the data, before the embedders (semantic chunkers embed through one).
Central types: the :class:`Chunker` protocol (``base.py``), ``CHUNKERS`` /
:func:`get_chunker` (``specs.py``).

May import: ``config/``, ``core/``, ``tokenizers/``, ``embedders/``, ``llm/``,
``util/`` and ``errors`` (see docs/architecture.md#layering).
"""

from __future__ import annotations

from pytest_chunkeval.chunkers.base import (
    Chunker,
    ChunkerError,
    FunctionChunker,
    as_chunker,
    check_pieces,
    chunk_texts,
    pieces_to_spans,
    validate_chunks,
)
from pytest_chunkeval.chunkers.fixed import FixedTokenChunker
from pytest_chunkeval.chunkers.recursive import (
    DEFAULT_SEPARATORS,
    RecursiveTokenChunker,
)
from pytest_chunkeval.chunkers.sentence import SentenceChunker, sentence_spans
from pytest_chunkeval.chunkers.specs import CHUNKERS, get_chunker

__all__ = [
    "CHUNKERS",
    "DEFAULT_SEPARATORS",
    "Chunker",
    "ChunkerError",
    "FixedTokenChunker",
    "FunctionChunker",
    "RecursiveTokenChunker",
    "SentenceChunker",
    "as_chunker",
    "check_pieces",
    "chunk_texts",
    "get_chunker",
    "pieces_to_spans",
    "sentence_spans",
    "validate_chunks",
]
