"""The bm25 and hybrid stores: known answers, cache keys, no model for bm25."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence

import numpy as np
import pytest
from support.manual_corpus import (
    concept_embedder,
    make_data,
    paragraphs,
)

from pytest_chunkeval.config.registry import UnknownSpec
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.stores import (
    BM25Store,
    HybridStore,
    get_store,
    rrf_fuse,
    uses_vectors,
)

pytest.importorskip("bm25s")


def run(store: object, tmp_path: object, k: int = 2, **kwargs: object) -> EvalResult:
    corpus, queries = make_data()
    return evaluate(
        paragraphs,
        corpus,
        queries,
        embedder=concept_embedder,
        store=store,  # type: ignore[arg-type]
        k=k,
        unit="char",
        cache=EmbeddingCache(tmp_path),  # type: ignore[arg-type]
        **kwargs,  # type: ignore[arg-type]
    )


def recalls(result: EvalResult) -> dict[str, float]:
    return {q.id: q.scores["recall"] for q in result.queries}


def test_bm25_finds_the_rare_keyword_dense_the_paraphrase_hybrid_both(tmp_path):
    dense = run("exact", tmp_path)
    bm25 = run("bm25", tmp_path)
    hybrid = run("hybrid", tmp_path)
    assert recalls(dense) == {"rare": 0.0, "paraphrase": 1.0}
    assert recalls(bm25) == {"rare": 1.0, "paraphrase": 0.0}
    assert recalls(hybrid) == {"rare": 1.0, "paraphrase": 1.0}
    # BM25 returns only chunks that share a term: nothing for the paraphrase.
    assert bm25.queries[1].retrieved == ()
    assert bm25.config["embedder"] is None
    assert hybrid.config["store"] == "hybrid"


def test_hybrid_keeps_each_legs_list_and_recall(tmp_path):
    result = run("hybrid?n=3", tmp_path)
    assert list(result.stages) == ["dense", "bm25"]
    dense, lexical = result.stages["dense"], result.stages["bm25"]
    assert dense.depth == lexical.depth == 3
    assert dense.recall_at_k.mean == pytest.approx(0.5)
    assert lexical.recall_at_k.mean == pytest.approx(0.5)
    assert result.mean("recall") == pytest.approx(1.0)
    # The legs' lists are spans in rank order; BM25's is empty for the paraphrase.
    assert len(dense.retrieved[0]) == 3
    assert lexical.retrieved[1] == ()
    assert dense.retrieved[1][0] == result.queries[1].retrieved[0]
    data = json.loads(json.dumps(result.to_json()))
    assert data["stages"]["bm25"]["depth"] == 3
    back = EvalResult.from_json(data)
    assert back.stages["dense"].recall_at_k == dense.recall_at_k


def test_a_bm25_run_is_cached_and_keyed_on_texts_and_tokenization(
    tmp_path, monkeypatch
):
    first = run("bm25", tmp_path)
    calls: list[int] = []
    original = BM25Store.index_texts

    def counting(self: BM25Store, texts: Sequence[str]) -> object:
        calls.append(len(texts))
        return original(self, texts)

    monkeypatch.setattr(BM25Store, "index_texts", counting)
    again = run("bm25", tmp_path)
    assert calls == []  # unchanged re-run: served from the search cache
    assert [q.retrieved for q in again.queries] == [q.retrieved for q in first.queries]
    run("bm25?stem=english", tmp_path)
    assert calls == [5]  # another tokenization is another result
    run("bm25", tmp_path, k=1)
    assert calls == [5, 5]
    corpus, queries = make_data()
    evaluate(
        lambda text: text.split("\n\n")[:4],
        corpus,
        queries,
        store="bm25",
        k=2,
        unit="char",
        cache=EmbeddingCache(tmp_path),
    )
    assert calls == [5, 5, 4]  # other chunk texts


def test_hybrid_embeds_once_and_reuses_the_dense_legs_search(tmp_path, monkeypatch):
    # exact search at k=42 searches 8 ranks deeper (the margins'): 50 rows, the
    # hybrid store's candidates
    run("exact", tmp_path, k=42)
    from pytest_chunkeval.stores.exact import ExactStore

    def no_index(*args: object) -> object:
        raise AssertionError("the dense leg should come from the search cache")

    monkeypatch.setattr(ExactStore, "index", no_index)
    result = run("hybrid", tmp_path)
    assert result.mean("recall") == pytest.approx(1.0)


def test_a_bm25_run_loads_no_model_and_imports_no_torch(tmp_path):
    code = f"""
import sys
from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.engine.evaluate import evaluate
corpus, queries = load_benchmark("general")
result = evaluate("recursive:200:0", corpus, queries, store="bm25", k=5,
                  cache={str(tmp_path)!r})
heavy = [m for m in ("torch", "sentence_transformers", "transformers", "chromadb")
         if m in sys.modules]
print(round(result.mean("recall"), 4), heavy)
"""
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    recall, heavy = out.stdout.split(" ", 1)
    assert heavy.strip() == "[]"
    assert 0.5 < float(recall) <= 1.0


def test_bm25_search_pads_and_skips_chunks_without_a_shared_term():
    index = BM25Store().index_texts(["red apples", "green apples", "blue sky"])
    hits = index.search_texts(["apples", "the", "sky apples", "zebra"], 4)
    assert hits.tolist() == [
        [0, 1, -1, -1],  # tied scores: the lower row first
        [-1, -1, -1, -1],  # only a stop word
        [2, 0, 1, -1],
        [-1, -1, -1, -1],
    ]
    assert BM25Store().index_texts([]).search_texts(["x"], 2).tolist() == [[-1, -1]]


def test_stemming_and_stop_words_change_what_matches():
    texts = ["The runner was running", "a run"]
    plain = BM25Store().index_texts(texts).search_texts(["runs"], 2)
    stemmed = BM25Store(stem="english").index_texts(texts).search_texts(["runs"], 2)
    assert plain.tolist() == [[-1, -1]]
    assert sorted(stemmed[0].tolist()) == [0, 1]
    kept = BM25Store(stopwords="none").index_texts(texts).search_texts(["the"], 2)
    assert kept.tolist() == [[0, -1]]


def test_store_specs_name_every_option_in_the_identity():
    store = get_store("bm25?stem=english&stopwords=none")
    assert isinstance(store, BM25Store)
    assert store.name == "bm25?stem=english&stopwords=none"
    assert store.identity.endswith(
        "?b=0.75&k1=1.5&lower=true&method=lucene&stem=english&stopwords=none"
    )
    assert store.identity.startswith("bm25@bm25s-")  # and PyStemmer's version
    assert get_store("bm25").name == "bm25"
    assert get_store("bm25?lower=true").name == "bm25"  # defaults drop out
    assert not uses_vectors(store)
    hybrid = get_store("hybrid:exact?n=10&rrf=30&weights=1,0.5&stem=english")
    assert isinstance(hybrid, HybridStore)
    assert hybrid.candidates == 10
    assert hybrid.name == "hybrid?n=10&rrf=30&stem=english&weights=1,0.5"
    assert get_store(hybrid.name).name == hybrid.name
    assert uses_vectors(hybrid)
    for bad in (
        "bm25?stem=klingon",
        "bm25?k1=0",
        "bm25:x",
        "hybrid?weights=1",
        "hybrid?n=0",
        "hybrid:bm25",
        "bm25?colour=red",
    ):
        with pytest.raises(UnknownSpec):
            get_store(bad)


def test_rrf_fuses_by_reciprocal_rank_and_weights():
    dense = np.array([[3, 1, 2], [0, -1, -1]])
    lexical = np.array([[1, 4, -1], [-1, -1, -1]])
    fused = rrf_fuse({"dense": dense, "bm25": lexical}, 3, constant=60)
    # row 1: 1/62 + 1/61 beats row 3's 1/61.
    assert fused.tolist() == [[1, 3, 4], [0, -1, -1]]
    lexical_only = rrf_fuse(
        {"dense": dense, "bm25": lexical}, 2, weights={"dense": 0.0, "bm25": 1.0}
    )
    assert lexical_only[0].tolist() == [1, 4]


@pytest.mark.parametrize(
    "spec",
    [
        "hybrid",
        "hybrid?n=5&k1=1.2",
        "hybrid:chroma:db?n=5",
        "hybrid:chroma+http://h:1?n=5",
        "hybrid@chroma?ef_search=1",
        "hybrid?n=5@chroma:db?ef_search=1&max_neighbors=4",
        "hybrid:faiss",  # FAISS's name always shows its settings
        "hybrid?weights=1,0.5@faiss?index=flat",
        "hybrid@qdrant+https://h:443?m=8",
    ],
)
def test_a_hybrid_stores_name_parses_back_to_the_same_store(spec):
    store = get_store(spec)
    assert isinstance(store, HybridStore)
    again = get_store(store.name)
    assert isinstance(again, HybridStore)
    assert again.name == store.name
    assert again.dense.name == store.dense.name
    assert again.identity == store.identity
    assert again.bm25.options() == store.bm25.options()
    portable = get_store(store.portable_name)
    assert portable.name == store.portable_name  # what a baseline records


def test_a_hybrid_over_a_dense_store_with_options_has_one_question_mark():
    # the review's case: hybrid over chroma?ef_search=1 was named
    # 'hybrid:chroma?ef_search=1?n=5', which no spec parser reads
    store = HybridStore(get_store("chroma?ef_search=1"), candidates=5)  # type: ignore[arg-type]
    assert store.name == "hybrid?n=5@chroma?ef_search=1"
    assert get_store(store.name).name == store.name
    with pytest.raises(UnknownSpec, match="own options follow it after '@'"):
        get_store("hybrid:chroma?ef_search=1")
