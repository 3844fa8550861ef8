"""The question set is part of the baseline (issue 30 item 4; docs/baselines.md,
"The question set is part of the baseline"): every question a baseline holds is
compared, or named as not compared with its reason, and by default
(``chunkeval_max_left_out = 0``) any question not compared fails the check.

On test_plugin_baseline_changes' project (three documents, six questions at
recall 100, k=1): questions removed from the query set had no limit at all (a
set could shrink to its easy questions and pass), and the others failed only
beyond 10% of the baseline, as "left out" without saying why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.baseline_project import QUESTIONS, repo, write_query_format
from support.plugin_project import DIST, MODES, run, summary_section

__all__ = ["repo"]


def _queries(root: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = (root / "queries.jsonl").read_text().splitlines()
    header, *records = [json.loads(line) for line in lines]
    return header, records


def _write_queries(root: Path, header: dict[str, Any], records: list[Any]) -> None:
    text = "".join(json.dumps(r) + "\n" for r in [header, *records])
    (root / "queries.jsonl").write_text(text)


def _run(pytester: pytest.Pytester, dist: bool, *args: str) -> pytest.RunResult:
    if dist:
        return pytester.runpytest_subprocess(*DIST, *args)
    return run(pytester, *args)


def test_removed_questions_fail_the_check(
    pytester: pytest.Pytester, repo: Path
) -> None:
    # A question deleted from the query set: the comparison on the other five
    # used to pass ("questions removed: 1", verdict ok).
    header, records = _queries(repo)
    _write_queries(repo, header, [r for r in records if r["id"] != "q-bark"])
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E * chunkeval baseline comparison incomplete in test_rag.py::test_rag: "
            "1 baseline question: 1 removed",
            "E *   baseline questions not compared:",
            "E *     q-bark: removed from the query set",
        ]
    )
    assert "baselines: 1 incomplete" in summary_section(result)


@MODES
def test_removed_emptied_and_not_found_are_named_with_their_reasons(
    pytester: pytest.Pytester,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    header, records = _queries(repo)
    kept = []
    for record in records:
        if record["id"] in ("q-bark", "q-parrot"):
            continue  # removed from the query set
        if record["id"] == "q-mars":
            record["excerpts"] = []  # emptied in the same change
            del record["doc_id"]
        kept.append(record)
    _write_queries(repo, header, kept)
    finance = repo / "docs" / "finance.md"
    text = finance.read_text()
    assert "The auditor is Example LLP. " in text
    finance.write_text(text.replace("The auditor is Example LLP. ", ""))
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = _run(pytester, dist, "--chunkeval-json=report.json")
    result.assert_outcomes(failed=1)
    reason = (
        "4 baseline questions: 2 removed, 1 with no excerpts left, "
        "1 not found in the corpus"
    )
    result.stdout.fnmatch_lines(
        [
            f"E * comparison incomplete in test_rag.py::test_rag: {reason}",
            "E *     q-bark: removed from the query set",
            "E *     q-parrot: removed from the query set",
            "E *     q-mars: its excerpts emptied",
            "E *     q-audit: an excerpt no longer in the corpus",
            "E *fix the query set where an excerpt is gone*",
        ]
    )
    section = summary_section(result)
    assert "baselines: 1 incomplete" in section
    (item,) = json.loads((repo / "report.json").read_text())["results"]
    assert item["verdict"] == "not compared"
    assert item["reason"] == reason
    assert item["changes"]["removed"] == ["q-bark", "q-parrot"]
    assert item["changes"]["emptied"] == ["q-mars"]
    # A share may be allowed, never silently: the questions stay named.
    (repo / "pytest.ini").write_text(
        (repo / "pytest.ini").read_text() + "chunkeval_max_left_out = 70%\n"
    )
    allowed = _run(pytester, dist)
    allowed.assert_outcomes(passed=1)
    assert "questions removed: 2 (q-bark, q-parrot)" in summary_section(allowed)


@MODES
def test_reworded_csv_questions_are_paired_and_compared(
    pytester: pytest.Pytester,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    # A CSV set's ids are hashes of the question texts: two questions
    # reworded (and now losing their answer to a paragraph in their words)
    # used to be "removed 2, added 2", never compared, and passed ok.
    ids = write_query_format(repo, "csv")
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    csv_path = repo / "queries.csv"
    text = csv_path.read_text()
    reworded = {
        QUESTIONS["q-bark"]: "At whom do the dogs bark each morning?",
        QUESTIONS["q-parrot"]: "For how long can a parrot live in captivity?",
    }
    with (repo / "docs" / "space.md").open("a") as fh:
        for old, new in reworded.items():
            assert old in text
            text = text.replace(old, new)
            fh.write(f"\n{new} {new}\n")
    csv_path.write_text(text)
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = _run(pytester, dist, "--chunkeval-json=report.json")
    result.assert_outcomes(failed=1)
    from pytest_chunkeval.data.query_types import stable_query_id

    pairs = sorted(
        [ids[old], stable_query_id("pets", new)] for old, new in reworded.items()
    )
    result.stdout.fnmatch_lines(
        [
            "E * chunkeval baseline regression in test_rag.py::test_rag",
            f"E *questions reworded, compared: 2 ({pairs[0][0]} -> {pairs[0][1]}, "
            f"{pairs[1][0]} -> {pairs[1][1]})",
        ]
    )
    (item,) = json.loads((repo / "report.json").read_text())["results"]
    assert item["verdict"] == "regressed"
    assert item["changes"]["reworded"] == pairs
    assert item["changes"]["removed"] == item["changes"]["added"] == []


@MODES
def test_a_per_question_baseline_whose_question_is_gone_fails_the_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: bool
) -> None:
    # Its item is no longer collected: the file was listed as unused and the
    # run passed (exit 0), a question dropped without a failure.
    from support.plugin_project import PER_QUESTION_RETRIEVER, write_project

    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    pytester.makepyfile(test_items=PER_QUESTION_RETRIEVER)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=6)
    header, records = _queries(pytester.path)
    _write_queries(pytester.path, header, [r for r in records if r["id"] != "q-bark"])
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = _run(pytester, dist)
    result.assert_outcomes(passed=5)
    assert result.ret == 1
    section = summary_section(result)
    assert "__chunkeval__/test_items/test_question[q-bark].json" in section
    assert "1 per-question baseline(s) above fail this run" in section
    # Recording the new set is the acknowledgement: the file is deleted.
    _run(pytester, dist, "--chunkeval-update").assert_outcomes(passed=5)
    assert _run(pytester, dist).ret == 0
