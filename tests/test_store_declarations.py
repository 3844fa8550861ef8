"""What a store declares (stores/_base.py, docs/stores.md "What a store declares"):
where it lives left out of baselines (``portable_name``), whether pytest-xdist
workers can share it (``xdist_safe``), whether it is the reference search
(``reference``), and the cosines its index gives with its rows
(``search_scored``). The plugin reads these, never a store's type."""

from __future__ import annotations

import numpy as np
import pytest
from support.tiny_corpus import DOCS, make_queries

from pytest_chunkeval.config.options import Settings
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.engine.evidence import approximate
from pytest_chunkeval.engine.recorded import PORTABLE_STORE
from pytest_chunkeval.engine.retrieve import RetrievalInputs, retrieve
from pytest_chunkeval.engine.search_cache import SearchCache
from pytest_chunkeval.engine.setup import EvaluationSetup
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.gate.files.recording import recorded_config
from pytest_chunkeval.run.components import Components
from pytest_chunkeval.stores import (
    STORES,
    StoreError,
    get_store,
    measures_loss,
    portable_name,
    portable_spec,
    xdist_problem,
)
from pytest_chunkeval.stores._candidates import RerankedIndex
from pytest_chunkeval.stores.exact import ExactIndex


class OwnIndex:
    """An index of one's own: exact search, scores of its own making."""

    def __init__(self, vectors, scores=None):
        self.vectors = vectors
        self.scores = scores

    def search(self, queries, k):
        return ExactIndex(self.vectors).search(queries, k)

    def search_scored(self, queries, k):
        rows = self.search(queries, k)
        if self.scores is not None:
            return rows, self.scores
        return rows, np.full(rows.shape, 0.25)


class OwnStore:
    """A store of one's own (a server of the team's, say)."""

    def __init__(self, name="mine+http://10.0.0.7:9000?m=8", **declared):
        self.name = name
        self.index_scores = declared.pop("index_scores", "yes")
        for key, value in declared.items():
            setattr(self, key, value)

    def index(self, key, vectors):
        if self.index_scores == "no":
            return ExactIndex(vectors)
        return OwnIndex(vectors, None if self.index_scores == "yes" else np.zeros(1))


# -- portable_name --------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "recorded"),
    [
        ("chroma:/home/ann/db", "chroma"),
        ("chroma+http://127.0.0.1:8769", "chroma"),
        ("chroma+https://chroma.ci:443?ef_search=7", "chroma?ef_search=7"),
        ("chroma:db?max_neighbors=4", "chroma?max_neighbors=4"),
        ("hybrid:chroma:/home/ann/db?n=5", "hybrid:chroma?n=5"),
        ("exact", "exact"),
        ("faiss?efSearch=8", None),  # lives nowhere: its name
    ],
)
def test_a_baseline_records_the_store_without_where_it_lives(spec, recorded):
    store = get_store(spec)
    assert portable_name(store) == portable_spec(spec) == (recorded or store.name)


def test_a_server_and_the_embedded_engine_are_one_configuration():
    laptop = portable_spec("qdrant+http://127.0.0.1:6333?m=8")
    ci = portable_spec("qdrant+https://qdrant.ci:443?m=8")
    assert laptop == ci == get_store("qdrant?m=8").name
    assert "6333" not in laptop


def test_a_store_of_ones_own_declares_its_portable_name():
    mine = OwnStore(portable_name="mine?m=8")
    assert portable_name(mine) == "mine?m=8"
    # undeclared: its name as it is (the plugin knows nothing of its address)
    assert portable_name(OwnStore()) == "mine+http://10.0.0.7:9000?m=8"


def test_a_spec_naming_no_store_here_is_kept_less_a_server_address():
    assert portable_spec("gone-plugin:/some/where") == "gone-plugin:/some/where"
    # an older baseline's store of a plugin not loaded, recorded with its server
    assert portable_spec("gone+https://10.0.0.1:9000?m=4") == "gone?m=4"


def test_the_configuration_records_the_portable_name_the_baseline_keeps(tmp_path):
    # engine/recorded.py: the store's declaration is read when the configuration
    # is built, so the gate (which imports no store) records it even after the
    # registry changed
    corpus = Corpus.from_mapping(DOCS)
    store = OwnStore("team+http://10.0.0.7:9000?m=8", portable_name="team-hnsw?m=8")
    setup = EvaluationSetup.resolve(
        corpus, make_queries(corpus), store=store, embedder="hashing", cache=tmp_path
    )
    config = setup.config("recursive:20:0")
    assert config["store"] == "team+http://10.0.0.7:9000?m=8"  # the report's
    restore = STORES.snapshot()
    try:
        for _ in range(2):  # registered again: the names known are forgotten
            STORES.register("another", lambda rest: OwnStore("another"))
        assert recorded_config(config)["store"] == "team-hnsw?m=8"
    finally:
        restore()
    assert PORTABLE_STORE not in recorded_config(config)
    exact = EvaluationSetup.resolve(corpus, make_queries(corpus), cache=tmp_path)
    assert PORTABLE_STORE not in exact.config("x")  # its name is portable


# -- xdist_safe -----------------------------------------------------------------


def _components(distributed: bool) -> Components:
    return Components(Settings(rootdir="."), distributed=distributed)


@pytest.mark.parametrize("spec", ["chroma:chroma-db", "hybrid:chroma:chroma-db"])
def test_a_local_chroma_folder_is_refused_under_xdist(spec):
    with pytest.raises(ConfigError, match="a local Chroma folder cannot be shared"):
        _components(True).store(spec)
    assert _components(False).store(spec) is not None


@pytest.mark.parametrize("spec", ["chroma", "chroma+http://h:1", "exact", "bm25"])
def test_stores_each_worker_holds_or_a_server_serves_are_accepted(spec):
    assert xdist_problem(get_store(spec)) is None


def test_a_store_of_ones_own_declaring_it_unsafe_is_refused_under_xdist():
    restore = STORES.snapshot()
    try:
        STORES.register("mine", lambda rest: OwnStore("mine", xdist_safe=False))
        with pytest.raises(ConfigError, match=r"mine: .*'mine' declares xdist_safe"):
            _components(True).store("mine")
        told = OwnStore(xdist_safe=False, xdist_reason="one file: use mine:memory")
        assert xdist_problem(told) == "one file: use mine:memory"
        assert xdist_problem(OwnStore()) is None
    finally:
        restore()


# -- reference ------------------------------------------------------------------


def test_loss_is_measured_against_every_store_but_the_reference():
    assert not approximate(get_store("exact"))
    assert approximate(get_store("chroma"))
    assert approximate(OwnStore())
    # a store of one's own that is exact search itself
    assert not measures_loss(OwnStore(reference=True))
    assert not approximate(get_store("bm25"))


# -- scores with the ids ----------------------------------------------------------


def _inputs(n: int = 30, q: int = 4) -> RetrievalInputs:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(n, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return RetrievalInputs(
        chunk_texts=[f"chunk {i}" for i in range(n)],
        query_texts=[f"question {i}" for i in range(q)],
        collection_key="ab" * 32,
        chunk_vectors=vectors,
        query_vectors=vectors[:q].copy(),
    )


def test_the_scores_an_index_gives_with_its_rows_are_kept(tmp_path):
    found = retrieve(OwnStore(), _inputs(), 3, SearchCache(tmp_path), {})
    assert found.scores is not None
    np.testing.assert_array_equal(found.scores, np.full((4, 3), 0.25))
    # an index without them: the engine computes the cosines
    own = OwnStore(index_scores="no")
    plain = retrieve(own, _inputs(), 3, SearchCache(tmp_path), {})
    assert plain.scores is not None
    np.testing.assert_allclose(plain.scores[:, 0], 1.0, atol=1e-6)


def test_scores_not_matching_the_rows_are_an_error_naming_the_store(tmp_path):
    with pytest.raises(StoreError, match=r"store 'mine\+http.*scores of shape \(1,\)"):
        retrieve(OwnStore(index_scores="bad"), _inputs(), 3, SearchCache(tmp_path), {})


def test_engine_stores_give_the_cosines_they_ranked_by():
    inputs = _inputs(40, 6)
    vectors, queries = inputs.chunk_vectors, inputs.query_vectors
    index = RerankedIndex(vectors, ExactIndex(vectors).search)
    rows, scores = index.search_scored(queries, 5)
    np.testing.assert_array_equal(rows, index.search(queries, 5))
    expected = np.einsum("qd,qkd->qk", queries.astype(np.float64), vectors[rows])
    np.testing.assert_allclose(scores, expected, atol=1e-12)
    rows, scores = index.search_scored(queries, 45)  # past the end: -1 and NaN
    assert np.isnan(scores[rows < 0]).all()
    assert (rows[:, 40:] == -1).all()


def test_a_spec_is_built_once_for_what_a_baseline_records():
    built = []

    def factory(rest):
        built.append(rest)
        return OwnStore("mine+http://10.0.0.7:9000", portable_name="mine")

    restore = STORES.snapshot()
    try:
        STORES.register("mine", factory)
        assert portable_spec("mine") == portable_spec("mine") == "mine"
        assert len(built) == 1
        # another factory under the name: built again
        STORES.register("mine", lambda rest: OwnStore("mine", portable_name="m2"))
        assert portable_spec("mine") == "m2"
    finally:
        restore()
    assert portable_spec("mine") == "mine"  # no longer registered: kept as it is


def test_registering_a_name_forgets_what_a_store_object_of_that_name_declared():
    get_store(OwnStore("mine", portable_name="given-earlier"))
    assert portable_spec("mine") == "given-earlier"
    restore = STORES.snapshot()
    try:
        STORES.register("mine", lambda rest: OwnStore("mine", portable_name="built"))
        assert portable_spec("mine") == "built"
    finally:
        restore()
