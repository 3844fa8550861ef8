"""SPEC §9 through the plugin: min_ndcg/min_mrr/min_complete, budget= in the marker,
the ini and the flag, and chunkeval.evaluate(budget=)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.baseline_project import (
    BASELINE,
    BASELINE_CONFTEST,
    BASELINE_INI,
    KEEP,
    TEST_RAG,
)
from support.plugin_project import run, summary_section, write_project


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    return pytester.path


@pytest.mark.compat_smoke
def test_min_ndcg_passes_and_fails_readably(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        test_rank="""
        import pytest

        @pytest.mark.chunkeval(min_ndcg=0.0, min_mrr=0.0, min_complete=0.0)
        def test_pass(chunkeval):
            chunkeval.evaluate("recursive:30:0")

        @pytest.mark.chunkeval(min_ndcg=1.0, k=1)
        def test_fail(chunkeval):
            chunkeval.evaluate("recursive:30:0")

        @pytest.mark.chunkeval(min_ndcg=0.5)
        def test_retriever_has_no_ndcg(chunkeval):
            chunkeval.score(lambda question: [])
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_fail: @pytest.mark.chunkeval(min_ndcg=1) not met",
            "ndcg mean 0.* is below the required 1.000 "
            "(recursive:30:0 k=1 token hashing:256 exact; 6 queries)",
            "* worst quer* by ndcg (below 1):",
            "  1. q-* ndcg 0.*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*ndcg cannot be checked for*undefined for a whole retriever*"]
    )


def test_budget_from_marker_ini_flag_and_call(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        test_budget="""
        import pytest

        @pytest.mark.chunkeval(budget=20, k=2)
        def test_marker(chunkeval):
            r = chunkeval.evaluate("recursive:30:0")
            assert r.config["budget"] == 20
            assert all(q.retrieved_units <= 20 for q in r.queries)

        def test_call(chunkeval):
            r = chunkeval.evaluate("recursive:30:0", budget=15)
            assert r.config["budget"] == 15

        def test_setting(chunkeval, request):
            r = chunkeval.evaluate("recursive:30:0")
            assert r.config.get("budget") == request.config.getoption(
                "chunkeval_budget"
            )

        @pytest.mark.chunkeval(budget=0)
        def test_bad(chunkeval):
            pass
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*budget*must be a positive whole number*"])
    flagged = run(pytester, "--chunkeval-budget", "40", "-k", "setting")
    flagged.assert_outcomes(passed=1, deselected=3)


# ------------------------------------------------------------------ baselines


@pytest.fixture
def baseline_project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv(KEEP, raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    ini = BASELINE_INI.replace(
        "chunkeval_tolerance = recall:-1pp",
        "chunkeval_tolerance = recall:-1pp, ndcg:-1pp, mrr:-1pp",
    )
    write_project(pytester.path, ini, conftest=BASELINE_CONFTEST)
    return pytester.path


def test_baseline_lifecycle_with_rank_metrics(
    pytester: pytest.Pytester,
    baseline_project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytester.makepyfile(test_rag=TEST_RAG)
    baseline = baseline_project / BASELINE
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    data = json.loads(baseline.read_text())
    for name in ("mrr", "ndcg", "complete", "ceiling"):
        assert data["metrics"][name]["n"] == 6
        assert name in data["queries"]["q-bark"]
    assert data["metrics"]["ceiling"]["mean"] == 1.0
    run(pytester).assert_outcomes(passed=1)

    # Worse retrieval: ndcg and mrr are gated beside recall and fail too.
    monkeypatch.setenv(KEEP, "Pets")
    regressed = run(pytester)
    regressed.assert_outcomes(failed=1)
    regressed.stdout.fnmatch_lines(
        [
            "E *   mrr got worse: mean delta -* points*",
            "E *   ndcg got worse: mean delta -* points*",
            "E * ndcg * REGRESSED",
        ]
    )
    monkeypatch.delenv(KEEP)

    # A baseline recorded before the §9 metrics: they are "not compared", said so.
    # (Its schema predates them: a schema 3 file without them is damaged.)
    data["chunkeval_baseline"] = 2
    data.pop("questions", None)
    for name in ("mrr", "ndcg", "complete", "ceiling"):
        del data["metrics"][name]
        for values in data["queries"].values():
            del values[name]
        for values in data["groups"].values():
            values.pop(name, None)
    baseline.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    old = run(pytester)
    old.assert_outcomes(passed=1)
    summary = summary_section(old)
    assert "baselines: 1 ok" in summary
    assert (
        "test_rag.py::test_rag: not compared: mrr (recorded before it existed), "
        "ndcg (recorded before it existed)" in summary
    )
    # Updating records them; then they are compared again.
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    assert "ndcg" in json.loads(baseline.read_text())["metrics"]
    assert "not compared" not in summary_section(run(pytester))


def test_a_budget_change_is_a_configuration_change(
    pytester: pytest.Pytester, baseline_project: Path
) -> None:
    pytester.makepyfile(test_rag=TEST_RAG)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    changed = run(pytester, "--chunkeval-budget", "30")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        [
            "E * chunkeval baseline regression in test_rag.py::test_rag",
            "E *   what changed since the baseline:",
            "E *     budget: none -> 30",
            "E *   * got worse: *",
        ]
    )


def test_terminal_table_shows_rank_columns_only_when_asked(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        test_plain="""
        def test_plain(chunkeval):
            chunkeval.evaluate("recursive:30:0")
        """
    )
    plain = run(pytester)
    plain.assert_outcomes(passed=1)
    header = next(
        line for line in plain.stdout.lines if line.startswith("test ")
    ).split()
    assert "nDCG" not in header
    assert "MRR" not in header
    pytester.makepyfile(
        test_asked="""
        import pytest

        @pytest.mark.chunkeval(min_ndcg=0.0)
        def test_asked(chunkeval):
            chunkeval.evaluate("recursive:30:0")
        """
    )
    asked = run(pytester)
    asked.assert_outcomes(passed=2)
    header = next(
        line for line in asked.stdout.lines if line.startswith("test ")
    ).split()
    assert header[-3:] == ["nDCG", "chunk", "time"]
    assert "MRR" not in header
