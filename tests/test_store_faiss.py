"""The ``faiss`` store against the real FAISS library (docs/stores.md)."""

from __future__ import annotations

import numpy as np
import pytest
from support.stores import (
    benchmark_vectors,
    check_exact_configuration,
    check_rebuild,
    per_question,
)

from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.stores import STORES, get_store
from pytest_chunkeval.stores._base import StoreError
from pytest_chunkeval.stores._candidates import RerankedIndex

pytest.importorskip("faiss", reason="faiss-cpu not installed: pip install '.[faiss]'")


def test_flat_gives_the_exact_order_ties_included():
    vectors, _ = benchmark_vectors()
    check_exact_configuration(get_store("faiss?index=flat").index("k", vectors))


@pytest.mark.parametrize("copies", [False, True])
def test_flat_gives_the_exact_stores_per_question_results(tmp_path, copies):
    # every question's rows and metrics, ties included: identical chunks (every
    # document twice) and different chunks of mathematically equal cosines
    exact = per_question("exact", tmp_path, copies=copies)
    assert per_question("faiss?index=flat", tmp_path, copies=copies) == exact


@pytest.mark.parametrize(
    "spec", ["faiss", "faiss?M=8&efSearch=8", "faiss?index=ivf&nlist=40&nprobe=2"]
)
def test_approximate_indexes_return_valid_reranked_rows(spec):
    vectors, queries = benchmark_vectors()
    index = get_store(spec).index("k", vectors)
    got = index.search(queries, 5)
    assert got.shape == (len(queries), 5)
    assert (got >= 0).all()
    assert all(len(set(row)) == 5 for row in got.tolist())
    scores = np.einsum("qd,qkd->qk", queries, vectors[got])
    assert (np.diff(scores, axis=1) <= 1e-6).all()  # best first
    # the same index on a second build: FAISS adds on one thread
    again = get_store(spec).index("k", vectors).search(queries, 5)
    np.testing.assert_array_equal(got, again)


def test_a_cheaper_setting_loses_against_exact():
    vectors, queries = benchmark_vectors()
    flat = get_store("faiss?index=flat").index("k", vectors).search(queries, 5)
    cheap = get_store("faiss?M=4&efSearch=4").index("k", vectors).search(queries, 5)
    assert (flat != cheap).any(axis=1).mean() > 0.2


def test_every_setting_is_in_the_name_and_the_identity():
    names = {get_store(s).name for s in ("faiss", "faiss?efSearch=17", "faiss?M=8")}
    assert len(names) == 3
    ids = {get_store(s).identity for s in ("faiss", "faiss?efSearch=17")}
    assert len(ids) == 2
    assert "efSearch=16" in get_store("faiss").identity
    assert STORES.label("faiss?index=hnsw&efSearch=16") == "faiss"


def test_a_setting_of_another_index_type_is_refused():
    with pytest.raises(ConfigError, match="M= applies to index=hnsw"):
        get_store("faiss?index=flat&M=8")


def test_ivf_with_fewer_vectors_than_lists_is_a_clear_error():
    vectors, _ = benchmark_vectors()
    with pytest.raises(StoreError, match=r"nlist=100 centroids.*got 50"):
        get_store("faiss?index=ivf").index("k", vectors[:50])


def test_a_tie_group_longer_than_the_fetch_is_fetched_deeper():
    # 40 identical vectors: an engine returning the highest rows first
    vectors = np.ones((40, 4), dtype=np.float32) / 2

    def engine(queries, depth):
        return np.tile(np.arange(39, 39 - depth, -1), (len(queries), 1))

    got = RerankedIndex(vectors, engine).search(vectors[:2], 3)
    np.testing.assert_array_equal(got, [[0, 1, 2], [0, 1, 2]])


def test_an_index_setting_is_another_search_cache_key_and_configuration():
    from pytest_chunkeval.engine.keys import vector_search_key

    queries = np.eye(3, dtype=np.float32)
    keys = {
        vector_search_key(get_store(spec), "ab" * 32, queries, 5)
        for spec in ("faiss", "faiss?efSearch=32", "faiss?M=16", "faiss?index=flat")
    }
    assert len(keys) == 4
    labels = {STORES.label(s) for s in ("faiss", "faiss?efSearch=32", "faiss?M=16")}
    assert len(labels) == 3  # what baselines record as the store


@pytest.mark.parametrize(
    "spec", ["faiss?index=flat", "faiss", "faiss?index=ivf&nlist=8"]
)
def test_an_index_is_built_again_under_a_seed(spec):
    check_rebuild(get_store(spec))
