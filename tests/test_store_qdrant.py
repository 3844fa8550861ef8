"""The Qdrant stores (docs/stores.md): ``qdrant`` against the Qdrant engine
embedded (Qdrant Edge: the engine's segments, optimizer and HNSW graph, in
process); ``qdrant+http://`` through qdrant-client, whose code is run here
against the client's local mode (a Python exact search, not the engine: no
Qdrant server can be started in the tests)."""

from __future__ import annotations

import os

import pytest
from support.stores import (
    benchmark_vectors,
    check_exact_configuration,
    check_rebuild,
    per_question,
)

from pytest_chunkeval.stores import STORES, get_store
from pytest_chunkeval.stores.qdrant import QdrantStore

GRAPH = "full_scan_threshold=1&indexing_threshold=1"  # graph even on small data


def _edge() -> None:
    pytest.importorskip("qdrant_edge", reason="pip install '.[qdrant]'")


def test_exact_search_gives_the_exact_order_ties_included():
    _edge()
    vectors, _ = benchmark_vectors()
    with get_store("qdrant?index=none") as store:
        check_exact_configuration(store.index("k", vectors), questions=200)


def test_exact_search_gives_the_exact_stores_per_question_results(tmp_path):
    _edge()
    exact = per_question("exact", tmp_path)
    store = get_store("qdrant?index=none")
    try:
        found = per_question(store, tmp_path)
    finally:
        store.close()
    assert found == exact  # every question's rows and metrics, ties included


def test_the_hnsw_graph_is_built_and_searched():
    _edge()
    vectors, queries = benchmark_vectors()
    vectors = vectors[: len(vectors) // 2]
    exact = get_store("exact").index("k", vectors).search(queries, 5)
    lost = {}
    for spec in (f"qdrant?{GRAPH}", f"qdrant?{GRAPH}&m=4&ef_construct=8&hnsw_ef=4"):
        with get_store(spec) as store:
            got = store.index("k", vectors).search(queries, 5)
            assert (got >= 0).all()
            lost[spec] = (got != exact).any(axis=1).mean()
    cheap = lost[f"qdrant?{GRAPH}&m=4&ef_construct=8&hnsw_ef=4"]
    assert cheap > lost[f"qdrant?{GRAPH}"]
    assert cheap > 0.3, lost


def test_the_folder_is_removed_when_closed():
    _edge()
    vectors, _ = benchmark_vectors()
    store = get_store("qdrant")
    store.index("k", vectors[:30])
    folder = store._state["folder"]
    assert os.listdir(folder)
    store.close()
    assert not os.path.exists(folder)


@pytest.mark.filterwarnings("ignore:Local mode performs exact:UserWarning")
def test_server_code_path_creates_and_deletes_only_its_collection():
    qc = pytest.importorskip("qdrant_client", reason="pip install '.[qdrant]'")
    client = qc.QdrantClient(location=":memory:")
    client.create_collection(
        "team_docs",
        vectors_config=qc.models.VectorParams(size=4, distance=qc.models.Distance.DOT),
    )
    vectors, queries = benchmark_vectors()
    store = QdrantStore(url="http://127.0.0.1:6333", client=client, index="none")
    got = store.index("k", vectors[:300]).search(queries[:20], 5)
    exact = get_store("exact").index("k", vectors[:300]).search(queries[:20], 5)
    assert (got[:, 0] == exact[:, 0]).all()
    made = store.collections()
    assert len(made) == 1
    assert made[0].startswith("chunkeval_")
    names = {c.name for c in client.get_collections().collections}
    assert names == {"team_docs", made[0]}
    store.close()
    assert {c.name for c in client.get_collections().collections} == {"team_docs"}


def test_specs_and_names():
    assert STORES.label("qdrant?index=hnsw&m=16") == "qdrant"
    server = get_store("qdrant+http://qdrant.internal?m=8&api_key_env=TEAM_KEY")
    assert server.name.startswith("qdrant+http://qdrant.internal:6333?index=hnsw&m=8")
    assert "TEAM_KEY" not in server.name
    assert get_store("qdrant").identity.startswith("qdrant-edge/")
    assert get_store("qdrant?hnsw_ef=64").name != get_store("qdrant").name


@pytest.mark.parametrize("spec", ["qdrant?index=none", f"qdrant?{GRAPH}"])
def test_an_index_is_built_again_under_a_seed(spec):
    _edge()
    with get_store(spec) as store:
        check_rebuild(store)


def test_a_baseline_records_no_server_address():
    from pytest_chunkeval.gate.files.portable import portable_store

    laptop = STORES.label("qdrant+http://127.0.0.1:6333?m=8")
    ci = STORES.label("qdrant+https://qdrant.ci.internal:443?m=8")
    # as the engine embedded with the same settings (stores/qdrant.py portable_name)
    embedded = get_store("qdrant?m=8").name
    assert portable_store(laptop) == portable_store(ci) == embedded
    assert "6333" not in embedded
    hybrid = portable_store("hybrid:qdrant+http://h:1?n=5")
    assert hybrid == get_store("hybrid:qdrant?n=5").name
