"""Exact search under ties: identical chunk texts score identically, and whichever
copies make the top ``k`` must be those a stable full sort picks (the lower row
wins), however many copies tie at the ``k``-th place."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pytest_chunkeval.stores import exact
from pytest_chunkeval.stores._topk import TopK
from pytest_chunkeval.stores.exact import ExactIndex, top_rows


def stable_cut(neg: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.int64]:
    """The definition: a stable sort of each whole row, cut at ``k``."""
    return np.argsort(neg, axis=1, kind="stable")[:, :k]


# Few distinct values (heavy ties), or any finite float32 (ties by chance only).
FEW_VALUES = st.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0])
ANY_VALUE = st.floats(-2.0, 2.0, width=32, allow_subnormal=False)


@settings(max_examples=300, deadline=None)
@given(
    neg=st.sampled_from([FEW_VALUES, ANY_VALUE]).flatmap(
        lambda values: hnp.arrays(
            np.float32,
            hnp.array_shapes(min_dims=2, max_dims=2, max_side=40),
            elements=values,
        )
    ),
    data=st.data(),
)
def test_top_rows_equals_a_stable_sort(
    neg: npt.NDArray[np.float32], data: st.DataObject
) -> None:
    k = data.draw(st.integers(1, neg.shape[1]))
    np.testing.assert_array_equal(top_rows(neg, k), stable_cut(neg, k))


@settings(max_examples=100, deadline=None)
@given(
    distinct=st.integers(1, 12),
    copies=st.integers(1, 30),
    k=st.integers(1, 25),
    seed=st.integers(0, 2**32 - 1),
    block_bytes=st.sampled_from([1, 64, 1 << 12, 1 << 24]),
)
def test_exact_search_with_many_copies_equals_a_stable_sort(
    distinct: int, copies: int, k: int, seed: int, block_bytes: int
) -> None:
    rng = np.random.default_rng(seed)
    # Components in quarters: dot products are exact in float32, so copies tie
    # exactly whatever the BLAS kernel, and so do different vectors by chance.
    base = rng.integers(-4, 5, size=(distinct, 8)).astype(np.float32) / 4
    vectors = base[rng.integers(0, distinct, size=distinct * copies)]
    queries = np.concatenate([base, rng.integers(-4, 5, (5, 8)) / 4]).astype(np.float32)
    got = ExactIndex(vectors, block_bytes=block_bytes).search(queries, k)
    take = min(k, len(vectors))
    want = stable_cut(-(queries @ vectors.T), take)
    np.testing.assert_array_equal(got[:, :take], want)
    assert (got[:, take:] == -1).all()


def test_hundred_copies_of_every_row_tie_at_every_query() -> None:
    # The worst case of the 100x verbatim benchmark: every text 100 times.
    rng = np.random.default_rng(7)
    base = rng.integers(-4, 5, size=(300, 16)).astype(np.float32) / 4
    vectors = np.tile(base, (100, 1))
    neg = -(base[:50] @ vectors.T)
    kth = np.sort(neg, axis=1)[:, 4:5]
    assert (np.count_nonzero(neg <= kth, axis=1) > 5).all()  # ties at every query
    got = ExactIndex(vectors).search(base[:50], 5)
    np.testing.assert_array_equal(got, stable_cut(neg, 5))


def test_ties_sort_no_more_than_k_values(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every value tied (a zero query vector) in a long row: the first k columns,
    # found without sorting the row.
    sorted_lengths: list[int] = []
    for name in ("argsort", "lexsort", "sort"):
        real = getattr(np, name)

        def recording(a: Any, *args: Any, _real: Any = real, **kw: Any) -> Any:
            shape = np.shape(a)
            sorted_lengths.append(shape[-1] if shape else 0)
            return _real(a, *args, **kw)

        monkeypatch.setattr(np, name, recording)
    neg = np.zeros((2, 200_000), dtype=np.float32)
    neg[1, 5] = -1.0
    assert top_rows(neg, 3).tolist() == [[0, 1, 2], [5, 0, 1]]
    assert sorted_lengths
    assert max(sorted_lengths) <= 3


def test_a_query_asked_twice_is_searched_once(monkeypatch: pytest.MonkeyPatch) -> None:
    searched: list[int] = []

    class Recording(TopK):
        def __init__(self, rows: int, *args: Any, **kw: Any) -> None:
            searched.append(rows)
            super().__init__(rows, *args, **kw)

    monkeypatch.setattr(exact, "TopK", Recording)
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((50, 8)).astype(np.float32)
    queries = vectors[[4, 9, 4, 4, 30, 9]]
    got = ExactIndex(vectors).search(queries, 3)
    assert sum(searched) == 3
    np.testing.assert_array_equal(got, stable_cut(-(queries @ vectors.T), 3))
    assert got[0].tolist() == got[2].tolist() == got[3].tolist()
