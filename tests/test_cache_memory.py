"""The embedding cache keeps one copy of what it computes (docs/performance.md,
"Memory"), and the vectors it returns are those it stores, bitwise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from support.counting import CountingEmbedder, expected

from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.packs import IdentityStore, text_key


def test_a_new_pack_keeps_the_vectors_given_not_a_decoded_copy(
    tmp_path: Path,
) -> None:
    store = IdentityStore(tmp_path / "ident", "ident@1")
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((5, 8)).astype(np.float32)
    keys = [text_key(f"t{i}") for i in range(5)]
    path = store.add(keys, vectors)
    [pack] = store.packs.values()
    assert np.shares_memory(pack.vectors, vectors)
    assert not pack.vectors.flags.writeable
    # the file holds the same vectors, read back by another process' store
    other = IdentityStore(tmp_path / "ident", "ident@1")
    other.refresh()
    [read] = other.packs.values()
    assert read.keys == b"".join(keys)
    assert read.vectors.tobytes() == vectors.tobytes()
    assert path.exists()


def test_hits_misses_and_repeats_come_back_in_order_bitwise(tmp_path: Path) -> None:
    """Cached rows are gathered and new ones written into the same array;
    repeated texts are copied out of it; distinct texts return it as is."""
    cache = EmbeddingCache(tmp_path, batch_size=2)
    first = cache.embed(CountingEmbedder(), ["c", "a", "e"])
    texts = ["a", "b", "a", "c", "d", "e", "b"]
    emb = CountingEmbedder()
    got = cache.embed(emb, texts)
    assert sorted(emb.embedded) == ["b", "d"]
    np.testing.assert_allclose(got, expected(texts), rtol=1e-6)
    np.testing.assert_array_equal(got[[3, 0, 5]], first)
    distinct = cache.embed(CountingEmbedder(), ["e", "d", "f"])
    np.testing.assert_array_equal(distinct[:2], got[[5, 4]])
    assert distinct.flags.writeable
    assert distinct.flags.owndata
    # what the next process reads from disk is what this one returned
    again = EmbeddingCache(tmp_path).embed(CountingEmbedder(), texts)
    assert again.tobytes() == got.tobytes()
