"""Vectorized arithmetic on many small sets of intervals at once.

Each interval belongs to a group (a query). Shifting group ``g`` by ``g * band`` (band
longer than the whole unit axis) puts every group on its own stretch of one line, so a
single sort merges all groups' intervals and a single prefix sum measures any range.
"""

from __future__ import annotations

import numpy as np

from pytest_chunkeval.core.spans import IntArray


def runs(values: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """Runs of equal values in an array grouped by value (e.g. sorted):
    ``(value, first index, length)`` of each run."""
    if values.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    first = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    return values[first], first, np.diff(np.r_[first, values.size])


def unique(values: IntArray) -> IntArray:
    """Sorted distinct values (a sort: numpy's hash-based ``unique`` is slower on
    large int arrays)."""
    return runs(np.sort(values))[0]


class IntervalUnion:
    """The union of each group's intervals, measurable over any range of a group."""

    def __init__(self, group: IntArray, lo: IntArray, hi: IntArray, band: int) -> None:
        self.band = band
        keep = hi > lo
        a = group[keep] * band + lo[keep]
        b = group[keep] * band + hi[keep]
        order = np.argsort(a, kind="stable")
        a, b = a[order], b[order]
        if a.size:
            reach = np.maximum.accumulate(b)
            new = np.ones(a.size, dtype=bool)
            new[1:] = a[1:] > reach[:-1]
            first = np.flatnonzero(new)
            self.starts = a[first]
            self.ends = np.maximum.reduceat(b, first)
        else:
            self.starts = self.ends = np.zeros(0, dtype=np.int64)
        lengths = self.ends - self.starts
        self._before = np.concatenate([[0], np.cumsum(lengths)])  # length before i

    def _measure_below(self, x: IntArray) -> IntArray:
        """Total length of the union below banded position ``x``."""
        i = np.searchsorted(self.starts, x, side="right") - 1
        inside = np.clip(x - self.starts[np.maximum(i, 0)], 0, None)
        inside = np.minimum(inside, (self.ends - self.starts)[np.maximum(i, 0)])
        return np.where(i >= 0, self._before[np.maximum(i, 0)] + inside, 0)

    def covered(self, group: IntArray, lo: IntArray, hi: IntArray) -> IntArray:
        """Length of ``[lo, hi)`` of ``group`` that the union covers."""
        if self.starts.size == 0:
            return np.zeros(np.shape(lo), dtype=np.int64)
        base = group * self.band
        hi = np.maximum(hi, lo)
        return self._measure_below(base + hi) - self._measure_below(base + lo)

    def group_lengths(self, n_groups: int) -> IntArray:
        """Size of each group's union."""
        groups = self.starts // self.band
        return np.bincount(
            groups, weights=self.ends - self.starts, minlength=n_groups
        ).astype(np.int64)

    def intersection_lengths(self, other: IntervalUnion, n_groups: int) -> IntArray:
        """Per group, the size of this union intersected with ``other``."""
        groups = self.starts // self.band
        inner = other.covered(
            groups, self.starts - groups * self.band, self.ends - groups * self.band
        )
        return np.bincount(groups, weights=inner, minlength=n_groups).astype(np.int64)
