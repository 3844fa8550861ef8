"""SPEC §9 in the engine: rank metrics, budget, loss, two-stage retrievers."""

from __future__ import annotations

import json
import math

import pytest
from support.stores import ShuffledStore
from support.tiny_corpus import DOCS, make_queries

from pytest_chunkeval import TwoStage
from pytest_chunkeval.data.corpus import Corpus
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


def run(data, **kwargs):
    corpus, queries, cache = data
    kwargs.setdefault("store", "exact")
    return evaluate(
        "recursive:20:0",
        corpus,
        queries,
        embedder=HashingEmbedder(),
        cache=cache,
        **kwargs,
    )


def test_rank_metrics_are_in_the_result_and_its_json(data):
    result = run(data, k=3)
    for name in ("mrr", "ndcg", "complete", "ceiling"):
        assert name in result.metrics
        assert result.metrics[name].n == 3
    for q in result.queries:
        assert q.scores["recall"] <= q.scores["ceiling"]
        assert 0 <= q.scores["ndcg"] <= 1
        assert (q.scores["mrr"] > 0) == (q.first_relevant_rank > 0)
        assert q.loss["chunking"] == pytest.approx(1 - q.scores["ceiling"])
        assert q.loss["search"] == pytest.approx(
            q.scores["ceiling"] - q.scores["recall"]
        )
    assert result.loss["chunking"].mean == pytest.approx(
        1 - result.mean("ceiling"), abs=1e-12
    )
    back = EvalResult.from_json(json.loads(json.dumps(result.to_json())))
    assert back.queries[2].scores["ndcg"] == result.queries[2].scores["ndcg"]
    assert back.loss["search"].mean == result.loss["search"].mean
    assert "approximation" not in result.loss  # exact search loses nothing


def test_a_budget_keeps_whole_chunks_within_it(data):
    plain = run(data, k=3)
    result = run(data, k=3, budget=12)
    assert result.config["budget"] == 12
    assert "budget" not in plain.config
    for q in result.queries:
        assert q.retrieved_units <= 12
    assert result.budget["budget"] == 12
    assert 0 <= result.budget["over_budget"] <= 1
    # mrr, ndcg and ceiling read the first k ranks, whatever the budget.
    for name in ("mrr", "ndcg", "ceiling"):
        assert result.mean(name) == plain.mean(name)
    assert "budget=12" in result.describe()
    with pytest.raises(ValueError, match="budget must be a positive whole number"):
        run(data, budget=0)
    with pytest.raises(ValueError, match="budget must be"):
        run(data, budget=2.5)


def test_a_budget_smaller_than_every_chunk_scores_zero_and_says_so(data):
    result = run(data, k=3, budget=1)
    assert result.budget["over_budget"] == 1.0
    assert result.mean("recall") == 0.0
    assert all(q.retrieved == () for q in result.queries)


def test_a_large_budget_fetches_more_ranks_than_k(data):
    result = run(data, k=1, budget=10_000)
    assert all(len(q.retrieved) > 1 for q in result.queries)
    assert result.mean("recall") == 1.0  # the whole corpus fits
    assert result.mean("complete") == 1.0


def test_an_approximate_stores_loss_is_measured_against_exact_search(data):
    result = run(data, k=1, store=ShuffledStore())
    loss = result.loss
    assert loss["exact_recall"].mean > loss["store_recall"].mean
    assert loss["approximation"].mean == pytest.approx(
        loss["exact_recall"].mean - loss["store_recall"].mean
    )
    assert result.queries[0].loss["approximation"] == pytest.approx(
        result.queries[0].loss["exact_recall"] - result.queries[0].scores["recall"]
    )


def test_score_with_a_two_stage_retriever_reports_the_candidate_pool(data):
    corpus, queries, _ = data
    text = corpus["animals.md"].text
    dogs = text.index("Dogs were")
    parrots = text.index("Some parrots")

    def retriever(question: str) -> TwoStage:
        pool = [
            ("animals.md", 0, 27),
            ("animals.md", dogs, dogs + 35),
            ("animals.md", parrots, len(text)),
        ]
        return TwoStage(candidates=pool, results=pool[:1])

    result = score(retriever, corpus, queries, unit="char")
    stage = result.stages["candidates"]
    assert stage.depth == 3
    assert stage.recall.mean > stage.recall_at_k.mean  # the pool held more
    assert stage.ceiling is not None
    assert stage.ceiling.mean >= stage.recall_at_k.mean
    assert result.mean("recall") == stage.recall_at_k.mean
    # q1 (parrots): the best single candidate covers it, the first does not.
    assert stage.ceiling.mean == pytest.approx((1 + 0 + 35 / 58) / 3)
    assert result.queries[0].scores["mrr"] == 0.0
    assert math.isnan(result.mean("ndcg"))
    assert result.queries[0].scores["ndcg"] is None

    as_mapping = score(
        lambda q: {"candidates": retriever(q).candidates, "results": []},
        corpus,
        queries,
        unit="char",
    )
    assert as_mapping.mean("recall") == 0.0
    assert as_mapping.stages["candidates"].ceiling.mean == 0.0  # k = 0 results


def test_score_rejects_half_a_two_stage_answer(data):
    corpus, queries, _ = data
    with pytest.raises(EvaluationError, match=r"'q1'.*'results' too"):
        score(lambda q: {"candidates": []}, corpus, queries)
    answers = {q.id: [] for q in queries}
    answers["q2"] = TwoStage([], [])
    with pytest.raises(EvaluationError, match="plain list for query 'q1'"):
        score(answers, corpus, queries)
