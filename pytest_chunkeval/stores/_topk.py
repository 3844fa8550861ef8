"""Top-``k`` selection over tiles of scores, in the tie rule's order
(docs/baselines.md, "Ties"; docs/performance.md, "Search at the floor").

A search scores one tile of questions x chunks at a time and hands it to
:class:`TopK`, which keeps each question's best ``k`` so far. A tile is never
sorted nor partitioned whole: the chunks of a tile fall into ``G`` groups (the
columns congruent modulo ``G``), whose maxima take one vectorized pass. The
``k``-th largest group maximum is a lower bound ``t`` of the tile's ``k``-th largest
score (``k`` groups each hold a score ``>= t``), and so is the ``k``-th score kept
from earlier tiles: no score below the larger bound can be among the best ``k``.
Only the groups whose maximum reaches it are read again; their scores at or above
it (every score equal to the ``k``-th one among them, so ties are decided by the
rule, not by the bound) are merged with the kept ones by (score, tie key).
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
        self.maxima = np.full((rows, k), -np.inf, dtype=np.float32)
        """Each row's ``k`` largest group maxima so far (groups of all tiles are
        disjoint: the ``k``-th of them bounds the ``k``-th best score)."""
        self._found: list[tuple[IdArray, IdArray, Scores]] = []

    def add(self, tile: Scores, first: int) -> None:
        """Take the candidates of a ``(rows, width)`` tile of scores of columns
        ``first..`` (a few per row: those at or above the bound)."""
        rows, cols, vals = self._candidates(tile)
        if rows.size:
            self._found.append((rows, cols + first, vals))

    def _candidates(self, tile: Scores) -> tuple[IdArray, IdArray, Scores]:
        """The (row, column, score) of the tile's scores that may enter."""
        r, w = tile.shape
        k = self.k
        groups = w // GROUP
        if groups < 2 * k:  # few groups for this k: the tile's own k-th score
            if w > k:
                kth = np.partition(tile, w - k, axis=1)[:, w - k]
                np.maximum(kth, self.bound, out=self.bound)
            at, col = np.nonzero(tile >= self.bound[:, None])
            return at.astype(np.int64), col.astype(np.int64), tile[at, col]
        main = groups * GROUP
        # group j: columns j, j + groups, j + 2 * groups, ... (contiguous slices)
        highest = np.maximum.reduce(tile[:, :main].reshape(r, GROUP, groups), axis=1)
        both = np.partition(np.concatenate([self.maxima, highest], axis=1), groups, 1)
        self.maxima = both[:, groups:]
        np.maximum(both[:, groups], self.bound, out=self.bound)
        at, group = np.nonzero(highest >= self.bound[:, None])
        flat = (at * w + group)[:, None] + np.arange(GROUP) * groups
        at = np.repeat(at, GROUP)
        col = (flat.ravel() - at * w).astype(np.int64)
        if main < w:  # the last columns, in no group: all read
            tail = np.arange(main, w, dtype=np.int64)
            at = np.concatenate([at, np.repeat(np.arange(r), tail.size)])
            col = np.concatenate([col, np.tile(tail, r)])
        vals = tile.ravel()[at * w + col]
        keep = vals >= self.bound[at]
        return at[keep].astype(np.int64), col[keep], vals[keep]

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
