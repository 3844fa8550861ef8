"""Vector stores: exact top-k against a brute-force reference, Chroma in-process and
persistent behaviour (reuse, eviction, padding), spec parsing. No server here: see
``test_chroma_server.py``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from support.agreement import clustered_vectors, index_in_subprocess, rotations

from pytest_chunkeval.config.registry import UnknownSpec
from pytest_chunkeval.core.ranking import content_ties
from pytest_chunkeval.stores import (
    STORES,
    ChromaIndex,
    ChromaStore,
    ExactIndex,
    ExactStore,
    Store,
    VectorIndex,
    collection_name,
    get_store,
)


def normalized(rows: int, dim: int, seed: int = 0) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((rows, dim)).astype(np.float32)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def reference_topk(
    vectors: npt.NDArray[np.float32], queries: npt.NDArray[np.float32], k: int
) -> npt.NDArray[np.int64]:
    """Full stable sort per query: the definition of exact top-k with index ties."""
    out = np.full((len(queries), k), -1, dtype=np.int64)
    for row, query in enumerate(queries):
        scores = vectors @ query
        order = sorted(range(len(vectors)), key=lambda i: (-scores[i], i))[:k]
        out[row, : len(order)] = order
    return out


# -- exact ------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 5, 10, 299, 300, 305])
def test_exact_matches_a_full_stable_sort(k: int) -> None:
    vectors, queries = normalized(300, 24), normalized(40, 24, seed=1)
    got = ExactStore().index("k", vectors).search(queries, k)
    assert got.dtype == np.int64
    assert got.shape == (40, k)
    np.testing.assert_array_equal(got, reference_topk(vectors, queries, k))


def test_exact_breaks_ties_by_lower_row_index() -> None:
    # Rows 1, 3, 5, 7 are the same vector: whichever of them make the top 3
    # must be the lowest indices, in index order, even across the cut.
    base = normalized(8, 6)
    base[[3, 5, 7]] = base[1]
    query = base[1:2]
    got = ExactStore().index("k", base).search(query, 3)
    assert got.tolist() == [[1, 3, 5]]
    assert ExactStore().index("k", base).search(query, 5)[0, :4].tolist() == [
        1,
        3,
        5,
        7,
    ]


def test_exact_ties_everywhere() -> None:
    vectors = np.tile(normalized(1, 4), (50, 1))
    got = ExactStore().index("k", vectors).search(vectors[:3], 7)
    assert got.tolist() == [list(range(7))] * 3


def test_exact_blocks_do_not_change_results() -> None:
    vectors, queries = clustered_vectors(500, 60, dim=32, seed=3)
    whole = ExactIndex(vectors, block_bytes=1 << 30).search(queries, 10)
    # 4 bytes x 500 vectors: one query per block.
    tiny = ExactIndex(vectors, block_bytes=1).search(queries, 10)
    np.testing.assert_array_equal(whole, tiny)


def test_exact_pads_and_handles_empty_inputs() -> None:
    vectors = normalized(3, 8)
    index = ExactStore().index("k", vectors)
    padded = index.search(vectors[:2], 5)
    assert padded[:, 3:].tolist() == [[-1, -1], [-1, -1]]
    assert sorted(padded[0, :3].tolist()) == [0, 1, 2]
    assert index.search(vectors[:2], 0).shape == (2, 0)
    assert index.search(np.zeros((0, 8), np.float32), 4).shape == (0, 4)
    empty = ExactStore().index("k", np.zeros((0, 8), np.float32))
    assert empty.search(vectors, 2).tolist() == [[-1, -1]] * 3


def test_exact_rejects_bad_input() -> None:
    vectors = normalized(5, 8)
    index = ExactStore().index("k", vectors)
    with pytest.raises(ValueError, match=r"dimension 4 but the index holds .* 8"):
        index.search(normalized(2, 4), 3)
    with pytest.raises(ValueError, match="k must be >= 0"):
        index.search(vectors, -1)
    with pytest.raises(TypeError, match="k must be an int"):
        index.search(vectors, 2.0)  # type: ignore[arg-type]
    broken = vectors.copy()
    broken[2, 1] = np.nan
    with pytest.raises(ValueError, match="row 2 holds NaN"):
        ExactStore().index("k", broken)
    with pytest.raises(ValueError, match="2-D"):
        ExactStore().index("k", vectors[0])


def test_vectors_are_checked_finite_a_block_of_rows_at_a_time() -> None:
    """No mask of the whole matrix (docs/performance.md, "Memory"): the check
    holds a small part of the vectors' size, and names the row past a block."""
    import tracemalloc

    vectors = np.ones((8192, 256), dtype=np.float32)
    tracemalloc.start()
    try:
        ExactStore().index("k", vectors)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < vectors.nbytes // 6  # a mask of them all: a quarter
    vectors[6000, 3] = np.inf
    with pytest.raises(ValueError, match="row 6000 holds NaN or infinite"):
        ExactStore().index("k", vectors)


# -- specs ------------------------------------------------------------------------


def test_specs() -> None:
    assert isinstance(get_store("exact"), ExactStore)
    assert get_store("exact").name == "exact"
    chroma = get_store("chroma")
    assert isinstance(chroma, ChromaStore)
    assert (chroma.name, chroma.kind) == ("chroma", "ephemeral")
    disk = get_store("chroma:/tmp/somewhere")
    assert isinstance(disk, ChromaStore)
    assert (disk.name, disk.kind) == ("chroma:/tmp/somewhere", "persistent")
    server = get_store("chroma+http://127.0.0.1:8123")
    assert isinstance(server, ChromaStore)
    assert (server.host, server.port, server.kind) == ("127.0.0.1", 8123, "http")
    assert server.name == "chroma+http://127.0.0.1:8123"
    v6 = get_store("chroma+https://[::1]")
    assert isinstance(v6, ChromaStore)
    assert (v6.host, v6.port, v6.ssl) == ("::1", 8000, True)
    assert v6.name == "chroma+https://[::1]:8000"
    assert {"exact", "chroma", "chroma+http"} <= set(STORES)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("milvus", "unknown store 'milvus'; valid forms: .*chroma\\+http://HOST:PORT"),
        ("exact:fast", "takes no arguments"),
        ("chroma+http:localhost:8000", "expected http://HOST:PORT"),
        ("chroma+http://localhost:port", "bad port"),
        ("chroma+http://:8000", "no host"),
        ("chroma+http://h:1/api", "unexpected path"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(UnknownSpec, match=message):
        get_store(spec)


def test_get_store_accepts_store_objects() -> None:
    class Mine:
        name = "mine"

        def index(self, key: str, vectors: npt.NDArray[np.float32]) -> VectorIndex:
            return ExactIndex(vectors)

    mine = Mine()
    assert isinstance(mine, Store)
    assert get_store(mine) is mine
    with pytest.raises(TypeError, match="got int"):
        get_store(3)  # type: ignore[arg-type]


def test_specs_do_not_import_chromadb() -> None:
    code = (
        "import sys; from pytest_chunkeval.stores import get_store; "
        "get_store('chroma'); get_store('chroma+http://127.0.0.1:1'); "
        "assert 'chromadb' not in sys.modules; assert 'pytest' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_collection_names_follow_chroma_rules() -> None:
    assert collection_name("ab" * 32) == "chunkeval-" + "ab" * 32
    assert collection_name("0123456789abcdef") == "chunkeval-0123456789abcdef"
    odd = collection_name("not hex / with spaces")
    assert len(odd) == 10 + 64
    assert collection_name("AB" * 32) != collection_name("ab" * 32)
    assert odd.startswith("chunkeval-")
    assert odd[10:].isalnum()


# -- chroma in-process --------------------------------------------------------------

needs_chroma = pytest.mark.skipif(
    importlib.util.find_spec("chromadb") is None, reason="chromadb is not installed"
)


def key(i: int) -> str:
    return f"{i:064x}"


@needs_chroma
def test_ephemeral_agrees_with_exact_and_reuses() -> None:
    vectors, queries = clustered_vectors(400, 30, dim=32, seed=5)
    store = ChromaStore(keep=4)
    first = store.index(key(101), vectors)
    assert not first.reused
    exact = ExactStore().index("k", vectors).search(queries, 5)
    got = first.search(queries, 5)
    assert (got == exact).all(axis=1).mean() >= 0.95
    again = ChromaStore().index(key(101), vectors)  # a second store, same system
    assert again.reused
    np.testing.assert_array_equal(again.search(queries, 5), got)


@needs_chroma
def test_ephemeral_keys_do_not_collide() -> None:
    a, b = normalized(50, 8, seed=1), normalized(70, 8, seed=2)
    store = ChromaStore()
    index_a, index_b = store.index(key(201), a), store.index(key(202), b)
    assert len(index_a) == 50
    assert index_a.collection.count() == 50
    assert index_b.collection.count() == 70
    assert index_a.search(a[:3], 1)[:, 0].tolist() == [0, 1, 2]
    assert index_b.search(b[-3:], 1)[:, 0].tolist() == [67, 68, 69]


@needs_chroma
def test_ephemeral_rebuilds_changed_vectors() -> None:
    store = ChromaStore()
    store.index(key(301), normalized(40, 8, seed=1))
    changed = normalized(40, 8, seed=9)
    index = store.index(key(301), changed)
    assert not index.reused
    assert index.search(changed[:4], 1)[:, 0].tolist() == [0, 1, 2, 3]
    grown = np.vstack([changed, normalized(5, 8, seed=3)])
    index = store.index(key(301), grown)  # a partial collection is completed
    assert not index.reused
    assert index.collection.count() == 45
    assert index.search(grown[-2:], 1)[:, 0].tolist() == [43, 44]


@needs_chroma
def test_ephemeral_evicts_idle_collections_only() -> None:
    store = ChromaStore(keep=2)
    vecs = normalized(20, 8)
    held = store.index(key(401), vecs)
    for i in range(402, 407):
        store.index(key(i), vecs)  # dropped at once: idle
    names = set(store.collections())
    assert held.name in names  # still referenced, so kept
    assert collection_name(key(406)) in names
    assert collection_name(key(405)) in names
    assert not {collection_name(key(i)) for i in range(402, 405)} & names
    assert held.search(vecs[:2], 1)[:, 0].tolist() == [0, 1]
    del held
    store.index(key(407), vecs)
    assert collection_name(key(401)) not in store.collections()


@needs_chroma
@pytest.mark.parametrize("spec", ["chroma", "chroma?ef_search=1"])
def test_chroma_ranks_its_candidates_by_the_plugins_scorer_and_tie_rule(
    spec: str,
) -> None:
    # Chroma's own float32 distances split these equal cosines (into 2 values
    # here); re-ranked in float64 they tie and go by content (docs/stores.md,
    # "Test your production index"), as exact search orders them
    rows, query = rotations()
    ties = content_ties([f"chunk {i}" for i in range(len(rows))])
    got = get_store(spec).index(key(801), rows).search(query, len(rows), ties=ties)  # type: ignore[union-attr]
    np.testing.assert_array_equal(got[0], np.argsort(ties, kind="stable"))
    exact = ExactStore().index("k", rows).search(query, len(rows), ties=ties)
    np.testing.assert_array_equal(got, exact)


@needs_chroma
def test_chroma_gives_exact_searchs_order_where_it_found_the_same_rows() -> None:
    # sparse vectors of -1/0/1: many equal cosines at rank k, which Chroma's
    # float32 distances chose among by rounding (190 of 200 questions
    # identical to exact search before the re-ranking, 200 after)
    rng = np.random.default_rng(3)
    ternary = rng.choice([-1.0, 0.0, 0.0, 0.0, 1.0], size=(800, 64))
    ternary[np.abs(ternary).sum(axis=1) == 0, 0] = 1.0
    rows = (ternary / np.linalg.norm(ternary, axis=1, keepdims=True)).astype(np.float32)
    vectors, queries = rows[:600], rows[600:]
    got = get_store("chroma").index(key(802), vectors).search(queries, 5)  # type: ignore[union-attr]
    exact = ExactStore().index("k", vectors).search(queries, 5)
    assert (got == exact).all(axis=1).sum() >= 198


@needs_chroma
def test_chroma_pads_small_and_empty_collections() -> None:
    store = ChromaStore()
    vecs = normalized(3, 8)
    got = store.index(key(501), vecs).search(vecs[:2], 6)
    assert got.shape == (2, 6)
    assert got[:, 3:].tolist() == [[-1] * 3] * 2
    assert got[:, 0].tolist() == [0, 1]
    empty = store.index(key(502), np.zeros((0, 8), np.float32))
    assert empty.search(vecs, 2).tolist() == [[-1, -1]] * 3
    with pytest.raises(ValueError, match="dimension 4"):
        store.index(key(501), vecs).search(normalized(1, 4), 2)


@needs_chroma
def test_persistent_reopen_reuses_without_adding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors, queries = clustered_vectors(300, 20, dim=16, seed=7)
    np.save(tmp_path / "v.npy", vectors)
    spec = f"chroma:{tmp_path / 'db'}"
    # Built by another process, as by an earlier test run.
    assert index_in_subprocess(spec, key(601), tmp_path / "v.npy") == "reused=False"

    from chromadb.api.models.Collection import Collection

    def no_add(*args: object, **kwargs: object) -> None:
        raise AssertionError("a reopened collection must not be re-added")

    monkeypatch.setattr(Collection, "add", no_add)
    monkeypatch.setattr(Collection, "upsert", no_add)
    index = get_store(spec).index(key(601), vectors)
    assert isinstance(index, ChromaIndex)
    assert index.reused
    exact = ExactStore().index("k", vectors).search(queries, 5)
    assert (index.search(queries, 5) == exact).all(axis=1).mean() >= 0.95


@needs_chroma
def test_joins_a_users_ephemeral_client_and_never_loads_chromas_model() -> None:
    # The user's own chromadb client (default settings) came first; Chroma refuses
    # a second in-process system with other settings, so the store joins theirs.
    code = (
        "import sys, chromadb, numpy as np\n"
        "mine = chromadb.EphemeralClient()\n"
        "from pytest_chunkeval.stores import get_store\n"
        "v = np.eye(4, dtype=np.float32)\n"
        "index = get_store('chroma').index('ab' * 32, v)\n"
        "assert index.search(v[:2], 1).tolist() == [[0], [1]]\n"
        "assert 'chunkeval-' + 'ab' * 32 in [c.name for c in mine.list_collections()]\n"
        "assert 'onnxruntime' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
