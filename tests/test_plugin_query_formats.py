"""One rule for every query-set format across corpus edits (issue 21 part B):
the project's six questions as JSONL, JSON and the reference ``questions_df.csv``
behave alike when an edit deletes an excerpt or a whole document. Under a
baseline, the question is left out of the comparison and named, its
per-question item skipped; without one, the test fails with the placement
error. (A reference CSV used to fail every baseline test with "1 excerpt(s)
cannot be placed" where JSONL left the question out.)"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from support.plugin_project import run, write_project
from test_plugin_baseline import BASELINE_CONFTEST, BASELINE_INI, DIST, KEEP, _section

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


def _write_format(root: Path, fmt: str) -> dict[str, str]:
    """The project's query set in ``fmt``; its query ids by question."""
    records = [
        json.loads(line)
        for line in (root / "queries.jsonl").read_text().splitlines()[1:]
    ]
    if fmt == "jsonl":
        return {r["question"]: r["id"] for r in records}
    (root / "queries.jsonl").unlink()
    name = f"queries.{fmt}"
    if fmt == "json":
        doc = {"chunkeval_queries": 1, "queries": records}
        (root / name).write_text(json.dumps(doc, indent=1))
        ids = {r["question"]: r["id"] for r in records}
    else:  # the reference implementation's questions_df.csv
        from pytest_chunkeval.data.query_types import stable_query_id

        with (root / name).open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["question", "references", "corpus_id"])
            for r in records:
                text = (root / "docs" / r["doc_id"]).read_text()
                words = r["excerpts"][0]["text"].split()
                found = re.search(r"\s+".join(map(re.escape, words)), text)
                assert found is not None
                ref = {
                    "content": found.group(),
                    "start_index": found.start(),
                    "end_index": found.end(),
                }
                stem = Path(r["doc_id"]).stem
                writer.writerow([r["question"], json.dumps([ref]), stem])
        ids = {
            r["question"]: stable_query_id(Path(r["doc_id"]).stem, r["question"])
            for r in records
        }
    ini = (root / "pytest.ini").read_text().replace("queries.jsonl", name)
    (root / "pytest.ini").write_text(ini)
    return ids


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
    return pytester.path, _write_format(pytester.path, request.param)


def _drop_paragraph(root: Path, doc: str, word: str) -> None:
    path = root / "docs" / doc
    path.write_text(
        "\n\n".join(p for p in path.read_text().split("\n\n") if word not in p)
    )


def _run(pytester: pytest.Pytester, dist: bool, *args: str) -> pytest.RunResult:
    if dist:
        return pytester.runpytest_subprocess(*DIST, *args)
    return run(pytester, *args)


@pytest.mark.parametrize("dist", [False, True], ids=["one process", "xdist"])
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
    summary = _section(result)
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
    summary = _section(result)
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
