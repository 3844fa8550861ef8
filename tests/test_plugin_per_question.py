"""``@pytest.mark.chunkeval(per_question=True)``: one test item per question,
evaluated once, each failing on its own rule only (pytester runs on the small
project of tests/support/plugin_project.py: six questions)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.plugin_project import QUERIES, run, write_project

IDS = [q[0] for q in QUERIES]


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    return pytester.path


# A retriever that answers each question with its first excerpt, except the
# questions listed in $MISSED (a sentence of another document instead), and counts
# the questions it is asked.
RETRIEVER = """
import os
import pytest

ASKED = []
OTHER = "The board proposes a dividend of two euros per share, payable in May."

def make_retriever(queries):
    answers = {q.text: q.excerpts[0].text for q in queries}
    ids = {q.text: q.id for q in queries}
    missed = set(os.environ.get("MISSED", "").split(","))

    def retrieve(question):
        ASKED.append(question)
        if ids[question] in missed:
            return [OTHER]
        return [answers[question]]

    return retrieve
"""


def test_one_item_per_question_evaluated_once(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        test_each=RETRIEVER
        + """
@pytest.mark.chunkeval(per_question=True)
def test_question(chunkeval):
    chunkeval.score(make_retriever(chunkeval.queries), label="excerpts")

def test_zz_asked_each_question_once():
    assert len(ASKED) == 6, ASKED
"""
    )
    result = run(pytester, "-v", "--junitxml=junit.xml", "--chunkeval-json=r.json")
    result.assert_outcomes(passed=7)
    (row,) = json.loads((project / "r.json").read_text())["results"]
    assert (len(row["tests"]), row["outcome"]) == (6, "passed")
    result.stdout.fnmatch_lines(
        [f"test_each.py::test_question[[]{qid}[]] PASSED*" for qid in IDS]
    )
    # One configuration, one summary row under the test's id, reused five times.
    out = result.stdout.str()
    assert "1 configuration evaluated, 5 results reused" in out
    assert "test_each.py::test_question[q-bark] (+5)" in out
    cases = ET.parse(project / "junit.xml").getroot().iter("testcase")
    per_question = [c for c in cases if c.get("name", "").startswith("test_question")]
    assert [c.get("name") for c in per_question] == [
        f"test_question[{qid}]" for qid in IDS
    ]
    props = {p.get("name"): p.get("value") for p in per_question[0].iter("property")}
    assert props["chunkeval.question"] == IDS[0]
    assert props["chunkeval.recall"] == "1.0000"


def test_items_fail_on_their_own_threshold_only(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISSED", "q-parrot,q-tides")
    pytester.makepyfile(
        test_each=RETRIEVER
        + """
@pytest.mark.chunkeval(per_question=True, min_question_recall=0.5)
def test_question(chunkeval):
    chunkeval.score(make_retriever(chunkeval.queries), label="excerpts")

@pytest.mark.chunkeval(per_question=True)
def test_no_threshold(chunkeval):
    chunkeval.score(make_retriever(chunkeval.queries), label="excerpts")
"""
    )
    result = run(pytester, "-rf", "--chunkeval-json=report.json")
    # The whole set's recall is 4/6, below 0.8: no item fails for that.
    result.assert_outcomes(passed=10, failed=2)
    # Two tests share one configuration: one report row, failed, with every item.
    (row,) = json.loads((project / "report.json").read_text())["results"]
    assert len(row["tests"]) == 12
    assert row["outcome"] == "failed"
    assert row["result"]["metrics"]["recall"]["mean"] == pytest.approx(4 / 6)
    result.stdout.fnmatch_lines(
        [
            "FAILED test_each.py::test_question[[]q-parrot[]] - *",
            "FAILED test_each.py::test_question[[]q-tides[]] - *",
        ]
    )
    out = result.stdout.str()
    assert "min_question_recall=0.5) not met" in out
    assert "question q-tides 'What causes the tides?' [excerpts]: recall 0.000" in out
    assert "retrieved #1 (finance.md): 'The board proposes a dividend" in out


def test_chunker_parameters_and_questions_combine(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        test_grid="""
import pytest

@pytest.mark.chunkeval(per_question=True, min_question_recall=0.0)
def test_chunker(chunkeval, chunkeval_chunker):
    chunkeval.evaluate()
"""
    )
    result = run(pytester, "-v")
    result.assert_outcomes(passed=12)
    result.stdout.fnmatch_lines(["*test_chunker[[]q-bark-recursive:30:0[]] PASSED*"])
    # Two chunkers: two evaluations, each shared by its six items.
    assert "2 configurations evaluated, 10 results reused" in result.stdout.str()


def test_baseline_flip_fails_only_that_question(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_flip=RETRIEVER
        + """
@pytest.mark.chunkeval(per_question=True, baseline=True)
def test_question(chunkeval):
    chunkeval.score(make_retriever(chunkeval.queries), label="excerpts")
"""
    )
    result = run(pytester)
    result.assert_outcomes(failed=6)  # no baselines yet
    result.stdout.fnmatch_lines(["*no baseline for test_flip.py::test_question[[]q-*"])
    result = run(pytester, "--chunkeval-update")
    result.assert_outcomes(passed=6)
    files = sorted(p.name for p in (project / "__chunkeval__" / "test_flip").iterdir())
    assert files == sorted(f"test_question[{qid}].json" for qid in IDS)
    result = run(pytester)
    result.assert_outcomes(passed=6)
    monkeypatch.setenv("MISSED", "q-mars")
    result = run(pytester, "-rf")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*question q-mars flipped from retrieved to missed: recall 1.0000 in "
            "__chunkeval__/test_flip/test_question[[]q-mars[]].json, 0 now*",
            "*pytest --chunkeval-update 'test_flip.py::test_question[[]q-mars[]]'*",
            "FAILED test_flip.py::test_question[[]q-mars[]]*",
        ]
    )
    assert "1 regressed" in result.stdout.str()
    # Under xdist: the same verdicts (each worker evaluates once).
    result = run(pytester, "-n", "2", "-rf")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["FAILED test_flip.py::test_question[[]q-mars[]]*"])
    # Accepting the change re-records that question's file only.
    result = run(pytester, "--chunkeval-update")
    result.assert_outcomes(passed=6)
    assert "1 updated, 5 unchanged" in result.stdout.str()


def test_marker_rules(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makepyfile(
        test_rules="""
import pytest

@pytest.mark.chunkeval(per_question=True, min_recall=0.5)
def test_mean(chunkeval):
    pass
"""
    )
    result = run(pytester)
    result.stdout.fnmatch_lines(
        [
            "*min_recall= states a minimum mean over the whole query set*"
            "min_question_recall=*"
        ]
    )
    assert result.ret != 0
    pytester.makepyfile(
        test_rules="""
import pytest

@pytest.mark.chunkeval(min_question_recall=0.5)
def test_own(chunkeval):
    chunkeval.evaluate("recursive:30:0")
"""
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*add per_question=True*"])
    pytester.makepyfile(
        test_rules="""
import pytest

@pytest.mark.chunkeval(per_question=True)
def test_no_fixture():
    pass
"""
    )
    result = run(pytester)
    result.stdout.fnmatch_lines(["*per_question=True*request it*"])
    assert result.ret != 0
