"""The ``lancedb`` store against the real embedded LanceDB (docs/stores.md)."""

from __future__ import annotations

import os

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

pytest.importorskip("lancedb", reason="lancedb not installed: pip install '.[lancedb]'")


def test_without_index_gives_the_exact_order_ties_included():
    vectors, _ = benchmark_vectors()
    with get_store("lancedb") as store:
        check_exact_configuration(store.index("k", vectors), questions=120)


def test_without_index_gives_the_exact_stores_per_question_results(tmp_path):
    exact = per_question("exact", tmp_path)
    store = get_store("lancedb?index=none")
    try:
        found = per_question(store, tmp_path)
    finally:
        store.close()
    assert found == exact  # every question's rows and metrics, ties included


def test_ann_indexes_are_built_and_searched():
    vectors, queries = benchmark_vectors()
    vectors, queries = vectors[: len(vectors) // 2], queries[:100]
    exact = get_store("exact").index("k", vectors).search(queries, 5)
    lost = {}
    for spec in (
        "lancedb?index=ivf_flat&nprobes=1",
        "lancedb?index=ivf_pq",
        "lancedb?index=ivf_hnsw_sq&ef=8&m=4",
    ):
        with get_store(spec) as store:
            got = store.index("k", vectors).search(queries, 5)
            assert (got >= 0).all()
            lost[spec] = (got != exact).any(axis=1).mean()
    assert min(lost.values()) > 0.0, lost  # every index lost some question


def test_the_folder_is_removed_when_closed():
    vectors, _ = benchmark_vectors()
    store = get_store("lancedb")
    store.index("k", vectors[:30])
    folder = store._folder["path"]
    assert os.listdir(folder)
    store.close()
    assert not os.path.exists(folder)


def test_pq_with_too_few_vectors_is_a_clear_error():
    vectors, _ = benchmark_vectors()
    with pytest.raises(StoreError, match="needs at least 256 vectors, got 100"):
        get_store("lancedb?index=ivf_pq").index("k", vectors[:100])


def test_settings_are_named_and_checked():
    assert STORES.label("lancedb?index=none") == "lancedb"
    assert STORES.label("lancedb?index=ivf_pq&nprobes=20") == "lancedb?index=ivf_pq"
    assert "refine_factor=0" in get_store("lancedb?index=ivf_pq").identity
    assert get_store("lancedb?index=ivf_pq&refine_factor=2").name.endswith(
        "refine_factor=2"
    )
    with pytest.raises(ConfigError, match="ef= applies to index=ivf_hnsw_sq"):
        get_store("lancedb?index=ivf_flat&ef=9")


@pytest.mark.parametrize("spec", ["lancedb", "lancedb?index=ivf_pq"])
def test_an_index_is_built_again_under_a_seed(spec):
    with get_store(spec) as store:
        check_rebuild(store)
