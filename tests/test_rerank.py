"""The rerank stage: a reranker re-scores a store's top n and keeps k.

The cross-encoder tests build a tiny BERT with random weights in a temporary folder
and load it through the real sentence-transformers ``CrossEncoder`` code: mechanics
only (no trained reranker can be downloaded here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.manual_corpus import (
    PARAGRAPHS,
    TEXT,
    concept_embedder,
    make_data,
    paragraphs,
)
from support.rerankers import ByLength, build_tiny_cross_encoder

from pytest_chunkeval.config.registry import UnknownSpec
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.stores.rerank import (
    CrossEncoderReranker,
    get_reranker,
    rerank_rows,
)


def run(tmp_path: Path, rerank: object, store: str = "exact", k: int = 1) -> EvalResult:
    corpus, queries = make_data()
    return evaluate(
        paragraphs,
        corpus,
        queries,
        embedder=concept_embedder,
        store=store,
        rerank=rerank,  # type: ignore[arg-type]
        k=k,
        unit="char",
        cache=EmbeddingCache(tmp_path),
    )


def test_rerank_rows_orders_by_score_and_ties_by_row_without_keys():
    candidates = np.array([[4, 2, 7, -1], [1, 3, -1, -1]])
    scores = np.array([[0.1, 0.9, 0.9, 5.0], [0.0, 0.0, 9.0, 9.0]], np.float32)
    assert rerank_rows(candidates, scores, 3).tolist() == [[2, 7, 4], [1, 3, -1]]


def test_a_reranker_reorders_the_candidates_and_reports_both_stages(tmp_path):
    plain = run(tmp_path, None)
    reranker = ByLength(candidates=5)
    result = run(tmp_path, reranker)
    longest = max(len(p) for p in PARAGRAPHS)
    for record in result.queries:
        assert [e - s for _, s, e in record.retrieved] == [longest]
    assert [q.retrieved for q in plain.queries] != [q.retrieved for q in result.queries]
    assert len(reranker.pairs) == 10  # 5 candidates x 2 questions
    stage = result.stages["candidates"]
    assert stage.depth == 5
    assert stage.recall.mean == pytest.approx(1.0)  # all 5 chunks: every excerpt
    assert stage.recall_at_k.mean == pytest.approx(plain.mean("recall"))
    assert result.config["rerank"] == "test:by-length"
    assert result.config["rerank_candidates"] == 5


def test_a_rerank_is_cached_on_its_inputs(tmp_path):
    run(tmp_path, ByLength())
    again = ByLength()
    run(tmp_path, again)
    assert again.pairs == []  # served from the cache
    fewer = ByLength(candidates=2)
    run(tmp_path, fewer)
    assert len(fewer.pairs) == 4  # other candidates: scored again


def test_rerank_after_a_hybrid_store_keeps_the_legs_too(tmp_path):
    pytest.importorskip("bm25s")
    result = run(tmp_path, ByLength(candidates=3), store="hybrid?n=4")
    assert list(result.stages) == ["dense", "bm25", "candidates"]
    assert result.stages["dense"].depth == 4
    assert result.stages["candidates"].depth == 3


def test_bad_reranker_specs_are_clear():
    with pytest.raises(UnknownSpec):
        get_reranker("cross-encoder")
    with pytest.raises(UnknownSpec):
        get_reranker("cross-encoder:x?n=0")
    with pytest.raises(TypeError, match="reranker"):
        get_reranker(42)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("ce") / "tiny-ce")


@pytest.mark.slow
def test_a_tiny_cross_encoder_loaded_from_disk_reorders_candidates(
    tmp_path, tiny_cross_encoder
):
    reranker = get_reranker(f"cross-encoder:{tiny_cross_encoder}?n=5")
    assert isinstance(reranker, CrossEncoderReranker)
    assert reranker.identity.startswith("cross-encoder:tiny-ce@")
    assert not reranker.is_loaded  # the identity is read from files
    plain = run(tmp_path, None, k=5)
    result = run(tmp_path, reranker, k=5)
    assert reranker.is_loaded
    # Same five chunks, in the model's order: check against the model itself.
    questions = [q.question for q in plain.queries]
    for before, after, question in zip(
        plain.queries, result.queries, questions, strict=True
    ):
        assert sorted(before.retrieved) == sorted(after.retrieved)
        assert before.retrieved != after.retrieved
        chunk_texts = [TEXT[s:e] for _, s, e in after.retrieved]
        scores = reranker.model.predict([[question, t] for t in chunk_texts])
        assert list(scores) == sorted(scores, reverse=True)
        assert set(chunk_texts) == set(PARAGRAPHS)
    # The same weights elsewhere are the same reranker; other weights are not.
    same = build_tiny_cross_encoder(tmp_path / "same" / "tiny-ce")
    assert get_reranker(f"cross-encoder:{same}").identity == reranker.identity
    other = build_tiny_cross_encoder(tmp_path / "other" / "tiny-ce", seed=1)
    assert get_reranker(f"cross-encoder:{other}").identity != reranker.identity


def test_a_cross_encoders_identity_is_of_the_files_it_scores_with(
    tmp_path, monkeypatch
):
    # Read when asked until the model loads, then the loaded files' (each write
    # another size: the file digests are memoized on size and times): weights
    # replaced after a first read (a rerank read back from the cache) must not
    # key the new weights' scores under the old weights' identity.
    import sys
    import types

    folder = tmp_path / "ce"
    folder.mkdir()
    (folder / "config.json").write_text('{"num_labels": 1}')
    (folder / "model.safetensors").write_bytes(b"weights 1")
    reranker = CrossEncoderReranker(str(folder))
    first = reranker.identity
    (folder / "model.safetensors").write_bytes(b"weights 22")
    second = reranker.identity
    assert second != first
    loaded = types.ModuleType("sentence_transformers")
    loaded.CrossEncoder = lambda path, device: ("model of", path)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", loaded)
    assert reranker.model == ("model of", str(folder))
    (folder / "model.safetensors").write_bytes(b"weights 333")
    assert reranker.identity == second  # the weights it scores with
    assert "torch" in reranker.versions  # in the rerank and result keys


def test_the_libraries_that_compute_the_scores_are_in_the_rerank_key():
    # new torch kernels can change the last bits of a score: a near tie's order
    from pytest_chunkeval.engine.keys import rerank_key

    reranker, rows = ByLength(), np.zeros((1, 5), np.int64)
    before = rerank_key(reranker, ("chunks", "questions"), rows)
    reranker.versions = "torch-9"  # type: ignore[attr-defined]
    assert rerank_key(reranker, ("chunks", "questions"), rows) != before


def test_a_cross_encoder_not_on_disk_keys_nothing(tmp_path, monkeypatch):
    # 'org/ce@main' names no files: what the hub serves under it can change, so
    # neither its scores nor a result reranked with it are cached under it.
    from pytest_chunkeval.engine.keys import rerank_key
    from pytest_chunkeval.engine.keys.identities import reranker_identity

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    reranker = CrossEncoderReranker("org/not-downloaded-ce")
    assert reranker.identity == "cross-encoder:org/not-downloaded-ce@main"
    assert reranker.cache_identity is None
    assert reranker_identity(reranker) is None
    assert rerank_key(reranker, ("c", "q"), np.zeros((1, 3), np.int64)) is None
    # in a session's memo it is its name (not an object id: rows on two xdist
    # workers must agree, and an evicted object's id can be reused)
    from pytest_chunkeval.engine.keys.memos import _or_object

    again = CrossEncoderReranker("org/not-downloaded-ce")
    assert _or_object(None, reranker) == _or_object(None, again)
    folder = tmp_path / "ce"
    folder.mkdir()
    (folder / "config.json").write_text('{"num_labels": 1}')
    (folder / "model.safetensors").write_bytes(b"weights")
    assert CrossEncoderReranker(str(folder)).cache_identity is not None
