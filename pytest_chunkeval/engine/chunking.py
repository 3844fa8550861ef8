"""What retrieval is scored on: a corpus' unit axis (:func:`unit_map`), all its
chunks under one chunker (:class:`Chunking`), and the spans and recall of each
retrieval stage (:func:`stage_result`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.chunkers import (
    Chunker,
    ChunkerError,
    check_pieces,
    validate_chunks,
)
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
from pytest_chunkeval.engine.results import SpanTuple, StageResult
from pytest_chunkeval.tokenizers.base import Tokenizer
from pytest_chunkeval.util.progress import progress_phase

_UNIT_MAPS: dict[tuple[str, str, str], UnitMap] = {}
_UNIT_MAPS_KEPT = 8


def unit_map(corpus: Corpus, unit: str, tokenizer: Tokenizer | None) -> UnitMap:
    """The corpus' unit axis; each document is tokenized once per process (for the
    few most recently used corpora)."""
    name = tokenizer.name if tokenizer is not None and unit == "token" else ""
    key = (corpus.content_hash, unit, name)
    found = _UNIT_MAPS.pop(key, None)
    if found is None:
        found = UnitMap(corpus.ids, [d.text for d in corpus], unit, tokenizer)
    _UNIT_MAPS[key] = found  # most recent last
    while len(_UNIT_MAPS) > _UNIT_MAPS_KEPT:
        del _UNIT_MAPS[next(iter(_UNIT_MAPS))]
    return found


class Chunking:
    """All chunks of a corpus under one chunker, as spans in corpus order."""

    def __init__(self, chunker: Chunker, corpus: Corpus) -> None:
        docs, bounds = [], []
        take_fallbacks = getattr(chunker, "take_fallbacks", None)
        if callable(take_fallbacks):
            take_fallbacks()  # count this chunking's windows only
        for i, doc in enumerate(corpus):
            place = f"chunking {doc.id} ({i + 1} of {len(corpus)}) with {chunker.name}"
            try:
                with progress_phase(place):
                    found = check_pieces(chunker.chunk_spans(doc.text), chunker.name)
                spans = np.asarray(found, dtype=np.int64)
            except ChunkerError as exc:
                raise ChunkerError(f"document {doc.id!r}: {exc}") from exc
            spans = spans.reshape(-1, 2)
            validate_chunks(doc.text, spans, chunker=chunker.name, doc_id=doc.id)
            docs.append(np.full(spans.shape[0], i, dtype=np.int64))
            bounds.append(spans)
        self.doc = np.concatenate(docs) if docs else np.zeros(0, np.int64)
        self.bounds = np.concatenate(bounds) if bounds else np.zeros((0, 2), np.int64)
        self.corpus = corpus
        self.fallback_share: float | None = None
        """Share of a model-driven chunker's windows split by its fallback."""
        if callable(take_fallbacks):
            fell_back, windows = take_fallbacks()
            if windows and fell_back == windows:
                raise ChunkerError(
                    f"chunker {chunker.name!r}: the model gave no usable answer for "
                    f"any of the {windows} window(s), so every chunk would come from "
                    "the fallback split, not from the model (is it the right model, "
                    "a chat endpoint? see the LLMChunkerFallbackWarning messages)"
                )
            if fell_back:
                self.fallback_share = fell_back / windows

    def __len__(self) -> int:
        return int(self.doc.size)

    def texts(self) -> list[str]:
        texts = [d.text for d in self.corpus]
        return [
            texts[d][s:e]
            for d, (s, e) in zip(self.doc.tolist(), self.bounds.tolist(), strict=True)
        ]

    def spans(self) -> list[SpanTuple]:
        ids = self.corpus.ids
        return [
            (ids[d], s, e)
            for d, (s, e) in zip(self.doc.tolist(), self.bounds.tolist(), strict=True)
        ]

    def digest(self) -> str:
        h = hashlib.sha256(self.corpus.content_hash.encode())
        h.update(self.doc.tobytes())
        h.update(self.bounds.tobytes())
        return h.hexdigest()

    def index(self, units: UnitMap) -> ChunkIndex:
        return ChunkIndex(units, self.doc, self.bounds[:, 0], self.bounds[:, 1])


def _kept(hits: npt.NDArray[np.int64], per_query_k: npt.NDArray[np.int64]) -> Any:
    """(query, row) of the hits within each query's depth, in rank order."""
    keep = (np.arange(hits.shape[1])[None, :] < per_query_k[:, None]) & (hits >= 0)
    rows, cols = np.nonzero(keep)
    return rows.astype(np.int64), hits[rows, cols]


def _spans_of(
    hits: npt.NDArray[np.int64], per_query_k: npt.NDArray[np.int64], chunking: Chunking
) -> QuerySpans:
    rows, ids = _kept(hits, per_query_k)
    return QuerySpans(
        rows, chunking.doc[ids], chunking.bounds[ids, 0], chunking.bounds[ids, 1]
    )


def _stages(
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
        spans = _spans_of(hits, depth, chunking)
        out[name] = stage_result(
            name,
            int(hits.shape[1]),
            units,
            excerpts,
            spans,
            _spans_of(hits, per_query_k, chunking),
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
        describe(whole.recall),
        describe(at_k.recall),
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


def _excerpt_spans(queries: QuerySet, units: UnitMap) -> QuerySpans:
    return QuerySpans.from_lists([[e.span for e in q.excerpts] for q in queries], units)
