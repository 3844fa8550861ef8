"""The plugin under pytest-xdist: workers send their results, the controller's
summary lists every configuration, and the shared embedding cache stays sound."""

from __future__ import annotations

import re

import pytest
from support.plugin_project import DIST, write_project

pytestmark = pytest.mark.dist

TESTS = """
import pytest

def test_a(chunkeval, chunkeval_chunker):
    assert chunkeval.evaluate().mean("recall") > 0

def test_b(chunkeval, chunkeval_chunker):
    chunkeval.evaluate()

@pytest.mark.chunkeval(k=1)
def test_c(chunkeval, chunkeval_chunker):
    chunkeval.evaluate()
"""


# Subprocesses load only the plugins under test: importing every installed pytest
# plugin in three processes per run would dominate the test's time.
@pytest.fixture(autouse=True)
def _no_autoload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def _rows(output: str) -> dict[str, str]:
    """Summary rows by chunker and k, metric columns only (time varies)."""
    section = output.split("- chunkeval -", 1)[1].splitlines()[1:]
    rows = {}
    for line in section:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= 10 and cells[1].startswith("recursive:"):
            rows[f"{cells[1]} k={cells[2]}"] = " ".join(cells[3:-1])
    return rows


@pytest.mark.compat_smoke
def test_two_workers_report_every_configuration(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    pytester.makepyfile(test_dist=TESTS)

    result = pytester.runpytest_subprocess(*DIST)
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["*2 workers*"])
    out = result.stdout.str()
    rows = _rows(out)
    assert sorted(rows) == [
        "recursive:30:0 k=1",
        "recursive:30:0 k=5",
        "recursive:60:0 k=1",
        "recursive:60:0 k=5",
    ]
    # Each worker evaluates what it needs; together every result is accounted for.
    # Workers share one cache, so one may read back what the other just wrote.
    match = re.search(
        r"(\d) configurations evaluated(?: \(\d read back from the result cache\))?,"
        r" (\d) results? reused",
        out,
    )
    assert match is not None, out
    evaluated, reused = map(int, match.groups())
    assert 4 <= evaluated <= 6
    assert evaluated + reused == 6
    # A row lists the tests sharing it, whichever workers ran them: test_a and
    # test_b share each k=5 row, test_c has each k=1 row to itself.
    shared = [line for line in out.splitlines() if "(+1)" in line]
    assert len(shared) == 2, out
    assert all(" 5 " in line for line in shared), shared

    # A second distributed run reads the cache the first one wrote and agrees.
    cache = pytester.path / ".chunkeval" / "cache"
    assert not list(cache.rglob("*.corrupt"))
    again = pytester.runpytest_subprocess(*DIST)
    again.assert_outcomes(passed=6)
    assert _rows(again.stdout.str()) == rows
    assert not list(cache.rglob("*.corrupt"))


def test_workers_without_results_print_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a(): pass\ndef test_b(): pass")
    result = pytester.runpytest_subprocess(*DIST)
    result.assert_outcomes(passed=2)
    assert "- chunkeval -" not in result.stdout.str()
