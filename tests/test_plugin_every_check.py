"""Every check of a test reported, counted and labelled once (issue 21 part B),
through the plugin in one process and under pytest-xdist: a missed threshold
does not hide a regression; per-question items and a whole-set test on one
report row count the query set's questions, not items + questions; a merged row
names the test that failed; a comparison that did not run says so; a skipped
item is skipped in the reports too.

The project is test_plugin_baseline's: ``CHUNKEVAL_TEST_KEEP=Pets`` reduces the
space and finance documents to their headings under the ``paragraphs`` chunker,
so four of the six questions go from retrieved to missed (recall 100 -> 33.33).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.baseline_project import BASELINE_CONFTEST, BASELINE_INI, KEEP
from support.browser import BROWSER, chromium
from support.plugin_project import DIST, MODES, run, summary_section, write_project

REPORTS = (
    "--chunkeval-md=report.md",
    "--chunkeval-json=report.json",
    "--chunkeval-html=report.html",
    "--junitxml=junit.xml",
)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv(KEEP, raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    write_project(pytester.path, BASELINE_INI, conftest=BASELINE_CONFTEST)
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


def _items(project: Path) -> list[dict[str, object]]:
    results: list[dict[str, object]] = json.loads(
        (project / "report.json").read_text()
    )["results"]
    return results


def _properties(project: Path, name: str) -> list[tuple[str, str]]:
    for case in ET.parse(project / "junit.xml").getroot().iter("testcase"):
        if case.get("name") == name:
            return [
                (p.get("name", ""), p.get("value", "")) for p in case.iter("property")
            ]
    raise AssertionError(f"no testcase {name}")


THRESHOLD_AND_BASELINE = """
import pytest

@pytest.mark.chunkeval(baseline=True, min_recall=0.8)
def test_both(chunkeval):
    chunkeval.evaluate("paragraphs")

def test_steady(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("recursive:60:0"))
"""


@MODES
def test_a_missed_threshold_and_a_regression_are_both_reported(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    pytester.makepyfile(test_marks=THRESHOLD_AND_BASELINE)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=2)
    monkeypatch.setenv(KEEP, "Pets")
    result = _run(pytester, monkeypatch, dist, *REPORTS)
    result.assert_outcomes(passed=1, failed=1)

    # The failure says both: the threshold missed and the baseline regressed.
    out = result.stdout.str()
    assert "test_marks.py::test_both: @pytest.mark.chunkeval(min_recall=0.8)" in out
    assert "chunkeval baseline regression in test_marks.py::test_both" in out
    summary = summary_section(result)
    assert re.search(
        r"test_marks\.py::test_both\s+paragraphs\s+failed\s+REGRESSED", summary
    ), summary
    block = summary.split("against the baseline", 1)[1]
    assert re.search(
        r"test_marks\.py::test_both\s+recall\s+REGRESSED\s+100\.00\s+33\.33", block
    ), summary
    assert "verdict: 1 regression, 0 improvements, 1 ok" in summary
    assert "baselines: 1 ok, 1 regressed" in summary

    both = next(
        i for i in _items(project) if i["tests"] == ["test_marks.py::test_both"]
    )
    assert (both["outcome"], both["verdict"]) == ("failed", "regressed")
    assert both["failed"] == ["test_marks.py::test_both"]
    markdown = (project / "report.md").read_text()
    assert markdown.startswith("**1 regression, 0 improvements, 1 ok**")
    assert "| test_marks.py::test_both | paragraphs " in markdown
    gate = markdown.split("### Against the baseline", 1)[1]
    assert "| test_marks.py::test_both | paragraphs " in gate, markdown
    html = (project / "report.html").read_text()
    assert ">1 regression, 0 improvements, 1 ok<" in html
    assert '<td class="status status-regressed" data-v="0">REGRESSED</td>' in html
    assert (
        "chunkeval.baseline",
        "regressed: __chunkeval__/test_marks/test_both.json",
    ) in _properties(project, "test_both")
    assert ("chunkeval.questions", "6") in _properties(project, "test_both")


PER_QUESTION = """
import pytest

@pytest.mark.chunkeval(per_question=True, baseline=True, min_question_recall=0.5)
def test_question(chunkeval):
    chunkeval.evaluate("paragraphs")

def test_whole(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))

def test_plain(chunkeval):
    chunkeval.evaluate("paragraphs")
"""
LOST = ("q-mars", "q-tides", "q-margin", "q-audit")


@MODES
def test_items_and_a_whole_set_test_count_the_query_set_once(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    pytester.makepyfile(test_t=PER_QUESTION)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=8)
    monkeypatch.setenv(KEEP, "Pets")
    result = _run(pytester, monkeypatch, dist, *REPORTS)
    result.assert_outcomes(passed=3, failed=5)

    # Each lost question's item fails on its threshold AND its flip.
    out = result.stdout.str()
    for qid in LOST:
        assert f"test_t.py::test_question[{qid}]: @pytest.mark.chunkeval(" in out
        assert f"question {qid} flipped from retrieved to missed" in out
    # One row: named by the test whose comparison gave its numbers, in both
    # modes; the verdict line counts the table's one row.
    summary = summary_section(result)
    assert re.search(
        r"test_t\.py::test_whole \(\+7 more, 4 of them failed\)\s+paragraphs\s+"
        r"failed\s+REGRESSED",
        summary,
    ), summary
    assert "verdict: 1 regression, 0 improvements, 0 ok" in summary
    # Two items passed, four flipped, the whole set regressed: seven files.
    assert "baselines: 2 ok, 5 regressed" in summary

    (row,) = _items(project)
    assert row["tests"][0] == "test_t.py::test_whole"
    assert row["failed"] == [
        "test_t.py::test_whole",
        *(f"test_t.py::test_question[{q}]" for q in LOST),
    ]
    flips = row["flips"]
    assert (flips["compared"], flips["lost_count"], flips["gained_count"]) == (6, 4, 0)
    assert [f["id"] for f in flips["lost"]] == list(LOST)
    assert json.loads((project / "report.json").read_text())["verdict"] == (
        "1 regression, 0 improvements, 0 ok"
    )
    markdown = (project / "report.md").read_text()
    assert markdown.startswith("**1 regression, 0 improvements, 0 ok**")
    assert "4 of 6 questions retrieved before and missed now" in markdown
    label = (
        "test_t.py::test_whole, test_t.py::test_question[q-mars], "
        "test_t.py::test_question[q-tides] (+5 more, 2 of them failed)"
    )
    assert f"| {label} |" in markdown, markdown
    html = (project / "report.html").read_text()
    assert "4 of 6 questions retrieved before and missed now" in html
    assert (
        "chunkeval.baseline",
        "regressed: __chunkeval__/test_t/test_question[q-mars].json",
    ) in _properties(project, "test_question[q-mars]")


MERGED = """
def test_chunkers(chunkeval, chunkeval_chunker):
    chunkeval.evaluate()

def test_chunker_baseline(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("recursive:60:0"))
"""


@MODES
def test_a_merged_row_names_the_test_that_failed(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    ini = BASELINE_INI + "chunkeval_chunkers = recursive:30:0 recursive:60:0\n"
    (project / "pytest.ini").write_text(ini)
    pytester.makepyfile(test_merged=MERGED)
    result = _run(pytester, monkeypatch, dist, *REPORTS)
    result.assert_outcomes(passed=2, failed=1)
    summary = summary_section(result)
    assert re.search(
        r"test_merged\.py::test_chunker_baseline \(\+1\)\s+recursive:60:0\s+failed"
        r"\s+not compared \(no baseline\)",
        summary,
    ), summary
    assert "test_chunkers[recursive:60:0] (+1)" not in summary
    row = next(i for i in _items(project) if i["outcome"] == "failed")
    assert row["tests"] == [
        "test_merged.py::test_chunker_baseline",
        "test_merged.py::test_chunkers[recursive:60:0]",
    ]
    assert (
        "| test_merged.py::test_chunker_baseline (+1) |"
        in (project / "report.md").read_text()
    )


BODY_FAILS = """
import pytest

@pytest.mark.chunkeval(baseline=True)
def test_body(chunkeval):
    chunkeval.evaluate("paragraphs")
    assert False, "boom"

def test_ok(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))
"""


def test_a_comparison_that_did_not_run_is_not_compared(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(test_body=BODY_FAILS)
    updated = run(pytester, "--chunkeval-update")
    updated.assert_outcomes(passed=1, failed=1)
    assert "not recorded: test_body.py::test_body failed (AssertionError: boom)" in (
        summary_section(updated)
    )
    result = run(pytester, *REPORTS)
    result.assert_outcomes(passed=1, failed=1)
    summary = summary_section(result)
    # The row's other test passed its comparison: the row still does not read
    # as compared, and names the test whose comparison did not run.
    assert re.search(
        r"test_body\.py::test_body \(\+1\)\s+paragraphs\s+failed\s+"
        r"not compared \(test failed first\)",
        summary,
    ), summary
    assert (
        "not compared: test_body.py::test_body failed before its baseline comparison "
        "(AssertionError: boom)" in summary
    )
    (row,) = _items(project)
    assert (row["verdict"], row["reason"]) == ("not compared", "test failed first")
    assert "**not compared (test failed first)**" in (project / "report.md").read_text()
    assert (
        "chunkeval.baseline",
        "not compared (test failed first): __chunkeval__/test_body/test_body.json",
    ) in _properties(project, "test_body")


@MODES
def test_a_skipped_item_is_skipped_in_the_reports(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    pytester.makepyfile(
        test_skip="""
import pytest

@pytest.mark.chunkeval(per_question=True, baseline=True)
def test_question(chunkeval):
    chunkeval.evaluate("paragraphs")
"""
    )
    run(pytester, "--chunkeval-update").assert_outcomes(passed=6)
    finance = project / "docs" / "finance.md"
    finance.write_text(
        "\n\n".join(p for p in finance.read_text().split("\n\n") if "auditor" not in p)
    )
    result = _run(pytester, monkeypatch, dist, *REPORTS)
    result.assert_outcomes(passed=5, skipped=1)
    summary = summary_section(result)
    assert re.search(r"paragraphs\s+passed \(1 skipped\)\s+ok", summary), summary
    (row,) = _items(project)
    assert (row["outcome"], row["verdict"]) == ("passed", "ok")
    assert row["skipped"] == ["test_skip.py::test_question[q-audit]"]
    assert "failed" not in row
    assert "| passed (1 skipped) | ok |" in (project / "report.md").read_text()


@pytest.mark.skipif(BROWSER is None, reason="no chromium on PATH")
def test_the_html_report_shows_counts_and_labels_in_a_browser(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    pytester.makepyfile(test_t=PER_QUESTION)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=8)
    monkeypatch.setenv(KEEP, "Pets")
    run(pytester, *REPORTS).assert_outcomes(passed=3, failed=5)
    proc = chromium(
        tmp_path,
        "--virtual-time-budget=5000",
        "--dump-dom",
        (project / "report.html").as_uri(),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert re.search(r'id="verdict">1 regression, 0 improvements, 0 ok<', dom)
    results = dom.split('<section id="results">', 1)[1].split("</tbody>", 1)[0]
    assert "test_t.py::test_whole" in results.split("<td", 2)[1]
    # the cell may break after its commas (<wbr>)
    assert "(+5 more, 2 of them failed)" in results.replace("<wbr>", "")
    assert "4 of 6 questions retrieved before and missed now" in dom
