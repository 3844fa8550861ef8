"""The verdict in every report (issue 13 item 3): a run with one regression,
through the plugin, in one process and under pytest-xdist. The terminal summary,
the JSON, Markdown and HTML reports carry each row's test outcome and baseline
verdict, per gated metric the baseline, the change and its interval, regressions
first, and the questions that flipped.

The project is test_plugin_baseline's: ``CHUNKEVAL_TEST_KEEP=Pets`` reduces the
space and finance documents to their headings under the ``paragraphs`` chunker, so
their four questions go from retrieved to missed (recall 100 -> 33.33) while
``recursive:60:0`` does not move. ``Pets,Space`` loses only the two finance
questions: nothing in this pipeline is noisy, so those are real losses and the test
fails; the paired bootstrap mode (an option) would call it noise on six questions,
and still lists them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.baseline_project import (
    BASELINE_CONFTEST,
    BASELINE_INI,
    KEEP,
    VERDICT_TESTS,
)
from support.plugin_project import DIST, MODES, run, summary_section, write_project

from pytest_chunkeval.gate.comparison.verdicts import VERDICTS, verdict_text

REPORTS = (
    "--chunkeval-md=report.md",
    "--chunkeval-json=report.json",
    "--chunkeval-html=report.html",
)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv(KEEP, raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    write_project(pytester.path, BASELINE_INI, conftest=BASELINE_CONFTEST)
    pytester.makepyfile(test_rag=VERDICT_TESTS)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=3)
    return pytester.path


def regressed_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: bool
) -> pytest.RunResult:
    """The run with one regression (test_rag), its reports written."""
    monkeypatch.setenv(KEEP, "Pets")
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        result = pytester.runpytest_subprocess(*DIST, *REPORTS)
    else:
        result = run(pytester, *REPORTS)
    result.assert_outcomes(passed=2, failed=1)
    return result


@MODES
def test_every_report_shows_the_regression_first(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    result = regressed_run(pytester, monkeypatch, dist)

    # Terminal: outcome and baseline columns, then the gated metrics.
    summary = summary_section(result)
    row = next(line for line in summary.splitlines() if "::test_rag " in line)
    assert re.search(r"paragraphs\s+failed\s+REGRESSED\s+50\s", row), summary
    assert re.search(r"recursive:60:0\s+passed\s+ok\s+50\s", summary), summary
    assert re.search(r"recursive:30:0\s+passed\s+-\s+50\s", summary), summary
    block = summary.split("against the baseline", 1)[1].splitlines()
    assert re.match(
        r"test\s+metric\s+verdict\s+baseline\s+now\s+change\s+SE\s+95% CI", block[1]
    )
    assert re.match(
        r"test_rag\.py::test_rag\s+recall\s+REGRESSED\s+100\.00\s+33\.33\s+-66\.67\s+"
        r"0\.00\s+\[-\d+\.\d\d, -\d+\.\d\d\]$",
        block[2],
    ), summary
    steady = next(i for i, line in enumerate(block) if "::test_steady" in line)
    assert steady > 2  # regressions first
    assert "changed since the baseline" not in summary  # only the metrics moved
    # Nothing moved: one line, its verdict in the gate's words, its change 0.
    assert re.match(
        r"test_rag\.py::test_steady\s+recall\s+ok\s+\+0\.00$", block[steady]
    )
    verdict_column = block[1].index("verdict")
    said = {
        line[verdict_column:].split()[0]
        for line in block[2:]
        if line.startswith("test_rag.py::")
    }
    assert said <= {verdict_text(v) for v in VERDICTS}, said

    # JSON: outcome, verdict, gated metrics with their interval, flips.
    items = {
        tuple(i["tests"]): i
        for i in json.loads((project / "report.json").read_text())["results"]
    }
    rag = items[("test_rag.py::test_rag",)]
    assert (rag["outcome"], rag["verdict"]) == ("failed", "regressed")
    (recall,) = [g for g in rag["gated"] if g["metric"] == "recall"]
    assert recall["baseline"] == 1.0
    assert recall["now"] == pytest.approx(1 / 3, abs=1e-6)
    assert recall["delta"] == pytest.approx(-2 / 3, abs=1e-6)
    assert recall["low"] <= recall["delta"] <= recall["high"] < 0
    assert recall["status"] == "regressed"
    lost = rag["flips"]["lost"]
    assert [f["id"] for f in lost] == ["q-mars", "q-tides", "q-margin", "q-audit"]
    assert lost[2]["question"] == "What was the operating margin?"
    assert lost[2]["excerpt"] == "Operating margin was 21."  # the project's excerpt
    assert lost[2]["instead"]  # the top chunk now: another document's
    assert "Operating margin" not in lost[2]["instead"]
    assert rag["flips"]["gained"] == []
    assert "changes" not in rag  # same corpus, configuration and questions
    steady = items[("test_rag.py::test_steady",)]
    assert (steady["outcome"], steady["verdict"]) == ("passed", "ok")
    assert steady["flips"]["lost_count"] == 0
    new = items[("test_rag.py::test_new",)]
    assert (new["outcome"], "verdict" in new, "gated" in new) == (
        "passed",
        False,
        False,
    )

    # Markdown: the verdict line, the regression first and in bold, the gated
    # metrics, and the flipped questions.
    markdown = (project / "report.md").read_text()
    assert markdown.startswith("**1 regression, 0 improvements, 1 ok**\n\n")
    table = [line for line in markdown.splitlines() if line.startswith("| test_rag")]
    assert table[0].startswith("| test_rag.py::test_rag | paragraphs ")
    assert "| failed | **REGRESSED** |" in table[0]
    assert "### Against the baseline" in markdown
    assert "changed since the baseline" not in markdown
    assert "| Test | Configuration | Verdict | Recall |" in markdown
    gate = markdown.split("### Against the baseline", 1)[1].splitlines()
    rows = [line for line in gate if line.startswith("| test_rag")]
    assert re.fullmatch(
        r"\| test_rag\.py::test_rag \| paragraphs [^|]* \| \*\*REGRESSED\*\* \| "
        r"\*\*100\.00 → 33\.33: -66\.67 \[-\d+\.\d\d, -\d+\.\d\d\] REGRESSED\*\* \|",
        rows[0],
    ), markdown
    assert rows[1].endswith("| ok | 100.00 (unchanged) |"), markdown
    changes = markdown.split("### What changed", 1)[1]
    assert (
        "**test_rag.py::test_rag: 4 of 6 questions retrieved before and missed now, "
        "0 missed before and retrieved now**"
    ) in changes
    assert re.search(
        r"\| lost \| What was the operating margin\? \(q-margin, finance\.md\) \| "
        r"Operating margin was 21\. \| [^|-][^|]* \|",
        changes,
    ), changes

    # HTML: the verdict line, the regression first with a coloured status cell.
    html = (project / "report.html").read_text()
    assert '<p class="verdict" id="verdict">1 regression, 0 improvements, 1 ok' in html
    body = html.split('<section id="results">', 1)[1].split("</tbody>", 1)[0]
    first = body.split("<tr>")[2]  # after the header row
    assert "test_rag.py::test_rag" in first
    assert '<td class="status status-regressed" data-v="0">REGRESSED</td>' in first
    assert "What was the operating margin?" in html.split('id="changes"', 1)[1]


def test_two_lost_of_six_fail_and_the_paired_mode_lists_them(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEEP, "Pets,Space")  # two of six questions lost
    failed = run(pytester, *REPORTS)
    failed.assert_outcomes(passed=2, failed=1)
    failed.stdout.fnmatch_lines(
        [
            "E *   recall got worse: mean delta -33.33 points, CI [[]*[]], beyond "
            "the tolerance -1pp (-1.00 points)",
            "E *   2 of 6 questions lost (retrieved before, missed now): q-margin, "
            "q-audit",
        ]
    )
    item = next(
        i
        for i in json.loads((project / "report.json").read_text())["results"]
        if i["tests"] == ["test_rag.py::test_rag"]
    )
    assert item["verdict"] == "regressed"
    (recall,) = item["gated"]
    assert (recall["status"], recall["se"], recall["drift"]) == ("regressed", 0.0, 0)
    assert recall["mde_questions"] == 3  # (1 - 3/6)^6 < 0.05 / 2
    assert recall["mde"] == pytest.approx(0.5)

    # The sampling view alone (paired mode) cannot tell two of six from noise.
    run(pytester, *REPORTS, "--chunkeval-gate-mode=paired").assert_outcomes(passed=3)
    markdown = (project / "report.md").read_text()
    assert markdown.startswith("**0 regressions, 0 improvements, 2 ok**\n\n")
    assert re.search(
        r"\| ok \| 100\.00 → 66\.67: -33\.33 \[-\d+\.\d\d, \+0\.00\] \|", markdown
    ), markdown
    changes = markdown.split("### What changed", 1)[1]
    assert "2 of 6 questions retrieved before and missed now" in changes
    assert "| lost | Who audits the accounts? (q-audit, finance.md) |" in changes
