"""A tag (a question's ``metadata["tags"]``) dropping beyond its own tolerance
is named in every report (terminal, Markdown, HTML, JSON) and fails the run with
``chunkeval_gate_by = tag`` (issue 30 item 4; docs/baselines.md, "Documents and
tags"); the baseline records each question's tags. Before, the run passed ``ok``
with nothing said: the drop was half of each document's, within theirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.group_project import recorded, run_with_reports, write_project
from support.plugin_project import MODES, run


# a.md and b.md: 30 sentences each, a question per sentence; every other question
# is tagged "billing" (15 of each document). The answers of the billing questions
# lose 18% of their characters: -18 points for the tag, -9 for the set and for
# each document, within the -10pp tolerance; the tag's own tolerance is its
# minimum detectable effect, 4 of 30 questions (13.33 points).
def _tags(i: int) -> dict[str, list[str]]:
    return {"tags": ["billing"] if i % 2 == 0 else ["other"]}


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    loses = '"billing" in record.get("metadata", {}).get("tags", [])'
    write_project(pytester.path, ("a.md", "b.md"), loses, _tags)
    return recorded(pytester, monkeypatch, cut=0.18)


NAMED = "recall of tags beyond their own tolerance: billing -17.97 points over "
NAMED += "30 questions (its own tolerance -13.33)"


def _baseline_tags(root: Path) -> dict[str, list[str]]:
    path = root / "__chunkeval__" / "test_rag" / "test_rag.json"
    questions = json.loads(path.read_text())["questions"]
    return {q: r.get("tags", []) for q, r in questions.items()}


@MODES
def test_a_tag_drop_is_named_in_every_report(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    tags = _baseline_tags(project)
    assert tags["a-0"] == ["billing"]
    assert tags["b-1"] == ["other"]
    result = run_with_reports(pytester, monkeypatch, dist)
    result.assert_outcomes(passed=1)  # the set: -9 points, within -10pp
    out = result.stdout.str()
    assert f"test_rag.py::test_rag: {NAMED}" in out  # the baselines: lines
    assert out.count(NAMED) >= 2  # and under the "against the baseline" table
    assert "recall of documents beyond" not in out
    assert NAMED in (project / "r.md").read_text()
    assert NAMED in (project / "r.html").read_text()
    (row,) = json.loads((project / "r.json").read_text())["results"]
    recall = next(g for g in row["gated"] if g["metric"] == "recall")
    assert recall["status"] == "ok"
    assert "documents" not in recall
    (billing,) = recall["tags"]
    assert (billing["tag"], billing["n"]) == ("billing", 30)
    assert billing["delta"] == pytest.approx(-0.18, abs=0.01)


def test_gate_by_tag_fails_the_check(pytester: pytest.Pytester, project: Path) -> None:
    result = run(pytester, "--chunkeval-gate-by=tag")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "recall: 1 tag(s) beyond their own tolerance" in out
    assert NAMED in out
    # both kinds decided (before: a usage error, one value only); the tag,
    # not a document, is named as what failed
    result = run(pytester, "--chunkeval-gate-by=document,tag")
    result.assert_outcomes(failed=1)
    assert (
        "recall: 1 tag(s) beyond their own tolerance (chunkeval_gate_by = "
        "document, tag)" in result.stdout.str()
    )
