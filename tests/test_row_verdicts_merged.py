"""A summary row several tests share says every verdict of its tests, not only
the worst (issue 34: ``t.py::test_a (+1 more, all failed)  REGRESSED`` also stood
for a test that was ``not compared``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.plugin_project import run, write_project

from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome
from pytest_chunkeval.gate.outcome.rows import row_verdicts
from pytest_chunkeval.reporting.json_report import read_json_report

TESTS = """
import pytest


@pytest.mark.chunkeval(baseline=True)
def test_a(chunkeval):
    chunkeval.evaluate("recursive:30:0", k=K)


@pytest.mark.chunkeval(baseline=True)
def test_b(chunkeval):
    chunkeval.evaluate("recursive:30:0", k=K)
"""


def test_the_row_names_the_test_not_compared(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    write_project(pytester.path)
    pytester.makepyfile(test_rag=TESTS.replace("K", "5"))
    run(pytester, "--chunkeval-update").assert_outcomes(passed=2)
    (pytester.path / "__chunkeval__" / "test_rag" / "test_b.json").unlink()
    pytester.makepyfile(test_rag=TESTS.replace("K", "1"))
    report = tmp_path / "r.json"
    done = run(
        pytester, f"--chunkeval-json={report}", f"--chunkeval-md={tmp_path / 'r.md'}"
    )
    done.assert_outcomes(failed=2)
    out = done.stdout.str()
    rows = [line for line in out.splitlines() if line.startswith("test_rag.py::")]
    assert rows, out
    assert "REGRESSED; also 1 test not compared (no baseline)" in rows[0], out
    [entry] = read_json_report(report)
    assert entry.others == ("1 test not compared (no baseline)",)
    assert "also 1 test not compared (no baseline)" in (tmp_path / "r.md").read_text()
    assert json.loads(report.read_text())["results"][0]["others"] == list(entry.others)


def test_a_row_whose_tests_agree_lists_nothing_else() -> None:
    outcomes = [
        CheckOutcome("t::a", "a.json", "regressed", row="r"),
        CheckOutcome("t::b", "b.json", "regressed", row="r"),
        CheckOutcome("t::c", "c.json", "missing", row="s"),
        CheckOutcome("t::d", "d.json", "ok", row="s"),
    ]
    verdicts = row_verdicts(
        [("r", ["t::a", "t::b"]), ("s", ["t::c", "t::d"])], outcomes, passed={"t::d"}
    )
    assert verdicts["r"].cell == "REGRESSED"
    assert verdicts["s"].cell == "not compared (no baseline)"  # the ok test: said
