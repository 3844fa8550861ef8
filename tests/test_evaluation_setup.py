"""One evaluation setup: the three entry points record the same configuration for
the same components, and every one of them caches beside the evaluation cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_chunkeval.config.evaluation import EvaluationSpec
from pytest_chunkeval.config.options import Settings
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.keys import memo_key
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.engine.setup import EvaluationSetup
from pytest_chunkeval.relationships.evaluate import evaluate_relationships
from pytest_chunkeval.run import evaluations
from pytest_chunkeval.run.session import ChunkevalSession

TEXT = "Alice founded Acme. Bob acquired Zeta. Carol joined Acme. Dave founded Orbit."
SENTENCES = [s + "." for s in TEXT.rstrip(".").split(". ")]


def _excerpt(sentence: str) -> Excerpt:
    start = TEXT.index(sentence)
    return Excerpt(sentence, "doc.md", start, start + len(sentence))


@pytest.fixture
def corpus() -> Corpus:
    return Corpus.from_mapping({"doc.md": TEXT})


@pytest.fixture
def queries() -> QuerySet:
    return QuerySet(
        [
            Query("q1", "Who founded Acme?", (_excerpt(SENTENCES[0]),), "doc.md"),
            Query("q2", "Who bought Zeta?", (_excerpt(SENTENCES[1]),), "doc.md"),
        ],
        source="questions.jsonl",
    )


def _facts(text: str) -> list[tuple[str, str, str, str]]:
    out = []
    for sentence in SENTENCES:
        if sentence in text:
            subject, predicate, obj = sentence.rstrip(".").split(" ", 2)
            out.append((subject, predicate, obj, sentence))
    return out


@pytest.mark.parametrize("store", ["exact", "bm25"])
def test_evaluate_and_relationships_record_the_same_configuration(
    corpus: Corpus, queries: QuerySet, tmp_path: Path, store: str
) -> None:
    if store == "bm25":
        pytest.importorskip("bm25s")
    common = {
        "embedder": "hashing",  # recorded as its canonical spec by both
        "store": store,
        "unit": "char",
        "cache": tmp_path / "cache",
        "copies": "strict",
    }
    chunks = evaluate("sentence:20", corpus, queries, k=2, **common)
    relations = evaluate_relationships(
        "sentence:20", corpus, queries, extractor=_facts, k=2, **common
    )
    only_relations = {"extractor", "extractor_identity", "retrieves"}
    shared = {k: v for k, v in relations.config.items() if k not in only_relations}
    assert shared == chunks.config
    assert chunks.config["embedder"] == ("hashing:256" if store == "exact" else None)


def test_a_setup_records_what_it_resolved(corpus: Corpus, queries: QuerySet) -> None:
    setup = EvaluationSetup.resolve(
        corpus, queries, embedder="hashing", store="exact", unit="char", cache=""
    )
    assert setup.config("x", k=3) == {
        "chunker": "x",
        "embedder": "hashing:256",
        "embedder_identity": setup.embedder.identity if setup.embedder else None,
        "store": "exact",
        "unit": "char",
        "tokenizer": None,
        "corpus": corpus.name,
        "queries": "questions.jsonl",
        "k": 3,
        "scoring_rules": setup.config("x")["scoring_rules"],
    }
    whole = EvaluationSetup.resolve(corpus, queries, store=None, unit="char")
    assert "embedder_identity" not in whole.config("retriever")
    assert memo_key(whole) != memo_key(setup)


def test_score_in_the_session_caches_in_the_evaluation_cache(
    corpus: Corpus,
    queries: QuerySet,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Settings made in code have no cache directory: the session's whole
    retriever scores with the default cache (under rootdir), never the current
    directory (it used to write copies/ there)."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "doc.md").write_text(TEXT, encoding="utf-8")
    queries.save(tmp_path / "questions.jsonl")
    settings = Settings(
        rootdir=str(tmp_path), corpus=("docs",), queries="questions.jsonl"
    )
    assert settings.cache_dir == ""
    session = ChunkevalSession(settings)
    run = EvaluationSpec.from_settings(settings)
    result = evaluations.score(
        session, run, lambda q: [SENTENCES[0]], nodeid="t.py::test_a"
    )
    assert result.metrics["recall"].n == 2
    assert os.listdir(work) == []
    assert (tmp_path / ".chunkeval" / "cache" / "copies").is_dir()


def test_score_takes_its_cache_from_the_setup(
    corpus: Corpus, queries: QuerySet, tmp_path: Path
) -> None:
    setup = EvaluationSetup.resolve(
        corpus, queries, store=None, unit="char", cache=tmp_path / "cache"
    )
    result = score({"q1": [SENTENCES[0]], "q2": []}, corpus, queries, setup=setup)
    assert result.queries[0].scores["recall"] == 1.0
    assert (tmp_path / "cache" / "copies").is_dir()


def test_a_plugin_setup_carries_its_tests_spec(
    queries: QuerySet, tmp_path: Path
) -> None:
    """The setup is resolved once per configuration, and each test's evaluation
    runs under that test's own spec: the keys read its settings."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "doc.md").write_text(TEXT, encoding="utf-8")
    queries.save(tmp_path / "questions.jsonl")
    settings = Settings(
        rootdir=str(tmp_path),
        corpus=("docs",),
        queries="questions.jsonl",
        embedder="hashing",
        store="exact",
        cache_dir=str(tmp_path / "cache"),
    )
    session = ChunkevalSession(settings)
    first = EvaluationSpec.from_settings(settings)
    second = EvaluationSpec.from_settings(settings, {"locate": "normalized", "k": 2})
    a = evaluations.setup_of(session, first)
    b = evaluations.setup_of(session, second)
    assert len(session.setups) == 1  # resolved once
    assert (a.spec.locate, a.spec.k) == ("exact", 5)
    assert (b.spec.locate, b.spec.k) == ("normalized", 2)
    assert b.corpus is a.corpus


def test_a_sessions_memo_keys_a_reranker_by_its_identity_now(
    corpus: Corpus, queries: QuerySet
) -> None:
    # A cross-encoder's identity follows its files until it loads (stores/
    # rerank.py): the session's memo must not answer for a replaced model by
    # the spec it was asked under.
    from support.rerankers import ByLength

    from pytest_chunkeval.engine.keys import evaluation_memo

    reranker = ByLength()
    setup = EvaluationSetup.resolve(
        corpus, queries, embedder="hashing", store="exact", unit="char", cache=""
    ).with_run(rerank=reranker)
    before = evaluation_memo(setup, ("chunker",), ())
    reranker.identity = "test:by-length-2"  # type: ignore[misc]
    assert evaluation_memo(setup, ("chunker",), ()) != before
