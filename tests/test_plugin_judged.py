"""Judged context relevance through the plugin (issue 16's "done when"): a
questions-only file, a callable judge registered by the conftest, baselines and
committed judgments; a fresh clone (no cache directory) re-runs with zero judge
calls and identical numbers; a chunker change judges only new contexts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.cli_judge_project import server  # noqa: F401  (a fixture)
from support.judged_project import JUDGED_CONFTEST, JUDGED_INI, QUESTIONS
from support.judges import judge_by_keyword
from support.openai_server import OpenAIServer
from support.plugin_project import DOCS, FAST, write_project

CALLS = "judge-calls.txt"

TEST_RAG = """
import pytest

@pytest.mark.chunkeval(min_context_relevance=0.05)
@pytest.mark.parametrize("chunker", ["recursive:30:0", "{chunker}"])
def test_rag(chunkeval, chunker):
    chunkeval.check_baseline(chunkeval.evaluate(chunker))
"""


def make_project(root: Path, pytester: pytest.Pytester, chunker: str) -> None:
    write_project(root, JUDGED_INI, conftest=JUDGED_CONFTEST)
    lines = [json.dumps({"chunkeval_queries": 1})]
    lines += [json.dumps(q) for q in QUESTIONS]
    (root / "questions.jsonl").write_text("\n".join(lines) + "\n")
    (root / "test_rag.py").write_text(TEST_RAG.format(chunker=chunker))


def calls(root: Path) -> list[str]:
    path = root / CALLS
    return path.read_text().splitlines() if path.exists() else []


def metrics_of(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text())
    results = data["results"] if isinstance(data, dict) else data
    out = {}
    for r in results:
        result = r.get("result", r)
        out[result["label"]] = (result["metrics"], result["groups"])
    assert out
    assert all("context_relevance" in metrics for metrics, _ in out.values())
    return out


def baselines(root: Path) -> dict[str, Any]:
    folder = root / "__chunkeval__" / "test_rag"
    return {p.name: json.loads(p.read_text()) for p in folder.glob("*.json")}


def section(result: pytest.RunResult) -> str:
    out = result.stdout.str()
    assert "- chunkeval -" in out, out
    return out.split("- chunkeval -", 1)[1]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.mark.compat_smoke
def test_judged_project_lifecycle(pytester: pytest.Pytester) -> None:
    root = pytester.path
    assert DOCS  # the shared tiny corpus
    make_project(root, pytester, "recursive:60:0")

    # first run, recording baselines and judgments
    first = pytester.runpytest(
        *FAST, "--chunkeval-update", f"--chunkeval-json={root / 'first.json'}"
    )
    first.assert_outcomes(passed=2)
    judged = len(calls(root))
    assert 4 < judged <= 8  # a context per question and chunker (some shared)
    summary = section(first)
    assert "judge keywords@1: 8 contexts" in summary  # 4 questions x 2 chunkers
    assert f"{judged} new" in summary
    assert "CR" in summary  # the judged column
    (path,) = (root / "__chunkeval__" / "test_rag").glob(
        "test_rag[[]recursive_30_0]*.json"
    )
    baseline = json.loads(path.read_text())
    cr = baseline["metrics"]["context_relevance"]["mean"]
    assert 0 < cr < 1
    assert baseline["metrics"]["recall"]["n"] == 0  # no ground truth: absent
    judgments = root / "__chunkeval__" / "judgments.json"
    assert judgments.exists()
    assert len(json.loads(judgments.read_text())["judgments"]) == judged

    # a fresh clone: everything but the cache directory
    clone = root / "clone"
    clone.mkdir()
    for item in root.iterdir():
        if item.name in (".chunkeval", "clone", CALLS, "first.json"):
            continue
        target = clone / item.name
        if item.is_dir():
            shutil.copytree(item, target)
        else:
            shutil.copy2(item, target)
    assert not (clone / ".chunkeval").exists()
    fresh = pytester.runpytest(
        *FAST,
        f"--rootdir={clone}",
        str(clone),
        f"--chunkeval-json={clone / 'fresh.json'}",
    )
    fresh.assert_outcomes(passed=2)
    assert calls(clone) == []  # zero judge calls
    assert "0 new" in section(fresh)
    assert "0 cached" in section(fresh)
    # identical numbers: every metric of every result, and the judgments file
    assert metrics_of(clone / "fresh.json") == metrics_of(root / "first.json")
    assert json.loads(judgments.read_text()) == json.loads(
        (clone / "__chunkeval__" / "judgments.json").read_text()
    )

    # a chunker change judges only the contexts never seen: recursive:30:0's
    # come from the committed file, only fixed:20:0's are judged
    (clone / "test_rag.py").write_text(TEST_RAG.format(chunker="fixed:20:0"))
    changed = pytester.runpytest(
        *FAST, f"--rootdir={clone}", str(clone), "--chunkeval-update"
    )
    changed.assert_outcomes(passed=2)
    new_calls = calls(clone)
    assert 0 < len(new_calls) <= 4
    assert f"{len(new_calls)} new" in section(changed)


@pytest.mark.dist
def test_judgments_recorded_under_xdist(pytester: pytest.Pytester) -> None:
    root = pytester.path
    make_project(root, pytester, "recursive:60:0")
    result = pytester.runpytest(*FAST, "-n", "2", "--chunkeval-update")
    result.assert_outcomes(passed=2)
    judged = len(calls(root))
    summary = section(result)
    assert f"{judged} new" in summary  # the workers' stats, merged
    entries = json.loads((root / "__chunkeval__" / "judgments.json").read_text())
    # a context both workers met may be judged by each (they race on the cache)
    assert 4 < len(entries["judgments"]) <= judged
    # and a fresh run of it judges nothing
    (root / CALLS).unlink()
    shutil.rmtree(root / ".chunkeval")
    again = pytester.runpytest(*FAST, "-n", "2")
    again.assert_outcomes(passed=2)
    assert calls(root) == []


def test_marker_judge_and_unknown_judge(pytester: pytest.Pytester) -> None:
    root = pytester.path
    make_project(root, pytester, "recursive:60:0")
    (root / "pytest.ini").write_text(
        JUDGED_INI.replace("chunkeval_judge = keywords\n", "")
    )
    (root / "test_rag.py").write_text(
        """
import pytest

@pytest.mark.chunkeval(judge="keywords", min_context_relevance=0.01)
def test_judged(chunkeval):
    chunkeval.evaluate("recursive:30:0")

@pytest.mark.chunkeval(min_context_relevance=0.01)
def test_not_judged(chunkeval):
    chunkeval.evaluate("recursive:30:0")

@pytest.mark.chunkeval(judge="nobody")
def test_unknown(chunkeval):
    chunkeval.evaluate("recursive:30:0")
"""
    )
    result = pytester.runpytest(*FAST)
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "questions.jsonl has excerpts: give a judge" in out
    assert "chunkeval_judge setting" in out
    assert "unknown judge 'nobody'" in out


def test_a_judge_answering_garbage_is_not_compared_and_fails(
    pytester: pytest.Pytester,
    server: OpenAIServer,  # noqa: F811
) -> None:
    # gate/comparison/integrity.py end to end (issue 21): baselines recorded with usable
    # answers, then every answer of the judge unusable and nothing judged earlier
    # to fall back on. (A plain Python judge cannot answer "unusable": a wrong
    # return is a JudgeError; so the judge is llm: against the local server.)
    root = pytester.path
    make_project(root, pytester, "recursive:60:0")
    (root / "pytest.ini").write_text(
        JUDGED_INI.replace("judge = keywords", "judge = llm:judge-model")
    )
    server.chat_handler = judge_by_keyword
    pytester.runpytest(*FAST, "--chunkeval-update").assert_outcomes(passed=2)
    recorded = baselines(root)
    assert len(recorded) == 2
    assert all(b["metrics"]["context_relevance"]["n"] == 4 for b in recorded.values())

    shutil.rmtree(root / ".chunkeval")
    (root / "__chunkeval__" / "judgments.json").unlink()
    server.chat_handler = lambda request: "I would rather not say."
    result = pytester.runpytest(*FAST)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "E * chunkeval baseline comparison incomplete in "
            "test_rag.py::test_rag[[]recursive:30:0]: context_relevance: 4 unusable",
            "test_rag.py::test_rag[[]recursive:30:0]  recursive:30:0  failed   "
            "not compared (context_relevance: 4 unusable) *",
            "test_rag.py::test_rag[[]recursive:30:0]  context_relevance  "
            "not compared  * -  * -  * -  * -",  # now, change, SE, CI
            "verdict: 0 regressions, 0 improvements, 0 ok, 2 not compared",
            "baselines: 2 incomplete",
            "judge llm:judge-model+server=http://127.0.0.1:*/v1: 8 contexts: "
            "0 committed, 0 cached, 0 new; "
            "8 unusable answers (8 malformed), not scored",
        ]
    )
    # the failing check leaves the recorded baselines as they were
    assert baselines(root) == recorded
