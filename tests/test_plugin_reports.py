"""History and reports through the plugin, with pytester: ``chunkeval_history`` /
``--chunkeval-history``, ``--chunkeval-json``, ``--chunkeval-md`` (and
``$GITHUB_STEP_SUMMARY``), ``--chunkeval-html``, written once at the end of the
session."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from support.plugin_project import INI, run, write_project

from pytest_chunkeval.cli.main import main as chunkeval_main
from pytest_chunkeval.engine.results import EvalResult

TESTS = """
def test_rag(chunkeval, chunkeval_chunker):
    assert chunkeval.evaluate().mean("recall") > 0

def test_again(chunkeval):
    chunkeval.evaluate("recursive:30:0")
"""

OUTPUTS = (
    "--chunkeval-json=out/report.json",
    "--chunkeval-md=out/report.md",
    "--chunkeval-html=out/report.html",
)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    ini = INI.replace("chunkeval_store", "chunkeval_unit = char\nchunkeval_store")
    write_project(pytester.path, ini + "chunkeval_history = results/history.jsonl\n")
    pytester.makepyfile(test_rag=TESTS)
    return pytester.path


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.compat_smoke
def test_reports_and_history(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step_summary = project / "step_summary.md"
    step_summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    out = project / "out"
    history = project / "results" / "history.jsonl"

    result = run(pytester, *OUTPUTS)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            f"history: 2 record(s) appended to {history}",
            f"JSON report: {out / 'report.json'}",
            f"Markdown report: {out / 'report.md'}",
            "Markdown report appended to $GITHUB_STEP_SUMMARY",
            f"HTML report: {out / 'report.html'}",
        ]
    )

    # JSON: every result of the session with the tests that produced it.
    report = json.loads((out / "report.json").read_text())
    assert report["chunkeval_report"] == 1
    by_chunker = {
        EvalResult.from_json(item["result"]).config["chunker"]: item["tests"]
        for item in report["results"]
    }
    assert by_chunker == {
        "recursive:30:0": [
            "test_rag.py::test_rag[recursive:30:0]",
            "test_rag.py::test_again",
        ],
        "recursive:60:0": ["test_rag.py::test_rag[recursive:60:0]"],
    }

    # ... with the per-query detail: each question's retrieved spans and metrics.
    first = EvalResult.from_json(report["results"][0]["result"])
    assert len(first.queries) == 6
    assert all(q.retrieved for q in first.queries)
    assert first.mean("recall") == pytest.approx(
        sum(q.scores["recall"] for q in first.queries) / 6
    )
    assert first.chunk_spans

    # Markdown: one table row per configuration, also on the workflow's page.
    markdown = (out / "report.md").read_text()
    rows = [line for line in markdown.splitlines() if line.startswith("| test_rag")]
    assert len(rows) == 2
    assert rows[0].startswith(
        "| test_rag.py::test_rag[recursive:30:0] (+1) | recursive:30:0 k=5 char"
    )
    assert step_summary.read_text() == "# earlier step\n" + markdown

    # HTML: one self-contained page with the plots, and the history so far.
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("<svg") >= 4
    assert "history of 2 records from 1 run(s) of 1 commit(s)" in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page

    # History: one line per configuration, with the git fields (not a repository
    # here: null) and the means the JSON report shows.
    records = _lines(history)
    assert [r["label"] for r in records] == ["recursive:30:0", "recursive:60:0"]
    assert records[0]["git"] == {"commit": None, "branch": None, "dirty": None}
    assert records[0]["test"] == "test_rag.py::test_rag[recursive:30:0]"
    assert records[0]["timestamp"] == records[1]["timestamp"]
    assert records[0]["metrics"]["recall"]["mean"] == pytest.approx(  # type: ignore[index]
        first.mean("recall"), abs=1e-6
    )

    # A second run appends: the history grows, the step summary gets a second table.
    run(pytester, *OUTPUTS).assert_outcomes(passed=3)
    assert len(_lines(history)) == 4
    assert step_summary.read_text().count("## chunkeval results") == 2
    assert "history of 4 records" in (out / "report.html").read_text()

    # And `chunkeval report` draws the same history on its own.
    assert chunkeval_main(["report", str(history), "--html", str(out / "h.html")]) == 0
    assert "history of 4 records" in (out / "h.html").read_text()


def _git_in(project: Path) -> Callable[..., str]:
    """A git runner in ``project`` (skips the test without git)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=project,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    return git


def test_history_records_the_commit(pytester: pytest.Pytester, project: Path) -> None:
    git = _git_in(project)
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "start")
    run(pytester, "-k", "again").assert_outcomes(passed=1, deselected=2)
    record = _lines(project / "results" / "history.jsonl")[-1]
    assert record["git"] == {
        "commit": git("rev-parse", "HEAD"),
        "branch": "main",
        "dirty": False,
    }
    (project / "test_rag.py").write_text(TESTS + "\n# edited\n")
    run(pytester, "-k", "again").assert_outcomes(passed=1, deselected=2)
    assert _lines(project / "results" / "history.jsonl")[-1]["git"]["dirty"] is True  # type: ignore[index]


def test_a_committed_history_gives_each_clean_run_a_point(
    pytester: pytest.Pytester, project: Path
) -> None:
    git = _git_in(project)
    git("init", "-q", "-b", "main")
    run(pytester, "-k", "again", *OUTPUTS).assert_outcomes(passed=1, deselected=2)
    git("add", "-A")  # history and reports committed, as a team might
    git("commit", "-q", "-m", "start")
    for _ in range(2):
        run(pytester, "-k", "again", *OUTPUTS).assert_outcomes(passed=1, deselected=2)
    records = _lines(project / "results" / "history.jsonl")[1:]
    assert [r["git"]["dirty"] for r in records] == [False, False]  # type: ignore[index]
    assert len({r["run"] for r in records}) == 2
    page = (project / "out" / "report.html").read_text()
    assert "history of 3 records from 3 run(s) of 2 commit(s)" in page


def test_reports_of_a_session_without_results(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain(): pass")
    result = run(pytester, "--chunkeval-md=report.md", "--chunkeval-history=h.jsonl")
    result.assert_outcomes(passed=1)
    assert "| Test | Configuration |" in (pytester.path / "report.md").read_text()
    assert not (pytester.path / "h.jsonl").exists()  # no record to append


def test_an_unwritable_report_fails_the_run(
    pytester: pytest.Pytester, project: Path
) -> None:
    (project / "taken").mkdir()
    result = run(pytester, "--chunkeval-json=taken", "-k", "again")
    result.assert_outcomes(passed=1, deselected=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [f"ERROR: could not write the JSON report {project / 'taken'}: *"]
    )
    assert (project / "results" / "history.jsonl").is_file()  # the rest was written
