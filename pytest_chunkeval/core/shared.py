"""Units of shared characters (docs/concepts.md, "Units"): an excerpt and a chunk
share the units of the characters they share, ``units(E ∩ R)``, not every unit
both touch (``units(E) ∩ units(R)``).

In the char unit the two are the same. In the token unit they differ only at a
chunk's first and last token: a token that the chunk cuts may hold excerpt
characters outside the chunk only (cl100k joins ``" ."`` across such a cut).
Every other token of the chunk lies wholly inside it. So, per row,
``units(te ∩ R) = units(te) ∩ [lo', hi')`` where ``[lo', hi')`` is the chunk's
unit interval without each end token that shares no character of ``te`` inside
the chunk: all interval arithmetic downstream stays as it is.
"""

from __future__ import annotations

import numpy as np

from pytest_chunkeval.core.intervals import IntervalUnion
from pytest_chunkeval.core.query_spans import QuerySpans, columns
from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.core.units import UnitMap


def char_union(
    units: UnitMap, query: IntArray, doc: IntArray, start: IntArray, end: IntArray
) -> IntervalUnion:
    """Each query's spans as one union of global character intervals."""
    base = units.char_offsets[doc]
    return IntervalUnion(query, base + start, base + end, units.total_chars + 1)


def shared_intervals(
    units: UnitMap,
    excerpts: QuerySpans,
    spans: QuerySpans,
    lo: IntArray,
    hi: IntArray,
) -> tuple[IntArray, IntArray]:
    """Per row of ``spans``, ``[lo', hi')`` with ``units(te_q ∩ R) = units(te_q) ∩
    [lo', hi')``: the row's unit interval ``[lo, hi)`` trimmed of an end token
    that it cuts and that shares no character with its query's ``excerpts``
    inside the row. A token the row holds whole needs no check (it is in
    ``units(te_q)`` exactly when it shares a character), so only rows that cut a
    token are looked at."""
    if units.unit == "char" or lo.size == 0:
        return lo, hi
    g_start = units.char_offsets[spans.doc] + spans.start
    g_end = units.char_offsets[spans.doc] + spans.end
    last_token = max(units.total_units - 1, 0)
    first = np.minimum(lo, last_token)
    last = np.clip(hi - 1, 0, last_token)
    tokens, ends = units.tokens, units.tokens.ends
    some = hi > lo
    cut_first = np.flatnonzero(some & (tokens.starts_at(first) < g_start))
    cut_last = np.flatnonzero(some & (ends[last] > g_end))
    if cut_first.size == 0 and cut_last.size == 0:
        return lo, hi
    te_chars = char_union(units, *columns(excerpts))
    new_lo, new_hi = lo.copy(), hi.copy()
    for rows, token, inner, step in (
        (cut_first, first, new_lo, 1),
        (cut_last, last, new_hi, -1),
    ):
        shared = te_chars.covered(
            spans.query[rows],
            np.maximum(g_start[rows], tokens.starts_at(token[rows])),
            np.minimum(g_end[rows], ends[token[rows]]),
        )
        dropped = rows[shared == 0]
        inner[dropped] += step
    return new_lo, np.maximum(new_hi, new_lo)


def char_overlap(
    a_start: IntArray, a_end: IntArray, b_start: IntArray, b_end: IntArray
) -> IntArray:
    """Characters shared by two intervals of one axis, row by row (0 if none)."""
    shared: IntArray = np.clip(
        np.minimum(a_end, b_end) - np.maximum(a_start, b_start), 0, None
    )
    return shared
