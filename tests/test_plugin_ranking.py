"""SPEC §9 through the plugin: min_ndcg/min_mrr/min_complete, budget= in the marker,
the ini and the flag, and chunkeval.evaluate(budget=)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.plugin_project import run, write_project


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    return pytester.path


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
            "(recursive:30:0 k=1 token hashing exact; 6 queries)",
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
