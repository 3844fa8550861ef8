"""Baseline names are checked (issue 21 part B): ``check_baseline(...,
name="")`` is an error, and so is a name whose file another check of the test
uses (``name="2"`` beside two unnamed checks both wrote ``test_three.2.json``,
and the next run reported a false improvement), in one process and under
pytest-xdist."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.baseline_project import BASELINE_CONFTEST, BASELINE_INI, KEEP
from support.plugin_project import DIST, MODES, run, write_project

from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.gate.files.names import BaselineNames
from pytest_chunkeval.gate.files.paths import BaselineLayout, NodeRef

NAMES = """
def test_three(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))
    chunkeval.check_baseline(chunkeval.evaluate("recursive:60:0"))
    chunkeval.check_baseline(chunkeval.evaluate("recursive:30:0"), name="2")

def test_named_first(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("recursive:30:0"), name="2")
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))
    chunkeval.check_baseline(chunkeval.evaluate("recursive:60:0"))

def test_empty(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"), name="")

def test_fine(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))
    chunkeval.check_baseline(chunkeval.evaluate("recursive:60:0"), name="sixty")
    chunkeval.check_baseline(chunkeval.evaluate("recursive:30:0"))
"""


@MODES
def test_an_empty_or_colliding_name_is_an_error_naming_both(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: bool
) -> None:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv(KEEP, raising=False)
    write_project(pytester.path, BASELINE_INI, conftest=BASELINE_CONFTEST)
    pytester.makepyfile(test_names=NAMES)
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        result = pytester.runpytest_subprocess(*DIST, "--chunkeval-update")
    else:
        result = run(pytester, "--chunkeval-update")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines_random(
        [
            "E * test_names.py::test_three: check_baseline(name='2') and its unnamed "
            "check_baseline() number 2 would both use the baseline file "
            "test_three.2.json, one overwriting the other: give it another name=",
            "E * test_names.py::test_named_first: its unnamed check_baseline() number "
            "2 and check_baseline(name='2') would both use the baseline file "
            "test_named_first.2.json, one overwriting the other: give the named one "
            "another name=",
            "E * test_names.py::test_empty: check_baseline(name=''): a baseline name "
            "must be a non-empty string (leave name= out for the test's unnamed "
            "baselines: <test>.json, <test>.2.json...)",
        ]
    )
    # Nothing of a failed test is written; the others' files are all there.
    folder = pytester.path / "__chunkeval__" / "test_names"
    assert sorted(p.name for p in folder.iterdir()) == [
        "test_fine.2.json",
        "test_fine.json",
        "test_fine.sixty.json",
    ]


def test_names_are_claimed_per_test_and_a_rerun_starts_again(tmp_path: Path) -> None:
    names = BaselineNames(BaselineLayout(rootdir=tmp_path))
    a = NodeRef("t.py::test_a", tmp_path / "t.py")
    b = NodeRef("t.py::test_b", tmp_path / "t.py")
    assert [names.suffix(a), names.suffix(a), names.suffix(a, "x")] == [None, "2", "x"]
    assert names.suffix(b, "2") == "2"  # another test's own file
    with pytest.raises(ConfigError, match=r"check_baseline\(name='x'\) and "):
        names.suffix(a, "x")
    for bad in ("", "  ", 3):
        with pytest.raises(ConfigError, match="must be a non-empty string"):
            names.suffix(a, bad)
    names.begin("t.py::test_a")  # a rerun of the test
    assert [names.suffix(a), names.suffix(a, "x")] == [None, "x"]
