"""Baselines across the changes a repository goes through (issue 13 items 1-2),
end to end with pytester: a repository whose baselines a first run committed, then
a document edited, a distractor added, a paragraph deleted, the chunker changed,
questions added and removed. Each run compares paired, on the questions both runs
have, and says what changed.

The inner project is test_plugin_baseline's (three documents, six questions, the
fast ``hashing`` embedder, one chunk per paragraph) at ``k=1``, with questions in
the words of their paragraph (a bag-of-words embedder ranks it first): each
question retrieves one paragraph, so a paragraph that outranks it costs recall.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.baseline_project import BASELINE, QUESTIONS, TEST_RAG_BY_SPEC, repo
from support.ci_walkthrough import failure_lines
from support.plugin_project import DIST, run, summary_section
from support.project_runs import normalized

__all__ = ["repo"]  # a fixture

REPORTS = ("--chunkeval-md=report.md", "--chunkeval-json=report.json")
DOCS = Path(__file__).resolve().parents[1] / "docs"


def allow_one_left_out(root: Path) -> None:
    """By default any baseline question not compared fails the check
    (tests/test_plugin_question_set.py): the cases below that leave one of six
    out (17%) allow 20%."""
    ini = root / "pytest.ini"
    ini.write_text(ini.read_text() + "chunkeval_max_left_out = 20%\n")


def _against(result: pytest.RunResult) -> list[str]:
    """The terminal summary's "against the baseline" block."""
    return (
        summary_section(result).split("against the baseline (", 1)[1].splitlines()[1:]
    )


def _reported(repo: Path) -> tuple[dict[str, Any], str]:
    """test_rag's item of the JSON report, and the Markdown report's "Against
    the baseline" section up to its table."""
    (item,) = [
        i
        for i in json.loads((repo / "report.json").read_text())["results"]
        if i["tests"] == ["test_rag.py::test_rag"]
    ]
    markdown = (repo / "report.md").read_text()
    section = markdown.split("### Against the baseline\n\n", 1)[1]
    return item, section.split("\n| Test |", 1)[0]


def _append(repo: Path, doc: str, text: str) -> None:
    with (repo / "docs" / doc).open("a") as fh:
        fh.write(text)


def test_an_irrelevant_sentence_passes_naming_the_edit(
    pytester: pytest.Pytester, repo: Path
) -> None:
    recorded = (repo / BASELINE).read_bytes()
    sentence = "\nThe office is closed on public holidays.\n"
    _append(repo, "finance.md", sentence)
    result = run(pytester, *REPORTS)
    result.assert_outcomes(passed=1)
    summary = summary_section(result)
    # Every report opens its comparison with what changed, then the verdict.
    edit = f"documents edited: finance.md (+1 sentence / +{len(sentence)} chars)"
    assert _against(result)[0] == (
        f"test_rag.py::test_rag: changed since the baseline: {edit}"
    ), summary
    item, section = _reported(repo)
    assert item["verdict"] == "ok"
    (doc,) = item["changes"]["documents"]
    assert (doc["doc_id"], doc["status"]) == ("finance.md", "edited")
    assert doc["chars_after"] - doc["chars_before"] == len(sentence)
    assert doc["sentences_after"] - doc["sentences_before"] == 1
    assert item["changes"]["config"] == []
    assert section.startswith("- test_rag.py::test_rag (paragraphs k=1 char "), section
    assert section.split("\n", 1)[0].endswith(
        f": changed since the baseline: {edit}"
    ), section
    assert "baselines: 1 ok" in summary
    assert (
        "test_rag.py::test_rag: passed against its baseline across changes "
        "(recall +0.00 points, CI [+0.00, +0.00]: within tolerance):\n"
        f"    documents edited: finance.md (+1 sentence / +{len(sentence)} chars)\n"
        "    record the new baseline with: pytest --chunkeval-update "
        "test_rag.py::test_rag" in summary
    ), summary
    assert (repo / BASELINE).read_bytes() == recorded

    # Recording it: the summary says what changed, the file holds the new size.
    updated = run(pytester, "--chunkeval-update")
    assert "documents edited: finance.md (+1 sentence" in summary_section(updated)
    data = json.loads((repo / BASELINE).read_text())
    size = len((repo / "docs" / "finance.md").read_text())
    assert data["documents"]["finance.md"]["chars"] == size
    assert "across changes" not in summary_section(run(pytester))


def test_a_distractor_fails_on_its_questions_naming_the_document(
    pytester: pytest.Pytester, repo: Path
) -> None:
    # A paragraph that is the question itself outranks the paragraph answering it.
    distractors = [
        f"{QUESTIONS[q]} {QUESTIONS[q]}"
        for q in ("q-bark", "q-parrot", "q-mars", "q-tides")
    ]
    _append(repo, "space.md", "".join(f"\n{d}\n" for d in distractors))
    result = run(pytester, *REPORTS)
    result.assert_outcomes(failed=1)
    real = normalized(failure_lines(result.stdout.str()), cached=True)
    # docs/baselines.md "An edit that hurts retrieval" shows the whole failure
    page = (DOCS / "baselines.md").read_text(encoding="utf-8")
    shown = page.split("### An edit that hurts retrieval", 1)[1].split("```text\n")[1]
    assert normalized(shown.split("```")[0].splitlines(), cached=True) == real, real
    result.stdout.fnmatch_lines(
        [
            "E * chunkeval baseline regression in test_rag.py::test_rag",
            "E *   what changed since the baseline:",
            "E *     documents edited: space.md (+8 sentences / +* chars)",
            "E *   recall got worse: mean delta -66.67 points, CI *",
            "E *   2 of the 4 queries that got worse come from edited documents "
            "(space.md): q-*, q-*",
        ]
    )
    out = result.stdout.str()
    worst = out.split("queries whose", 1)[1].split("If the new numbers", 1)[0]
    for qid in ("q-bark", "q-parrot", "q-mars", "q-tides"):
        assert qid in worst
    for qid in ("q-margin", "q-audit"):
        assert qid not in worst  # unaffected questions are not blamed
    assert "baselines: 1 regressed" in summary_section(result)


def test_a_deleted_excerpt_leaves_its_question_out(
    pytester: pytest.Pytester, repo: Path
) -> None:
    finance = repo / "docs" / "finance.md"
    paragraphs = finance.read_text().split("\n\n")
    kept = [p for p in paragraphs if "auditor" not in p]
    assert len(kept) == len(paragraphs) - 1
    finance.write_text("\n\n".join(kept))
    allow_one_left_out(repo)
    pytester.makepyfile(
        test_plain="""
        def test_plain(chunkeval):
            chunkeval.evaluate("paragraphs")
        """
    )
    result = run(pytester, *REPORTS)
    result.assert_outcomes(passed=1, failed=1)
    summary = summary_section(result)
    assert "test_rag.py::test_rag: passed against its baseline across changes" in (
        summary
    )
    assert "documents edited: finance.md (-2 sentences / -" in summary
    assert (
        "    1 question can no longer be placed in the corpus (excerpt text not "
        "found), left out:\n"
        "        q-audit  'Which auditor found no material weakness?'  (finance.md: "
        "excerpt 1 " in summary
    ), summary
    assert "scored 5 of 6 questions; compared on the 5 questions both runs have" in (
        summary
    )
    left_out = "scored 5 of 6 questions; left out: q-audit (finance.md)"
    assert _against(result)[0].startswith(
        "test_rag.py::test_rag: changed since the baseline: documents edited: "
        "finance.md (-2 sentences / -"
    )
    assert _against(result)[0].endswith(left_out), summary
    item, section = _reported(repo)
    assert [u["id"] for u in item["changes"]["unplaced"]] == ["q-audit"]
    assert (item["changes"]["compared"], item["changes"]["total"]) == (5, 6)
    assert section.split("\n", 1)[0].endswith(left_out), section
    # Outside a baseline comparison the excerpt is the error it always was.
    result.stdout.fnmatch_lines(
        [
            "*_ test_plain _*",
            "*: 1 excerpt(s) cannot be placed in corpus 'docs':",
            "  query 'q-audit' ('Which auditor found no material weakness?'), "
            "excerpt 1 *",
        ]
    )

    # A threshold on the test is not a baseline comparison: the error too.
    pytester.makepyfile(
        test_rag="""
        import pytest

        @pytest.mark.chunkeval(min_recall=0.5)
        def test_rag(chunkeval):
            chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))
        """
    )
    marked = run(pytester, "test_rag.py")
    marked.assert_outcomes(failed=1)
    marked.stdout.fnmatch_lines(
        [
            "test_rag.py::test_rag: 1 question can no longer be placed in the corpus *",
            "    q-audit  'Which auditor found no material weakness?'  (finance.md: *",
            "Only a baseline comparison (chunkeval.check_baseline, or "
            "@pytest.mark.chunkeval(baseline=True)) leaves them out; fix or "
            "remove them in the query set.",
        ]
    )

    # --chunkeval-update records nothing on a partial set: fix the queries first.
    pytester.makepyfile(test_rag=TEST_RAG_BY_SPEC)
    update = run(pytester, "--chunkeval-update", "test_rag.py")
    update.assert_outcomes(failed=1)
    update.stdout.fnmatch_lines(["*: 1 excerpt(s) cannot be placed in corpus*"])


def test_no_question_left_is_the_placement_error(
    pytester: pytest.Pytester, repo: Path
) -> None:
    for doc in ("pets.md", "space.md", "finance.md"):
        (repo / "docs" / doc).write_text("# Emptied\n")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*: 6 excerpt(s) cannot be placed in corpus*"])


def test_a_chunker_change_gets_a_paired_verdict_naming_it(
    pytester: pytest.Pytester, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPEC", "recursive:4:0")  # slivers: most excerpts missed
    result = run(pytester, *REPORTS, "--chunkeval-html=report.html")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E * chunkeval baseline regression in test_rag.py::test_rag",
            "E *   what changed since the baseline:",
            "E *     chunker: paragraphs -> recursive:4:0",
            "E *   recall got worse: mean delta -*, CI *",
            "E * changes over 6 questions: the mean change against the tolerance*",
            "E *   pytest --chunkeval-update test_rag.py::test_rag",
        ]
    )
    assert "not comparable" not in result.stdout.str()

    # The reports: what changed first, then the paired verdict.
    change = "changed since the baseline: chunker: paragraphs -> recursive:4:0"
    block = _against(result)
    assert block[0] == f"test_rag.py::test_rag: {change}", block
    assert block[1].startswith("test "), block
    assert "REGRESSED" in block[2], block
    item, section = _reported(repo)
    assert (item["outcome"], item["verdict"]) == ("failed", "regressed")
    assert item["changes"]["config"] == [
        {"key": "chunker", "before": "paragraphs", "after": "recursive:4:0"}
    ]
    assert item["changes"]["documents"] == []
    assert section.startswith("- test_rag.py::test_rag (recursive:4:0 k=1 char ")
    assert section.split("\n", 1)[0].endswith(f"): {change}"), section
    html = (repo / "report.html").read_text().split('<section id="baseline">', 1)[1]
    shown = f"{change.replace('>', '&gt;')}</li></ul>"
    assert html.index(shown) < html.index("REGRESSED"), html

    # `chunkeval report --results` reads it back the same.
    from pytest_chunkeval.reporting.json_report import read_json_report
    from pytest_chunkeval.reporting.markdown import markdown_report

    (entry,) = read_json_report(repo / "report.json")
    assert entry.changes is not None
    assert entry.changes.line() == change
    assert f"): {change}\n" in markdown_report([entry])

    # Under xdist a worker's outcome carries it to the controller's reports.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    (repo / "report.json").unlink()
    dist = pytester.runpytest_subprocess(*DIST, *REPORTS)
    dist.assert_outcomes(failed=1)
    assert _against(dist)[0] == f"test_rag.py::test_rag: {change}"
    assert _reported(repo)[0]["changes"] == item["changes"]


def test_added_and_removed_questions_compare_the_shared_ones(
    pytester: pytest.Pytester, repo: Path
) -> None:
    queries = repo / "queries.jsonl"
    lines = queries.read_text().splitlines()
    kept = [line for line in lines if '"q-parrot"' not in line]
    added = {
        "id": "q-jupiter",
        "question": "Which is the largest planet of the solar system?",
        "doc_id": "space.md",
        "excerpts": [{"text": "Jupiter is the largest planet of the solar system."}],
    }
    queries.write_text("\n".join([*kept, json.dumps(added)]) + "\n")
    allow_one_left_out(repo)  # q-parrot removed: not compared
    result = run(pytester, *REPORTS)
    result.assert_outcomes(passed=1)
    summary = summary_section(result)
    assert "    questions added: 1 (q-jupiter)\n" in summary
    assert "    questions removed: 1 (q-parrot)\n" in summary
    assert "    compared on the 5 questions both runs have\n" in summary
    change = (
        "changed since the baseline: questions added: 1 (q-jupiter); questions "
        "removed: 1 (q-parrot); compared on the 5 questions both runs have"
    )
    assert _against(result)[0] == f"test_rag.py::test_rag: {change}", summary
    item, section = _reported(repo)
    assert (item["changes"]["added"], item["changes"]["removed"]) == (
        ["q-jupiter"],
        ["q-parrot"],
    )
    assert section.split("\n", 1)[0].endswith(f"): {change}"), section


def test_a_schema_1_baseline_compares_and_is_migrated(
    pytester: pytest.Pytester, repo: Path
) -> None:
    path = repo / BASELINE
    data = json.loads(path.read_text())
    data["chunkeval_baseline"] = 1
    del data["documents"]
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    _append(repo, "pets.md", "\nHamsters store food in their cheeks.\n")
    result = run(pytester)
    result.assert_outcomes(passed=1)
    assert (
        "corpus: edited (the baseline predates per-document records, so which "
        "documents changed is unknown; --chunkeval-update records them)"
        in summary_section(result)
    )
    updated = run(pytester, "--chunkeval-update")
    assert "migrated from schema 1 to 5" in summary_section(updated)
    migrated = json.loads(path.read_text())
    assert migrated["chunkeval_baseline"] == 5
    assert migrated["documents"]["pets.md"]["chars"] == len(
        (repo / "docs" / "pets.md").read_text()
    )


def test_a_retriever_scored_on_an_edited_corpus_leaves_out_the_same(
    pytester: pytest.Pytester, repo: Path
) -> None:
    pytester.makepyfile(
        test_score="""
        from pathlib import Path

        def retrieve(question):
            # the first paragraph after the heading of every document
            out = []
            for path in sorted(Path("docs").iterdir()):
                text = path.read_text()
                out.append(text.split("\\n\\n")[1])
            return out

        def test_score(chunkeval):
            chunkeval.check_baseline(chunkeval.score(retrieve, label="first"))
        """
    )
    run(pytester, "--chunkeval-update", "test_score.py").assert_outcomes(passed=1)
    finance = repo / "docs" / "finance.md"
    paragraphs = finance.read_text().split("\n\n")
    finance.write_text("\n\n".join(p for p in paragraphs if "auditor" not in p))
    allow_one_left_out(repo)
    result = run(pytester, "test_score.py")
    result.assert_outcomes(passed=1)
    summary = summary_section(result)
    assert "test_score.py::test_score: passed against its baseline across changes" in (
        summary
    )
    assert "        q-audit  'Which auditor found no material weakness?'" in summary
    assert "scored 5 of 6 questions; compared on the 5 questions" in summary
