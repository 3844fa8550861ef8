"""``ClusterSemanticChunker``: the report's cluster chunker, with a banded O(n·m) DP.

The algorithm (Chroma's reference ``ClusterSemanticChunker``):

1. Split the document into pieces of at most ``min_tokens`` tokens with
   ``RecursiveTokenChunker(min_tokens, 0)`` and embed each piece.
2. Cosine similarities of pieces, centred: the mean similarity over all pairs
   ``i < j`` of the document (the reference's mean of the strict upper triangle, i.e.
   of the off-diagonal: the matrix is symmetric) is subtracted, and a piece's
   similarity with itself counts 0.
3. Choose contiguous groups of at most ``m = max_tokens // min_tokens`` pieces that
   maximize the sum, over groups, of the centred similarities of the pairs inside each
   group. A chunk is the span from its first piece's start to its last piece's end.

The reference builds the full n × n similarity matrix and sums a sub-matrix for every
candidate group: O(n·m·m²) work and O(n²) memory. Here only the band of similarities
between pieces less than ``m`` apart is computed, in row blocks, and a group's reward
comes from prefix sums: with ``P[i, k]`` the sum of piece ``i``'s centred similarities
with the ``k`` pieces after it, the pairs inside pieces ``b-s+1 .. b`` sum to
``sum(P[b - t, t] for t < s)``, a cumulative sum along the band's anti-diagonals. Each
candidate then costs O(1); work and memory are O(n·m) (plus the embeddings), so a
document of millions of tokens never needs an n × n matrix. The mean over all pairs
comes from ``|sum v|² - sum |v|²`` without the matrix either.

Ties: candidates are tried from the smallest group to the largest, and a larger group
replaces the best so far only when its total is greater by more than a relative
:data:`TIE_TOLERANCE` (1e-9 of ``1 + |total|``), so ties go to the smallest last
group. The tolerance is there because some ties are exact in real arithmetic but not
in floating point: when a document has at most ``m`` pieces, the group of all of them
scores exactly 0 (the centring makes all pairs sum to 0), as do single pieces; which
one wins must not depend on rounding. Totals closer than the tolerance are far below
what embeddings can distinguish.

The one deliberate difference from the reference: it starts each ``dp[i]`` at 0 with
the group start defaulting to piece 0, so when no candidate beats 0 (an
all-dissimilar start of a document) it returns one group from piece 0 to ``i``, which
may hold more than ``m`` pieces. Here ``dp[i]`` is the true maximum (a single piece
always scores 0), so no group ever exceeds ``m`` pieces. Otherwise the two agree
(up to the rounding of near-ties, which the reference leaves to chance).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.chunkers.base import chunker_identity, spec_name
from pytest_chunkeval.chunkers.recursive import RecursiveTokenChunker, piece_splitter
from pytest_chunkeval.chunkers.semantic import EmbeddingChunker, embedder_part
from pytest_chunkeval.core.spans import IntArray, as_bounds
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.tokenizers.base import DEFAULT_ENCODING, Tokenizer, get_tokenizer

FloatArray64 = npt.NDArray[np.float64]

DEFAULT_MIN_TOKENS = 50

TIE_TOLERANCE = 1e-9
"""A larger group must beat the best so far by more than this, relative to
``1 + |best|``, to replace it: totals equal in exact arithmetic stay tied whatever the
rounding (see the module docstring)."""

# Rows handled per block: bounds the float64 copy of the embeddings and the Python
# floats of the DP, so memory beyond the band does not grow with the document.
_BLOCK_ROWS = 1024


def pair_similarity_band(vectors: Any, width: int) -> FloatArray64:
    """``(n, width)`` float64 band: ``band[i, d - 1] = v[i] · v[i + d]``, d = 1..width.

    Entries past the last piece (``i + d >= n``) are 0. Computed in blocks of rows so
    the float64 working copy stays small.
    """
    vecs = np.asarray(vectors)
    if vecs.ndim != 2:
        raise ValueError(f"expected (n, dim) vectors, got shape {vecs.shape}")
    n = vecs.shape[0]
    band = np.zeros((n, max(width, 0)), dtype=np.float64)
    for lo in range(0, n, _BLOCK_ROWS):
        hi = min(n, lo + _BLOCK_ROWS)
        block = np.asarray(vecs[lo : min(n, hi + width)], dtype=np.float64)
        rows = hi - lo
        for d in range(1, width + 1):
            valid = min(rows, block.shape[0] - d)
            if valid <= 0:
                break
            band[lo : lo + valid, d - 1] = np.einsum(
                "ij,ij->i", block[:valid], block[d : d + valid]
            )
    return band


def mean_pair_similarity(vectors: Any) -> float:
    """Mean of ``v[i] · v[j]`` over all pairs ``i < j`` (0.0 for fewer than 2).

    Uses ``sum_{i != j} v_i·v_j = |sum v|² - sum |v_i|²``, in float64 blocks: no
    n × n matrix.
    """
    vecs = np.asarray(vectors)
    n = vecs.shape[0]
    if n < 2:
        return 0.0
    total = np.zeros(vecs.shape[1], dtype=np.float64)
    squares = 0.0
    for lo in range(0, n, _BLOCK_ROWS):
        block = np.asarray(vecs[lo : lo + _BLOCK_ROWS], dtype=np.float64)
        total += block.sum(axis=0)
        squares += float(np.einsum("ij,ij->", block, block))
    off_diagonal = float(total @ total) - squares
    return float(off_diagonal / (n * (n - 1)))


def group_rewards(band: Any, mean: float, max_group: int) -> FloatArray64:
    """``(n, max_group)``: ``rewards[b, s - 1]`` is the sum of the centred
    similarities of the pairs inside pieces ``b - s + 1 .. b`` (0 for ``s = 1``).

    ``band`` is :func:`pair_similarity_band` with width at least ``max_group - 1``;
    entries for groups that would start before piece 0 are meaningless.
    """
    if max_group < 1:
        raise ValueError(f"max_group must be >= 1, got {max_group}")
    arr = np.asarray(band, dtype=np.float64)
    n = arr.shape[0]
    width = max_group - 1
    if arr.ndim != 2 or arr.shape[1] < width:
        raise ValueError(
            f"band of shape {arr.shape} is narrower than max_group - 1 = {width}"
        )
    # table[i, k] starts as piece i's centred similarities with the k pieces after
    # it (a prefix sum along the band), then is shifted along the anti-diagonals in
    # place, table[b, t] = prefix[b - t, t], and summed over t: one (n, m) array.
    table = np.zeros((n, max_group), dtype=np.float64)
    if width:
        np.subtract(arr[:, :width], mean, out=table[:, 1:])
        for d in range(1, width + 1):  # pairs past the end never enter a group
            table[max(n - d, 0) :, d] = 0.0
        np.cumsum(table[:, 1:], axis=1, out=table[:, 1:])
    for t in range(1, min(max_group, n)):
        table[t:, t] = table[: n - t, t].copy()
        table[:t, t] = 0.0  # groups that would start before piece 0
    np.cumsum(table, axis=1, out=table)
    return table


def optimal_groups(rewards: Any) -> IntArray:
    """The DP: contiguous groups maximizing the total reward, as ``(g, 2)`` int64
    ``[start, end)`` piece indices.

    ``rewards`` is :func:`group_rewards`' ``(n, m)`` table. Sizes are tried from 1 to
    ``m`` and a size replaces the best so far only if better by more than
    :data:`TIE_TOLERANCE` (relative), so ties go to the smallest last group.
    """
    table = np.asarray(rewards, dtype=np.float64)
    n = table.shape[0]
    if n == 0:
        return np.zeros((0, 2), dtype=np.int64)
    m = table.shape[1]
    best = [0.0] * (n + 1)  # best[k]: best total of the first k pieces
    size = [1] * n
    rows: list[list[float]] = []
    for b in range(n):
        if b % _BLOCK_ROWS == 0:  # Python floats for speed, a block at a time
            rows = table[b : b + _BLOCK_ROWS].tolist()
        row = rows[b % _BLOCK_ROWS]
        top = row[0] + best[b]
        bar = top + TIE_TOLERANCE * (1.0 + abs(top))
        pick = 1
        for s in range(2, min(m, b + 1) + 1):
            value = row[s - 1] + best[b + 1 - s]
            if value > bar:
                top = value
                bar = top + TIE_TOLERANCE * (1.0 + abs(top))
                pick = s
        best[b + 1] = top
        size[b] = pick
    groups: list[tuple[int, int]] = []
    end = n
    while end > 0:
        start = end - size[end - 1]
        groups.append((start, end))
        end = start
    groups.reverse()
    return as_bounds(groups)


def cluster_segments(vectors: Any, max_group: int) -> IntArray:
    """Optimal groups of at most ``max_group`` consecutive pieces, from the pieces'
    unit vectors: ``(g, 2)`` int64 ``[start, end)`` piece indices covering all
    pieces. O(n·max_group) time and memory besides the vectors."""
    if max_group < 1:
        raise ValueError(f"max_group must be >= 1, got {max_group}")
    vecs = np.asarray(vectors)
    band = pair_similarity_band(vecs, max_group - 1)
    return optimal_groups(group_rewards(band, mean_pair_similarity(vecs), max_group))


class ClusterSemanticChunker(EmbeddingChunker):
    """Pieces of at most ``min_tokens`` tokens, grouped by the DP into chunks of at
    most ``max_tokens // min_tokens`` pieces (about ``max_tokens`` tokens).

    ``embedder``: a spec string or object (see
    :func:`~pytest_chunkeval.embedders.registry.get_embedder`; default
    all-MiniLM-L6-v2);
    pieces are embedded through ``cache`` (default: the project's embedding cache).
    """

    def __init__(
        self,
        max_tokens: int = 400,
        min_tokens: int = DEFAULT_MIN_TOKENS,
        *,
        embedder: Any = None,
        cache: EmbeddingCache | str | Path | None = None,
        encoding: str | Tokenizer = DEFAULT_ENCODING,
    ) -> None:
        if min_tokens < 1:
            raise ConfigError(f"min_tokens must be >= 1, got {min_tokens}")
        if max_tokens < min_tokens:
            raise ConfigError(
                f"max_tokens ({max_tokens}) must be at least min_tokens ({min_tokens})"
            )
        self.max_tokens = int(max_tokens)
        self.min_tokens = int(min_tokens)
        self.tokenizer = get_tokenizer(encoding)
        self._set_embedding(embedder, cache)

    @property
    def max_group(self) -> int:
        """The most pieces a chunk holds: ``max_tokens // min_tokens``."""
        return self.max_tokens // self.min_tokens

    @property
    def splitter(self) -> RecursiveTokenChunker:
        """What cuts the pieces: ``RecursiveTokenChunker(min_tokens, 0)``."""
        return piece_splitter(self.min_tokens, self.tokenizer)

    @property
    def name(self) -> str:
        """The canonical spec of the parameters as they are now."""
        args = str(self.max_tokens)
        if self.min_tokens != DEFAULT_MIN_TOKENS:
            args += f":{self.min_tokens}"
        return spec_name("cluster", args, self.tokenizer, embedder=self.embedder_suffix)

    def __repr__(self) -> str:
        return (
            f"ClusterSemanticChunker({self.max_tokens}, {self.min_tokens}, "
            f"embedder={self.embedder.identity!r})"
        )

    def pieces(self, text: str) -> IntArray:
        """The ``(n, 2)`` spans of the pieces the groups are made of."""
        return self.splitter.chunk_spans(text)

    @property
    def cache_identity(self) -> str | None:
        """What determines the chunks (the chunking cache's key): the sizes, the
        tokenizer's and the embedder's identities."""
        return chunker_identity(self, self.tokenizer, embedder_part(self.embedder))

    def chunk_spans(self, text: str) -> IntArray:
        return self._chunks(text, self.pieces(text))

    def spans_from_tokens(self, text: str, tokens: IntArray) -> IntArray:
        """:meth:`chunk_spans`, counting pieces from ``text``'s token bounds
        (``chunkers/_doc_counts.py``)."""
        return self._chunks(text, self.splitter.spans_from_tokens(text, tokens))

    def _chunks(self, text: str, pieces: IntArray) -> IntArray:
        if pieces.shape[0] <= 1:
            return pieces
        vectors = self.cache.embed(self.embedder, piece_texts(text, pieces))
        groups = cluster_segments(vectors, self.max_group)
        return spans_of_groups(pieces, groups)


def piece_texts(text: str, pieces: IntArray) -> list[str]:
    """``text[start:end]`` of each span."""
    return [text[s:e] for s, e in pieces.tolist()]


def spans_of_groups(pieces: IntArray, groups: IntArray) -> IntArray:
    """Chunk spans from groups of pieces: first piece's start to last piece's end."""
    return np.stack(
        [pieces[groups[:, 0], 0], pieces[groups[:, 1] - 1, 1]], axis=1
    ).astype(np.int64)


__all__ = [
    "ClusterSemanticChunker",
    "cluster_segments",
    "group_rewards",
    "mean_pair_similarity",
    "optimal_groups",
    "pair_similarity_band",
]
