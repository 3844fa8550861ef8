"""A chunker replaced in ``chunkeval_chunkers`` is compared, as a configuration
change, with the baseline of the parameter it replaced (issue 21 part B): its
test id changed, so it had "no baseline" beside "1 unused baseline" and the
change was never compared. Exactly one baseline of the test function matching
no collected test (deselected ones included) and exactly one new test: compared;
otherwise the missing baseline's message names the unused ones and says why
none was taken. In one process and under pytest-xdist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.baseline_project import (
    BASELINE_CONFTEST,
    BASELINE_INI,
    KEEP,
    baseline_file,
)
from support.plugin_project import DIST, MODES, run, write_project

TESTS = """
def test_x(chunkeval, chunkeval_chunker):
    chunkeval.check_baseline(chunkeval.evaluate())
"""


def _chunkers(root: Path, specs: str) -> None:
    (root / "pytest.ini").write_text(BASELINE_INI + f"chunkeval_chunkers = {specs}\n")


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv(KEEP, raising=False)
    write_project(pytester.path, BASELINE_INI, conftest=BASELINE_CONFTEST)
    pytester.makepyfile(test_c=TESTS)
    _chunkers(pytester.path, "recursive:30:0 recursive:60:0")
    run(pytester, "--chunkeval-update").assert_outcomes(passed=2)
    return pytester.path


def _run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: bool, *args: str
) -> pytest.RunResult:
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        try:
            return pytester.runpytest_subprocess(*DIST, *args)
        finally:
            monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    return run(pytester, *args)


FOLDER = Path("__chunkeval__", "test_c")


@MODES
def test_a_replaced_chunker_is_compared_as_a_configuration_change(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    old = project / FOLDER / baseline_file("test_x[recursive:60:0]")
    new = project / FOLDER / baseline_file("test_x[recursive:90:10]")
    recorded = old.read_bytes()
    _chunkers(project, "recursive:30:0 recursive:90:10")
    result = _run(pytester, monkeypatch, dist)
    result.assert_outcomes(passed=2)
    summary = result.stdout.str().split("- chunkeval -", 1)[1]
    assert (
        "test_c.py::test_x[recursive:90:10]: changed since the baseline: chunker: "
        "recursive:60:0 -> recursive:90:10" in summary
    ), summary
    assert re.search(
        r"test_c\.py::test_x\[recursive:90:10\]: passed against its baseline across "
        r"changes \(recall \+0\.00 points.*\n\s+chunker: recursive:60:0 -> "
        r"recursive:90:10\n",
        summary,
    ), summary
    assert (
        f"{FOLDER / old.name}: the baseline of test_x[recursive:60:0], whose "
        "parameter it replaced; `pytest --chunkeval-update` moves it to "
        f"{FOLDER / new.name}" in summary
    )
    assert "unused" not in summary  # the old file was used
    assert "missing" not in summary
    assert old.read_bytes() == recorded  # never rewritten without the flag

    # --chunkeval-update moves it to the new id's file, and says so.
    updated = _run(pytester, monkeypatch, dist, "--chunkeval-update")
    updated.assert_outcomes(passed=2)
    assert (
        f"moved {FOLDER / old.name} to {FOLDER / new.name} (the baseline of "
        "test_x[recursive:60:0], whose parameter it replaced) (chunker: "
        "recursive:60:0 -> recursive:90:10" in updated.stdout.str()
    )
    assert not old.exists()
    assert new.is_file()
    assert "changed since" not in _run(pytester, monkeypatch, dist).stdout.str()


def test_without_one_of_each_nothing_is_guessed(
    pytester: pytest.Pytester, project: Path
) -> None:
    # Both chunkers replaced: two unused baselines, two new tests.
    _chunkers(project, "recursive:40:0 recursive:90:10")
    result = run(pytester)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "E * no baseline for test_c.py::test_x[[]recursive:40:0[]]: * does not "
            "exist.",
            "E * unused baseline(s) of test_x: test_x[[]recursive:30:0[]], "
            "test_x[[]recursive:60:0[]]; none was compared with "
            "test_x[[]recursive:40:0[]]: 2 baselines of test_x match no collected "
            "test and 2 of its tests have none, so which parameter replaced which "
            "is not known (a test is compared with the baseline of the parameter "
            "it replaced only when exactly one baseline is unused and one test is "
            "new)",
            "E * Create it with:",
        ]
    )
    assert "2 unused baseline(s)" in result.stdout.str()


def test_a_deselected_test_keeps_its_baseline(
    pytester: pytest.Pytester, project: Path
) -> None:
    # recursive:30:0 is collected but deselected: its baseline is its own, so
    # the new chunker takes over the only unused one, recursive:60:0's.
    _chunkers(project, "recursive:30:0 recursive:90:10")
    result = run(pytester, "-k", "90")
    result.assert_outcomes(passed=1)
    assert "chunker: recursive:60:0 -> recursive:90:10" in result.stdout.str()
    # A new parameter added beside the old ones is new: nothing to take over.
    _chunkers(project, "recursive:30:0 recursive:60:0 recursive:90:10")
    added = run(pytester)
    added.assert_outcomes(passed=2, failed=1)
    added.stdout.fnmatch_lines(
        [
            "E * no baseline for test_c.py::test_x[[]recursive:90:10[]]: * does "
            "not exist. Create it with:"
        ]
    )
