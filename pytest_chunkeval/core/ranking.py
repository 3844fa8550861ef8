"""Rank- and budget-aware metrics for many queries at once (docs/metrics.md), and
the tie rule every store and fusion orders its rows by (docs/baselines.md, "Ties").

``mrr``, ``ndcg`` and ``ceiling`` read the first ``d`` ranks of each query's list;
the gains, the ideal curve ``C_j`` and the budget prefix are computed with numpy on
the banded unit axis of ``intervals.py``. ``C_j`` is an exact maximum coverage: a
sort for the queries whose candidate chunks do not overlap, a small dynamic program
(vectorized over queries of similar size) for the others.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.core.intervals import IntervalUnion, runs, unique
from pytest_chunkeval.core.spans import IntArray

FloatArray = npt.NDArray[np.float64]


def content_ties(
    texts: Sequence[str], starts: IntArray | None = None, ends: IntArray | None = None
) -> IntArray:
    """Each chunk's tie key: its place in the content order (docs/baselines.md,
    "Ties").

    The content order sorts chunks by a hash of their text, then by their
    ``(start, end)`` offsets in their document; never by the document's name or
    place in the corpus, so renaming or reordering files changes no ranking.
    Chunks equal in text and offsets (copies of a document) score the same and
    keep corpus order among themselves. The keys are ``0..n-1``, one per chunk.
    """
    n = len(texts)
    digests = np.fromiter(
        (
            int.from_bytes(
                hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest(), "big"
            )
            for t in texts
        ),
        dtype=np.uint64,
        count=n,
    )
    zero = np.zeros(n, dtype=np.int64)
    lo = zero if starts is None else np.asarray(starts, dtype=np.int64)
    hi = zero if ends is None else np.asarray(ends, dtype=np.int64)
    order = np.lexsort((np.arange(n), hi, lo, digests))
    keys = np.empty(n, dtype=np.int64)
    keys[order] = np.arange(n, dtype=np.int64)
    return keys


def best_first(
    scores: npt.NDArray[np.floating], rows: IntArray, ties: IntArray | None
) -> IntArray:
    """The tie rule: per query (a row of ``scores``), the positions of its ``rows``
    best first (docs/baselines.md, "Ties").

    A higher score comes first; exactly equal scores go by the rows' tie keys
    (``ties[row]``, :func:`content_ties`; the row itself when ``ties`` is None);
    rows ``-1`` and NaN scores come last. Every store and fusion orders its rows
    with this function.
    """
    missing = (rows < 0) | np.isnan(scores)
    safe = np.where(rows >= 0, rows, 0)
    key = safe if ties is None else ties[safe]
    key = np.where(missing, np.iinfo(np.int64).max, key)
    # -0.0 and 0.0 compare equal in the sort, as they do as scores
    neg = np.where(missing, np.inf, -scores.astype(np.float64, copy=False))
    return np.lexsort((key, neg), axis=-1).astype(np.int64, copy=False)


def rank_in_group(group: IntArray) -> IntArray:
    """0-based position of each row within its run of equal ``group`` values."""
    if group.size == 0:
        return np.empty(0, dtype=np.int64)
    first = np.r_[True, group[1:] != group[:-1]]
    starts = np.flatnonzero(first)
    run = np.repeat(starts, np.diff(np.r_[starts, group.size]))
    return np.arange(group.size, dtype=np.int64) - run


def gains(te: IntervalUnion, query: IntArray, lo: IntArray, hi: IntArray) -> IntArray:
    """Units of ``te`` each row covers first (rows of a query in rank order).

    The rows' endpoints cut each query's stretch into elementary segments; a segment
    belongs to the first row that covers it, and its excerpt units go to that row.
    """
    band = te.band
    keep = np.flatnonzero(hi > lo)
    out = np.zeros(query.size, dtype=np.int64)
    if keep.size == 0:
        return out
    a = query[keep] * band + lo[keep]
    b = query[keep] * band + hi[keep]
    edges = unique(np.concatenate([a, b]))
    first_seg = np.searchsorted(edges, a)
    counts = np.searchsorted(edges, b) - first_seg
    owner = np.repeat(keep, counts)  # global row index, rising with rank
    offsets = np.arange(owner.size, dtype=np.int64) - np.repeat(
        np.cumsum(counts) - counts, counts
    )
    seg = np.repeat(first_seg, counts) + offsets
    order = np.argsort(seg, kind="stable")  # keeps rank order within a segment
    seg, owner = seg[order], owner[order]
    first = np.r_[True, seg[1:] != seg[:-1]]
    seg, owner = seg[first], owner[first]
    seg_query = edges[seg] // band
    base = seg_query * band
    units = te.covered(seg_query, edges[seg] - base, edges[seg + 1] - base)
    np.add.at(out, owner, units)
    return out


def first_hit_rank(query: IntArray, rank: IntArray, hit: IntArray, n: int) -> IntArray:
    """Per query, the 1-based rank of its first row with ``hit > 0`` (0: none)."""
    out = np.zeros(n, dtype=np.int64)
    rows = np.flatnonzero(hit > 0)
    q, first, _ = runs(query[rows])
    out[q] = rank[rows[first]] + 1
    return out


def _discount(depth: int) -> FloatArray:
    """``1 / log2(i + 1)`` for ranks ``i = 1..depth`` (index 0 is rank 1)."""
    return 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))


def max_coverage(
    te: IntervalUnion,
    query: IntArray,
    lo: IntArray,
    hi: IntArray,
    n_queries: int,
    depth: int,
) -> IntArray:
    """``C_j`` in units for ``j = 0..depth``: an ``(n_queries, depth + 1)`` array.

    ``query``/``lo``/``hi`` are each query's candidate chunks (those overlapping its
    excerpts). Where a query's candidates do not overlap one another, the best ``j``
    chunks are the ``j`` of largest overlap; otherwise a dynamic program finds the
    exact maximum coverage of ``j`` intervals on a line.
    """
    out = np.zeros((n_queries, depth + 1), dtype=np.int64)
    keep = hi > lo
    query, lo, hi = query[keep], lo[keep], hi[keep]
    if query.size == 0 or depth == 0:
        return out
    order = np.lexsort((hi, lo, query))
    query, lo, hi = query[order], lo[order], hi[order]
    weight = te.covered(query, lo, hi)
    same = query[1:] == query[:-1]
    clash = np.zeros(n_queries, dtype=bool)
    clash[query[1:][same & (lo[1:] < hi[:-1])]] = True
    simple = ~clash[query]
    _sorted_coverage(out, query[simple], weight[simple], depth)
    if clash.any():
        rows = ~simple
        _dp_coverage(out, te, query[rows], lo[rows], hi[rows], depth)
    return out


def _fill_prefix(
    out: IntArray, queries: IntArray, prefix: IntArray, sizes: IntArray, depth: int
) -> None:
    """``out[q, j] = prefix[q, min(j, size)]``: coverage stays flat past the chunks."""
    cols = np.minimum(np.arange(depth + 1)[None, :], sizes[:, None])
    out[queries] = np.take_along_axis(prefix, cols, axis=1)


def _sorted_coverage(
    out: IntArray, query: IntArray, weight: IntArray, depth: int
) -> None:
    if query.size == 0:
        return
    order = np.lexsort((-weight, query))
    query, weight = query[order], weight[order]
    rank = rank_in_group(query)
    top = rank < depth
    query, weight, rank = query[top], weight[top], rank[top]
    queries, _, sizes = runs(query)
    inverse = np.repeat(np.arange(queries.size), sizes)
    table = np.zeros((queries.size, depth + 1), dtype=np.int64)
    table[inverse, rank + 1] = weight
    _fill_prefix(out, queries, np.cumsum(table, axis=1), sizes, depth)


def _dp_coverage(
    out: IntArray,
    te: IntervalUnion,
    query: IntArray,
    lo: IntArray,
    hi: IntArray,
    depth: int,
) -> None:
    """Exact maximum coverage by ``j`` intervals, for queries with overlapping ones.

    With the chosen intervals sorted by right end and none nested in another (a
    nested one adds nothing and can be dropped), interval ``i`` adds exactly the
    excerpt units of ``[max(lo_i, hi_p), hi_i)``, ``p`` the previous choice; for any
    other choice that amount is a lower bound. So the best chain of ``j`` intervals
    under that gain is the best coverage of ``j`` intervals.
    """
    order = np.lexsort((lo, hi, query))  # by right end within each query
    query, lo, hi = query[order], lo[order], hi[order]
    pos = rank_in_group(query)
    queries, start, sizes = runs(query)
    # Queries of similar size share one padded array; a power-of-two bucket bounds
    # the padding at 2x.
    bucket = np.ceil(np.log2(sizes)).astype(np.int64)
    for b in np.unique(bucket).tolist():
        picked = np.flatnonzero(bucket == b)
        width = int(sizes[picked].max())
        n = picked.size
        rows = np.concatenate([start[i] + np.arange(sizes[i]) for i in picked.tolist()])
        slot = np.repeat(np.arange(n), sizes[picked])
        col = pos[rows]
        lo_m = np.zeros((n, width), dtype=np.int64)
        hi_m = np.zeros((n, width), dtype=np.int64)
        valid = np.zeros((n, width), dtype=bool)
        lo_m[slot, col], hi_m[slot, col], valid[slot, col] = lo[rows], hi[rows], True
        qs = np.broadcast_to(queries[picked][:, None, None], (n, width, width))
        # gain[s, p, i]: units interval i adds after interval p (p before i).
        a = np.maximum(lo_m[:, None, :], hi_m[:, :, None])
        bnd = np.broadcast_to(hi_m[:, None, :], (n, width, width))
        gain = te.covered(qs.ravel(), a.ravel(), bnd.ravel()).reshape(n, width, width)
        earlier = np.tri(width, k=-1, dtype=bool).T  # p < i
        pair_ok = earlier[None] & valid[:, :, None] & valid[:, None, :]
        first_gain = te.covered(
            np.repeat(queries[picked], width), lo_m.ravel(), hi_m.ravel()
        ).reshape(n, width)
        none = np.int64(-(1 << 62))
        best = np.where(valid, first_gain, none)  # chains of 1 ending at i
        table = np.zeros((n, depth + 1), dtype=np.int64)
        table[:, 1] = best.max(axis=1)
        steps = min(depth, width)
        for j in range(2, steps + 1):
            cand = np.where(pair_ok, best[:, :, None] + gain, none)
            best = cand.max(axis=1)
            table[:, j] = np.maximum(table[:, j - 1], best.max(axis=1))
        table[:, steps + 1 :] = table[:, steps : steps + 1]
        out[queries[picked]] = table


@dataclass(frozen=True)
class RankScores:
    """Per-query rank metrics at depth ``d`` (docs/metrics.md), in query order."""

    mrr: FloatArray
    ndcg: FloatArray  # NaN without a chunking
    ceiling: FloatArray  # NaN without a chunking
    depth_true_positive_units: IntArray  # TP of the first d ranks
    ceiling_units: IntArray  # C_d in units (0 without a chunking)


def rank_scores(
    te: IntervalUnion,
    te_units: IntArray,
    query: IntArray,
    lo: IntArray,
    hi: IntArray,
    depth: IntArray,
    candidates: tuple[IntArray, IntArray, IntArray] | None,
) -> RankScores:
    """mrr, ndcg and ceiling over each query's first ``depth[q]`` ranks.

    ``query``/``lo``/``hi`` are the retrieved unit intervals in rank order;
    ``candidates`` the chunking's chunks overlapping each query's excerpts
    (``(query, lo, hi)``), or ``None`` when there is no chunking (``ndcg`` and
    ``ceiling`` are then NaN).
    """
    n = int(te_units.size)
    rank = rank_in_group(query)
    top = rank < depth[query]
    query, lo, hi, rank = query[top], lo[top], hi[top], rank[top]
    g = gains(te, query, lo, hi)
    tp = np.bincount(query, weights=g, minlength=n).astype(np.int64)
    first = first_hit_rank(query, rank, g, n)
    mrr = np.zeros(n)
    np.divide(1.0, first, out=mrr, where=first > 0)
    if candidates is None:
        nan = np.full(n, np.nan)
        return RankScores(mrr, nan, nan.copy(), tp, np.zeros(n, dtype=np.int64))
    d_max = int(depth.max()) if n else 0
    cover = max_coverage(te, *candidates, n, d_max)
    discount = _discount(d_max)
    dcg = np.bincount(query, weights=g * discount[rank], minlength=n)
    ideal_gain = np.diff(cover, axis=1)  # C_j - C_{j-1}, j = 1..d_max
    within = np.arange(1, d_max + 1)[None, :] <= depth[:, None]
    idcg = (ideal_gain * within * discount[None, :]).sum(axis=1)
    ndcg = np.zeros(n)
    np.divide(dcg, idcg, out=ndcg, where=idcg > 0)
    # 0 <= ndcg <= 1 holds exactly (Abel summation over prefix coverages); the clip
    # only removes rounding in the last bit.
    np.clip(ndcg, 0.0, 1.0, out=ndcg)
    c_d = cover[np.arange(n), np.minimum(depth, d_max)]
    ceiling = np.zeros(n)
    np.divide(c_d, te_units, out=ceiling, where=te_units > 0)
    return RankScores(mrr, ndcg, ceiling, tp, c_d)


def budget_prefix(
    query: IntArray, length: IntArray, budget: int
) -> npt.NDArray[np.bool_]:
    """Rows kept under a budget: each query's ranks while the running sum of lengths
    stays within ``budget``; the first chunk that does not fit ends the list."""
    if query.size == 0:
        return np.zeros(0, dtype=bool)
    total = np.cumsum(length)
    starts = np.r_[True, query[1:] != query[:-1]]
    before = np.repeat(
        (total - length)[starts], np.diff(np.r_[np.flatnonzero(starts), query.size])
    )
    return np.asarray(total - before <= budget)
