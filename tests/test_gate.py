"""The regression gate: tolerance parsing, the paired bootstrap, verdicts, text."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import numpy as np
import pytest
from support.fake_results import make_result, spread

from pytest_chunkeval.config.tolerances import (
    Tolerance,
    parse_confidence,
    parse_gate_mode,
    parse_tolerances,
)
from pytest_chunkeval.core.metric_names import format_percent
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.gate.comparison import compare as gate
from pytest_chunkeval.gate.comparison.compare import (
    GateError,
    GateReport,
    bootstrap_intervals,
    compare,
    per_metric_level,
)
from pytest_chunkeval.gate.files.baseline import Baseline
from pytest_chunkeval.gate.outcome.messages import format_failure, format_improvement
from pytest_chunkeval.gate.tolerances import (
    DEFAULT_TOLERANCE,
    GateSettings,
    coerce_tolerances,
    format_tolerances,
)

# ------------------------------------------------------------------ parsing


def test_parse_tolerances_absolute_relative_points_and_off() -> None:
    tols = parse_tolerances("recall:-1%, iou:-0.002, precision:-0.5pp, f1:off")
    assert tols["recall"] == Tolerance(0.01, relative=True)
    assert tols["iou"] == Tolerance(0.002)
    assert tols["precision"] is not None
    assert tols["precision"].amount == pytest.approx(0.005)
    assert tols["f1"] is None
    assert "precision_omega" not in tols


def test_parse_tolerances_unsigned_means_the_same_drop() -> None:
    assert parse_tolerances("recall:1%") == parse_tolerances("recall:-1%")


def test_star_sets_every_metric_and_explicit_items_win() -> None:
    tols = parse_tolerances("recall:-2%, *:-0.01")
    assert tols["recall"] == Tolerance(0.02, relative=True)
    assert tols["iou"] == Tolerance(0.01)
    assert set(tols) == set(gate.HIGHER_IS_BETTER)


def test_format_tolerances_round_trips() -> None:
    text = "recall:-1%, precision:-0.5pp, iou:-0.002, f1:off"
    assert parse_tolerances(format_tolerances(parse_tolerances(text))) == (
        parse_tolerances(text)
    )
    assert format_tolerances(parse_tolerances(text)) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("recal:-1%", "did you mean 'recall'"),
        ("recall:+1%", "positive"),
        ("recall:-2", "above 1"),
        ("recall:-150%", "above 100%"),
        ("recall", "expected METRIC:-NUMBER"),
        ("recall:-1%, recall:-2%", "given twice"),
        ("recall:-abc", "bad tolerance"),
    ],
)
def test_parse_tolerances_errors_say_what_is_allowed(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_tolerances(text)


def test_coerce_tolerances_from_a_mapping() -> None:
    tols = coerce_tolerances({"recall": "-1%", "iou": -0.002, "f1": None})
    assert tols == {
        "recall": Tolerance(0.01, relative=True),
        "iou": Tolerance(0.002),
        "f1": None,
    }
    with pytest.raises(ConfigError, match="recall: expected"):
        coerce_tolerances({"recall": [1]})
    assert coerce_tolerances(None) == {}


@pytest.mark.parametrize(("text", "value"), [("95%", 0.95), ("0.9", 0.9), ("99", 0.99)])
def test_parse_confidence(text: str, value: float) -> None:
    assert parse_confidence(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["100%", "0.3", "abc", "1"])
def test_parse_confidence_rejects(text: str) -> None:
    with pytest.raises(ConfigError, match="confidence"):
        parse_confidence(text)


def test_parse_gate_mode() -> None:
    assert parse_gate_mode(" Paired ") == "paired"
    assert parse_gate_mode("changes") == GateSettings().mode == "changes"
    with pytest.raises(ConfigError, match="changes, paired, mean"):
        parse_gate_mode("median")


def test_override_merges_tolerances_per_metric() -> None:
    settings = GateSettings().override(tolerance="recall:-1%, precision:off")
    one_point = Tolerance(0.01, points=True)
    assert one_point == DEFAULT_TOLERANCE
    assert dict(settings.gated()) == {
        "recall": Tolerance(0.01, relative=True),
        "iou": one_point,
        "context_relevance": one_point,  # gated when a judge measured it
        # the relationship metrics' defaults (used by relationship results only)
        "rel_recall": one_point,
        "rel_precision": one_point,
        "evidence_iou": one_point,
    }
    assert settings.override(mode="mean", confidence="90%").mode == "mean"


def test_configured_tolerance_replaces_the_default() -> None:
    assert [m for m, _ in GateSettings.from_options().gated()] == [
        "recall",
        "precision",
        "iou",
        "context_relevance",
        "rel_recall",
        "rel_precision",
        "evidence_iou",
    ]
    settings = GateSettings.from_options("recall:-1%, iou:-0.002", "mean", "90%")
    assert [m for m, _ in settings.gated()] == ["recall", "iou"]
    assert (settings.mode, settings.confidence) == ("mean", 0.9)
    with pytest.raises(ConfigError):
        GateSettings.from_options("recall:+1")


def test_relative_tolerance_scales_with_the_baseline_mean() -> None:
    assert Tolerance(0.01, relative=True).allowed(0.8) == pytest.approx(0.008)
    assert Tolerance(0.002).allowed(0.8) == 0.002


# ---------------------------------------------------------------- bootstrap


def test_bootstrap_of_no_change_is_exactly_zero() -> None:
    low, high = bootstrap_intervals(np.zeros((50, 3)), 0.95)
    assert low.tolist() == [0, 0, 0]
    assert high.tolist() == [0, 0, 0]


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    rng = np.random.default_rng(3)
    data = rng.normal(-0.02, 0.3, size=(400, 2))
    a = bootstrap_intervals(data, 0.95, seed=7)
    b = bootstrap_intervals(data, 0.95, seed=7)
    c = bootstrap_intervals(data, 0.95, seed=8)
    assert np.array_equal(a[0], b[0])
    assert np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    means = data.mean(axis=0)
    assert np.all(a[0] < means)
    assert np.all(means < a[1])
    # The normal-theory half width 1.96 * s / sqrt(n), within 10%.
    half = 1.96 * data.std(axis=0) / np.sqrt(len(data))
    assert np.allclose((a[1] - a[0]) / 2, half, rtol=0.1)


def test_bootstrap_leaves_nan_cells_out() -> None:
    data = np.array([[1.0, 0.5], [np.nan, 0.5], [1.0, np.nan], [1.0, 0.5]])
    low, high = bootstrap_intervals(data, 0.95)
    assert low.tolist() == [1.0, 0.5]
    assert high.tolist() == [1.0, 0.5]


@pytest.mark.perf
def test_bootstrap_is_vectorized() -> None:
    data = np.random.default_rng(0).normal(size=(472, 3))
    start = time.perf_counter()
    bootstrap_intervals(data, 0.95, samples=10_000)
    assert time.perf_counter() - start < 2.0  # a Python loop would take ~10x this


def test_false_alarm_rate_on_exchangeable_noise_is_at_most_five_percent() -> None:
    """Deltas between two runs that differ by noise alone are symmetric: the gate's
    decision rule (whole simultaneous interval below zero) must rarely fire."""
    rng = np.random.default_rng(11)
    trials, n, metrics = 300, 472, 3
    level = per_metric_level(0.95, metrics)
    alarms = 0
    for t in range(trials):
        changed = rng.random(n) < 0.05  # a few queries move, like near-ties
        deltas = np.where(changed[:, None], rng.normal(0, 0.4, (n, metrics)), 0.0)
        _, high = bootstrap_intervals(deltas, level, samples=2000, seed=t)
        alarms += bool((high < 0).any())
    assert alarms / trials <= 0.05


# ---------------------------------------------------------------- compare


def _baseline(values: list[float], **kw: object) -> Baseline:
    return Baseline.from_result(make_result(values, **kw), "test_x")  # type: ignore[arg-type]


def test_identical_results_pass_without_an_improvement() -> None:
    values = spread(200)
    report = compare(_baseline(values), make_result(values))
    assert report.passed
    assert not report.improved
    assert [c.metric for c in report.checks] == ["recall", "precision", "iou"]
    assert all(c.low == 0 and c.high == 0 and c.changed == 0 for c in report.checks)


def test_values_on_binary_halves_round_like_the_baseline_file() -> None:
    # np.round(0.42125, 4) == 0.4212 but round(0.42125, 4) == 0.4213
    values = [0.42125, 0.10005, 0.5] * 10
    report = compare(_baseline(values), make_result(values))
    assert all(c.changed == 0 for c in report.checks)


def test_a_clear_drop_regresses_with_the_worst_queries_first() -> None:
    before = spread(200)
    after = [max(v - 0.25, 0.0) for v in before]
    after[7] = 0.0  # q007 falls the most when it was at 1.0
    result = make_result(after)
    report = compare(_baseline(before), result)
    assert not report.passed
    recall = report.checks[0]
    assert recall.status == "regressed"
    assert recall.high is not None
    assert recall.high < 0
    assert recall.delta == pytest.approx(np.mean(after) - np.mean(before), abs=1e-4)
    worst = recall.worst
    assert len(worst) == 5
    drops = [q.after - q.before for q in worst]
    assert drops == sorted(drops)
    assert set(recall.by_group) == {"a.md", "b.md"}


def test_an_improvement_beyond_noise_is_reported() -> None:
    before = spread(200)
    after = [min(v + 0.25, 1.0) for v in before]
    report = compare(_baseline(before), make_result(after))
    assert report.passed
    assert [c.metric for c in report.improved] == ["recall", "precision", "iou"]


def test_a_small_drop_within_noise_passes() -> None:
    before = spread(300)
    after = list(before)
    # Two queries worse, one better: a net drop, but far from significant.
    after[0], after[1], after[2] = 0.0, 0.0, 1.0
    before[0], before[1], before[2] = 1.0, 0.75, 0.0
    report = compare(_baseline(before), make_result(after))
    assert report.checks[0].delta < 0
    assert report.passed


def test_tolerance_allows_a_drop_and_a_relative_one_scales() -> None:
    before = [0.8] * 100
    within = [0.79] * 100  # -1 point on every query: the default tolerance
    assert compare(_baseline(before), make_result(within)).passed
    after = [0.78] * 100  # -2 points on every query: a certain drop
    assert not compare(_baseline(before), make_result(after)).passed
    loose = GateSettings().override(tolerance="recall:-0.03, precision:off, iou:off")
    assert compare(_baseline(before), make_result(after), loose).passed
    relative = GateSettings().override(tolerance="recall:-2%, precision:off, iou:off")
    # 2% of 0.8 is 0.016 < 0.02: still a regression.
    assert not compare(_baseline(before), make_result(after), relative).passed


def test_mean_mode_fails_on_any_drop_of_the_mean() -> None:
    before = [0.5] * 100
    after = [0.5] * 99 + [0.4]  # one query a little worse
    zero = GateSettings().override(tolerance="*:0")
    paired = zero.override(mode="paired")
    assert compare(_baseline(before), make_result(after), paired).passed  # noise
    report = compare(_baseline(before), make_result(after), zero.override(mode="mean"))
    assert not report.passed
    assert report.checks[0].low is None
    assert report.checks[0].delta == pytest.approx(-0.001)


def test_direction_lower_is_better(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(gate.HIGHER_IS_BETTER, "precision", False)
    before = [0.5] * 100
    precision_up = [0.2] * 100
    report = compare(
        _baseline(before, precision=[0.1] * 100),
        make_result(before, precision=precision_up),
        GateSettings().override(tolerance="iou:off"),
    )
    by_metric = {c.metric: c.status for c in report.checks}
    assert by_metric == {"recall": "ok", "precision": "regressed"}


def test_unpairable_queries_are_an_error() -> None:
    base = _baseline([1.0] * 10)
    other = make_result([1.0] * 10, ids=[f"x{i}" for i in range(10)])
    with pytest.raises(GateError, match=r"no question in common with the baseline"):
        compare(base, other)


def test_added_and_removed_queries_are_compared_on_the_shared_ones() -> None:
    base = _baseline([1.0] * 10 + [0.0] * 10)
    ids = [f"q{i:03d}" for i in range(5, 20)] + ["new1", "new2"]
    # q005-q009 keep 1.0, q010-q019 go from 0 to 1, the new ones score 0.
    report = compare(base, make_result([1.0] * 15 + [0.0] * 2, ids=ids))
    assert report.n == 15
    assert report.changes.added == ("new1", "new2")
    assert report.changes.removed == ("q000", "q001", "q002", "q003", "q004")
    recall = next(c for c in report.checks if c.metric == "recall")
    # means over the shared questions: 5 of 15 at 1.0 before, all 15 after
    assert recall.before == pytest.approx(1 / 3, abs=1e-6)
    assert recall.after == 1.0
    assert recall.status == "improved"
    assert "compared on the 15 questions both runs have" in report.changes.lines()


def test_simultaneous_level_over_gated_metrics() -> None:
    report = compare(_baseline([1.0] * 10), make_result([1.0] * 10))
    assert report.level == pytest.approx(1 - 0.05 / 3)


def test_failure_text_shows_delta_interval_queries_and_command() -> None:
    before = spread(200)
    after = [max(v - 0.5, 0.0) for v in before]
    report = compare(_baseline(before), make_result(after), GateSettings(mode="paired"))
    command = "pytest --chunkeval-update 'tests/test_rag.py::test_x[recursive:200:0]'"
    text = format_failure(
        report,
        test="tests/test_rag.py::test_x[recursive:200:0]",
        path="tests/__chunkeval__/test_rag/test_x[recursive_200_0].json",
        command=command,
    )
    recall = report.checks[0]
    assert f"mean delta {100 * recall.delta:+.2f} points" in text
    assert f"CI [{100 * recall.low:+.2f}, {100 * recall.high:+.2f}]" in text  # type: ignore[operator]
    assert "REGRESSED" in text
    assert "What is question number" in text
    assert "100.00 → 50.00" in text
    assert "simultaneous over 3 metrics" in text
    assert text.splitlines()[-1] == f"  {command}"


def _failure(report: GateReport) -> str:
    return format_failure(report, test="t::x", path="b.json", command="update")


def test_identical_worst_query_blocks_are_printed_once() -> None:
    before = spread(200)
    after = [max(v - 0.5, 0.0) for v in before]
    # make_result: IoU follows precision, so their worst queries read the same
    same = _failure(compare(_baseline(before), make_result(after)))
    assert same.count("got worse the most") == 2
    assert "queries whose precision and iou got worse the most" in same
    other = [v / 20 for v in after]
    differ = _failure(compare(_baseline(before), make_result(after, iou=other)))
    assert differ.count("got worse the most") == 3
    assert "precision and iou" not in differ


def test_a_zero_tolerance_never_prints_a_negative_zero() -> None:
    settings = GateSettings().override(tolerance="*:0", mode="mean")
    report = compare(_baseline([0.5] * 20), make_result([0.4] * 20), settings)
    text = _failure(report)
    assert "recall got worse: 50.00 -> 40.00, beyond the tolerance 0\n" in text
    assert not re.search(r"-0(\.0+)?(?![\d.])", text), text


def test_format_percent_never_shows_minus_zero() -> None:
    assert format_percent(-0.0, 2, signed=True) == "+0.00"
    assert format_percent(-1e-7, 2) == "0.00"
    assert format_percent(-0.01, 2, signed=True) == "-1.00"
    assert str(Tolerance(0.0)) == "0"
    assert str(Tolerance(0.0, relative=True)) == "0%"
    assert str(Tolerance(0.002)) == "-0.002"


def test_improvement_text_has_the_update_hint() -> None:
    before = spread(200)
    report = compare(_baseline(before), make_result([min(v + 0.5, 1) for v in before]))
    text = format_improvement(
        report, test="t::x", command="pytest --chunkeval-update t"
    )
    assert "recall improved" in text
    assert text.endswith("Record the new baseline with: pytest --chunkeval-update t")


def test_the_gate_knows_the_direction_of_every_metric() -> None:
    from pytest_chunkeval.core.metrics import JUDGED_METRICS, METRICS, REL_METRICS

    assert tuple(gate.HIGHER_IS_BETTER) == METRICS + JUDGED_METRICS + REL_METRICS


def test_parsing_options_needs_no_numpy() -> None:
    """The plugin validates tolerances at start-up: that must stay cheap."""
    code = (
        "import sys\n"
        "import pytest_chunkeval.gate.files.baseline\n"
        "import pytest_chunkeval.gate.comparison.compare\n"
        "import pytest_chunkeval.gate.store, pytest_chunkeval.reporting.history\n"
        "from pytest_chunkeval.gate.tolerances import GateSettings\n"
        "GateSettings.from_options('recall:-1%', 'paired', '95%')\n"
        "heavy = [m for m in ('numpy', 'tiktoken') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_session_verdict_line_counts_verdicts() -> None:
    from pytest_chunkeval.gate.comparison.verdicts import headline

    verdicts = {"a": "regressed", "b": "regressed", "c": "improved", "d": "ok"}
    assert headline({**verdicts, "e": "not compared", "f": "noisy"}) == (
        "2 regressions, 1 noisy, 1 improvement, 1 ok, 1 not compared"
    )
    assert headline({}) == ""
