"""Judged context relevance through the plugin (issue 16's "done when"): a
questions-only file, a callable judge registered by the conftest, baselines and
committed judgments; a fresh clone (no cache directory) re-runs with zero judge
calls and identical numbers; a chunker change judges only new contexts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.plugin_project import CONFTEST, DOCS, FAST, write_project

CALLS = "judge-calls.txt"

JUDGED_INI = """\
[pytest]
filterwarnings = error
chunkeval_corpus = docs
chunkeval_queries = questions.jsonl
chunkeval_embedder = hashing
chunkeval_store = exact
chunkeval_k = 2
chunkeval_judge = keywords
"""

JUDGED_CONFTEST = (
    CONFTEST
    + '''

import os
import re
from pathlib import Path

from pytest_chunkeval.judging.judge import CallableJudge


def _keywords(question, context):
    # every call is counted in a file, so the outer test sees inner runs' calls
    with open(Path(__file__).parent / "judge-calls.txt", "a") as fh:
        fh.write(question + "\\n")
    words = {w.strip("?").lower() for w in question.split() if len(w) >= 5}
    sentences = re.findall(r"[^.]+[.]", context)
    return [
        s.strip()
        for s in sentences
        if words & {w.strip(",.").lower() for w in s.split()}
    ]


def pytest_chunkeval_register_judges(registry):
    judge = CallableJudge(_keywords, name="keywords", version="1")
    registry.register("keywords", lambda rest: judge, "keywords")
'''
)

TEST_RAG = """
import pytest

@pytest.mark.chunkeval(min_context_relevance=0.05)
@pytest.mark.parametrize("chunker", ["recursive:30:0", "{chunker}"])
def test_rag(chunkeval, chunker):
    chunkeval.check_baseline(chunkeval.evaluate(chunker))
"""

QUESTIONS = [
    {"id": "u-parrots", "question": "How long do parrots live in captivity?"},
    {"id": "u-tides", "question": "What causes the ocean tides?"},
    {"id": "u-dividend", "question": "Which dividend does the board propose?"},
    {"id": "u-nothing", "question": "Is there a swimming pool?"},
]


def make_project(root: Path, pytester: pytest.Pytester, chunker: str) -> None:
    write_project(root, JUDGED_INI, conftest=JUDGED_CONFTEST)
    lines = [json.dumps({"chunkeval_queries": 1})]
    lines += [json.dumps(q) for q in QUESTIONS]
    (root / "questions.jsonl").write_text("\n".join(lines) + "\n")
    (root / "test_rag.py").write_text(TEST_RAG.format(chunker=chunker))


def calls(root: Path) -> list[str]:
    path = root / CALLS
    return path.read_text().splitlines() if path.exists() else []


def section(result: pytest.RunResult) -> str:
    out = result.stdout.str()
    assert "- chunkeval -" in out, out
    return out.split("- chunkeval -", 1)[1]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def test_judged_project_lifecycle(pytester: pytest.Pytester) -> None:
    root = pytester.path
    assert DOCS  # the shared tiny corpus
    make_project(root, pytester, "recursive:60:0")

    # first run, recording baselines and judgments
    first = pytester.runpytest(*FAST, "--chunkeval-update")
    first.assert_outcomes(passed=2)
    judged = len(calls(root))
    assert 4 < judged <= 8  # a context per question and chunker (some shared)
    summary = section(first)
    assert f"judge keywords@1: {judged} contexts" in summary
    assert f"{judged} new" in summary
    assert "CR" in summary  # the judged column
    baseline = json.loads(
        (
            root / "__chunkeval__" / "test_rag" / "test_rag[recursive:30:0].json"
        ).read_text()
    )
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
        if item.name in (".chunkeval", "clone", CALLS):
            continue
        target = clone / item.name
        if item.is_dir():
            shutil.copytree(item, target)
        else:
            shutil.copy2(item, target)
    assert not (clone / ".chunkeval").exists()
    fresh = pytester.runpytest(*FAST, f"--rootdir={clone}", str(clone))
    fresh.assert_outcomes(passed=2)
    assert calls(clone) == []  # zero judge calls
    assert f"{judged} committed, 0 cached, 0 new" in section(fresh)
    # identical numbers: the baseline check passed, and no file changed
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
