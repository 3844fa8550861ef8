"""The exact store ranks its best rows again in float64, as the engine stores
do (stores/exact.py, stores/_candidates.py): chunks whose cosines are
mathematically equal tie whatever float32's rounding of a tile, so exact
search's rows depend neither on the BLAS library nor on its block size, and
every exact configuration of an engine returns them (docs/stores.md)."""

from __future__ import annotations

import numpy as np
from support.stores import benchmark_vectors

from pytest_chunkeval.core.ranking import content_ties
from pytest_chunkeval.stores import get_store
from pytest_chunkeval.stores.exact import ExactStore


def test_mathematically_equal_cosines_tie_and_go_by_content():
    # one vector's components rotated: the same cosine with a uniform query,
    # which a float32 product rounds to 3 different values
    base = np.random.default_rng(7).normal(size=8).astype(np.float32)
    rotated = np.stack([np.roll(base, s) for s in range(8)])
    query = np.full((1, 8), 8**-0.5, dtype=np.float32)
    assert len(set((rotated @ query[0]).tolist())) > 1
    ties = content_ties([f"chunk {i}" for i in range(8)])
    found = get_store("exact").index("k", rotated).search(query, 8, ties=ties)  # type: ignore[union-attr]
    np.testing.assert_array_equal(found[0], np.argsort(ties, kind="stable"))


def test_exact_rows_do_not_depend_on_the_block_size():
    vectors, queries = benchmark_vectors()
    vectors = vectors[: len(vectors) // 2]  # each chunk once
    wide = ExactStore().index("k", vectors).search(queries, 5)
    # 4 questions a block: float32 products of another shape (2 questions'
    # rows differed from the default's before the float64 ranking)
    narrow = ExactStore(block_bytes=1 << 12).index("k", vectors).search(queries, 5)
    np.testing.assert_array_equal(wide, narrow)
