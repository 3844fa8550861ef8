"""Whether a gated metric can be compared at all (gate/comparison/integrity.py, issue 21
item 8): a judged metric whose answers this run could not use is ``not compared
(n unusable)`` and fails the check; a metric the baseline's schema predates is
``not compared (recorded before it existed)`` and passes; a schema 3 baseline
without a metric it must record is damaged."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from support.fake_results import make_result

from pytest_chunkeval.core.metrics import describe
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.gate.comparison.compare import compare
from pytest_chunkeval.gate.comparison.integrity import RECORDED_BEFORE, DamagedBaseline
from pytest_chunkeval.gate.comparison.report import GateReport, MetricCheck
from pytest_chunkeval.gate.files.baseline import Baseline
from pytest_chunkeval.gate.tolerances import GateSettings

JUDGE = {"judge": "openai:gpt-4o-mini"}


def _judged(relevance: Sequence[float]) -> EvalResult:
    """Six questions at recall 1 with the given context relevance (NaN: the
    judge's answer was unusable)."""
    result = make_result([1.0] * len(relevance), config=JUDGE)
    queries = [
        dataclasses.replace(q, scores={**q.scores, "context_relevance": v})
        for q, v in zip(result.queries, relevance, strict=True)
    ]
    values = np.array(relevance, dtype=np.float64)
    metrics = {**result.metrics, "context_relevance": describe(values)}
    return dataclasses.replace(result, queries=queries, metrics=metrics)


def _ranked(n: int = 6) -> EvalResult:
    """``n`` questions at recall 1 and MRR 1."""
    result = make_result([1.0] * n)
    queries = [
        dataclasses.replace(q, scores={**q.scores, "mrr": 1.0}) for q in result.queries
    ]
    metrics = {**result.metrics, "mrr": describe(np.ones(n))}
    return dataclasses.replace(result, queries=queries, metrics=metrics)


def _check(report: GateReport, metric: str) -> MetricCheck:
    return next(c for c in report.checks if c.metric == metric)


def test_a_judge_answering_garbage_is_not_compared_and_fails() -> None:
    baseline = Baseline.from_result(_judged([0.8] * 6), "test_x")
    now = _judged([0.8, 0.8, 0.8, math.nan, math.nan, math.nan])
    report = compare(baseline, now)
    relevance = _check(report, "context_relevance")
    assert relevance.status == "not compared"
    assert relevance.reason == "3 unusable"
    assert relevance.fails_check
    assert report.incomplete == "context_relevance: 3 unusable"
    # The other metrics are still compared, and the usable answers agree.
    assert _check(report, "recall").status == "ok"


def test_usable_judgments_compare() -> None:
    baseline = Baseline.from_result(_judged([0.8] * 6), "test_x")
    report = compare(baseline, _judged([0.8] * 5 + [0.2]))
    relevance = _check(report, "context_relevance")
    assert relevance.status == "regressed"
    assert report.incomplete == ""


def test_a_metric_the_schema_predates_passes_named() -> None:
    data = Baseline.from_result(_ranked(), "test_x").to_json()
    data["chunkeval_baseline"] = 2
    del data["metrics"]["mrr"]
    for values in data["queries"].values():
        del values["mrr"]
    old = Baseline.from_json(data, "test_x.json")
    report = compare(old, _ranked(), _mrr_gated())
    mrr = _check(report, "mrr")
    assert mrr.status == "not compared"
    assert mrr.reason == RECORDED_BEFORE
    assert not mrr.fails_check
    assert report.incomplete == ""
    assert report.passed


def test_a_schema_3_baseline_without_a_gated_metric_is_damaged() -> None:
    data = Baseline.from_result(_ranked(), "test_x").to_json()
    del data["metrics"]["mrr"]
    damaged = Baseline.from_json(data, "test_x.json")
    with pytest.raises(DamagedBaseline, match="mrr is missing from its metrics"):
        compare(damaged, _ranked(), _mrr_gated())


def _mrr_gated() -> GateSettings:
    return GateSettings.from_options("recall:-1pp, mrr:-1pp")


def test_a_judge_answering_nonsense_through_an_evaluation(tmp_path: Path) -> None:
    # A judge whose answers hold no sentence of the context: its relevance drops
    # to 0 on the same retrieved texts. Nothing noisy moved them (the hashing
    # embedder's ties notwithstanding): the change is real, regressed.
    from support.judges import keyword_judge
    from support.tiny_corpus import DOCS

    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.data.query_types import Query
    from pytest_chunkeval.embedders.cache import EmbeddingCache
    from pytest_chunkeval.embedders.hashing import HashingEmbedder
    from pytest_chunkeval.engine.evaluate import evaluate
    from pytest_chunkeval.judging.judge import CallableJudge

    corpus = Corpus.from_mapping(DOCS, name="tiny")
    queries = QuerySet(
        [
            Query("u1", "How long do parrots live?", (), ""),
            Query("u2", "Which moons does Mars have?", (), ""),
        ],
        source="questions.jsonl",
    )

    def garbage(question: str, context: str) -> list[str]:
        return ["Nothing of this is in the context at all."]

    def run(judge: CallableJudge, cache: str) -> EvalResult:
        return evaluate(
            "recursive:20:0",
            corpus,
            queries,
            embedder=HashingEmbedder(),
            store="exact",
            k=2,
            cache=EmbeddingCache(tmp_path / cache),
            judge=judge,
        )

    before = run(keyword_judge([]), "a")
    assert before.metrics["context_relevance"].n == 2
    after = run(CallableJudge(garbage, name="keywords", version="1"), "b")
    report = compare(Baseline.from_result(before, "test_x"), after)
    relevance = _check(report, "context_relevance")
    assert relevance.status == "regressed"
    assert report.noise == {}
