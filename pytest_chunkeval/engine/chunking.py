"""What retrieval is scored on: a corpus' unit axis (:func:`unit_map`), all its
chunks under one chunker (:class:`Chunking`), and the spans and recall of each
retrieval stage (:func:`stage_result`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.chunkers import Chunker
from pytest_chunkeval.core.copies import ExcerptCopies
from pytest_chunkeval.core.metrics import (
    ChunkIndex,
    QuerySpans,
    describe,
    pool_ceiling,
    score_queries,
)
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.engine.chunking_cache import chunk_documents
from pytest_chunkeval.engine.results import SpanTuple, StageResult
from pytest_chunkeval.engine.token_cache import token_columns
from pytest_chunkeval.tokenizers.base import (
    Tokenizer,
    get_tokenizer,
    tokenizer_identity,
)

_UNIT_MAPS: dict[tuple[str, str, str, str], UnitMap] = {}
_UNIT_MAPS_KEPT = 8


class CacheLocation(Protocol):
    """Where the evaluation cache is (a ``CacheDir`` is one)."""

    @property
    def directory(self) -> Path: ...

    @property
    def read_only(self) -> bool: ...


def cache_location(
    cache: str | Path | CacheLocation | None, read_only: bool = False
) -> tuple[Path | None, bool]:
    """``(directory, read_only)`` of a cache given as a directory or an object."""
    if cache is None or isinstance(cache, (str, Path)):
        return (None if cache is None else Path(cache)), read_only
    return cache.directory, cache.read_only or read_only


def unit_map(
    corpus: Corpus,
    unit: str,
    tokenizer: Tokenizer | None,
    cache: str | Path | CacheLocation | None = None,
    *,
    read_only: bool = False,
) -> UnitMap:
    """The corpus' unit axis, kept per process for the few most recently used
    corpora; with ``cache``, each document is tokenized once per (tokenizer,
    document text) ever (``engine/token_cache.py``)."""
    cache_dir, read_only = cache_location(cache, read_only)
    tok = get_tokenizer(tokenizer) if unit == "token" else None
    name = (tokenizer_identity(tok) or f"object:{id(tok)}") if tok is not None else ""
    key = (corpus.content_hash, unit, name, str(cache_dir))
    found = _UNIT_MAPS.pop(key, None)
    if found is None and cache_dir is None:  # a caller without a cache (a TREC
        # export after an evaluation): any cache's map of this corpus will do
        other = next((k for k in _UNIT_MAPS if k[:3] == key[:3]), None)
        found = _UNIT_MAPS.pop(other) if other is not None else None
    if found is None:
        texts = [d.text for d in corpus]
        columns = None
        if tok is not None and cache_dir is not None:
            columns = token_columns(corpus, tok, cache_dir, read_only=read_only)
        found = UnitMap(corpus.ids, texts, unit, tok, columns=columns)
    _UNIT_MAPS[key] = found  # most recent last
    while len(_UNIT_MAPS) > _UNIT_MAPS_KEPT:
        del _UNIT_MAPS[next(iter(_UNIT_MAPS))]
    return found


class Chunking:
    """All chunks of a corpus under one chunker, as spans in corpus order.

    With ``cache`` (a directory, or a ``CacheDir``), each document's
    chunks are read from the chunking cache when its chunker has a cache
    identity (``engine/chunking_cache.py``), and computed and stored otherwise."""

    def __init__(
        self,
        chunker: Chunker,
        corpus: Corpus,
        cache: str | Path | CacheLocation | None = None,
        *,
        read_only: bool = False,
    ) -> None:
        cache_dir, read_only = cache_location(cache, read_only)
        bounds, share = chunk_documents(chunker, corpus, cache_dir, read_only=read_only)
        docs = [np.full(b.shape[0], i, dtype=np.int64) for i, b in enumerate(bounds)]
        self.doc = np.concatenate(docs) if docs else np.zeros(0, np.int64)
        self.bounds = np.concatenate(bounds) if bounds else np.zeros((0, 2), np.int64)
        self.corpus = corpus
        self.fallback_share: float | None = share
        """Share of a model-driven chunker's windows split by its fallback."""
        self._index: tuple[UnitMap, ChunkIndex] | None = None

    def __len__(self) -> int:
        return int(self.doc.size)

    def _columns(self) -> zip[tuple[int, int, int]]:
        return zip(
            self.doc.tolist(),
            self.bounds[:, 0].tolist(),
            self.bounds[:, 1].tolist(),
            strict=True,
        )

    def texts(self) -> list[str]:
        texts = [d.text for d in self.corpus]
        return [texts[d][s:e] for d, s, e in self._columns()]

    def spans(self) -> list[SpanTuple]:
        ids = self.corpus.ids
        return [(ids[d], s, e) for d, s, e in self._columns()]

    def digest(self) -> str:
        h = hashlib.sha256(self.corpus.content_hash.encode())
        h.update(self.doc.tobytes())
        h.update(self.bounds.tobytes())
        return h.hexdigest()

    def index(self, units: UnitMap) -> ChunkIndex:
        """The chunks on ``units``' axis (kept for the last map asked: an
        evaluation asks three times)."""
        kept = self._index
        if kept is not None and kept[0] is units:
            return kept[1]
        index = ChunkIndex(units, self.doc, self.bounds[:, 0], self.bounds[:, 1])
        self._index = (units, index)
        return index


def _kept(hits: npt.NDArray[np.int64], per_query_k: npt.NDArray[np.int64]) -> Any:
    """(query, row) of the hits within each query's depth, in rank order."""
    keep = (np.arange(hits.shape[1])[None, :] < per_query_k[:, None]) & (hits >= 0)
    rows, cols = np.nonzero(keep)
    return rows.astype(np.int64), hits[rows, cols]


def spans_of(
    hits: npt.NDArray[np.int64], per_query_k: npt.NDArray[np.int64], chunking: Chunking
) -> QuerySpans:
    rows, ids = _kept(hits, per_query_k)
    return QuerySpans(
        rows, chunking.doc[ids], chunking.bounds[ids, 0], chunking.bounds[ids, 1]
    )


def retrieval_stages(
    stages: Mapping[str, npt.NDArray[np.int64]],
    per_query_k: npt.NDArray[np.int64],
    chunking: Chunking,
    units: UnitMap,
    excerpts: QuerySpans,
    n_queries: int,
    copies: ExcerptCopies | None = None,
) -> dict[str, StageResult]:
    """Recall of each earlier stage over its whole list and over its first k, and
    the best any k of its rows reach (what a later stage choosing k could reach)."""
    out = {}
    for name, hits in stages.items():
        depth = np.full(n_queries, hits.shape[1], dtype=np.int64)
        spans = spans_of(hits, depth, chunking)
        out[name] = stage_result(
            name,
            int(hits.shape[1]),
            units,
            excerpts,
            spans,
            spans_of(hits, per_query_k, chunking),
            per_query_k,
            n_queries,
            copies,
        )
    return out


def stage_result(
    name: str,
    depth: int,
    units: UnitMap,
    excerpts: QuerySpans,
    pool: QuerySpans,
    first_k: QuerySpans,
    k: npt.NDArray[np.int64],
    n_queries: int,
    copies: ExcerptCopies | None = None,
) -> StageResult:
    """An earlier stage's pool: its recall, its first k's, and C_k over the pool
    (each list chooses its excerpts' copies for itself, docs/concepts.md)."""
    whole = score_queries(units, excerpts, pool, n_queries, copies=copies)
    at_k = score_queries(units, excerpts, first_k, n_queries, copies=copies)
    ids = units.doc_ids
    per_query: list[list[SpanTuple]] = [[] for _ in range(n_queries)]
    for q, d, s, e in zip(
        pool.query.tolist(),
        pool.doc.tolist(),
        pool.start.tolist(),
        pool.end.tolist(),
        strict=True,
    ):
        per_query[q].append((ids[d], s, e))
    return StageResult(
        name,
        depth,
        describe(whole.metric("recall")),
        describe(at_k.metric("recall")),
        tuple(tuple(p) for p in per_query),
        ceiling=describe(
            pool_ceiling(units, excerpts, pool, n_queries, k, copies=copies)
        ),
    )


def budget_ranks(chunk_units: npt.NDArray[np.int64], budget: int) -> int:
    """Ranks to fetch so that every query's list passes ``budget``: any ``n`` chunks
    hold at least as many units as the ``n`` smallest, so the first ``n`` whose
    smallest sum exceeds the budget always do (or all chunks, if none)."""
    total = np.cumsum(np.sort(chunk_units))
    return min(int(np.searchsorted(total, budget, side="right")) + 1, total.size)


def excerpt_spans(queries: QuerySet, units: UnitMap) -> QuerySpans:
    return QuerySpans.from_lists(
        [[(e.doc_id, e.start, e.end) for e in q.excerpts] for q in queries], units
    )
