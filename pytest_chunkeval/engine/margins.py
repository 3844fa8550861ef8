"""Decisive margins: how far each question's retrieval is from changing under
float drift (docs/baselines.md, "Noise is measured, not assumed").

The same vectors embedded on another machine (another BLAS, another number of
threads) differ in their last bits, and so do their scores: two chunks whose
scores are that close can swap. A question's **decisive margin** is the score gap
that decides what it retrieved: between the last chunk it scored (rank ``d``)
and the first lower-ranked chunk whose text differs from every one of the first
``d`` texts (identical copies tie exactly, whatever the machine, and score the
same: they are no margin). Its **order margin** adds the gaps between adjacent
ranks inside the first ``d`` (whose order the rank metrics read, and which
decides what a token budget takes). Gaps are relative,
``(a - b) / max(1, |a|, |b|)``, so a cosine and a reranker's logit compare with
one bound, :data:`EPSILON`.

Where the scores come from (:mod:`~pytest_chunkeval.engine.evidence`):

- a vector store, exact or approximate: exact search on the same vectors, ranks
  past the scored depth included;
- a token budget: the order margin over the ranks up to the one after the last
  chunk taken (a swap there changes which chunks fit);
- ``k="min"``: the question's own depth;
- hybrid fusion: the order margin over the dense leg's candidates (a swap among
  them moves reciprocal-rank scores); BM25 is deterministic and adds none;
- a reranker: the reranker's own scores over its candidates.

A question without vector or reranker scores (BM25, a user's retriever) has no
margin: nothing in it drifts with floats, or its noise is measured another way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

EPSILON = 1e-5
"""Relative score gap below which float drift across machines can swap two
chunks. Measured (``benchmarks/bench_gate.py --epsilon``): all-MiniLM-L6-v2 in
one torch thread and in two moved no cosine by more than 2.2e-7 and no gap
between two of a question's scores by more than 3.0e-7 (136 questions x 651
chunks); the bound is about 30 times that (docs/baselines.md, "Float drift")."""
WIDE_EPSILON = 1e-3
"""The bound a remote, GPU or bfloat16 embedder declares (declared, not
measured: their vectors move far more between runs than a local float32 CPU
model's)."""
EXTRA_RANKS = 8
"""Ranks an exact search fetches past the scored depth, to find the first lower
chunk whose text differs from the scored ones."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def declared_epsilon(embedder: object) -> float:
    """The float drift bound an embedder declares (its ``epsilon``), else
    :data:`EPSILON` (a local float32 CPU model's, measured)."""
    value = getattr(embedder, "epsilon", None)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return EPSILON
    return float(value) if math.isfinite(value) and value > 0 else EPSILON


def relative_gap(higher: float, lower: float) -> float:
    """``(higher - lower) / max(1, |higher|, |lower|)``."""
    return (higher - lower) / max(1.0, abs(higher), abs(lower))


def decisive_margins(
    scores: FloatArray, texts: IntArray, depth: IntArray
) -> tuple[FloatArray, FloatArray]:
    """Per question, the decisive margin and the order margin of a ranked list.

    ``scores`` (q, m): each rank's score, NaN past the end; ``texts`` (q, m): a
    text id per rank (equal ids, identical texts; -1 past the end); ``depth``
    (q,): the ranks scored. ``inf`` where no gap decides (nothing scored, no
    lower chunk of another text among the ranks given). Vectorized over the
    questions (a few ranks each): the same values as :func:`relative_gap` rank
    by rank."""
    n, m = scores.shape
    boundary = np.full(n, math.inf)
    order = np.full(n, math.inf)
    if n == 0 or m == 0:
        return boundary, order
    d = np.minimum(np.asarray(depth, dtype=np.int64), m)
    rows = np.arange(n)
    scored = d > 0
    last = np.where(scored, d - 1, 0)
    top_score = scores[rows, last]
    scored &= ~np.isnan(top_score)
    ranks = np.arange(m)
    in_top = ranks[None, :] < d[:, None]  # (q, m)
    # rank j holds a text among the first d: compared with each of them
    same = (texts[:, :, None] == texts[:, None, :]) & in_top[:, None, :]
    lower = (
        ~in_top & (texts >= 0) & ~np.isnan(scores) & ~same.any(axis=2)
    )  # (q, m): a lower chunk of another text
    found = lower.any(axis=1) & scored
    first = np.argmax(lower, axis=1)
    boundary[found] = _gaps(top_score[found], scores[rows, first][found])
    order[scored] = boundary[scored]
    if m > 1:  # gaps between adjacent ranks inside the first d
        inside = (
            (ranks[None, :-1] < (d - 1)[:, None])
            & (texts[:, :-1] != texts[:, 1:])
            & ~np.isnan(scores[:, 1:])
            & ~np.isnan(scores[:, :-1])  # a gap from NaN is none (as min() skips it)
            & scored[:, None]
        )
        gaps = np.full((n, m - 1), math.inf)
        gaps[inside] = _gaps(scores[:, :-1][inside], scores[:, 1:][inside])
        order = np.minimum(order, gaps.min(axis=1))
    return boundary, order


def _gaps(higher: FloatArray, lower: FloatArray) -> FloatArray:
    """:func:`relative_gap` elementwise."""
    scale = np.maximum(np.maximum(np.abs(higher), np.abs(lower)), 1.0)
    return np.asarray((higher - lower) / scale, dtype=np.float64)


def row_scores(
    query_vectors: npt.NDArray[np.float32],
    chunk_vectors: npt.NDArray[np.float32],
    rows: IntArray,
    *,
    block: int = 4096,
) -> FloatArray:
    """Cosine of each query with each of its ``rows`` (normalized vectors), NaN
    where the row is -1; in float64, a block of queries and one rank at a time
    (only one rank's chunk vectors are widened: a block of 4,096 questions holds
    8 MiB at 256 dimensions, not ``k`` times that)."""
    valid = rows >= 0
    safe = np.where(valid, rows, 0)
    out = np.empty(rows.shape, dtype=np.float64)
    for lo in range(0, rows.shape[0], block):
        q = np.asarray(query_vectors[lo : lo + block], dtype=np.float64)
        for rank in range(rows.shape[1]):
            c = np.asarray(chunk_vectors[safe[lo : lo + block, rank]], np.float64)
            out[lo : lo + block, rank] = np.einsum("qd,qd->q", q, c)
    out[~valid] = np.nan
    return out


def text_ids(texts: Sequence[str], rows: IntArray) -> IntArray:
    """A text id per row (-1 where the row is -1): equal ids, identical texts.
    Only the rows given are read, once each (``texts`` may slice each from its
    document: ``engine/chunk_texts.py``)."""
    of_text: dict[str, int] = {}
    of_row: dict[int, int] = {-1: -1}

    def text_id(row: int) -> int:
        found = of_row.get(row)
        if found is None:
            found = of_row[row] = of_text.setdefault(texts[row], len(of_text))
        return found

    flat = [text_id(r) for r in rows.reshape(-1).tolist()]
    return np.array(flat, dtype=np.int64).reshape(rows.shape)
