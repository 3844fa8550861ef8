"""Top-``k`` selection over tiles of scores, in the tie rule's order
(docs/baselines.md, "Ties"; docs/performance.md, "Search at the floor").

A search scores one tile of questions x chunks at a time and hands it to
:class:`TopK`, which keeps each question's best ``k`` so far. A tile is never
sorted nor partitioned whole. In the first tile, the chunks fall into ``G``
groups (the columns congruent modulo ``G``), whose maxima take one vectorized
pass; the ``k``-th largest group maximum is a lower bound of the tile's ``k``-th
largest score (``k`` groups each hold a score ``>= t``), and only the groups
whose maximum reaches it are read again. From then on each row keeps its ``k``
best scores, the smallest of them the bound, and a later tile costs one
comparison with it (into a reused mask, read back a word of 8 flags at a time).
Every score at or above the bound is kept (every score equal to the ``k``-th one
among them, so ties are decided by the rule, not by the bound), and the kept ones
are sorted once by (score, tie key).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.stores._base import IdArray

Scores = npt.NDArray[np.float32]

GROUP = 16
"""Columns per group: the bound is read from ``width / GROUP`` maxima per row."""


class TopK:
    """The best ``k`` columns of each of ``rows`` questions over the tiles added:
    higher score first, equal scores by tie key (``ties[column]``; the column
    itself when None); scores below ``floor`` never enter."""

    def __init__(
        self, rows: int, k: int, ties: IdArray | None, *, floor: float = -np.inf
    ) -> None:
        self.rows = rows
        self.k = k
        self.ties = ties
        self.bound = np.full(rows, floor, dtype=np.float32)
        """Each row's lower bound of its ``k``-th best score so far."""
        self.best = np.full((rows, k), -np.inf, dtype=np.float32)
        """Each row's ``k`` best scores so far, ascending (the first is the
        ``k``-th best: the bound once ``k`` were seen)."""
        self._mask = np.zeros(0, dtype=np.bool_)
        self._tight = True
        """Whether :attr:`best` holds the last candidates found."""
        self._found: list[tuple[IdArray, IdArray, Scores]] = []

    def add(self, tile: Scores, first: int) -> None:
        """Take the candidates of a ``(rows, width)`` tile of scores of columns
        ``first..`` (a few per row: those at or above the bound)."""
        if self._found:  # a bound from the tiles before: one comparison pass
            if not self._tight:  # (a single tile, BM25's, never needs it)
                self._tighten(self._found[-1][0], self._found[-1][2])
            rows, cols, vals = self._above(tile)
        else:
            rows, cols, vals = self._first(tile)
        if rows.size:
            self._found.append((rows, cols + first, vals))
            self._tight = False

    def _first(self, tile: Scores) -> tuple[IdArray, IdArray, Scores]:
        """The (row, column, score) of a first tile's scores that may enter, its
        bound read from its group maxima."""
        r, w = tile.shape
        k = self.k
        groups = w // GROUP
        if groups < 2 * k:  # few groups for this k: the tile's own k-th score
            if w > k:
                kth = np.partition(tile, w - k, axis=1)[:, w - k]
                np.maximum(kth, self.bound, out=self.bound)
            at, col = np.divmod(np.flatnonzero(tile >= self.bound[:, None]), w)
            return at, col, tile[at, col]
        main = groups * GROUP
        # group j: columns j, j + groups, j + 2 * groups, ... (a view, no copy)
        grouped = tile[:, :main].reshape(r, GROUP, groups)
        highest = np.maximum.reduce(grouped, axis=1)
        # the k-th largest group maximum (np.sort is SIMD, faster than partition)
        kth = np.sort(highest, axis=1)[:, groups - k]
        np.maximum(kth, self.bound, out=self.bound)
        at, group = np.divmod(np.flatnonzero(highest >= self.bound[:, None]), groups)
        vals = grouped[at, :, group]  # (groups read, GROUP)
        hit, member = np.divmod(np.flatnonzero(vals >= self.bound[at][:, None]), GROUP)
        at, vals = at[hit], vals[hit, member]
        col = group[hit] + member * groups
        if main < w:  # the last columns, in no group: all read
            near, far = np.divmod(
                np.flatnonzero(tile[:, main:] >= self.bound[:, None]), w - main
            )
            at = np.concatenate([at, near])
            col = np.concatenate([col, far + main])
            vals = np.concatenate([vals, tile[near, far + main]])
        return at, col, vals

    def _above(self, tile: Scores) -> tuple[IdArray, IdArray, Scores]:
        """The (row, column, score) of the scores at or above the bound: one
        comparison into a reused mask, read back 8 flags to a word."""
        r, w = tile.shape
        size = r * w
        words = -(-size // 8)
        if self._mask.size < 8 * words:
            self._mask = np.zeros(8 * words, dtype=np.bool_)
        mask = self._mask[: 8 * words]
        mask[size:] = False
        np.greater_equal(tile, self.bound[:, None], out=mask[:size].reshape(r, w))
        # (nonzero over uint64 takes a slow generic path; over bools it is fast)
        word = np.flatnonzero(mask.view(np.uint64) != 0)
        hit, bit = np.divmod(np.flatnonzero(mask.reshape(-1, 8)[word]), 8)
        place = word[hit] * 8 + bit
        at, col = np.divmod(place, w)
        return at, col, np.ascontiguousarray(tile).reshape(-1)[place]

    def _tighten(self, rows: IdArray, vals: Scores) -> None:
        """Merge candidates into each row's ``k`` best scores and raise the bound
        to the ``k``-th of them."""
        if rows.size > 1 and (rows[1:] < rows[:-1]).any():  # a tile's tail columns
            order = np.argsort(rows, kind="stable")
            rows, vals = rows[order], vals[order]
        counts = np.bincount(rows, minlength=self.rows)
        touched = np.flatnonzero(counts)
        width = int(counts.max())
        starts = np.cumsum(counts) - counts
        spread = np.full((self.rows, width), -np.inf, dtype=np.float32)
        spread[rows, np.arange(rows.size) - starts[rows]] = vals
        both = np.concatenate([self.best[touched], spread[touched]], axis=1)
        self.best[touched] = np.sort(both, axis=1)[:, -self.k :]
        np.maximum(self.best[:, 0], self.bound, out=self.bound)
        self._tight = True

    def result(self) -> IdArray:
        """``(rows, k)`` columns, best first, ``-1`` where fewer were added."""
        out = np.full((self.rows, self.k), -1, dtype=np.int64)
        if not self._found:
            return out
        rows, cols, vals = (
            np.concatenate(part) for part in zip(*self._found, strict=True)
        )
        keep = vals >= self.bound[rows]  # the final bound: fewer to sort
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
        key = cols if self.ties is None else self.ties[cols]
        order = np.lexsort((key, -vals, rows))
        rows, cols = rows[order], cols[order]
        firsts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        sizes = np.diff(np.r_[firsts, rows.size])
        rank = np.arange(rows.size) - np.repeat(firsts, sizes)
        kept = rank < self.k
        out[rows[kept], rank[kept]] = cols[kept]
        return out
