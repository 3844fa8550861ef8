"""Judged metrics through evaluate() and score() (SPEC §7, §10)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from support.judges import keyword_judge
from support.tiny_corpus import DOCS

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.engine.setup import EvaluationError
from pytest_chunkeval.judging.run import Judging
from pytest_chunkeval.llm.answers import AnswerCache


@pytest.fixture
def corpus() -> Corpus:
    return Corpus.from_mapping(DOCS, name="tiny")


def bare(*questions: str) -> QuerySet:
    return QuerySet(
        [Query(f"u{i}", q, (), "") for i, q in enumerate(questions, 1)],
        source="questions.jsonl",
    )


def run(corpus: Corpus, queries: QuerySet, tmp_path: Path, **kw: object) -> EvalResult:
    return evaluate(
        "recursive:20:0",
        corpus,
        queries,
        embedder=HashingEmbedder(),
        store="exact",
        k=2,
        cache=EmbeddingCache(tmp_path / "cache"),
        **kw,  # type: ignore[arg-type]
    )


def test_a_questions_only_set_gets_judged_metrics_and_no_span_metrics(
    corpus: Corpus, tmp_path: Path
) -> None:
    calls: list[str] = []
    queries = bare("How long do parrots live?", "Which moons does Mars have?")
    result = run(corpus, queries, tmp_path, judge=keyword_judge(calls))
    assert len(calls) == 2
    cr = result.values("context_relevance")
    assert cr.shape == (2,)
    assert all(0 < v <= 1 for v in cr)
    assert 0 < result.mean("context_relevance_tokens") <= 1
    assert result.metrics["context_relevance"].n == 2
    # no ground truth: absent, not zero
    assert result.metrics["recall"].n == 0
    assert math.isnan(result.mean("recall"))
    assert all(q.scores["recall"] is None for q in result.queries)
    data = result.to_json()
    assert data["queries"][0]["recall"] is None
    assert data["queries"][0]["details"]["judged"]
    assert result.config["judge"] == "keywords@1"
    again = EvalResult.from_json(json.loads(json.dumps(data)))
    assert again.queries == result.queries
    # judged spans are corpus spans of the retrieved text
    for q in result.queries:
        assert q.details["judged"]
        for doc, s, e in q.details["judged"]:
            assert any(d == doc and a <= s and e <= b for d, a, b in q.retrieved)


def test_a_mixed_set_scores_each_kind(corpus: Corpus, tmp_path: Path) -> None:
    text = corpus["space.md"].text
    sentence = "Mars has two small moons, Phobos and Deimos."
    start = text.index(sentence)
    with_gt = Query(
        "g1",
        "Which moons does Mars have?",
        (Excerpt(sentence, "space.md", start, start + len(sentence)),),
        "space.md",
    )
    queries = QuerySet([with_gt, Query("u1", "How long do parrots live?", (), "")])
    result = run(corpus, queries, tmp_path, judge=keyword_judge([]))
    assert result.metrics["recall"].n == 1
    assert result.queries[0].scores["recall"] == 1.0
    assert result.queries[1].scores["recall"] is None
    assert result.metrics["context_relevance"].n == 2
    # without a judge the span metrics still work; judged ones are not measured
    plain = run(corpus, queries, tmp_path)
    assert plain.mean("recall") == 1.0
    with pytest.raises(KeyError, match="judge"):
        plain.mean("context_relevance")
    assert "scores" not in plain.to_json()["queries"][0]


def test_questions_only_need_a_judge_and_a_number_for_k(
    corpus: Corpus, tmp_path: Path
) -> None:
    with pytest.raises(EvaluationError, match="give a judge"):
        run(corpus, bare("Why?"), tmp_path)
    with pytest.raises(EvaluationError, match="k='min' needs excerpts"):
        evaluate(
            "recursive:20:0",
            corpus,
            bare("Why?"),
            embedder=HashingEmbedder(),
            store="exact",
            k="min",
            judge=keyword_judge([]),
        )


def test_judgments_are_cached_and_a_chunker_change_judges_only_new_contexts(
    corpus: Corpus, tmp_path: Path
) -> None:
    calls: list[str] = []
    judging = Judging(keyword_judge(calls), cache=AnswerCache(tmp_path / "cache"))
    queries = bare("How long do parrots live?", "Which moons does Mars have?")
    first = run(corpus, queries, tmp_path, judge=judging)
    assert len(calls) == 2
    calls.clear()
    second = run(corpus, queries, tmp_path, judge=keyword_judge(calls))
    assert calls == []  # all from the answer cache
    assert list(second.values("context_relevance")) == list(
        first.values("context_relevance")
    )
    # another chunking: new contexts are judged, and only those
    third = evaluate(
        "recursive:12:0",
        corpus,
        queries,
        embedder=HashingEmbedder(),
        store="exact",
        k=2,
        cache=EmbeddingCache(tmp_path / "cache"),
        judge=keyword_judge(calls),
    )
    changed = [
        a.question
        for a, b in zip(first.queries, third.queries, strict=True)
        if corpus_texts(corpus, a.retrieved) != corpus_texts(corpus, b.retrieved)
    ]
    assert changed
    assert calls == changed


def corpus_texts(corpus: Corpus, spans: tuple[tuple[str, int, int], ...]) -> list[str]:
    return [corpus[d].text[s:e] for d, s, e in spans]


def test_score_a_retriever_with_a_judge(corpus: Corpus, tmp_path: Path) -> None:
    queries = bare("How long do parrots live?")
    text = corpus["animals.md"].text
    retrieved = {
        "u1": ["Some parrots live eighty years.", "Cats sleep most of the day."]
    }
    result = score(
        retrieved,
        corpus,
        queries,
        unit="char",
        judge=keyword_judge([]),
        cache=tmp_path / "cache",
    )
    q = result.queries[0]
    assert q.scores["context_relevance"] == 0.5  # one of the two chunks' sentences
    start = text.index("Some parrots")
    assert q.details["judged"] == [
        ["animals.md", start, start + len("Some parrots live eighty years.")],
    ]
    assert q.scores["context_relevance_tokens"] == pytest.approx(31 / (31 + 27))


def test_the_helper_checks_judged_relevance(corpus: Corpus, tmp_path: Path) -> None:
    from pytest_chunkeval import assertions

    result = run(
        corpus,
        bare("How long do parrots live?", "Which moons does Mars have?"),
        tmp_path,
        judge=keyword_judge([]),
    )
    assertions.assert_context_relevance_at_least(result, 0.1)
    assertions.assert_context_relevance_at_least(result, 0.1, tokens=True)
    with pytest.raises(AssertionError, match="context_relevance"):
        assertions.assert_context_relevance_at_least(result, 1.0)
    plain = run(corpus, make_gt(corpus), tmp_path)
    with pytest.raises(ValueError, match="need a judge"):
        assertions.assert_context_relevance_at_least(plain, 0.1)


def make_gt(corpus: Corpus) -> QuerySet:
    text = corpus["space.md"].text
    sentence = "Mars has two small moons, Phobos and Deimos."
    start = text.index(sentence)
    excerpt = Excerpt(sentence, "space.md", start, start + len(sentence))
    return QuerySet(
        [Query("g1", "Which moons does Mars have?", (excerpt,), "space.md")]
    )


def test_reports_show_the_judged_columns(corpus: Corpus, tmp_path: Path) -> None:
    from pytest_chunkeval.reporting.markdown import markdown_report
    from pytest_chunkeval.reporting.rows import ReportEntry

    judged = run(corpus, bare("How long do parrots live?"), tmp_path, judge="kw-report")
    plain = run(corpus, make_gt(corpus), tmp_path)
    with_cr = markdown_report([ReportEntry.of(judged), ReportEntry.of(plain)])
    assert "Context relevance" in with_cr
    assert "Context relevance" not in markdown_report([ReportEntry.of(plain)])


@pytest.fixture(autouse=True)
def _report_judge() -> None:
    from pytest_chunkeval.judging.specs import register_judge

    register_judge("kw-report", keyword_judge([]).fn, version="1")
