"""Token-level retrieval metrics for many queries at once (SPEC §3-4, §9).

All arithmetic runs on unit intervals of one global axis (see ``units.py``) with
numpy: sorting, ``searchsorted`` and prefix sums, never a per-query scan of all chunks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.core.intervals import IntervalUnion, runs, unique
from pytest_chunkeval.core.metric_names import (
    JUDGED,
    PRESENCE,
    RANK,
    RELATIONSHIP,
    names,
)
from pytest_chunkeval.core.ranking import budget_prefix, max_coverage, rank_scores
from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.core.units import UnitMap

FloatArray = npt.NDArray[np.float64]

PRESENCE_METRICS: tuple[str, ...] = names(PRESENCE)
"""SPEC §3: recall, precision, iou, f1, precision_omega (baselines and the gate)."""
RANK_METRICS: tuple[str, ...] = names(RANK)
"""SPEC §9: rank-aware (mrr, ndcg), whole evidence (complete), the chunking's best
(ceiling). ``ndcg`` and ``ceiling`` need a chunking (NaN for a whole retriever)."""
METRICS: tuple[str, ...] = PRESENCE_METRICS + RANK_METRICS
"""Every per-query metric of a chunk evaluation, in table order."""
JUDGED_METRICS: tuple[str, ...] = names(JUDGED)
REL_METRICS: tuple[str, ...] = names(RELATIONSHIP)
"""Relationship retrieval (SPEC §11, ``graph/``): named apart from the chunk
metrics; stored in a query record's ``scores``."""
"""Reference-free, from a judge's spans (SPEC §10); see ``judging/``. Measured
only when a judge runs; stored in a query record's ``scores``."""


def _ints(values: Any) -> IntArray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


@dataclass(frozen=True)
class QuerySpans:
    """Character spans grouped by query: row ``i`` is a span of query ``query[i]``.

    Rows of one query keep their order (the rank order for retrieved chunks).
    """

    query: IntArray
    doc: IntArray
    start: IntArray
    end: IntArray

    @classmethod
    def from_lists(
        cls, per_query: Sequence[Sequence[tuple[str, int, int]]], units: UnitMap
    ) -> QuerySpans:
        """From one list of ``(doc_id, start, end)`` per query."""
        sizes = [len(spans) for spans in per_query]
        flat = [span for spans in per_query for span in spans]
        query = np.repeat(np.arange(len(per_query), dtype=np.int64), sizes)
        doc = units.doc_indices([s[0] for s in flat])
        start = _ints([s[1] for s in flat])
        end = _ints([s[2] for s in flat])
        return cls(query, doc, start, end)

    def __len__(self) -> int:
        return int(self.query.size)

    def rank(self) -> IntArray:
        """0-based position of each row within its query."""
        if self.query.size == 0:
            return np.empty(0, dtype=np.int64)
        first = np.r_[True, self.query[1:] != self.query[:-1]]
        starts = np.flatnonzero(first)
        run = np.repeat(starts, np.diff(np.r_[starts, self.query.size]))
        return np.arange(self.query.size, dtype=np.int64) - run


def _columns(spans: QuerySpans) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    return spans.query, spans.doc, spans.start, spans.end


class ChunkIndex:
    """The chunks of one chunking, as sorted unit intervals, for overlap look-ups."""

    def __init__(
        self, units: UnitMap, doc: IntArray, start: IntArray, end: IntArray
    ) -> None:
        lo, hi = units.to_units(_ints(doc), _ints(start), _ints(end))
        self.unit_lo, self.unit_hi = lo, hi  # by chunk id (the caller's order)
        self.chunk_id = np.flatnonzero(hi > lo)
        order = np.lexsort((hi[self.chunk_id], lo[self.chunk_id]))
        self.chunk_id = self.chunk_id[order]
        self.lo = lo[self.chunk_id]
        self.hi = hi[self.chunk_id]
        self.size = int(lo.size)
        # Sequential chunkers give ends that rise with starts: then the chunks meeting
        # an interval are one contiguous run found by two binary searches.
        self._monotone = bool(np.all(self.hi[1:] >= self.hi[:-1]))

    def overlapping(self, lo: IntArray, hi: IntArray) -> tuple[IntArray, IntArray]:
        """Pairs ``(row, chunk)``: the chunk overlaps interval ``row`` by >= 1 unit."""
        if self._monotone:
            first = np.searchsorted(self.hi, lo, side="right")
            stop = np.searchsorted(self.lo, hi, side="left")
            counts = np.clip(stop - first, 0, None)
            counts[hi <= lo] = 0
            rows = np.repeat(np.arange(lo.size, dtype=np.int64), counts)
            offsets = np.arange(rows.size, dtype=np.int64) - np.repeat(
                np.cumsum(counts) - counts, counts
            )
            positions = np.repeat(first, counts) + offsets
        else:
            row_parts, pos_parts = [], []
            for row, (a, b) in enumerate(zip(lo.tolist(), hi.tolist(), strict=True)):
                end = int(np.searchsorted(self.lo, b, side="left")) if b > a else 0
                hit = np.flatnonzero(self.hi[:end] > a)
                row_parts.append(np.full(hit.size, row, dtype=np.int64))
                pos_parts.append(hit)
            rows = np.concatenate(row_parts) if row_parts else np.zeros(0, np.int64)
            positions = (
                np.concatenate(pos_parts) if pos_parts else np.zeros(0, np.int64)
            )
        return rows, self.chunk_id[positions]

    def omega(self, units: UnitMap, excerpts: QuerySpans) -> tuple[IntArray, IntArray]:
        """Distinct ``(query, chunk)`` pairs: chunks overlapping a query's excerpts."""
        lo, hi = units.to_units(excerpts.doc, excerpts.start, excerpts.end)
        rows, chunks = self.overlapping(lo, hi)
        key = unique(excerpts.query[rows] * max(self.size, 1) + chunks)
        return key // max(self.size, 1), key % max(self.size, 1)

    def omega_counts(
        self, units: UnitMap, excerpts: QuerySpans, n_queries: int
    ) -> IntArray:
        """Per query, how many chunks overlap its excerpts (``k="min"``, SPEC §5)."""
        query, _ = self.omega(units, excerpts)
        return np.bincount(query, minlength=n_queries).astype(np.int64)


@dataclass(frozen=True)
class QueryScores:
    """Per-query metric values and counts, in query order."""

    recall: FloatArray
    precision: FloatArray
    iou: FloatArray
    f1: FloatArray
    precision_omega: FloatArray  # NaN when no chunking was given
    mrr: FloatArray  # over the first d ranks
    ndcg: FloatArray  # over the first d ranks; NaN when no chunking was given
    complete: FloatArray  # 1.0 when TP = |te|, else 0.0
    ceiling: FloatArray  # C_d: NaN when no chunking was given
    excerpt_units: IntArray  # |te|
    retrieved_units: IntArray  # |tr|, the sum over retrieved chunks
    true_positive_units: IntArray  # TP
    n_retrieved: IntArray
    first_relevant_rank: IntArray  # 1-based; 0 when nothing relevant was retrieved
    omega_chunks: IntArray  # chunks overlapping the excerpts (0 when no chunking)
    excerpt_coverage: FloatArray  # per excerpt row: share of its units retrieved
    depth_recall: FloatArray  # recall of the first d ranks (= recall without budget)
    over_budget: npt.NDArray[np.bool_]  # the first chunk alone exceeded the budget
    kept: npt.NDArray[np.bool_]  # per retrieved row: inside the budget (all without)

    def metric(self, name: str) -> FloatArray:
        """The per-query values of metric ``name`` (one of ``METRICS``)."""
        if name not in PRESENCE_METRICS + RANK_METRICS:
            known = ", ".join(PRESENCE_METRICS + RANK_METRICS)
            raise KeyError(f"unknown metric {name!r}; expected one of {known}")
        values: FloatArray = getattr(self, name)
        return values

    def __len__(self) -> int:
        return int(self.recall.size)


def pool_ceiling(
    units: UnitMap,
    excerpts: QuerySpans,
    pool: QuerySpans,
    n_queries: int,
    depth: IntArray,
) -> FloatArray:
    """Per query, the best recall any ``depth[q]`` of its ``pool`` spans reach together
    (``C_d`` over the pool): what a reranker choosing from the pool could reach."""
    band = units.total_units + 1
    e_lo, e_hi = units.to_units(excerpts.doc, excerpts.start, excerpts.end)
    te_union = IntervalUnion(excerpts.query, e_lo, e_hi, band)
    te = te_union.group_lengths(n_queries)
    lo, hi = units.to_units(pool.doc, pool.start, pool.end)
    useful = te_union.covered(pool.query, lo, hi) > 0
    d_max = int(depth.max()) if depth.size else 0
    cover = max_coverage(
        te_union, pool.query[useful], lo[useful], hi[useful], n_queries, d_max
    )
    return _ratio(cover[np.arange(n_queries), np.minimum(depth, d_max)], te)


def _ratio(num: Any, den: Any) -> FloatArray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out: FloatArray = np.zeros_like(num)
    np.divide(num, den, out=out, where=den > 0)
    return out


def score_queries(
    units: UnitMap,
    excerpts: QuerySpans,
    retrieved: QuerySpans,
    n_queries: int,
    chunks: ChunkIndex | None = None,
    *,
    depth: IntArray | None = None,
    budget: int | None = None,
) -> QueryScores:
    """Score every query: recall, precision, IoU, F1, precision Ω (SPEC §3), and
    mrr, ndcg, complete, ceiling (§9).

    ``depth`` (per query; default: all retrieved ranks) is ``d`` for mrr, ndcg and
    ceiling. With a ``budget`` (units), the §3 metrics and ``complete`` read each
    query's longest rank prefix whose summed length fits; mrr, ndcg and ceiling
    ignore it.
    """
    band = units.total_units + 1
    e_lo, e_hi = units.to_units(excerpts.doc, excerpts.start, excerpts.end)
    r_lo, r_hi = units.to_units(retrieved.doc, retrieved.start, retrieved.end)
    full_query, full_lo, full_hi = retrieved.query, r_lo, r_hi
    if depth is None:
        depth = np.bincount(retrieved.query, minlength=n_queries).astype(np.int64)
    over_budget = np.zeros(n_queries, dtype=bool)
    kept = np.ones(len(retrieved), dtype=bool)
    if budget is not None:
        kept = budget_prefix(retrieved.query, r_hi - r_lo, budget)
        over_budget[retrieved.query] = True
        over_budget[retrieved.query[kept]] = False
        retrieved = QuerySpans(*(a[kept] for a in _columns(retrieved)))
        r_lo, r_hi = r_lo[kept], r_hi[kept]

    te_union = IntervalUnion(excerpts.query, e_lo, e_hi, band)
    tr_union = IntervalUnion(retrieved.query, r_lo, r_hi, band)
    te = te_union.group_lengths(n_queries)
    tr = np.bincount(retrieved.query, weights=r_hi - r_lo, minlength=n_queries).astype(
        np.int64
    )
    tp = te_union.intersection_lengths(tr_union, n_queries)

    coverage = _ratio(tr_union.covered(excerpts.query, e_lo, e_hi), e_hi - e_lo)
    relevant = te_union.covered(retrieved.query, r_lo, r_hi) > 0
    first_rank = np.zeros(n_queries, dtype=np.int64)
    hit_query, first_row, _ = runs(retrieved.query[relevant])
    first_rank[hit_query] = retrieved.rank()[relevant][first_row] + 1

    candidates = None
    if chunks is not None:
        o_query, o_chunk = chunks.omega(units, excerpts)
        candidates = (o_query, chunks.unit_lo[o_chunk], chunks.unit_hi[o_chunk])
        omega_union = IntervalUnion(
            o_query, chunks.unit_lo[o_chunk], chunks.unit_hi[o_chunk], band
        )
        inter = te_union.intersection_lengths(omega_union, n_queries)
        union = te + omega_union.group_lengths(n_queries) - inter
        precision_omega = _ratio(inter, union)
        omega_count = np.bincount(o_query, minlength=n_queries).astype(np.int64)
    else:
        precision_omega = np.full(n_queries, np.nan)
        omega_count = np.zeros(n_queries, dtype=np.int64)
    ranked = rank_scores(te_union, te, full_query, full_lo, full_hi, depth, candidates)

    return QueryScores(
        recall=_ratio(tp, te),
        precision=_ratio(tp, tr),
        iou=_ratio(tp, te + tr - tp),
        f1=_ratio(2 * tp, te + tr),
        precision_omega=precision_omega,
        mrr=ranked.mrr,
        ndcg=ranked.ndcg,
        complete=((tp == te) & (te > 0)).astype(np.float64),
        ceiling=ranked.ceiling,
        excerpt_units=te,
        retrieved_units=tr,
        true_positive_units=tp,
        n_retrieved=np.bincount(retrieved.query, minlength=n_queries).astype(np.int64),
        first_relevant_rank=first_rank,
        omega_chunks=omega_count,
        excerpt_coverage=coverage,
        depth_recall=_ratio(ranked.depth_true_positive_units, te),
        over_budget=over_budget,
        kept=kept,
    )


@dataclass(frozen=True)
class MetricStats:
    """Mean and population standard deviation of one metric over queries."""

    mean: float
    std: float
    n: int


def describe(values: FloatArray) -> MetricStats:
    """Mean and population std (``ddof=0``), NaN-free values only."""
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return MetricStats(float("nan"), float("nan"), 0)
    return MetricStats(float(finite.mean()), float(finite.std()), int(finite.size))


def without_ground_truth(scores: QueryScores, has_excerpts: Any) -> QueryScores:
    """``scores`` with the §3 and §9 metrics absent (NaN, never 0) for the queries
    that have no excerpts (a question set for judged metrics, SPEC §7)."""
    absent = ~np.asarray(has_excerpts, dtype=bool)
    if not absent.any():
        return scores

    def masked(values: FloatArray) -> FloatArray:
        out = values.astype(np.float64, copy=True)
        out[absent] = np.nan
        return out

    return replace(
        scores,
        recall=masked(scores.recall),
        precision=masked(scores.precision),
        iou=masked(scores.iou),
        f1=masked(scores.f1),
        precision_omega=masked(scores.precision_omega),
        mrr=masked(scores.mrr),
        ndcg=masked(scores.ndcg),
        complete=masked(scores.complete),
        ceiling=masked(scores.ceiling),
        depth_recall=masked(scores.depth_recall),
    )


def summarize(
    scores: QueryScores,
    groups: Sequence[str] | None = None,
    judged: Mapping[str, FloatArray] | None = None,
    metrics: Sequence[str] = METRICS,
) -> tuple[dict[str, MetricStats], dict[str, dict[str, MetricStats]]]:
    """Overall stats per metric, and per group (e.g. the query's corpus document).

    ``metrics`` are read from ``scores``; ``judged`` holds the per-query values of
    the judged metrics (NaN where a judgment is missing); without it they are not
    measured and left out."""
    names = tuple(metrics) + (JUDGED_METRICS if judged is not None else ())

    def values(m: str) -> FloatArray:
        if m in metrics:
            return scores.metric(m)
        assert judged is not None
        return np.asarray(judged[m], dtype=np.float64)

    overall = {m: describe(values(m)) for m in names}
    by_group: dict[str, dict[str, MetricStats]] = {}
    if groups is not None:
        labels = np.asarray(groups)
        for g in sorted(set(groups)):
            mask = labels == g
            by_group[g] = {m: describe(values(m)[mask]) for m in names}
    return overall, by_group
