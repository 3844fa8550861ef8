"""The decision of docs/baselines.md "What a verdict means" (issue 30): the raw
mean change, nothing set to 0 but float drift's; its SE from the repeats of
noisy components by the rules for each side; z Bonferroni over the gated
metrics; the verdict order. And float drift: only on the baseline's margin,
with nothing changed, and with the swap checked against the recorded ranks."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from support.fake_results import make_result

from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.gate.comparison.compare import (
    GateReport,
    MetricCheck,
    compare,
    decide,
)
from pytest_chunkeval.gate.comparison.drift import swapped_within
from pytest_chunkeval.gate.comparison.noise import z_value
from pytest_chunkeval.gate.files.baseline import Baseline
from pytest_chunkeval.gate.outcome.messages import format_pass, report_table
from pytest_chunkeval.gate.tolerances import GateSettings

RECALL_ONLY = GateSettings.from_options(tolerance="recall:-1pp")
EPS = 1e-5


def _recall(report: GateReport) -> MetricCheck:
    return next(c for c in report.checks if c.metric == "recall")


def _repeated(
    result: EvalResult,
    variances: dict[str, float],
    r: int,
    noise: dict[str, Any] | None = None,
) -> EvalResult:
    """``result`` as a run that found its retriever noisy and repeated the
    questions of ``variances`` (id -> recall variance) ``r`` times."""
    result.queries = [
        dataclasses.replace(
            q, repeats={"recall": (q.scores["recall"], variances[q.id], r)}
        )
        if q.id in variances
        else q
        for q in result.queries
    ]
    result.noise = noise or {"noisy": ["retriever"], "repeats": r}
    return result


def _recorded(result: EvalResult) -> Baseline:
    """The baseline of ``result``, with its repeats."""
    return Baseline.from_result(result, "test_x")


def test_z_is_the_one_sided_quantile_bonferroni_over_the_gated_metrics() -> None:
    assert z_value(0.95, 3) == pytest.approx(2.128, abs=1e-3)
    assert z_value(0.95, 1) == pytest.approx(1.645, abs=1e-3)
    assert z_value(0.99, 2) == pytest.approx(2.576, abs=1e-3)


def test_the_verdicts_in_their_order() -> None:
    tol, noise = 0.01, 0.05
    assert decide(-0.07, tol, noise) == "regressed"  # beyond both
    assert decide(-0.05, tol, noise) == "noisy"  # beyond the tolerance only
    assert decide(-0.005, tol, noise) == "ok"
    assert decide(0.05, tol, noise) == "ok"  # within the noise upward
    assert decide(0.07, tol, noise) == "improved"
    # Without noise every drop beyond the tolerance is regressed.
    assert decide(-0.011, tol, 0.0) == "regressed"
    assert decide(0.011, tol, 0.0) == "improved"
    assert decide(math.nan, tol, 0.0) == "ok"


def test_a_deterministic_pipeline_has_no_se_every_drop_beyond_tolerance_fails() -> None:
    before = make_result([1.0] * 40)
    after = make_result([1.0] * 39 + [0.5])  # -1.25 points
    recall = _recall(compare(_recorded(before), after, RECALL_ONLY))
    assert (recall.status, recall.se) == ("regressed", 0.0)
    assert recall.delta == pytest.approx(-0.5 / 40)


def test_se_uses_each_sides_own_variance_where_it_repeated() -> None:
    n = 20
    base = _repeated(make_result([0.5] * n), {f"q{i:03d}": 0.04 for i in range(n)}, 5)
    now = _repeated(make_result([0.45] * n), {f"q{i:03d}": 0.09 for i in range(n)}, 4)
    recall = _recall(compare(_recorded(base), now, RECALL_ONLY))
    se = math.sqrt(n * (0.09 / 4 + 0.04 / 5)) / n
    assert recall.se == pytest.approx(se, rel=1e-4)
    assert recall.delta == pytest.approx(-0.05)  # nothing set to 0
    assert recall.hides == pytest.approx(0.01 + z_value(0.95, 1) * se, rel=1e-4)


def test_a_question_asked_once_in_a_noisy_run_takes_its_mean_variance() -> None:
    n = 20
    sample = {f"q{i:03d}": 0.08 for i in range(5)}  # 5 of 20 repeated
    noise = {"noisy": ["retriever"], "mean_variance": {"recall": 0.06}}
    now = _repeated(make_result([0.5] * n), sample, 4, noise)
    recall = _recall(compare(_recorded(make_result([0.5] * n)), now, RECALL_ONLY))
    # the baseline found nothing: each question takes the current side's v, r=1
    own = 5 * (0.08 / 4 + 0.08) + 15 * (0.06 + 0.06)
    assert recall.se == pytest.approx(math.sqrt(own) / n, rel=1e-4)


def test_a_side_that_found_no_noise_takes_the_other_sides_variance() -> None:
    n = 20
    base = _repeated(make_result([0.5] * n), {f"q{i:03d}": 0.1 for i in range(n)}, 4)
    recorded = _recorded(base)
    assert recorded.questions["q000"]["var"] == {"recall": 0.1}
    assert recorded.questions["q000"]["r"] == 4
    now = make_result([0.5] * n)  # the noise did not show this time
    recall = _recall(compare(recorded, now, RECALL_ONLY))
    assert recall.se == pytest.approx(math.sqrt(n * (0.1 / 4 + 0.1)) / n, rel=1e-4)
    # and neither: 0
    plain = _recall(compare(_recorded(make_result([0.5] * n)), now, RECALL_ONLY))
    assert plain.se == 0.0


def test_a_store_rebuilt_into_the_same_rankings_reports_no_noise() -> None:
    # Chroma rebuilt 3 times, no ranking differed ("noisy": []): its variances
    # are float residue. Before, SE came out 1e-18 and the reports said
    # "noise measured: recall SE 0.00 (a drop up to -1.00 could hide)".
    from pytest_chunkeval.gate.comparison.report import gated_metrics
    from pytest_chunkeval.reporting.gate_report import noise_line

    n = 20
    rebuilt = {"noisy": [], "repeats": 3}
    residue = {f"q{i:03d}": 1.0e-35 for i in range(n)}
    base = _repeated(make_result([0.5] * n), residue, 3, dict(rebuilt))
    now = _repeated(make_result([0.5] * (n - 1) + [0.0]), residue, 3, dict(rebuilt))
    report = compare(_recorded(base), now, RECALL_ONLY)
    assert _recall(report).se == 0.0
    assert noise_line(gated_metrics(report)) == ""
    row = report_table(report).splitlines()[2].split()
    assert row[4:6] == ["0.00", "-"]  # SE, could hide: the tolerance alone


def test_a_flaky_and_worse_retriever_regresses_a_flaky_one_as_good_is_noisy() -> None:
    n = 36
    var = {f"q{i:03d}": 0.25 for i in range(n)}  # right half the time
    base = _recorded(_repeated(make_result([0.5] * n), dict(var), 8))
    worse = _repeated(make_result([0.02] * n), dict(var), 8)
    recall = _recall(compare(base, worse, RECALL_ONLY))
    assert recall.status == "regressed"
    assert recall.delta == pytest.approx(-0.48)
    # within the noise: a drop of 5 points on SE sqrt(36 * 2 * 0.25 / 8) / 36
    same = _repeated(make_result([0.45] * n), dict(var), 8)
    check = _recall(compare(base, same, RECALL_ONLY))
    assert check.se == pytest.approx(math.sqrt(n * 0.0625) / n, rel=1e-4)
    assert check.status == "noisy"
    report = compare(base, same, RECALL_ONLY)
    assert report.passed
    text = format_pass(report, test="t.py::x", command="pytest --chunkeval-update")
    assert "recall noisy: mean delta -5.00 points" in text, text
    assert "SE 4.17 points" in text, text
    assert "a drop up to -7.85 points could hide in the measured noise" in text
    assert "baseline: retriever noisy: 8 repeats" in text, text
    table = report_table(report)
    assert "could hide" in table, table
    assert "-7.85" in table, table


def test_a_lost_question_is_one_lost_in_every_repeat() -> None:
    base = make_result([1.0] * 200)
    now = _repeated(make_result([1.0] * 199 + [0.25]), {"q199": 0.1875}, 4)
    assert compare(_recorded(base), now, RECALL_ONLY).lost == ()
    gone = make_result([1.0] * 199 + [0.0])
    assert compare(_recorded(base), gone, RECALL_ONLY).lost == ("q199",)


# -- float drift --------------------------------------------------------------


def _top(*ranks: tuple[str, float]) -> list[list[Any]]:
    return [[h, s] for h, s in ranks]


BASE_TOP = _top(("a", 0.9), ("b", 0.8), ("c", 0.700004), ("d", 0.7))


def test_a_swap_within_eps_of_the_current_kth_score_is_drift() -> None:
    old = {"top": BASE_TOP, "k": 3, "eps": EPS}
    now = {"top": _top(("a", 0.9), ("b", 0.8), ("d", 0.700003), ("c", 0.700001))}
    assert swapped_within(old, {**now, "k": 3}, EPS, order=False)
    # beyond eps: not drift
    far = _top(("a", 0.9), ("b", 0.8), ("d", 0.72), ("c", 0.700001))
    assert not swapped_within(old, {"top": far, "k": 3}, EPS, order=False)
    # a chunk that left now scores out of the recorded ranks: unchecked, not drift
    gone = _top(("a", 0.9), ("b", 0.8), ("d", 0.700003), ("e", 0.700002))
    assert not swapped_within(old, {"top": gone, "k": 3}, EPS, order=False)
    # nothing swapped: the change is not the ranking's
    assert not swapped_within(old, {"top": BASE_TOP, "k": 3}, EPS, order=False)
    # another depth, or no ranks recorded now: not drift
    assert not swapped_within(old, {**now, "k": 2}, EPS, order=False)
    assert not swapped_within(old, {"k": 3}, EPS, order=False)


def test_for_a_rank_metric_a_reorder_inside_the_top_k_is_checked_too() -> None:
    old = {"top": _top(("a", 0.9), ("b", 0.899999), ("c", 0.5)), "k": 2}
    near = {"top": _top(("b", 0.9), ("a", 0.899998), ("c", 0.5)), "k": 2}
    assert swapped_within(old, near, EPS, order=True)
    assert not swapped_within(old, near, EPS, order=False)  # the same set
    far = {"top": _top(("b", 0.95), ("a", 0.9), ("c", 0.5)), "k": 2}
    assert not swapped_within(old, far, EPS, order=True)


def _with_evidence(
    result: EvalResult, evidence: dict[str, dict[str, Any]]
) -> EvalResult:
    result.queries = [
        dataclasses.replace(q, evidence=evidence.get(q.id, q.evidence))
        for q in result.queries
    ]
    return result


def _drifting(base_margin: float, now_top: list[list[Any]]) -> tuple[Baseline, Any]:
    """A 19-question baseline whose q018 had ``base_margin`` and ranks
    BASE_TOP, and a run whose q018 lost its answer with ranks ``now_top``."""
    recorded = {
        "found": "f0",
        "margin": base_margin,
        "top": BASE_TOP,
        "k": 3,
        "eps": EPS,
    }
    base = _with_evidence(make_result([1.0] * 19), {"q018": recorded})
    baseline = Baseline.from_result(base, "test_x")
    now_evidence = {"found": "f1", "margin": 1e-6, "top": now_top, "k": 3, "eps": EPS}
    now = _with_evidence(make_result([1.0] * 18 + [0.0]), {"q018": now_evidence})
    return baseline, now


def test_a_checked_near_tie_of_the_baseline_is_drift_and_not_counted() -> None:
    swapped = _top(("a", 0.9), ("b", 0.8), ("d", 0.700003), ("c", 0.700001))
    baseline, now = _drifting(4e-6, swapped)
    assert baseline.questions["q018"]["top"] == BASE_TOP
    report = compare(baseline, now, RECALL_ONLY)
    assert report.noise == {"q018": "drift"}
    assert (_recall(report).status, _recall(report).delta) == ("ok", 0.0)
    assert report.lost == ()
    text = format_pass(report, test="t.py::x", command="c")
    assert "changes float drift explains, not counted (1" in text, text
    # the same swap under another configuration is a change
    now.config = {**now.config, "chunker": "recursive:300:0"}
    assert _recall(compare(baseline, now, RECALL_ONLY)).status == "regressed"


def test_only_the_baselines_margin_counts_never_the_current_runs() -> None:
    # A broken embedder (constant vectors) makes every current margin zero:
    # the baseline's margin was clear, so the change is counted.
    constant = _top(("d", 0.5), ("c", 0.5), ("b", 0.5), ("a", 0.5))
    baseline, now = _drifting(0.1, constant)
    now.queries[-1] = dataclasses.replace(
        now.queries[-1], evidence={"found": "f1", "margin": 0.0, "order": 0.0}
    )
    report = compare(baseline, now, RECALL_ONLY)
    assert report.noise == {}
    assert _recall(report).status == "regressed"
    assert report.lost == ("q018",)
    # a near tie in the baseline whose swap is not within eps: counted too
    baseline, now = _drifting(4e-6, _top(("a", 0.9), ("b", 0.8), ("d", 0.75)))
    assert _recall(compare(baseline, now, RECALL_ONLY)).status == "regressed"


def test_a_near_tie_records_its_ranks_and_every_text_tied_at_rank_k() -> None:
    import numpy as np

    from pytest_chunkeval.engine.evidence import noise_evidence
    from pytest_chunkeval.engine.retrieve import RetrievalInputs
    from pytest_chunkeval.stores._base import Retrieval
    from pytest_chunkeval.stores.exact import ExactStore

    texts = ["a", "b", "c", "d", "e", "f"]
    inputs = RetrievalInputs(chunk_texts=texts, query_texts=["near", "clear"])
    rows = np.array([[0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5]], dtype=np.int64)
    scores = np.array(
        [[0.9, 0.8, 0.7, 0.7, 0.7, 0.1], [0.95, 0.7, 0.45, 0.2, -0.05, -0.3]],
        dtype=np.float64,
    )
    reference = Retrieval(rows, scores=scores)
    found = Retrieval(rows[:, :2], scores=scores[:, :2])
    fetch = depth = np.array([2, 2], dtype=np.int64)
    near, clear = noise_evidence(
        ExactStore(), inputs, found, reference, fetch, depth, epsilon=0.2
    )
    assert (near["k"], near["eps"]) == (2, 0.2)
    # ranks 1-3 (k + 1), then every rank within eps of the k-th score (0.8)
    assert [s for _, s in near["top"]] == [0.9, 0.8, 0.7, 0.7, 0.7]
    assert "top" not in clear  # every gap at least eps
    tight = noise_evidence(
        ExactStore(), inputs, found, reference, fetch, depth, epsilon=1e-5
    )
    assert all("top" not in e for e in tight)  # no margin below eps
