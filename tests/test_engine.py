"""The evaluation engine end to end, on small data with fast components."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.tiny_corpus import DOCS, make_queries

from pytest_chunkeval.config.defaults import check_k
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.embedders.base import embedder_cache_identity
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.engine.setup import EvaluationError


@pytest.fixture
def data(tmp_path):
    corpus = Corpus.from_mapping(DOCS, name="tiny")
    return corpus, make_queries(corpus), EmbeddingCache(tmp_path / "cache")


def test_evaluate_scores_every_query(data):
    corpus, queries, cache = data
    result = evaluate(
        "recursive:20:0",
        corpus,
        queries,
        embedder=HashingEmbedder(),
        store="exact",
        k=2,
        cache=cache,
    )
    assert [q.id for q in result.queries] == ["q1", "q2", "q3"]
    assert all(len(q.retrieved) == 2 for q in result.queries)
    # lexical embedder: each question shares words with its own sentence
    assert result.mean("recall") > 0.6
    assert 0 < result.mean("precision") <= 1
    assert result.chunks["count"] == len(result.chunk_spans) >= 6
    assert set(result.timings) >= {"chunk", "embed", "index", "search", "score"}
    assert result.config["chunker"] == "recursive:20:0"
    assert result.config["k"] == 2
    assert set(result.groups) == {"animals.md", "space.md"}
    for record in result.queries:
        for doc, start, end in record.retrieved:
            assert result.text((doc, start, end)) == corpus[doc].text[start:end]


def test_k_min_retrieves_as_many_chunks_as_overlap_the_excerpts(data):
    corpus, queries, cache = data
    result = evaluate(
        "recursive:20:0",
        corpus,
        queries,
        embedder=HashingEmbedder(),
        store="exact",
        k="min",
        cache=cache,
    )
    spans = result.chunk_spans
    for record in result.queries:
        overlapping = [
            c
            for c in spans
            if any(
                c[0] == e[0] and c[1] < e[2] and c[2] > e[1] for e in record.excerpts
            )
        ]
        assert len(record.retrieved) == len(overlapping)


def test_second_run_is_served_from_the_cache(data):
    corpus, queries, cache = data
    calls = []

    def embed(texts):
        calls.append(len(texts))
        return HashingEmbedder().embed(texts)

    embed.cache_version = "1"  # a function is cached only with one
    first = evaluate(
        "fixed:10:0", corpus, queries, embedder=embed, store="exact", cache=cache
    )
    embedded = len(calls)
    assert sum(calls) == cache.stats.misses  # chunks and questions, once each
    second = evaluate(
        "fixed:10:0", corpus, queries, embedder=embed, store="exact", cache=cache
    )
    assert len(calls) == embedded  # nothing embedded again
    assert first.mean("iou") == second.mean("iou")


def test_result_json_round_trip(data):
    corpus, queries, cache = data
    result = evaluate(
        "sentence:30",
        corpus,
        queries,
        embedder=HashingEmbedder(),
        store="exact",
        cache=cache,
    )
    data_ = json.loads(json.dumps(result.to_json()))
    again = EvalResult.from_json(data_)
    assert again.metrics == result.metrics
    assert again.queries == result.queries
    assert again.chunk_spans == result.chunk_spans
    assert data_["queries"][0]["retrieved"][0][0] in DOCS


def test_chunker_returning_foreign_text_names_the_piece(data):
    corpus, queries, cache = data
    with pytest.raises(ValueError, match=r"piece #1.*not in the document|#1"):
        evaluate(
            lambda text: [text[:10], "nowhere to be found"],
            corpus,
            queries,
            embedder=HashingEmbedder(),
            store="exact",
            cache=cache,
        )


def test_score_whole_retriever_from_texts_and_spans(data):
    corpus, queries, _ = data
    perfect = {
        q.id: [corpus[e.doc_id].text[e.start : e.end] for e in q.excerpts]
        for q in queries
    }
    result = score(perfect, corpus, queries)
    assert result.mean("recall") == 1.0
    assert result.mean("precision") == 1.0
    assert result.metrics["precision_omega"].n == 0
    assert result.queries[0].scores["precision_omega"] is None

    def retriever(question):
        return [("space.md", 0, 40)]

    result = score(retriever, corpus, queries, unit="char")
    assert result.queries[1].scores["recall"] == 0.0
    assert result.queries[0].scores["precision"] == 0.0


def test_score_unlocatable_text_is_a_clear_error(data):
    corpus, queries, _ = data
    with pytest.raises(EvaluationError, match=r"query 'q1'.*result #1.*not found"):
        score({q.id: ["Penguins cannot fly."] for q in queries}, corpus, queries)


def test_score_missing_query_is_named(data):
    corpus, queries, _ = data
    with pytest.raises(EvaluationError, match="'q2'"):
        score({"q1": []}, corpus, queries)


@pytest.mark.parametrize("bad", [0, -1, "max", 2.5, True])
def test_bad_k(bad):
    with pytest.raises(ValueError, match="k must be a positive integer"):
        check_k(bad)


def test_token_and_char_units_agree_on_perfect_retrieval(data):
    corpus, queries, _ = data
    perfect = {q.id: [e.span for e in q.excerpts] for q in queries}
    for unit in ("token", "char"):
        result = score(perfect, corpus, queries, unit=unit)
        np.testing.assert_allclose(result.values("iou"), 1.0)


def test_semantic_chunker_from_a_spec_embeds_through_the_evaluation_cache(data):
    corpus, queries, cache = data
    evaluate(
        "cluster:60:20@hashing:64",
        corpus,
        queries,
        embedder=HashingEmbedder(),
        store="exact",
        cache=cache,
    )
    # the chunker's pieces, in this cache
    assert embedder_cache_identity(HashingEmbedder(64)) in cache.info()
