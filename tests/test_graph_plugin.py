"""``chunkeval.relationships(...)`` in pytest: markers, assertion helpers, the
baseline gate and the terminal summary working on relationship results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.plugin_project import FAST
from support.relationships_project import DOC, FACTS, SENTENCES, TEXT

INI = """\
[pytest]
filterwarnings = error
chunkeval_corpus = docs
chunkeval_queries = queries.jsonl
chunkeval_embedder = hashing
chunkeval_store = exact
chunkeval_unit = char
chunkeval_tolerance = rel_recall:-1pp
"""

# "facts" extracts one relationship per whole sentence; CHUNKEVAL_TEST_DROP names
# subjects whose sentences it ignores (a worse extractor under the same name).
CONFTEST = """\
import os
import re

from pytest_chunkeval import CallableExtractor
from pytest_chunkeval.embedders.hashing import hashing_from_spec

FACT = re.compile(r"([A-Z]\\w+) (founded|acquired|joined) ([A-Z]\\w+)\\.")


def extract(text):
    drop = os.environ.get("CHUNKEVAL_TEST_DROP", "").split(",")
    return [(m[1], m[2], m[3], m[0]) for m in FACT.finditer(text) if m[1] not in drop]


def pytest_chunkeval_register_embedders(registry):
    if "hashing" not in registry:
        registry.register("hashing", hashing_from_spec, "hashing[:DIM]")


def pytest_chunkeval_register_extractors(registry):
    registry.register(
        "facts", lambda rest: CallableExtractor(extract, name="facts", version="1")
    )
"""

TESTS = """\
import pytest

from pytest_chunkeval import assert_metric_at_least


@pytest.mark.chunkeval(min_rel_recall=0.9)
def test_threshold(chunkeval):
    chunkeval.relationships("recursive:30:0", extractor="facts", k=10)


def test_helper(chunkeval):
    result = chunkeval.relationships("recursive:30:0", extractor="facts", k=10)
    assert_metric_at_least(result, "evidence_recall", 0.5)


@pytest.mark.chunkeval(baseline=True)
def test_gate(chunkeval):
    chunkeval.relationships("recursive:30:0", extractor="facts", k=10)
"""

BASELINE = Path("__chunkeval__", "test_rel", "test_gate.json")


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_TEST_DROP", raising=False)
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(pytester.path / "cache-1"))
    root = pytester.path
    (root / "docs").mkdir()
    (root / "docs" / DOC).write_text(TEXT, encoding="utf-8")
    lines = [{"chunkeval_queries": 1}] + [
        {
            "id": f"q-{s.lower()}",
            "question": f"What did {s} do?",
            "doc_id": DOC,
            "excerpts": [{"text": sentence}],
            # stated, so that the gold set does not move with the extractor
            "relationships": [{"subject": s, "predicate": p, "object": o}],
        }
        for (s, p, o), sentence in zip(FACTS, SENTENCES, strict=True)
    ]
    (root / "queries.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8"
    )
    (root / "pytest.ini").write_text(INI, encoding="utf-8")
    (root / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    pytester.makepyfile(test_rel=TESTS)
    return root


def test_relationships_with_markers_helpers_gate_and_summary(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = pytester.runpytest(*FAST, "--chunkeval-update")
    created.assert_outcomes(passed=3)
    out = created.stdout.str()
    assert "rel_recall  rel_precision  ev_recall  ev_IoU" in out
    data = json.loads((project / BASELINE).read_text(encoding="utf-8"))
    assert data["metrics"]["rel_recall"]["mean"] == 1.0
    assert "recall" not in data["metrics"]  # no chunk metric in a relationship file
    assert data["queries"]["q-alice"]["rel_recall"] == 1.0
    assert data["config"]["extractor"] == "facts"

    reports = pytester.runpytest(
        *FAST,
        "--chunkeval-json=out.json",
        "--chunkeval-md=out.md",
        "--chunkeval-html=out.html",
        "--chunkeval-history=history.jsonl",
    )
    reports.assert_outcomes(passed=3)
    report = json.loads((project / "out.json").read_text(encoding="utf-8"))
    text = json.dumps(report)
    assert '"rel_recall"' in text
    assert '"evidence_iou"' in text
    assert (project / "out.html").read_text(encoding="utf-8").startswith("<!")
    assert "Rel recall" in (project / "out.md").read_text(encoding="utf-8")

    # A worse extractor (answers not cached): the threshold, the helper and the
    # gate fail, each saying which relationships were missed.
    monkeypatch.setenv("CHUNKEVAL_TEST_DROP", "Alice,Bob,Carol,Dave")
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(project / "cache-2"))
    worse = pytester.runpytest(*FAST)
    worse.assert_outcomes(failed=3)
    worse.stdout.fnmatch_lines(
        [
            "*min_rel_recall=0.9*not met*",
            "*rel_recall mean 0.333 is below the required 0.900*",
            "*missed relationship: Alice | founded | Acme*",
        ]
    )
    worse.stdout.fnmatch_lines(
        ["*evidence_recall mean 0.333 is below the required 0.500*"]
    )
    worse.stdout.fnmatch_lines(
        ["*chunkeval baseline regression in test_rel.py::test_gate*", "*rel_recall*"]
    )


BARE = """\
import os
import re

FACT = re.compile(r"([A-Z]\\w+) (founded|acquired|joined) ([A-Z]\\w+)\\.")


def extract(text):  # no cache_version: its output changes under one name
    drop = os.environ.get("CHUNKEVAL_TEST_DROP", "").split(",")
    return [(m[1], m[2], m[3], m[0]) for m in FACT.finditer(text) if m[1] not in drop]


def test_one(chunkeval):
    result = chunkeval.relationships("recursive:30:0", extractor=extract, k=10)
    assert result.mean("rel_recall") == float(os.environ["EXPECTED"])


def test_two(chunkeval):
    result = chunkeval.relationships("recursive:30:0", extractor=extract, k=10)
    assert result.mean("rel_recall") == float(os.environ["EXPECTED"])
"""


def test_a_function_extractor_is_computed_every_run_and_once_per_session(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "test_rel.py").unlink()
    pytester.makepyfile(test_bare=BARE)
    monkeypatch.setenv("EXPECTED", "1.0")
    first = pytester.runpytest(*FAST)
    first.assert_outcomes(passed=2)
    first.stdout.fnmatch_lines(["*1 configuration evaluated, 1 result reused*"])
    assert not (project / "cache-1" / "answers").exists()
    # The same name, other answers: the warm run gives what a cold run gives.
    monkeypatch.setenv("CHUNKEVAL_TEST_DROP", "Alice,Bob,Carol,Dave")
    monkeypatch.setenv("EXPECTED", str(2 / 6))
    pytester.runpytest(*FAST).assert_outcomes(passed=2)
