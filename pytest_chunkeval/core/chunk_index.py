"""The chunks of one chunking for overlap look-ups (:class:`ChunkIndex`), and what
the metrics read of them: Ω, the chunks sharing a character with a query's
excerpts (docs/concepts.md), precision Ω, and the candidates of ``C_j``
(docs/metrics.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.core.copies import ExcerptCopies
from pytest_chunkeval.core.intervals import IntervalUnion, unique
from pytest_chunkeval.core.query_spans import QuerySpans, columns, ints
from pytest_chunkeval.core.shared import char_overlap, shared_intervals
from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.core.units import UnitMap

FloatArray = npt.NDArray[np.float64]


def _ratio(num: IntArray, den: IntArray) -> FloatArray:
    out: FloatArray = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


class ChunkIndex:
    """The chunks of one chunking, as sorted unit intervals, for overlap look-ups."""

    def __init__(
        self, units: UnitMap, doc: IntArray, start: IntArray, end: IntArray
    ) -> None:
        self.doc, self.start, self.end = ints(doc), ints(start), ints(end)
        lo, hi = units.to_units(self.doc, self.start, self.end)
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
        """Distinct ``(query, chunk)`` pairs: chunks sharing a character with a
        query's excerpts (docs/concepts.md, "Units": a shared boundary token is
        not enough)."""
        lo, hi = units.to_units(excerpts.doc, excerpts.start, excerpts.end)
        rows, chunks = self.overlapping(lo, hi)
        if units.unit == "token":
            base = units.char_offsets
            shared = char_overlap(
                base[excerpts.doc[rows]] + excerpts.start[rows],
                base[excerpts.doc[rows]] + excerpts.end[rows],
                base[self.doc[chunks]] + self.start[chunks],
                base[self.doc[chunks]] + self.end[chunks],
            )
            rows, chunks = rows[shared > 0], chunks[shared > 0]
        key = unique(excerpts.query[rows] * max(self.size, 1) + chunks)
        return key // max(self.size, 1), key % max(self.size, 1)

    def omega_counts(
        self, units: UnitMap, excerpts: QuerySpans, n_queries: int
    ) -> IntArray:
        """Per query, how many chunks overlap its excerpts (``k="min"``,
        docs/concepts.md#k)."""
        query, _ = self.omega(units, excerpts)
        return np.bincount(query, minlength=n_queries).astype(np.int64)


@dataclass(frozen=True)
class Omega:
    """Ω of a chunking for each query: its chunks sharing a character with the
    excerpts, their unit intervals whole and trimmed to the shared units."""

    query: IntArray
    lo: IntArray
    hi: IntArray
    shared_lo: IntArray
    shared_hi: IntArray


def omega_of(units: UnitMap, chunks: ChunkIndex, excerpts: QuerySpans) -> Omega:
    query, chunk = chunks.omega(units, excerpts)
    lo, hi = chunks.unit_lo[chunk], chunks.unit_hi[chunk]
    rows = QuerySpans(query, chunks.doc[chunk], chunks.start[chunk], chunks.end[chunk])
    s_lo, s_hi = shared_intervals(units, excerpts, rows, lo, hi)
    return Omega(query, lo, hi, s_lo, s_hi)


def precision_omega(
    te_union: IntervalUnion, te: IntArray, omega: Omega, n_queries: int
) -> FloatArray:
    """``|units(te ∩ ∪Ω)| / |units(te) ∪ units(∪Ω)|`` per query."""
    band = te_union.band
    whole = IntervalUnion(omega.query, omega.lo, omega.hi, band)
    common = te_union.intersection_lengths(whole, n_queries)
    union = te + whole.group_lengths(n_queries) - common
    if omega.shared_lo is not omega.lo or omega.shared_hi is not omega.hi:
        shared = IntervalUnion(omega.query, omega.shared_lo, omega.shared_hi, band)
        common = te_union.intersection_lengths(shared, n_queries)
    return _ratio(common, union)


def chunking_terms(
    units: UnitMap,
    chunks: ChunkIndex,
    stored: QuerySpans,
    excerpts: QuerySpans,
    copies: ExcerptCopies | None,
    te_union: IntervalUnion,
    n_queries: int,
) -> tuple[tuple[IntArray, IntArray, IntArray], FloatArray, IntArray]:
    """The candidates of ``C_j`` (Ω of the scored ``excerpts``), precision Ω and
    the size of Ω (of the ``stored`` spans: they measure the chunking alone)."""
    omega = omega_of(units, chunks, stored)
    count = np.bincount(omega.query, minlength=n_queries).astype(np.int64)
    if copies is None:
        te = te_union.group_lengths(n_queries)
        candidates = (omega.query, omega.shared_lo, omega.shared_hi)
        return candidates, precision_omega(te_union, te, omega, n_queries), count
    s_union = IntervalUnion(
        stored.query,
        *units.to_units(stored.doc, stored.start, stored.end),
        te_union.band,
    )
    po = precision_omega(s_union, s_union.group_lengths(n_queries), omega, n_queries)
    # Ω of the chosen spans: the stored one's where a query kept its spans.
    merged = copies.merged
    moved = np.zeros(n_queries, dtype=bool)
    moved[
        merged.query[(excerpts.start != merged.start) | (excerpts.doc != merged.doc)]
    ] = True
    moved |= np.bincount(merged.query, minlength=n_queries) != np.bincount(
        stored.query, minlength=n_queries
    )
    rows = moved[excerpts.query]
    new = omega_of(units, chunks, QuerySpans(*(a[rows] for a in columns(excerpts))))
    keep = ~moved[omega.query]
    candidates = (
        np.concatenate([omega.query[keep], new.query]),
        np.concatenate([omega.shared_lo[keep], new.shared_lo]),
        np.concatenate([omega.shared_hi[keep], new.shared_hi]),
    )
    return candidates, po, count
