"""ClusterSemanticChunker: the banded prefix-sum DP against a straightforward one."""

from __future__ import annotations

import tracemalloc
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_chunkeval.chunkers import Chunker
from pytest_chunkeval.chunkers import cluster as cluster_module
from pytest_chunkeval.chunkers.cluster import (
    TIE_TOLERANCE,
    ClusterSemanticChunker,
    cluster_segments,
    group_rewards,
    mean_pair_similarity,
    optimal_groups,
    pair_similarity_band,
)
from pytest_chunkeval.chunkers.semantic_specs import register_semantic
from pytest_chunkeval.config.registry import Registry, UnknownSpec
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder


def straightforward_segmentation(
    matrix: np.ndarray, mean: float, max_group: int
) -> np.ndarray:
    """The reference's DP, sub-matrix sums over the full n x n matrix, except that
    dp starts at -inf (the reference starts at 0, see cluster.py's docstring) and
    a larger group must win by more than TIE_TOLERANCE (the reference: any margin).

    The sub-matrix sum counts every pair twice; the tolerance is relative to the
    pair sum, as in cluster.py."""
    centred = np.array(matrix, dtype=np.float64) - mean
    np.fill_diagonal(centred, 0.0)
    n = centred.shape[0]
    dp = np.full(n, -np.inf)
    start = np.zeros(n, dtype=int)
    for i in range(n):
        for size in range(1, max_group + 1):
            if i - size + 1 >= 0:
                block = centred[i - size + 1 : i + 1, i - size + 1 : i + 1]
                reward = np.sum(block) / 2
                if i - size >= 0:
                    reward += dp[i - size]
                if size == 1 or reward > dp[i] + TIE_TOLERANCE * (1 + abs(dp[i])):
                    dp[i] = reward
                    start[i] = i - size + 1
    groups = []
    i = n - 1
    while i >= 0:
        groups.append((start[i], i + 1))
        i = start[i] - 1
    return np.array(groups[::-1], dtype=np.int64).reshape(-1, 2)


def straightforward_from_vectors(vectors: np.ndarray, max_group: int) -> np.ndarray:
    """Full similarity matrix and the mean of its strict upper triangle."""
    v = np.asarray(vectors, dtype=np.float64)
    matrix = v @ v.T
    n = matrix.shape[0]
    mean = float(np.mean(matrix[np.triu_indices(n, k=1)])) if n > 1 else 0.0
    return straightforward_segmentation(matrix, mean, max_group)


def band_of(matrix: np.ndarray, width: int) -> np.ndarray:
    n = matrix.shape[0]
    band = np.zeros((n, width))
    for i in range(n):
        for d in range(1, width + 1):
            if i + d < n:
                band[i, d - 1] = matrix[i, i + d]
    return band


def unit_vectors(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def check_partition(groups: np.ndarray, n: int, max_group: int) -> None:
    assert groups[0, 0] == 0
    assert groups[-1, 1] == n
    assert np.array_equal(groups[1:, 0], groups[:-1, 1])
    sizes = groups[:, 1] - groups[:, 0]
    assert sizes.min() >= 1
    assert sizes.max() <= max_group


# ------------------------------------------------------------------ the DP itself


def test_random_vectors_segment_like_the_straightforward_dp():
    rng = np.random.default_rng(20240607)
    for _ in range(300):
        n = int(rng.integers(1, 70))
        max_group = int(rng.integers(1, 11))
        vectors = unit_vectors(rng, n, int(rng.integers(2, 12)))
        fast = cluster_segments(vectors, max_group)
        assert np.array_equal(fast, straightforward_from_vectors(vectors, max_group))
        check_partition(fast, n, max_group)


def test_clustered_vectors_make_multi_piece_groups():
    # Three topics of 4 pieces each: the optimum keeps each topic together.
    rng = np.random.default_rng(7)
    centres = unit_vectors(rng, 3, 16).astype(np.float64)
    vectors = np.repeat(centres, 4, axis=0) + 0.05 * rng.standard_normal((12, 16))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    groups = cluster_segments(vectors, 4)
    assert groups.tolist() == [[0, 4], [4, 8], [8, 12]]
    assert np.array_equal(groups, straightforward_from_vectors(vectors, 4))


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 24),
    max_group=st.integers(1, 7),
    mean_halves=st.integers(-4, 4),
)
def test_exact_ties_are_broken_like_the_straightforward_dp(
    data, n, max_group, mean_halves
):
    # Small integer similarities and a mean in halves: every sum is exact in
    # float64, so ties really are ties in both implementations.
    values = data.draw(
        st.lists(st.integers(-2, 2), min_size=n * n, max_size=n * n), label="values"
    )
    upper = np.triu(np.array(values, dtype=np.float64).reshape(n, n), 1)
    matrix = upper + upper.T
    mean = mean_halves / 2
    fast = optimal_groups(group_rewards(band_of(matrix, max_group), mean, max_group))
    assert np.array_equal(fast, straightforward_segmentation(matrix, mean, max_group))
    check_partition(fast, n, max_group)


def test_ties_go_to_the_smallest_last_group():
    # All similarities equal: every segmentation scores 0; the first size tried (1)
    # wins every tie, so every piece is its own group. The reference would return
    # one group of all 5 pieces here (dp starts at 0, start defaults to piece 0),
    # breaking the limit of 2 pieces per group.
    matrix = np.ones((5, 5))
    groups = straightforward_segmentation(matrix, 1.0, 2)
    assert groups.tolist() == [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]]
    fast = optimal_groups(group_rewards(band_of(matrix, 2), 1.0, 2))
    assert np.array_equal(fast, groups)


def test_group_rewards_are_the_pair_sums_of_each_group():
    rng = np.random.default_rng(3)
    vectors = unit_vectors(rng, 9, 5).astype(np.float64)
    matrix = vectors @ vectors.T
    mean = 0.125
    rewards = group_rewards(band_of(matrix, 3), mean, 4)
    for b in range(9):
        for s in range(1, min(4, b + 1) + 1):
            block = matrix[b - s + 1 : b + 1, b - s + 1 : b + 1] - mean
            np.fill_diagonal(block, 0.0)
            assert rewards[b, s - 1] == pytest.approx(block.sum() / 2, abs=1e-12)


def test_mean_pair_similarity_is_the_mean_of_the_upper_triangle():
    rng = np.random.default_rng(5)
    vectors = unit_vectors(rng, 40, 8)
    matrix = vectors.astype(np.float64) @ vectors.astype(np.float64).T
    expected = np.mean(matrix[np.triu_indices(40, k=1)])
    assert mean_pair_similarity(vectors) == pytest.approx(expected, abs=1e-12)
    assert mean_pair_similarity(vectors[:1]) == 0.0


def test_blocks_of_rows_give_the_same_results(monkeypatch):
    monkeypatch.setattr(cluster_module, "_BLOCK_ROWS", 7)
    rng = np.random.default_rng(11)
    vectors = unit_vectors(rng, 30, 6)
    matrix = vectors.astype(np.float64) @ vectors.astype(np.float64).T
    band = pair_similarity_band(vectors, 5)
    np.testing.assert_allclose(band, band_of(matrix, 5), atol=1e-12)
    assert mean_pair_similarity(vectors) == pytest.approx(
        np.mean(matrix[np.triu_indices(30, k=1)]), abs=1e-12
    )
    # The DP reads the rewards a block of rows at a time too.
    for max_group in (1, 3, 6, 9):
        assert np.array_equal(
            cluster_segments(vectors, max_group),
            straightforward_from_vectors(vectors, max_group),
        )


def test_long_inputs_use_memory_of_the_band_only():
    # 20,000 pieces: an n x n float64 matrix would need 3.2 GB; the band needs
    # 1.3 MB. The peak is measured with the vectors already allocated.
    rng = np.random.default_rng(0)
    n, max_group = 20_000, 8
    vectors = unit_vectors(rng, n, 8)
    tracemalloc.start()
    try:
        groups = cluster_segments(vectors, max_group)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    check_partition(groups, n, max_group)
    band_bytes = n * max_group * 8
    assert peak < 5 * band_bytes  # 6 MB; a dense matrix is 500x that


def test_bad_group_sizes_are_errors():
    with pytest.raises(ValueError, match="max_group"):
        cluster_segments(np.zeros((3, 2)), 0)
    with pytest.raises(ValueError, match="narrower"):
        group_rewards(np.zeros((5, 1)), 0.0, 4)


# ------------------------------------------------------------------ the chunker


class CountingEmbedder:
    """HashingEmbedder that counts the texts it embeds."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(64)
        self.identity = "counting-hashing:64"
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return self.inner.embed(texts)


TOPICS = {
    "cats": "Cats purr and nap while cats groom their soft fur and chase mice.",
    "bonds": "Bond yields rose as bond traders sold treasury bonds before the auction.",
    "rain": "Heavy rain flooded the valley and the river rain gauge overflowed again.",
}


def topic_text() -> str:
    parts = []
    for sentence in TOPICS.values():
        parts.append(" ".join([sentence] * 4))
    return "\n\n".join(parts) + "\n\n" + " ".join([TOPICS["cats"]] * 4)


@pytest.fixture
def cache(tmp_path):
    return EmbeddingCache(tmp_path / "cache")


def test_chunks_are_exact_groups_of_pieces(cache):
    text = topic_text()
    chunker = ClusterSemanticChunker(60, 20, embedder=HashingEmbedder(64), cache=cache)
    pieces = chunker.pieces(text)
    spans = chunker.chunk_spans(text)
    starts, ends = pieces[:, 0].tolist(), pieces[:, 1].tolist()
    for s, e in spans.tolist():
        first, last = starts.index(s), ends.index(e)
        assert 1 <= last - first + 1 <= chunker.max_group  # at most 60 // 20 pieces
    assert spans[0, 0] == pieces[0, 0]
    assert spans[-1, 1] == pieces[-1, 1]
    assert np.all(spans[1:, 0] > spans[:-1, 1] - 1)  # in order, no overlap
    # The repeated paragraph at the end keeps its own position.
    assert spans[-1, 0] > text.index(TOPICS["rain"])


def test_chunk_spans_match_the_straightforward_dp_on_the_pieces(cache):
    text = topic_text()
    embedder = HashingEmbedder(64)
    chunker = ClusterSemanticChunker(100, 20, embedder=embedder, cache=cache)
    pieces = chunker.pieces(text)
    vectors = embedder.embed([text[s:e] for s, e in pieces.tolist()])
    groups = straightforward_from_vectors(vectors, chunker.max_group)
    expected = [(pieces[a, 0], pieces[b - 1, 1]) for a, b in groups.tolist()]
    assert [tuple(x) for x in chunker.chunk_spans(text).tolist()] == expected


def test_pieces_are_embedded_once_through_the_cache(cache):
    text = topic_text()
    embedder = CountingEmbedder()
    chunker = ClusterSemanticChunker(60, 20, embedder=embedder, cache=cache)
    first = chunker.chunk_spans(text)
    assert sum(embedder.calls) > 0
    embedded = sum(embedder.calls)
    again = ClusterSemanticChunker(60, 20, embedder=embedder, cache=cache)
    assert np.array_equal(again.chunk_spans(text), first)
    assert sum(embedder.calls) == embedded  # all from the cache
    assert cache.stats.hits > 0


def test_short_and_empty_documents(cache):
    embedder = CountingEmbedder()
    chunker = ClusterSemanticChunker(400, embedder=embedder, cache=cache)
    assert chunker.chunk_spans("").shape == (0, 2)
    assert chunker.chunk_spans("   \n ").shape == (0, 2)
    assert chunker.chunk_spans("  One short piece.  ").tolist() == [[2, 18]]
    assert embedder.calls == []  # one piece: nothing to compare


def test_names_identify_the_configuration(cache):
    assert ClusterSemanticChunker(400, cache=cache).name == "cluster:400"
    assert (
        ClusterSemanticChunker(
            400, embedder="sentence-transformers:all-MiniLM-L6-v2", cache=cache
        ).name
        == "cluster:400"
    )
    named = ClusterSemanticChunker(200, 40, embedder=HashingEmbedder(64), cache=cache)
    assert named.name == "cluster:200:40@hashing:64@1"
    assert named.max_group == 5


def test_bad_sizes_are_errors(cache):
    with pytest.raises(ValueError, match="at least min_tokens"):
        ClusterSemanticChunker(40, 50, cache=cache)
    with pytest.raises(ValueError, match="min_tokens must be >= 1"):
        ClusterSemanticChunker(40, 0, cache=cache)


def test_spec_strings():
    registry: Registry[Chunker] = Registry("chunker")
    register_semantic(registry)
    chunker = registry.create("cluster:400")
    assert isinstance(chunker, ClusterSemanticChunker)
    assert (chunker.max_tokens, chunker.min_tokens, chunker.name) == (
        400,
        50,
        "cluster:400",
    )
    other = registry.create("cluster:250:25")
    assert isinstance(other, ClusterSemanticChunker)
    assert (other.max_group, other.name) == (10, "cluster:250:25")
    with pytest.raises(UnknownSpec, match=r"cluster:MAX_TOKENS\[:MIN_TOKENS\]"):
        registry.create("cluster:big")
    with pytest.raises(UnknownSpec, match="MAX_TOKENS is required"):
        registry.create("cluster")
    with pytest.raises(UnknownSpec, match="embedder"):
        registry.create("cluster:400@")
