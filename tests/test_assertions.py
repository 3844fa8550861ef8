"""Assertion helpers: statistics, groups and the failure text, on hand-made results."""

from __future__ import annotations

import json

import pytest

import pytest_chunkeval
from pytest_chunkeval.assertions import (
    as_statistic,
    assert_f1_at_least,
    assert_iou_at_least,
    assert_metric_at_least,
    assert_precision_at_least,
    assert_precision_omega_at_least,
    assert_recall_at_least,
    check_metric,
    percentile,
    share_at_least,
    worst_queries,
)
from pytest_chunkeval.core.metrics import METRICS, MetricStats
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.engine.results import EvalResult, QueryRecord

DOCS = {
    "pets.md": "Dogs bark at the mailman. Cats sleep most of the day. "
    "Parrots can imitate human speech and live for eighty years.",
    "space.md": "The Moon orbits the Earth. Mars has two small moons, Phobos and "
    "Deimos. Jupiter is the largest planet.",
}


def _span(corpus: Corpus, doc: str, sentence: str) -> tuple[str, int, int]:
    start = corpus[doc].text.index(sentence)
    return (doc, start, start + len(sentence))


def _record(
    corpus: Corpus,
    qid: str,
    question: str,
    doc: str,
    excerpt: str,
    retrieved: list[tuple[str, str]],
    recall: float,
    precision_omega: float | None = 0.5,
) -> QueryRecord:
    return QueryRecord(
        id=qid,
        question=question,
        doc_id=doc,
        excerpts=(_span(corpus, doc, excerpt),),
        retrieved=tuple(_span(corpus, d, s) for d, s in retrieved),
        excerpt_units=5,
        retrieved_units=10,
        first_relevant_rank=1 if recall else 0,
        excerpt_coverage=(recall,),
        scores={
            "recall": recall,
            "precision": recall / 2,
            "iou": recall / 3,
            "f1": recall / 2.5,
            "precision_omega": precision_omega,
        },
    )


def make_result(*, omega: bool = True, corpus_attached: bool = True) -> EvalResult:
    corpus = Corpus.from_mapping(DOCS, name="tiny")
    po = 0.5 if omega else None
    records = [
        _record(
            corpus,
            "q-bark",
            "Who do dogs bark at?",
            "pets.md",
            "Dogs bark at the mailman.",
            [("pets.md", "Dogs bark at the mailman.")],
            1.0,
            po,
        ),
        _record(
            corpus,
            "q-parrot",
            "How long do parrots live?",
            "pets.md",
            "Parrots can imitate human speech and live for eighty years.",
            [("space.md", "Jupiter is the largest planet."), ("pets.md", "Cats sleep")],
            0.0,
            po,
        ),
        _record(
            corpus,
            "q-mars",
            "Which moons does Mars have?",
            "space.md",
            "Mars has two small moons, Phobos and Deimos.",
            [("space.md", "Mars has two small moons")],
            0.5,
            po,
        ),
        _record(
            corpus,
            "q-moon",
            "What does the Moon orbit?",
            "space.md",
            "The Moon orbits the Earth.",
            [("space.md", "The Moon orbits the Earth.")],
            1.0,
            po,
        ),
    ]

    def stats(rs: list[QueryRecord]) -> dict[str, MetricStats]:
        out = {}
        for m in METRICS:
            vals = [r.metric(m) for r in rs if r.metric(m) == r.metric(m)]
            mean = sum(vals) / len(vals) if vals else float("nan")
            out[m] = MetricStats(mean, 0.0, len(vals))
        return out

    return EvalResult(
        label="recursive:10:0",
        config={
            "chunker": "recursive:10:0",
            "embedder": "hashing",
            "store": "exact",
            "k": 2,
            "unit": "token",
        },
        corpus_hash=corpus.content_hash,
        queries_hash="q",
        metrics=stats(records),
        groups={d: stats([r for r in records if r.doc_id == d]) for d in DOCS},
        queries=records,
        chunks={"count": 6, "mean_units": 9.5, "mean_chars": 40.0},
        timings={"chunk": 0.1},
        corpus=corpus if corpus_attached else None,
    )


def test_passing_assertions_return_none() -> None:
    result = make_result()  # recall mean 0.625
    assert_recall_at_least(result, 0.6)
    assert_precision_at_least(result, 0.3)
    assert_iou_at_least(result, 0.2)
    assert_f1_at_least(result, 0.25)
    assert_precision_omega_at_least(result, 0.5)
    assert_metric_at_least(result, "recall", 0.625)  # equal passes


def test_failure_text_summary_line_and_worst_queries() -> None:
    with pytest.raises(AssertionError) as info:
        assert_recall_at_least(make_result(), 0.8)
    lines = str(info.value).splitlines()
    assert lines[0] == (
        "recall mean 0.625 is below the required 0.800 "
        "(recursive:10:0 k=2 token hashing exact; 4 queries)"
    )
    assert lines[1] == "2 worst queries by recall (below 0.8):"
    # The worst first: the parrot question, its missed excerpt and what came back.
    assert lines[2] == "  1. q-parrot  recall 0.000  'How long do parrots live?'"
    assert lines[3] == (
        "     missed (0% retrieved): pets.md[54:113] "
        "'Parrots can imitate human speech and live for eighty years.'"
    )
    assert lines[4] == (
        "     retrieved #1 (instead): space.md[72:102] 'Jupiter is the largest planet.'"
    )
    assert lines[5] == "     retrieved #2 (instead): pets.md[26:36] 'Cats sleep'"
    text = str(info.value)
    assert "2. q-mars  recall 0.500" in text
    assert "missed (50% retrieved)" in text
    assert "retrieved #1 (relevant): space.md" in text
    assert "q-bark" not in text  # perfect queries are not listed
    assert len(lines) == 9


def test_only_five_worst_queries_are_listed() -> None:
    result = make_result()
    result.queries = result.queries * 3  # 12 records, 6 below 0.9
    assert len(worst_queries(result, "recall")) == 5
    message = check_metric(result, "recall", 0.9)
    assert message is not None
    assert "5 worst queries by recall (6 below 0.9):" in message
    assert "  6. " not in message


def test_long_texts_are_shortened() -> None:
    result = make_result()
    long_question = "What about " + "very " * 40 + "long questions?"
    result.queries[1] = QueryRecord(
        **{**result.queries[1].__dict__, "question": long_question}
    )
    message = check_metric(result, "recall", 0.9)
    assert message is not None
    line = next(x for x in message.splitlines() if "q-parrot" in x)
    assert "…" in line
    assert len(line) < 120


def test_group_restricts_to_one_document() -> None:
    result = make_result()
    assert_recall_at_least(result, 0.75, group="space.md")  # 0.5 and 1.0
    with pytest.raises(AssertionError, match=r"group 'pets.md'; 2 queries\)") as info:
        assert_recall_at_least(result, 0.75, group="pets.md")
    assert "q-mars" not in str(info.value)
    with pytest.raises(KeyError, match=r"group='nope\.md' is not a group"):
        assert_recall_at_least(result, 0.5, group="nope.md")


def test_percentile_and_share_statistics() -> None:
    result = make_result()  # recall values 1.0, 0.0, 0.5, 1.0
    assert_recall_at_least(result, 0.75, statistic="median")
    with pytest.raises(AssertionError, match=r"^recall p50 0\.750 is below"):
        assert_recall_at_least(result, 0.8, statistic="p50")
    with pytest.raises(AssertionError, match=r"^recall p10 0\.150 is below"):
        assert_recall_at_least(result, 0.2, statistic=percentile(10))
    assert_recall_at_least(result, 0.5, statistic=share_at_least(1.0))
    with pytest.raises(AssertionError) as info:
        assert_recall_at_least(result, 0.8, statistic=share_at_least(0.5))
    lines = str(info.value).splitlines()
    assert lines[0].startswith(
        "share of queries with recall >= 0.5 is 0.750, below the required 0.800"
    )
    assert lines[1] == "1 worst query by recall (below 0.5):"


def test_statistic_errors() -> None:
    with pytest.raises(ValueError, match="unknown statistic 'average'"):
        as_statistic("average")
    with pytest.raises(ValueError, match="percentile must be between 0 and 100"):
        percentile(150)
    with pytest.raises(ValueError, match=r"0\.8 means 80%"):
        assert_recall_at_least(make_result(), 80)
    with pytest.raises(ValueError, match="unknown metric 'mmr'"):
        assert_metric_at_least(make_result(), "mmr", 0.5)
    with pytest.raises(ValueError, match=r"mrr cannot be checked.*before it existed"):
        assert_metric_at_least(make_result(), "mrr", 0.5)  # a result from before §9


def test_precision_omega_undefined_for_retrievers() -> None:
    result = make_result(omega=False)
    with pytest.raises(ValueError, match="undefined for a whole retriever"):
        assert_precision_omega_at_least(result, 0.1)


def test_without_corpus_spans_are_shown() -> None:
    message = check_metric(make_result(corpus_attached=False), "recall", 0.9)
    assert message is not None
    assert "missed (0% retrieved): pets.md[54:113]\n" in message


def test_traceback_is_hidden(pytester: pytest.Pytester) -> None:
    pytester.makefile(".json", result=json.dumps(make_result().to_json()))
    pytester.makepyfile(
        """
        import json
        from pytest_chunkeval import assert_recall_at_least
        from pytest_chunkeval.engine.results import EvalResult

        def test_low():
            with open("result.json") as f:
                result = EvalResult.from_json(json.load(f))
            assert_recall_at_least(result, 0.9)
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:hypothesispytest")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E * AssertionError: recall mean 0.625 is below*"])
    # Only the test's own frame is shown, not the helpers'.
    assert "assertions.py" not in result.stdout.str()


def test_helpers_are_exported_lazily() -> None:
    assert pytest_chunkeval.assert_recall_at_least is assert_recall_at_least
    assert pytest_chunkeval.share_at_least is share_at_least
    assert "assert_recall_at_least" in dir(pytest_chunkeval)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = pytest_chunkeval.nope  # type: ignore[attr-defined]


def test_rank_metric_helpers_pass_and_fail_readably(tmp_path):
    from support.stores import ShuffledStore
    from support.tiny_corpus import DOCS, make_queries

    from pytest_chunkeval.assertions import (
        assert_complete_at_least,
        assert_mrr_at_least,
        assert_ndcg_at_least,
    )
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.embedders.cache import EmbeddingCache
    from pytest_chunkeval.embedders.hashing import HashingEmbedder
    from pytest_chunkeval.engine.evaluate import evaluate

    corpus = Corpus.from_mapping(DOCS, name="tiny")
    result = evaluate(
        "recursive:20:0",
        corpus,
        make_queries(corpus),
        embedder=HashingEmbedder(),
        store=ShuffledStore(),  # misses each query's best chunk
        k=2,
        cache=EmbeddingCache(tmp_path),
    )
    assert_mrr_at_least(result, result.mean("mrr"))
    assert_ndcg_at_least(result, 0.0)
    with pytest.raises(
        AssertionError, match=r"^ndcg mean [0-9.]+ is below the required 1\.000"
    ):
        assert_ndcg_at_least(result, 1.0)
    with pytest.raises(AssertionError, match="complete mean"):
        assert_complete_at_least(result, 1.0)
