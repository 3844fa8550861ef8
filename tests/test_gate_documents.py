"""Documents whose drop is beyond their own tolerance (issue 30 item 4;
docs/baselines.md, "Documents"): named beside the whole set's verdict, a
failure with ``chunkeval_gate_by = "document"``.

Before, one document dropping 18 points passed ``ok`` with nothing said: the
whole set's mean diluted it.
"""

from __future__ import annotations

import pytest
from support.fake_results import make_result

from pytest_chunkeval.config.tolerances import parse_gate_by
from pytest_chunkeval.gate.comparison.compare import compare
from pytest_chunkeval.gate.files.baseline import Baseline
from pytest_chunkeval.gate.outcome.messages import format_failure, format_pass
from pytest_chunkeval.gate.tolerances import GateSettings

# 30 questions of big.md, 10 of each of nine other documents: 120 questions
DOCS = ["big.md"] * 30 + [f"d{i}.md" for i in range(9) for _ in range(10)]


def _now(drop: float, where: str = "big.md") -> list[float]:
    return [1.0 - drop if d == where else 1.0 for d in DOCS]


def _settings(**kwargs: str) -> GateSettings:
    return GateSettings.from_options("recall:-5pp", **kwargs)  # type: ignore[arg-type]


def test_a_document_beyond_its_own_tolerance_is_named() -> None:
    baseline = Baseline.from_result(make_result([1.0] * 120, docs=DOCS), "t")
    report = compare(baseline, make_result(_now(0.18), docs=DOCS), _settings())
    (recall,) = report.checks
    assert recall.status == "ok"  # the set: -4.5 points, within -5pp
    (big,) = recall.groups
    assert (big.group, big.n) == ("big.md", 30)
    assert big.delta == pytest.approx(-0.18)
    # its own tolerance: its minimum detectable effect, 4 of 30 questions
    assert big.allowed == pytest.approx(4 / 30)
    text = format_pass(report, test="t.py::test_x", command="pytest --chunkeval-update")
    assert (
        "t.py::test_x: recall of documents beyond their own tolerance: big.md "
        "-18.00 points over 30 questions (its own tolerance -13.33)" in text
    )


def test_a_small_document_must_lose_more_before_it_is_named() -> None:
    baseline = Baseline.from_result(make_result([1.0] * 120, docs=DOCS), "t")
    # d0.md has 10 questions: 4 must be lost (40 points) before it can tell
    report = compare(baseline, make_result(_now(0.18, "d0.md"), docs=DOCS), _settings())
    assert report.checks[0].groups == ()
    report = compare(baseline, make_result(_now(0.45, "d0.md"), docs=DOCS), _settings())
    assert [g.group for g in report.checks[0].groups] == ["d0.md"]


def test_gate_by_document_fails_on_a_document() -> None:
    baseline = Baseline.from_result(make_result([1.0] * 120, docs=DOCS), "t")
    settings = _settings(gate_by="document")
    report = compare(baseline, make_result(_now(0.18), docs=DOCS), settings)
    assert report.checks[0].status == "regressed"
    text = format_failure(report, test="t.py::test_x", path="t.json", command="c")
    assert "recall: 1 document(s) beyond their own tolerance" in text
    assert "big.md -18.00 points over 30 questions" in text
    # nothing beyond: passes as before
    report = compare(baseline, make_result(_now(0.05), docs=DOCS), settings)
    assert report.checks[0].status == "ok"


def test_gate_by_is_checked() -> None:
    assert parse_gate_by(" Document ") == "document"
    with pytest.raises(ValueError, match="chunkeval_gate_by 'topic'"):
        parse_gate_by("topic")
