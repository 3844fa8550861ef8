"""The verdict model (issue 21 part A): the ``changes`` mode's arithmetic, lost
questions, the sampling view, and the one table from what a check did to what it
says."""

from __future__ import annotations

import json

import pytest
from support.fake_results import make_result

from pytest_chunkeval.gate.comparison import compare as gate
from pytest_chunkeval.gate.comparison.compare import compare, gated_metrics
from pytest_chunkeval.gate.comparison.sampling import (
    detectable_points,
    detectable_questions,
)
from pytest_chunkeval.gate.comparison.verdicts import (
    STATUS_VERDICTS,
    VERDICTS,
    GatedMetric,
    NoiseNote,
    verdict_of,
    worst,
)
from pytest_chunkeval.gate.files.baseline import Baseline
from pytest_chunkeval.gate.outcome.outcomes import FAILED, OUTCOMES, CheckOutcome
from pytest_chunkeval.gate.tolerances import GateSettings


def _baseline(values: list[float]) -> Baseline:
    return Baseline.from_result(make_result(values), "test_x")


def _recall(report: gate.GateReport) -> gate.MetricCheck:
    return next(c for c in report.checks if c.metric == "recall")


def test_one_question_lost_of_nineteen_regresses() -> None:
    before = [1.0] * 19
    after = [1.0] * 18 + [0.0]
    report = compare(_baseline(before), make_result(after))
    recall = _recall(report)
    assert recall.status == "regressed"
    assert recall.delta == pytest.approx(-1 / 19)
    assert recall.se == 0.0  # neither run found noise
    assert report.lost == ("q018",)
    assert report.verdict == "regressed"
    # The sampling view alone could not tell it: the paired mode passes it.
    paired = compare(_baseline(before), make_result(after), GateSettings(mode="paired"))
    assert paired.passed
    assert paired.lost == ("q018",)  # named whatever the verdict


def test_only_a_drift_explained_change_is_not_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = [1.0] * 19
    after = [1.0] * 16 + [0.0, 0.0, 0.0]
    monkeypatch.setattr(gate, "explain_drift", lambda *a, **kw: {"q018": "drift"})
    report = compare(_baseline(before), make_result(after))
    recall = _recall(report)
    assert recall.status == "regressed"
    assert recall.delta == pytest.approx(-2 / 19)
    assert recall.drift == 1
    assert report.noise == {"q018": "drift"}
    assert report.lost == ("q016", "q017")


def test_small_moves_both_ways_within_the_tolerance_are_ok() -> None:
    before = [0.5] * 100
    after = [0.5 + (0.05 if i % 2 else -0.06) for i in range(100)]  # -0.5pp
    report = compare(_baseline(before), make_result(after))
    assert _recall(report).status == "ok"
    assert report.verdict == "ok"


def test_improved_needs_more_than_the_tolerance() -> None:
    before = [0.5] * 100
    slightly = compare(_baseline(before), make_result([0.505] * 100))
    assert _recall(slightly).status == "ok"
    clearly = compare(_baseline(before), make_result([0.52] * 100))
    assert _recall(clearly).status == "improved"


def test_a_lost_question_is_named_even_when_the_verdict_is_ok() -> None:
    before = [1.0] * 199 + [0.01]
    after = [1.0] * 199 + [0.0]
    report = compare(_baseline(before), make_result(after))
    assert report.verdict == "ok"
    assert report.lost == ("q199",)


def test_minimum_detectable_effect() -> None:
    # 95% over three metrics: five questions lost in one direction, for any n
    # from 19 to 472 (docs/baselines.md).
    assert [detectable_questions(n, 3, 0.95) for n in (19, 36, 472)] == [5, 5, 5]
    assert detectable_questions(6, 3, 0.95) == 4
    assert detectable_questions(6, 1, 0.95) == 3
    assert detectable_questions(2, 3, 0.95) == 2  # all of them
    assert detectable_questions(0, 3, 0.95) is None
    assert detectable_points(5, 19, 1.0) == pytest.approx(0.263, abs=1e-3)
    assert detectable_points(5, 36, 1.0) == pytest.approx(0.139, abs=1e-3)
    assert detectable_points(5, 472, 1.0) == pytest.approx(0.0106, abs=1e-4)
    report = compare(_baseline([1.0] * 36), make_result([1.0] * 36))
    assert report.mde_questions == 5
    assert _recall(report).mde == pytest.approx(5 / 36)


def test_every_status_has_one_verdict() -> None:
    assert set(OUTCOMES) <= set(STATUS_VERDICTS)
    assert {v.name for v in STATUS_VERDICTS.values()} == set(VERDICTS)
    assert {
        "regressed",
        "missing",
        "corrupt",
        "mismatch",
        "incomplete",
        "unwritable",
        "not recorded",  # the test failed first
        "not compared",
    } == FAILED
    assert str(verdict_of("missing")) == "not compared (no baseline)"
    assert str(verdict_of("mismatch", "another unit")) == "not compared (another unit)"
    assert str(verdict_of("passed")) == "ok"  # an older report read back
    assert verdict_of("something new").fails
    assert worst(["ok", "noisy", "improved"]) == "noisy"
    assert worst(["noisy", "not compared (no baseline)"]) == (
        "not compared (no baseline)"
    )
    assert worst(["improved", "regressed"]) == "regressed"


def test_the_report_data_round_trips_as_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gate, "explain_drift", lambda *a, **kw: {"q018": "drift"})
    report = compare(_baseline([1.0] * 19), make_result([1.0] * 18 + [0.0]))
    gated = gated_metrics(report)
    recall = next(g for g in gated if g.metric == "recall")
    assert (recall.status, recall.drift, recall.changed) == ("ok", 1, 1)
    assert recall.se == 0.0
    assert recall.mde_questions == 5
    assert recall.tolerance == "-1pp"
    outcome = CheckOutcome(
        "t.py::x",
        "x.json",
        "ok",
        gated=gated,
        noise=(NoiseNote("q018", "a.md", "What?", "drift"),),
    )
    data = json.loads(json.dumps(outcome.to_json()))
    assert data["verdict"] == "ok"
    again = CheckOutcome.from_json(data)
    assert again == outcome
    assert GatedMetric.from_json(recall.to_json()) == recall
