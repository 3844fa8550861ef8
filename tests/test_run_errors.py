"""Errors of the plugin's session (``run/``) keep their own class and message where
they arise: no re-raise as the bare ``ChunkevalError`` root, a memoized failure
raised again as what it was; ``chunkeval.relationships(k=0)`` fails as cleanly as
``score(k=0)``; the judge runs from ``judging/``, and assembling a result leaves
its configuration as given."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.plugin_project import run, write_project

from pytest_chunkeval.config.evaluation import EvaluationSpec
from pytest_chunkeval.config.options import Settings
from pytest_chunkeval.config.registry import UnknownSpec
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.errors import ChunkevalError
from pytest_chunkeval.judging.judge import CallableJudge
from pytest_chunkeval.run import evaluations
from pytest_chunkeval.run.session import ChunkevalSession

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_chunkeval"
TEXT = "Dogs bark at the mailman. Cats sleep all day. Fish swim in schools."


def _session(tmp_path: Path) -> tuple[ChunkevalSession, EvaluationSpec]:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "doc.md").write_text(TEXT, encoding="utf-8")
    start = TEXT.index("Cats")
    excerpt = Excerpt("Cats sleep all day.", "doc.md", start, start + 19)
    QuerySet([Query("q", "Do cats sleep?", (excerpt,), "doc.md")]).save(
        tmp_path / "questions.jsonl"
    )
    settings = Settings(
        rootdir=str(tmp_path),
        corpus=("docs",),
        queries="questions.jsonl",
        embedder="hashing",
        store="exact",
        cache_dir=str(tmp_path / "cache"),
    )
    return ChunkevalSession(settings), EvaluationSpec.from_settings(settings)


def test_an_unknown_chunker_keeps_its_class(tmp_path: Path) -> None:
    session, spec = _session(tmp_path)
    with pytest.raises(UnknownSpec, match="nonsense") as raised:
        evaluations.evaluate(session, spec, "nonsense:1", nodeid="t.py::test_a")
    assert type(raised.value) is UnknownSpec  # not re-raised as the root class


def test_a_memoized_failure_is_raised_again_as_what_it_was(tmp_path: Path) -> None:
    session, spec = _session(tmp_path)
    kinds = []
    for _ in range(2):  # the second comes from the session's memo of failures
        with pytest.raises(ChunkevalError) as raised:
            evaluations.relationships(
                session, spec, "recursive:20:0", "nonsense", nodeid="t.py::t", k=2
            )
        kinds.append((type(raised.value), str(raised.value)))
        assert raised.value.__traceback__ is not None
    assert kinds[0] == kinds[1]
    assert kinds[0][0] is UnknownSpec
    assert "nonsense" in kinds[0][1]


def test_no_module_raises_the_bare_root_class() -> None:
    # errors.py: the root names a family; each error is raised as its own class.
    raising = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Raise)
        and isinstance(node.exc, ast.Call)
        and ast.unparse(node.exc.func) == "ChunkevalError"
    ]
    assert raising == []


def test_relationships_with_k_0_fails_cleanly(pytester: pytest.Pytester) -> None:
    write_project(pytester.path)
    pytester.makepyfile(
        test_rel="""
        import pytest

        @pytest.mark.parametrize("k", [0, True, "2"])
        def test_bad_k(chunkeval, k):
            chunkeval.relationships("recursive:30:0", extractor="facts", k=k)
        """
    )
    result = run(pytester)
    result.assert_outcomes(failed=3)
    for shown in ("0", "True", "'2'"):
        result.stdout.fnmatch_lines(
            [
                f"*test_bad_k*: chunkeval.relationships(k={shown}): k must be a "
                "positive whole number of relationships*"
            ]
        )
    result.stdout.no_fnmatch_line("*ValueError*")
    result.stdout.no_fnmatch_line("*evaluator.py*")


def test_scoring_with_a_judge_leaves_the_configuration_as_given() -> None:
    from pytest_chunkeval.engine.records import build_result
    from pytest_chunkeval.judging.score import Judged

    corpus = Corpus.from_mapping({"doc.md": TEXT})
    start = TEXT.index("Cats")
    excerpt = Excerpt("Cats sleep all day.", "doc.md", start, start + 19)
    queries = QuerySet([Query("q", "Do cats sleep?", (excerpt,), "doc.md")])
    judge = CallableJudge(
        lambda q, c: ["Cats sleep all day."], name="cats", version="1"
    )
    result = score({"q": ["Cats sleep all day."]}, corpus, queries, judge=judge)
    assert result.config["judge"] == "cats@1"
    assert result.timings["judge"] >= 0
    assert result.queries[0].scores["context_relevance"] == 1.0
    # the assembly itself: the judge's identity goes into the result, not into
    # the caller's dictionary
    config = {"label": "given"}
    judged = Judged("cats@1", (), 0.25)
    again = build_result(  # no query: the records are empty
        "given",
        config,
        corpus,
        QuerySet([]),
        *_empty(corpus),
        judged=judged,
    )
    assert config == {"label": "given"}
    assert again.config["judge"] == "cats@1"
    assert again.timings == {"judge": 0.25}


def _empty(corpus: Corpus) -> tuple[object, ...]:
    """units, excerpts, retrieved, scores, chunk stats, timings, chunk spans of an
    evaluation without queries."""
    from pytest_chunkeval.core.metrics import QuerySpans, score_queries
    from pytest_chunkeval.core.units import UnitMap

    units = UnitMap(corpus.ids, [d.text for d in corpus], "char")
    none = QuerySpans.from_lists([], units)
    return units, none, none, score_queries(units, none, none, 0), {}, {}, []
