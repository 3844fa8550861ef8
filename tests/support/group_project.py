"""Two documents of 30 one-sentence answers each, a question per sentence, and a
``score()`` test whose answers of some questions lose a share (``$CUT``) of their
characters: the gate's document and tag groups (tests/test_plugin_documents.py,
tests/test_plugin_tags.py; docs/baselines.md, "Documents and tags")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.plugin_project import CONFTEST, DIST, INI, run

TEST = """
import json
import os
from pathlib import Path

def test_rag(chunkeval):
    cut = float(os.environ.get("CUT", "0"))
    answers = {}
    for line in Path("queries.jsonl").read_text().splitlines()[1:]:
        record = json.loads(line)
        text = record["excerpts"][0]["text"]
        lose = round(cut * len(text)) if LOSES else 0
        answers[record["id"]] = [text[: len(text) - lose]]
    chunkeval.check_baseline(chunkeval.score(answers, label="rag"))
"""


def write_project(
    root: Path,
    documents: tuple[str, str],
    loses: str,
    metadata: Callable[[int], dict[str, Any]] | None = None,
) -> None:
    """The project in ``root``: ``loses`` is the test's condition on a query
    ``record`` for its answer to lose characters; ``metadata(i)`` gives the
    ``i``-th question of each document its metadata."""
    docs = root / "docs"
    docs.mkdir()
    lines = [json.dumps({"chunkeval_queries": 1})]
    for doc in documents:
        name = doc[:-3]
        sentences = [
            f"Fact {i} of {name} says the number {i * 7} is kept in box {i}."
            for i in range(30)
        ]
        (docs / doc).write_text("\n\n".join(sentences) + "\n")
        for i, s in enumerate(sentences):
            query = {
                "id": f"{name}-{i}",
                "question": f"Where is number {i * 7} of {name}?",
                "doc_id": doc,
                "excerpts": [{"text": s}],
            }
            if metadata is not None:
                query["metadata"] = metadata(i)
            lines.append(json.dumps(query))
    (root / "queries.jsonl").write_text("\n".join(lines) + "\n")
    ini = INI.replace("chunkeval_chunkers = recursive:30:0 recursive:60:0\n", "")
    (root / "pytest.ini").write_text(
        ini + "chunkeval_k = 50\nchunkeval_unit = char\n"
        "chunkeval_tolerance = recall:-10pp\n"
    )
    (root / "conftest.py").write_text(CONFTEST)
    (root / "test_rag.py").write_text(TEST.replace("LOSES", loses))


def recorded(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, cut: float
) -> Path:
    """Record the baseline uncut, then cut the answers by ``cut`` for the run."""
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("CUT", "0")
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    monkeypatch.setenv("CUT", str(cut))
    return pytester.path


def run_with_reports(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: bool
) -> pytest.RunResult:
    """One run writing r.json, r.md and r.html, in one process or under xdist."""
    args = ("--chunkeval-json=r.json", "--chunkeval-md=r.md", "--chunkeval-html=r.html")
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        return pytester.runpytest_subprocess(*DIST, *args)
    return run(pytester, *args)
