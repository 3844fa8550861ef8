"""What the terminal summary says about where its numbers came from (issue 34): a
result read back from the result cache is counted as such in the footer, as its
time cell says ``cached``."""

from __future__ import annotations

import pytest
from support.plugin_project import run, write_project

from pytest_chunkeval.run.summary import footer

TEST = """
def test_whole(chunkeval, chunkeval_chunker):
    chunkeval.evaluate()
"""


def test_the_footer_counts_the_results_read_back_from_the_cache(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The time column said ``cached`` while the footer said "2 configurations
    evaluated, 0 results reused"."""
    write_project(pytester.path)
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(pytester.path / "cache"))
    pytester.makepyfile(test_it=TEST)
    cold = run(pytester)
    cold.assert_outcomes(passed=2)
    assert "2 configurations evaluated, 0 results reused" in cold.stdout.str()
    warm = run(pytester)
    warm.assert_outcomes(passed=2)
    out = warm.stdout.str()
    rows = [line for line in out.splitlines() if line.startswith("test_it.py::")]
    assert len(rows) == 2, out
    assert all(r.rstrip().endswith("cached") for r in rows), out
    assert (
        "2 configurations evaluated (2 read back from the result cache), "
        "0 results reused" in out
    ), out


def test_the_footer_without_the_cache_reads_as_before() -> None:
    assert footer(1, 0) == "1 configuration evaluated, 0 results reused"
    assert footer(2, 1, 1) == (
        "2 configurations evaluated (1 read back from the result cache), "
        "1 result reused"
    )
