"""``exact``: brute-force cosine top-k with numpy, the ground truth.

Questions and chunks are scored a tile at a time (``DEFAULT_BLOCK_BYTES`` of
float32 scores, ``DEFAULT_TILE_COLUMNS`` chunks wide: the shape of the reference
matrix product of docs/performance.md, "Search at the floor"), and each tile goes
to a threshold selection (``stores/_topk.py``) that keeps the best ``k`` of every
question in the tie rule's order; no step holds more than one tile of scores.
"""

from __future__ import annotations

import numpy as np

from pytest_chunkeval.core.ranking import best_first
from pytest_chunkeval.stores._base import (
    FloatArray,
    IdArray,
    as_vectors,
    check_search,
    empty_result,
)
from pytest_chunkeval.stores._candidates import RerankedIndex
from pytest_chunkeval.stores._topk import TopK

# Scores of one tile of questions x chunks: bounds memory for any corpus size.
DEFAULT_BLOCK_BYTES = 16 << 20
DEFAULT_TILE_COLUMNS = 4096
"""Chunks per tile: a tile of the chunk matrix stays in cache while a block of
questions is multiplied with it."""


class ExactIndex:
    """All vectors in memory; every search scores every vector."""

    content_ties = True
    """:meth:`search` takes the chunks' tie keys (docs/baselines.md, "Ties")."""

    def __init__(
        self,
        vectors: FloatArray,
        *,
        block_bytes: int = DEFAULT_BLOCK_BYTES,
        tile_columns: int = DEFAULT_TILE_COLUMNS,
    ):
        self.vectors = as_vectors(vectors, what="vectors")
        self.block_bytes = block_bytes
        self.tile_columns = max(1, tile_columns)

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    def search(
        self, queries: FloatArray, k: int, *, ties: IdArray | None = None
    ) -> IdArray:
        """Top-``k`` rows by cosine, best first; equal scores by the rows' tie keys
        (``ties``, ``core/ranking.py`` ``content_ties``; the row index without)."""
        n = len(self)
        q = check_search(queries, k, self.vectors.shape[1] if n else None)
        if n == 0 or k == 0 or q.shape[0] == 0:
            return empty_result(q.shape[0], k)
        # A question asked twice (of two copies of a document) is searched once.
        first, inverse = distinct_rows(q)
        if len(first) < q.shape[0]:
            return self._search(q, first, k, ties)[inverse]
        return self._search(q, None, k, ties)

    def _search(
        self, q: FloatArray, asked: IdArray | None, k: int, ties: IdArray | None
    ) -> IdArray:
        """The top ``k`` of the rows ``asked`` of ``q`` (all when None), taken a
        block at a time (no copy of them all)."""
        n = len(self)
        count = q.shape[0] if asked is None else asked.size
        out = empty_result(count, k)
        take = min(k, n)
        width = min(n, self.tile_columns)
        rows = max(1, self.block_bytes // (4 * width))
        vectors = self.vectors
        # one tile's scores, written in place by each product (no new pages)
        scratch = np.empty(min(rows, count) * width, dtype=np.float32)
        for lo in range(0, count, rows):
            block = q[lo : lo + rows] if asked is None else q[asked[lo : lo + rows]]
            best = TopK(block.shape[0], take, ties)
            for first in range(0, n, width):
                part = vectors[first : first + width]
                tile = scratch[: block.shape[0] * part.shape[0]]
                tile = tile.reshape(block.shape[0], part.shape[0])
                best.add(np.matmul(block, part.T, out=tile), first)
            out[lo : lo + block.shape[0], :take] = best.result()
        return out


def distinct_rows(q: FloatArray) -> tuple[IdArray, IdArray]:
    """The first of each distinct row of ``q`` (bytes compared), and for each row
    the position of its distinct row in that list."""
    rows = np.ascontiguousarray(q).view(
        np.dtype((np.void, q.dtype.itemsize * q.shape[1]))
    )
    _, first, inverse = np.unique(rows[:, 0], return_index=True, return_inverse=True)
    return first.astype(np.int64), inverse.reshape(-1).astype(np.int64)


def top_rows(neg: FloatArray, k: int, ties: IdArray | None = None) -> IdArray:
    """Per row, the columns of the ``k`` smallest values, ascending; equal values by
    the columns' tie keys (``ties[column]``; the column itself when None).

    The result is that of a sort of each row by (value, tie key) cut at ``k``,
    without sorting a row: ``argpartition`` finds the ``k`` smallest, and where more
    than ``k`` values are ``<=`` the ``k``-th one (identical chunk texts tie there),
    the places holding the ``k``-th value go to the columns holding it of lowest tie
    key. The values below
    it are fewer than ``k`` and already in place, so only the tied candidates are
    looked at, and none is sorted (``docs/performance.md``: 100 copies of every
    chunk, 236,000 rows).
    """
    n = neg.shape[1]
    if k >= n:
        cols = np.broadcast_to(np.arange(n, dtype=np.int64), neg.shape)
        return np.ascontiguousarray(best_first(-neg, cols, ties))
    part = np.argpartition(neg, k - 1, axis=1)[:, :k].astype(np.int64, copy=False)
    vals = np.take_along_axis(neg, part, axis=1)
    order = best_first(-vals, part, ties)
    top = np.take_along_axis(part, order, axis=1)
    vals = np.take_along_axis(vals, order, axis=1)
    kth = vals[:, -1:]
    tied = np.flatnonzero(np.count_nonzero(neg <= kth, axis=1) > k)
    if tied.size:
        _first_columns_at_kth(neg[tied], vals[tied], top, tied, ties)
    return top


def _first_columns_at_kth(
    neg: FloatArray,
    vals: FloatArray,
    top: IdArray,
    rows: IdArray,
    ties: IdArray | None,
) -> None:
    """Fill the places of ``top[rows]`` that hold the ``k``-th value with the
    columns of ``neg`` (those rows) that hold it of lowest tie key, in that order."""
    k = vals.shape[1]
    kth = vals[:, -1:]
    better = np.count_nonzero(vals < kth, axis=1)  # sorted first in each top row
    # Row-major: within a row the columns of the k-th value come in ascending order.
    at, cols = np.nonzero(neg == kth)
    if ties is not None:  # within a row, by tie key
        order = np.lexsort((ties[cols], at))
        at, cols = at[order], cols[order]
    rank = np.arange(at.size) - np.searchsorted(at, np.arange(len(rows)))[at]
    keep = rank < (k - better)[at]
    at = at[keep]
    top[rows[at], better[at] + rank[keep]] = cols[keep]


class ExactStore:
    """Brute-force cosine search (vectors are normalized, so cosine = dot)."""

    name = "exact"
    reference = True
    """Exact search itself: other stores' loss is measured against it."""

    def __init__(self, *, block_bytes: int = DEFAULT_BLOCK_BYTES) -> None:
        self.block_bytes = block_bytes

    @property
    def identity(self) -> str:
        """The type, its one setting and numpy's version (its products)."""
        return f"exact@numpy-{np.__version__}?block_bytes={self.block_bytes}"

    def index(self, key: str, vectors: FloatArray) -> RerankedIndex:
        """Keep ``vectors`` in memory (no copy when already contiguous float32).

        Every search scores every vector by tiles in float32 (:class:`ExactIndex`)
        and its best rows are ranked again as every engine store's candidates
        are (stores/_candidates.py): the cosine summed in float64, rounded once,
        equal ones by the tie rule. Two chunks whose cosines are mathematically
        equal then tie whatever the BLAS library's or the tile's rounding, and
        an exact configuration of any engine returns exactly these rows
        (docs/stores.md, "Test your production index")."""
        exact = ExactIndex(vectors, block_bytes=self.block_bytes)
        return RerankedIndex(exact.vectors, exact.search)

    def __repr__(self) -> str:
        return "ExactStore()"
