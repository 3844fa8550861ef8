"""One rule for every query-set format across corpus edits (issue 21 part B):
the project's six questions as JSONL, JSON and the reference ``questions_df.csv``
behave alike when an edit deletes an excerpt or a whole document. Under a
baseline, the question is left out of the comparison and named, its
per-question item skipped; without one, the test fails with the placement
error. (A reference CSV used to fail every baseline test with "1 excerpt(s)
cannot be placed" where JSONL left the question out.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.baseline_project import (
    BASELINE_CONFTEST,
    BASELINE_INI,
    KEEP,
    write_query_format,
)
from support.plugin_project import DIST, MODES, run, summary_section, write_project

TESTS = """
import pytest

def test_whole(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))

@pytest.mark.chunkeval(per_question=True, baseline=True)
def test_question(chunkeval):
    chunkeval.evaluate("paragraphs")
"""
THRESHOLD = """
import pytest

@pytest.mark.chunkeval(min_recall=0.5)
def test_threshold(chunkeval):
    chunkeval.evaluate("paragraphs")
"""


@pytest.fixture(params=["jsonl", "json", "csv"])
def project(
    request: pytest.FixtureRequest,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Path, dict[str, str]]:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv(KEEP, raising=False)
    # Up to two of the six questions left out compare (the default, none, would
    # fail every format alike: docs/baselines.md, "Fail closed").
    ini = BASELINE_INI + "chunkeval_max_left_out = 40%\n"
    write_project(pytester.path, ini, conftest=BASELINE_CONFTEST)
    return pytester.path, write_query_format(pytester.path, request.param)


def _drop_paragraph(root: Path, doc: str, word: str) -> None:
    path = root / "docs" / doc
    path.write_text(
        "\n\n".join(p for p in path.read_text().split("\n\n") if word not in p)
    )


def _run(pytester: pytest.Pytester, dist: bool, *args: str) -> pytest.RunResult:
    if dist:
        return pytester.runpytest_subprocess(*DIST, *args)
    return run(pytester, *args)


@MODES
def test_a_deleted_excerpt_is_left_out_and_named_in_every_format(
    pytester: pytest.Pytester,
    project: tuple[Path, dict[str, str]],
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    root, ids = project
    audit = ids["Who audits the accounts?"]
    pytester.makepyfile(test_formats=TESTS)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=7)
    _drop_paragraph(root, "finance.md", "auditor")
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = _run(pytester, dist, "-rs", "--chunkeval-json=report.json")
    result.assert_outcomes(passed=6, skipped=1)
    out = result.stdout.str()
    assert "cannot be placed in corpus" not in out  # no test failed for it
    result.stdout.fnmatch_lines(
        [
            f"SKIPPED * test_formats.py::test_question[[]{audit}[]]: question "
            f"{audit} 'Who audits the accounts?' can no longer be placed *"
        ]
    )
    summary = summary_section(result)
    assert "1 question can no longer be placed in the corpus" in summary
    assert re.search(rf"\n\s+{re.escape(audit)}\s+'Who audits the accounts\?'", summary)
    assert (
        "scored 5 of 6 questions; compared on the 5 questions both runs have" in summary
    )
    (row,) = json.loads((root / "report.json").read_text())["results"]
    assert (row["outcome"], row["verdict"]) == ("passed", "ok")
    assert row["skipped"] == [f"test_formats.py::test_question[{audit}]"]


def test_a_deleted_document_is_left_out_in_every_format(
    pytester: pytest.Pytester, project: tuple[Path, dict[str, str]]
) -> None:
    root, ids = project
    pytester.makepyfile(test_formats=TESTS.split("@pytest.mark")[0])
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    (root / "docs" / "finance.md").unlink()
    result = run(pytester)
    result.assert_outcomes(passed=1)
    summary = summary_section(result)
    assert "2 questions can no longer be placed in the corpus" in summary
    for question in ("What was the operating margin?", "Who audits the accounts?"):
        assert f"{ids[question]}  {question!r}" in summary, summary
    assert "scored 4 of 6 questions" in summary


def test_without_a_baseline_the_placement_error_is_the_same(
    pytester: pytest.Pytester, project: tuple[Path, dict[str, str]]
) -> None:
    root, ids = project
    pytester.makepyfile(test_threshold=THRESHOLD)
    _drop_paragraph(root, "finance.md", "auditor")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    audit = ids["Who audits the accounts?"]
    result.stdout.fnmatch_lines(
        [
            "*1 excerpt(s) cannot be placed in corpus 'docs':",
            f"*query '{audit}' ('Who audits the accounts?'), excerpt 1 *: not found *",
        ]
    )
