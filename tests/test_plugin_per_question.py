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


@pytest.mark.compat_smoke
def test_one_item_per_question_evaluated_once(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        test_each=RETRIEVER
        + """
@pytest.mark.chunkeval(per_question=True)
def test_question(chunkeval):
    chunkeval.score(make_retriever(chunkeval.queries), label="excerpts")

def test_zz_one_evaluation_asked_the_questions():
    # twice: the second ask tells whether its answers vary (docs/baselines.md)
    assert len(ASKED) == 12, ASKED
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
    # One file per question, and the corpus table they share.
    assert files == sorted(
        ["test_question.corpus.json", *(f"test_question[{q}].json" for q in IDS)]
    )
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


# A retriever of spans: each question's excerpt where the corpus holds it now,
# except the questions in $MISSED (the dividend sentence instead).
SPANS = """
import json, os, re
from pathlib import Path

import pytest


def _span(doc, text):
    pattern = r"\\s+".join(map(re.escape, text.split()))
    found = re.search(pattern, Path("docs", doc).read_text())
    return None if found is None else (doc, found.start(), found.end())


def make_retriever():
    table = {}
    for line in Path("queries.jsonl").read_text().splitlines()[1:]:
        q = json.loads(line)
        table[q["question"]] = (q["id"], _span(q["doc_id"], q["excerpts"][0]["text"]))
    other = _span("finance.md", "The board proposes a dividend of two euros")
    missed = set(os.environ.get("MISSED", "").split(","))

    def retrieve(question):
        qid, span = table[question]
        return [other if qid in missed else span]

    return retrieve


@pytest.mark.chunkeval(per_question=True, baseline=True)
def test_question(chunkeval):
    chunkeval.score(make_retriever(), label="spans")


def test_whole(chunkeval):
    chunkeval.check_baseline(chunkeval.score(make_retriever(), label="spans"))
"""


def test_an_edited_corpus_skips_only_the_question_it_lost(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MISSED", raising=False)
    pytester.makepyfile(test_spans=SPANS)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=7)
    finance = project / "docs" / "finance.md"
    kept = [p for p in finance.read_text().split("\n\n") if "auditor" not in p]
    finance.write_text("\n\n".join(kept))
    # One of six left out (17%): allowed here, beyond the default (none).
    ini = project / "pytest.ini"
    ini.write_text(ini.read_text() + "chunkeval_max_left_out = 20%\n")
    # The query set still names q-audit: its item exists and says why it is
    # left out; the others (and the module's whole-set test) are compared.
    result = run(pytester, "-rs", "-v")
    result.assert_outcomes(passed=6, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*test_spans.py::test_whole PASSED*",
            "SKIPPED * test_spans.py::test_question[[]q-audit[]]: question q-audit "
            "'Who audits the accounts?' can no longer be placed in the corpus "
            "(finance.md: *), so its baseline comparison leaves it out*",
        ]
    )
    assert "1 question can no longer be placed" in result.stdout.str()
    # Without a baseline, an unplaced excerpt is the error it always is, in the
    # items (not at collection: the session runs).
    result = run(pytester, "--chunkeval-update", "-k", "test_question")
    result.assert_outcomes(failed=6)
    result.stdout.fnmatch_lines(["*1 excerpt(s) cannot be placed in corpus 'docs'*"])


def test_every_flipped_question_of_a_row_is_reported(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MISSED", raising=False)
    pytester.makepyfile(test_spans=SPANS)
    run(pytester, "--chunkeval-update", "-k", "test_question").assert_outcomes(passed=6)
    monkeypatch.setenv("MISSED", "q-mars,q-tides")
    result = run(pytester, "-k", "test_question", "--chunkeval-md=report.md")
    result.assert_outcomes(passed=4, failed=2)
    changes = (project / "report.md").read_text().split("### What changed", 1)[1]
    assert "2 of 6 questions retrieved before and missed now" in changes, changes
    assert "(q-mars, space.md)" in changes, changes
    assert "(q-tides, space.md)" in changes, changes


def test_calls_are_replayed_only_with_the_same_plain_arguments(
    pytester: pytest.Pytester, project: Path
) -> None:
    # One item asks for k=2, the others k=1: the same call of the body with
    # another plain argument is another evaluation, not the first item's replay.
    pytester.makepyfile(
        test_k="""
import pytest

@pytest.mark.chunkeval(per_question=True)
def test_question(chunkeval):
    k = 2 if chunkeval.question == "q-mars" else 1
    assert chunkeval.evaluate("recursive:30:0", k=k).config["k"] == k
"""
    )
    result = run(pytester)
    result.assert_outcomes(passed=6)
    assert "2 configurations evaluated, 4 results reused" in result.stdout.str()


def test_calls_with_other_components_of_one_name_are_not_replayed(
    pytester: pytest.Pytester, project: Path
) -> None:
    # One item passes other components than the others under the same names:
    # two lambdas (both test_question.<locals>.<lambda>) and two chunker objects
    # of one class with other sizes. Each is its own evaluation.
    pytester.makepyfile(
        test_named="""
import pytest
from pytest_chunkeval.chunkers import get_chunker

@pytest.mark.chunkeval(per_question=True)
def test_question(chunkeval):
    mars = chunkeval.question == "q-mars"
    if mars:
        whole = lambda text: [text[: len(text) // 2], text[len(text) // 2 :]]
    else:
        whole = lambda text: [text]
    assert len(chunkeval.evaluate(whole, k=1).chunk_spans) == (6 if mars else 3)
    sized = get_chunker("recursive:400:0" if mars else "recursive:30:0")
    assert len(chunkeval.evaluate(sized, k=1).chunk_spans) == (3 if mars else 9)
    parts = 3 if mars else 1
    cut = lambda text: [text[len(text) * i // parts : len(text) * (i + 1) // parts]
                        for i in range(parts)]  # closes over parts
    assert len(chunkeval.evaluate(cut, k=1).chunk_spans) == 3 * parts
"""
    )
    result = run(pytester)
    result.assert_outcomes(passed=6)
    assert "5 configurations evaluated, 13 results reused" in result.stdout.str()


def test_an_explicit_check_in_an_item_is_refused_and_writes_nothing(
    pytester: pytest.Pytester, project: Path
) -> None:
    # Each item would check (and under --chunkeval-update write) the whole set's
    # result under its own id: six copies of one baseline, none pooled.
    pytester.makepyfile(
        test_each=RETRIEVER
        + """
@pytest.mark.chunkeval(per_question=True)
def test_question(chunkeval):
    chunkeval.check_baseline(
        chunkeval.score(make_retriever(chunkeval.queries), label="excerpts")
    )
"""
    )
    result = run(pytester, "--chunkeval-update")
    result.assert_outcomes(failed=6)
    result.stdout.fnmatch_lines(
        [
            "*test_each.py::test_question[[]q-bark[]]: check_baseline() in a "
            "per-question item compares the whole query set in every item; mark "
            "the test @pytest.mark.chunkeval(per_question=True, baseline=True)*"
        ]
    )
    assert not list(project.rglob("*.json"))
