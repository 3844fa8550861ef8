"""Token-level retrieval metrics for many queries at once (docs/metrics.md).

All arithmetic runs on unit intervals of one global axis (see ``units.py``) with
numpy: sorting, ``searchsorted`` and prefix sums, never a per-query scan of all chunks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.core.chunk_index import ChunkIndex as ChunkIndex
from pytest_chunkeval.core.chunk_index import chunking_terms
from pytest_chunkeval.core.copies import ExcerptCopies, choose
from pytest_chunkeval.core.intervals import IntervalUnion, runs
from pytest_chunkeval.core.metric_names import (
    JUDGED,
    PRESENCE,
    RANK,
    RELATIONSHIP,
    names,
)
from pytest_chunkeval.core.query_spans import QuerySpans as QuerySpans
from pytest_chunkeval.core.query_spans import columns
from pytest_chunkeval.core.ranking import (
    RankScores,
    budget_prefix,
    max_coverage,
    rank_scores,
)
from pytest_chunkeval.core.shared import shared_intervals
from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.core.units import UnitMap

FloatArray = npt.NDArray[np.float64]

PRESENCE_METRICS: tuple[str, ...] = names(PRESENCE)
"""docs/concepts.md#the-metrics-of-one-query: recall, precision, iou, f1,
precision_omega (baselines and the gate)."""
RANK_METRICS: tuple[str, ...] = names(RANK)
"""docs/metrics.md: rank-aware (mrr, ndcg), whole evidence (complete), the chunking's
best (ceiling). ``ndcg`` and ``ceiling`` need a chunking (NaN for a whole retriever)."""
METRICS: tuple[str, ...] = PRESENCE_METRICS + RANK_METRICS
"""Every per-query metric of a chunk evaluation, in table order."""
JUDGED_METRICS: tuple[str, ...] = names(JUDGED)
"""Reference-free, from a judge's spans (docs/judged.md#the-two-measures); see
``judging/``. Measured only when a judge runs; stored in a query record's ``scores``."""
REL_METRICS: tuple[str, ...] = names(RELATIONSHIP)
"""Relationship retrieval (docs/relationships.md#the-method, ``relationships/``): named
apart from the chunk metrics; stored in a query record's ``scores``."""


@dataclass(frozen=True)
class QueryScores:
    """Per-query metric values and counts, in query order."""

    values: Mapping[str, FloatArray]
    """Per metric of :data:`METRICS`, by name, each query's value: NaN where it is
    undefined (``precision_omega``, ``ndcg`` and ``ceiling`` without a chunking)."""
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
    chosen: QuerySpans  # per stored excerpt row: the span scored (docs/concepts.md)

    def metric(self, name: str) -> FloatArray:
        """The per-query values of metric ``name`` (one of ``METRICS``)."""
        if name not in self.values:
            known = ", ".join(METRICS)
            raise KeyError(f"unknown metric {name!r}; expected one of {known}")
        return self.values[name]

    def __len__(self) -> int:
        return int(self.excerpt_units.size)


def pool_ceiling(
    units: UnitMap,
    excerpts: QuerySpans,
    pool: QuerySpans,
    n_queries: int,
    depth: IntArray,
    *,
    copies: ExcerptCopies | None = None,
) -> FloatArray:
    """Per query, the best recall any ``depth[q]`` of its ``pool`` spans reach together
    (``C_d`` over the pool): what a reranker choosing from the pool could reach
    (with ``copies``, at the excerpts' copies the pool reaches best)."""
    band = units.total_units + 1
    if copies is not None:
        excerpts = choose(units, copies, pool, pool.rank())
    e_lo, e_hi = units.to_units(excerpts.doc, excerpts.start, excerpts.end)
    te_union = IntervalUnion(excerpts.query, e_lo, e_hi, band)
    te = te_union.group_lengths(n_queries)
    lo, hi = _shared(units, excerpts, pool)
    useful = te_union.covered(pool.query, lo, hi) > 0
    d_max = int(depth.max()) if depth.size else 0
    cover = max_coverage(
        te_union, pool.query[useful], lo[useful], hi[useful], n_queries, d_max
    )
    return _ratio(cover[np.arange(n_queries), np.minimum(depth, d_max)], te)


def _shared(
    units: UnitMap, excerpts: QuerySpans, spans: QuerySpans
) -> tuple[IntArray, IntArray]:
    """Unit intervals of ``spans`` trimmed to what they share with their query's
    excerpts (``core/shared.py``)."""
    lo, hi = units.to_units(spans.doc, spans.start, spans.end)
    return shared_intervals(units, excerpts, spans, lo, hi)


def _ratio(num: Any, den: Any) -> FloatArray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out: FloatArray = np.zeros_like(num)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _chosen_copies(
    units: UnitMap,
    copies: ExcerptCopies,
    retrieved: QuerySpans,
    kept: npt.NDArray[np.bool_],
    depth: IntArray,
) -> QuerySpans:
    """Each excerpt at its best occurrence against the scored ranks: the budget
    prefix (``kept``) and the first ``depth`` ranks."""
    rank = retrieved.rank()
    scored = kept | (rank < depth[retrieved.query])
    picked = QuerySpans(*(a[scored] for a in columns(retrieved)))
    return choose(units, copies, picked, rank[scored])


def _first_relevant_rank(
    te_union: IntervalUnion,
    retrieved: QuerySpans,
    s_lo: IntArray,
    s_hi: IntArray,
    n_queries: int,
) -> IntArray:
    """Per query, the 1-based rank of the first chunk sharing units with an
    excerpt; 0 when none does."""
    relevant = te_union.covered(retrieved.query, s_lo, s_hi) > 0
    first_rank = np.zeros(n_queries, dtype=np.int64)
    hit_query, first_row, _ = runs(retrieved.query[relevant])
    first_rank[hit_query] = retrieved.rank()[relevant][first_row] + 1
    return first_rank


def _formulas(
    tp: IntArray,
    te: IntArray,
    tr: IntArray,
    precision_omega: FloatArray,
    ranked: RankScores,
) -> dict[str, FloatArray]:
    """Each chunk metric of the table (core/metric_names.py) by name, per query,
    from the unit counts (true positives, excerpt and retrieved units), precision
    Ω of the chunking and the rank-aware terms (core/ranking.py): adding a metric
    is its row there and its formula here."""
    return {
        "recall": _ratio(tp, te),
        "precision": _ratio(tp, tr),
        "iou": _ratio(tp, te + tr - tp),
        "f1": _ratio(2 * tp, te + tr),
        "precision_omega": precision_omega,
        "mrr": ranked.mrr,
        "ndcg": ranked.ndcg,
        "complete": ((tp == te) & (te > 0)).astype(np.float64),
        "ceiling": ranked.ceiling,
    }


def score_queries(
    units: UnitMap,
    excerpts: QuerySpans,
    retrieved: QuerySpans,
    n_queries: int,
    chunks: ChunkIndex | None = None,
    *,
    depth: IntArray | None = None,
    budget: int | None = None,
    copies: ExcerptCopies | None = None,
) -> QueryScores:
    """Score every query: recall, precision, IoU, F1, precision Ω, and mrr, ndcg,
    complete, ceiling (docs/concepts.md, docs/metrics.md), on the units of the
    characters excerpts and chunks share. ``depth`` (per query; default: every
    rank) is ``d`` for mrr, ndcg and ceiling; a ``budget`` (units) keeps each
    query's longest rank prefix that fits for the presence metrics and complete.
    ``copies``: each excerpt is scored at its best occurrence against the scored
    ranks (docs/concepts.md, "Identical text"); precision Ω keeps stored spans.
    """
    band = units.total_units + 1
    r_lo, r_hi = units.to_units(retrieved.doc, retrieved.start, retrieved.end)
    if depth is None:
        depth = np.bincount(retrieved.query, minlength=n_queries).astype(np.int64)
    kept = np.ones(len(retrieved), dtype=bool)
    if budget is not None:
        kept = budget_prefix(retrieved.query, r_hi - r_lo, budget)
    stored = excerpts
    if copies is not None:
        excerpts = _chosen_copies(units, copies, retrieved, kept, depth)
    e_lo, e_hi = units.to_units(excerpts.doc, excerpts.start, excerpts.end)
    s_lo, s_hi = shared_intervals(units, excerpts, retrieved, r_lo, r_hi)
    full_query, full_lo, full_hi = retrieved.query, s_lo, s_hi
    over_budget = np.zeros(n_queries, dtype=bool)
    if budget is not None:
        over_budget[retrieved.query] = True
        over_budget[retrieved.query[kept]] = False
        retrieved = QuerySpans(*(a[kept] for a in columns(retrieved)))
        r_lo, r_hi, s_lo, s_hi = r_lo[kept], r_hi[kept], s_lo[kept], s_hi[kept]
    te_union = IntervalUnion(excerpts.query, e_lo, e_hi, band)
    tr_union = IntervalUnion(retrieved.query, s_lo, s_hi, band)  # shared units only
    te = te_union.group_lengths(n_queries)
    tr = np.bincount(retrieved.query, r_hi - r_lo, n_queries).astype(np.int64)
    tp = te_union.intersection_lengths(tr_union, n_queries)

    coverage = _ratio(tr_union.covered(excerpts.query, e_lo, e_hi), e_hi - e_lo)
    first_rank = _first_relevant_rank(te_union, retrieved, s_lo, s_hi, n_queries)
    candidates = None
    precision_omega = np.full(n_queries, np.nan)
    omega_count = np.zeros(n_queries, dtype=np.int64)
    if chunks is not None:
        candidates, precision_omega, omega_count = chunking_terms(
            units, chunks, stored, excerpts, copies, te_union, n_queries
        )
    ranked = rank_scores(te_union, te, full_query, full_lo, full_hi, depth, candidates)
    if copies is not None:  # back to one row per stored excerpt
        coverage = coverage[copies.group]
        excerpts = QuerySpans(*(a[copies.group] for a in columns(excerpts)))

    return QueryScores(
        values=_formulas(tp, te, tr, precision_omega, ranked),
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
        chosen=excerpts,
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
    """``scores`` with the presence and rank metrics absent (NaN, never 0) for the
    queries that have no excerpts (a question set for judged metrics,
    docs/judged.md#the-two-measures)."""
    absent = ~np.asarray(has_excerpts, dtype=bool)
    if not absent.any():
        return scores

    def masked(values: FloatArray) -> FloatArray:
        out = values.astype(np.float64, copy=True)
        out[absent] = np.nan
        return out

    return replace(
        scores,
        values={m: masked(v) for m, v in scores.values.items()},
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
