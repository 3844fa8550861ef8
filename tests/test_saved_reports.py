"""Reports and history files written by earlier versions still load (issue 34):
JSON reports (``--chunkeval-json``) and history files of three earlier commits,
each from a run of the same small project (baselines recorded at k=5, then a
run at k=1), read by this version: every result, its verdict and numbers, the
Markdown and HTML reports, and ``chunkeval report``. Their query paths are
absolute, as earlier versions wrote them (docs/ci.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_chunkeval.cli.main import main
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.reporting.history import read_history
from pytest_chunkeval.reporting.html import html_report
from pytest_chunkeval.reporting.json_report import read_json_report
from pytest_chunkeval.reporting.markdown import history_markdown, markdown_report

DATA = Path(__file__).parent / "data" / "reports"
VERSIONS = {
    # commit: the baseline cell of each row as this version reads it
    "12715c7": ("-", "-"),  # before verdicts were written to the report
    "dac1a09": ("ok", "improved"),  # "passed" read as ok
    "8327a12": ("REGRESSED", "REGRESSED"),
}
TESTS = [
    "test_rag.py::test_rag[recursive:30:0]",
    "test_rag.py::test_rag[recursive:60:0]",
]


@pytest.mark.parametrize("commit", list(VERSIONS))
def test_an_earlier_json_report_loads(commit: str) -> None:
    path = DATA / f"report-{commit}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    entries = read_json_report(path)
    assert [list(e.nodeids) for e in entries] == [[t] for t in TESTS]
    assert tuple(e.baseline_cell for e in entries) == VERSIONS[commit]
    for entry, item in zip(entries, data["results"], strict=True):
        result = EvalResult.from_json(dict(entry.result))
        stored = item["result"]["metrics"]["recall"]["mean"]
        assert result.mean("recall") == pytest.approx(stored)
        recalls = [q.metric("recall") for q in result.queries]
        if recalls:  # 12715c7 wrote the results without their questions
            assert sum(recalls) / len(recalls) == pytest.approx(stored)
        assert result.config["k"] == 1
    markdown = markdown_report(entries)
    page = html_report(entries, read_history(DATA / f"history-{commit}.jsonl"))
    for test in TESTS:
        assert test in markdown
        assert test in page


@pytest.mark.parametrize("commit", list(VERSIONS))
def test_an_earlier_history_file_reads(commit: str, tmp_path: Path) -> None:
    path = DATA / f"history-{commit}.jsonl"
    records = read_history(path)
    assert len(records) == 2
    assert records[0]["config"]["queries"] == "/home/ci/project/queries.jsonl"
    relative = read_history(path, rootdir="/home/ci/project")
    assert relative[0]["config"]["queries"] == "queries.jsonl"
    assert "recursive:30:0" in history_markdown(records)
    out = tmp_path / "report.html"
    results = DATA / f"report-{commit}.json"
    argv = ["report", str(path), "--results", str(results), "--html", str(out)]
    assert main(argv) == 0
    assert "recursive:60:0" in out.read_text(encoding="utf-8")
