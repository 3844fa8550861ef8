"""Identical text is interchangeable (docs/concepts.md, "Identical text").

An excerpt's text may occur more than once in the corpus, and a retriever that
returns any copy has retrieved the same text. So, per query, identical excerpts
are merged and each is scored at the occurrence of its text (a *candidate*) that
shares the most characters with the retrieved chunks that are scored; ties go to
the candidate reached at the earliest rank, then to the stored span, then to
corpus order. All of it runs on arrays: no per-query Python loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.core.intervals import IntervalUnion, runs
from pytest_chunkeval.core.query_spans import QuerySpans, columns
from pytest_chunkeval.core.shared import char_overlap
from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.core.units import UnitMap

BoolArray = npt.NDArray[np.bool_]
_NEVER = np.iinfo(np.int64).max


@dataclass(frozen=True)
class ExcerptCopies:
    """A query set's excerpts with identical texts of one question merged, and
    every occurrence of each merged excerpt's text in the corpus.

    ``merged`` has one row per merged excerpt (its first stored span), in query
    order; ``group[i]`` is the merged row of stored excerpt row ``i``. The
    candidates (``row``, ``doc``, ``start``, ``end``) are sorted by merged row,
    then corpus order; ``stored`` marks a stored span of the merged excerpt.
    """

    merged: QuerySpans
    group: IntArray
    row: IntArray
    doc: IntArray
    start: IntArray
    end: IntArray
    stored: BoolArray

    @property
    def repeated(self) -> int:
        """Merged excerpts whose text occurs more than once."""
        counts = np.bincount(self.row, minlength=self.merged.query.size)
        return int(np.count_nonzero(counts > 1))


def choose(
    units: UnitMap,
    copies: ExcerptCopies,
    retrieved: QuerySpans,
    rank: IntArray,
) -> QuerySpans:
    """Each merged excerpt at its best candidate against the ``retrieved`` rows
    that are scored (``rank``: each row's 0-based rank in its list)."""
    query, doc, start, end = columns(retrieved)
    merged = copies.merged
    counts = np.bincount(copies.row, minlength=merged.query.size)
    pick = np.flatnonzero(counts[copies.row] > 1)
    if pick.size == 0:
        return merged
    c_row = copies.row[pick]
    c_query = merged.query[c_row]
    c_start = units.char_offsets[copies.doc[pick]] + copies.start[pick]
    c_end = units.char_offsets[copies.doc[pick]] + copies.end[pick]
    # Only the lists of queries with a repeated excerpt matter, grouped by query.
    size = int(max(merged.query.max(), query.max(initial=0))) + 1
    wanted = np.zeros(size, dtype=bool)
    wanted[c_query] = True
    order = np.flatnonzero(wanted[query])
    if np.any(query[order][1:] < query[order][:-1]):
        order = order[np.argsort(query[order], kind="stable")]
    r_query = query[order]
    r_start = units.char_offsets[doc[order]] + start[order]
    r_end = units.char_offsets[doc[order]] + end[order]
    r_rank = rank[order]
    reached = IntervalUnion(r_query, r_start, r_end, units.total_chars + 1)
    shared = reached.covered(c_query, c_start, c_end)
    earliest = _earliest_rank(
        shared, c_query, c_start, c_end, r_query, r_start, r_end, r_rank
    )
    best = np.lexsort((pick, ~copies.stored[pick], earliest, -shared, c_row))
    rows, first, _ = runs(c_row[best])
    chosen = pick[best[first]]
    out_doc, out_start, out_end = (
        a.copy() for a in (merged.doc, merged.start, merged.end)
    )
    out_doc[rows] = copies.doc[chosen]
    out_start[rows] = copies.start[chosen]
    out_end[rows] = copies.end[chosen]
    return QuerySpans(merged.query, out_doc, out_start, out_end)


def _earliest_rank(
    shared: IntArray,
    c_query: IntArray,
    c_start: IntArray,
    c_end: IntArray,
    r_query: IntArray,
    r_start: IntArray,
    r_end: IntArray,
    r_rank: IntArray,
) -> IntArray:
    """Per candidate, the first rank of a retrieved row sharing a character with
    it (``_NEVER`` if none): pairs only for candidates that share something."""
    earliest = np.full(shared.size, _NEVER, dtype=np.int64)
    hit = np.flatnonzero(shared > 0)
    if hit.size == 0:
        return earliest
    first = np.searchsorted(r_query, c_query[hit], side="left")
    counts = np.searchsorted(r_query, c_query[hit], side="right") - first
    cand = np.repeat(hit, counts)
    offsets = np.arange(cand.size, dtype=np.int64) - np.repeat(
        np.cumsum(counts) - counts, counts
    )
    pos = np.repeat(first, counts) + offsets
    overlap = char_overlap(c_start[cand], c_end[cand], r_start[pos], r_end[pos]) > 0
    np.minimum.at(earliest, cand[overlap], r_rank[pos[overlap]])
    return earliest
