"""The regression gate: each gated metric's verdict against its baseline
(docs/baselines.md, "What a verdict means").

A tolerance is the worsening a metric may show before the gate fails, absolute
(``iou:-0.002``, ``recall:-1pp``) or relative to the baseline mean (``recall:-1%``).
Direction is known per metric (:data:`HIGHER_IS_BETTER`), so "worse" means lower
recall but would mean a higher cost.

``changes`` mode (the default) compares the same questions before and after.
Noise widens the margin a drop must clear, it never removes a question's change
from the mean: with ``delta`` the mean over the questions of (now - baseline),
nothing set to 0 but the changes float drift explains
(:mod:`~pytest_chunkeval.gate.comparison.drift`), ``SE`` its standard error from the
repeats of noisy components (:mod:`~pytest_chunkeval.gate.comparison.noise`; 0 when
neither run found noise) and ``z`` the one-sided normal quantile at the gate's
confidence, Bonferroni over the gated metrics, the first that matches:

- ``regressed``: ``delta < -tolerance - z * SE``;
- ``noisy``: ``delta < -tolerance`` (within the noise: passes, named with its
  SE and the repeats that measured it);
- ``improved``: ``delta > +tolerance + z * SE``;
- ``ok``.

``paired`` mode decides by the seeded paired bootstrap interval of the mean
change (regressed when the whole interval lies beyond the tolerance, improved when
it lies above zero; Bonferroni over the gated metrics); ``mean`` mode by the
difference of the means. In every mode the report names the questions lost
(retrieved in the baseline, missed now in every repeat) and carries the sampling
view (:mod:`~pytest_chunkeval.gate.comparison.sampling`): the bootstrap interval and the
set's minimum detectable effect, information only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_chunkeval.config.tolerances import HIGHER_IS_BETTER, Tolerance
from pytest_chunkeval.core.absent import nan_if_absent
from pytest_chunkeval.core.metric_names import RANK, names
from pytest_chunkeval.gate.comparison.changes import baseline_changes
from pytest_chunkeval.gate.comparison.drift import explain_drift
from pytest_chunkeval.gate.comparison.groups import documents_and_tags
from pytest_chunkeval.gate.comparison.integrity import NOT_GATED, Standing, standing
from pytest_chunkeval.gate.comparison.noise import (
    baseline_side,
    cell_variances,
    current_side,
    repeats_text,
    standard_error,
    z_value,
)
from pytest_chunkeval.gate.comparison.paired_values import (
    changed_questions,
    column_mean,
    flip_metric,
    flipped,
    group_means,
    mean_of,
    question_values,
)
from pytest_chunkeval.gate.comparison.report import (
    ChangedQuery,
    GateError,
    GateReport,
    MetricCheck,
    gated_metrics,
)
from pytest_chunkeval.gate.comparison.sampling import (
    bootstrap_intervals,
    detectable_points,
    detectable_questions,
    per_metric_level,
)
from pytest_chunkeval.gate.comparison.verdicts import (
    IMPROVED,
    NOISY,
    NOT_COMPARED,
    OK,
    REGRESSED,
    GroupDrop,
)
from pytest_chunkeval.gate.files.recording import MEAN_DECIMALS
from pytest_chunkeval.gate.tolerances import GateSettings

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from pytest_chunkeval.engine.results import EvalResult, QueryRecord
    from pytest_chunkeval.gate.comparison.changes import BaselineChanges
    from pytest_chunkeval.gate.files.baseline import Baseline

    FloatArray = npt.NDArray[np.float64]

__all__ = [
    "HIGHER_IS_BETTER",
    "ChangedQuery",
    "GateError",
    "GateReport",
    "MetricCheck",
    "bootstrap_intervals",
    "compare",
    "gated_metrics",
    "per_metric_level",
]

_EPS = 1e-12
RANK_METRICS = names(RANK)


def compare(
    baseline: Baseline, current: EvalResult, settings: GateSettings | None = None
) -> GateReport:
    """Compare ``current`` against ``baseline`` on every gated metric, paired on
    the questions both have (:attr:`GateReport.changes` says what else differs).
    :class:`GateError` when they cannot be compared at all. The repeats a
    comparison needs (a retriever the baseline found noisy, confirm before
    failing) are asked for by its caller (gate/comparison/repeats.py)."""
    import numpy as np

    settings = settings or GateSettings()
    changes = baseline_changes(baseline, current)
    records = _paired(baseline, current, changes)
    if not records:  # every shared question left out
        return GateReport((), settings, 0, changes)
    gated, absent = _standings(baseline, current, records, settings)
    ids = [q.id for q in records]
    before, after = question_values(baseline, records, [m for m, _ in gated])
    deltas = after - before
    flip = flip_metric(baseline, current)
    changed_ids = changed_questions(baseline, records, deltas, flip)
    rank = any(m in RANK_METRICS for m, _ in gated)
    noise = explain_drift(baseline, current, changes, changed_ids, order=rank)
    explained = np.array([i in noise for i in ids], dtype=bool)
    sides = baseline_side(baseline), current_side(current)
    cells = cell_variances(*sides, records, [m for m, _ in gated])
    z = z_value(settings.confidence, len(gated))
    level = per_metric_level(settings.confidence, len(gated))
    low = high = np.full(len(gated), math.nan)
    if settings.mode != "mean":
        low, high = bootstrap_intervals(
            deltas, level, samples=settings.samples, seed=settings.seed
        )
    mde = detectable_questions(len(records), len(gated), settings.confidence)
    subset = bool(changes.added or changes.removed or changes.left_out)
    checks = [
        _check(
            metric,
            tol,
            _Column(
                before[:, j],
                after[:, j],
                explained,
                float(low[j]),
                float(high[j]),
                cells[:, j],
                z,
                len(gated),
            ),
            baseline,
            current,
            records,
            settings,
            subset=subset,
            mde=mde,
        )
        for j, (metric, tol) in enumerate(gated)
    ]
    checks += _not_compared(baseline, current, absent)
    lost = tuple(
        r.id
        for r in records
        if r.id not in noise and flipped(baseline, r, flip, lost_only=True)
    )
    return GateReport(
        tuple(checks),
        settings,
        len(records),
        changes,
        {i: noise[i] for i in ids if i in noise},
        lost,
        mde,
        repeats=tuple(
            f"{who}: {text}"
            for who, side in zip(("baseline", "now"), sides, strict=True)
            if (text := repeats_text(side))
        ),
    )


def _paired(
    baseline: Baseline, current: EvalResult, changes: BaselineChanges
) -> list[QueryRecord]:
    """The current records of the questions both runs have, unless edited
    under the same id; empty when every shared question was left out;
    :class:`GateError` when the two cannot be compared at all."""
    if changes.incomparable:
        raise GateError(
            "the numbers cannot be compared: "
            + "; ".join(str(c) for c in changes.incomparable)
            + " (another unit of measurement, so other quantities)",
            "another unit",
        )
    shared = baseline.queries.keys() - set(changes.edited)
    records = [q for q in current.queries if q.id in shared]
    if not records and not set(changes.left_out) - set(changes.removed):
        # every baseline question removed: the set was replaced
        raise GateError(
            "no question in common with the baseline ("
            f"{len(baseline.queries)} recorded, {len(current.queries)} now): "
            "the query set was replaced; record a new baseline",
            "no question in common",
        )
    return records


def _not_compared(
    baseline: Baseline,
    current: EvalResult,
    absent: Sequence[tuple[str, Tolerance, Standing]],
) -> list[MetricCheck]:
    """The checks of the gated metrics that are not compared, with why."""
    return [
        MetricCheck(
            metric=metric,
            tolerance=tol,
            before=mean_of(baseline, metric),
            after=mean_of(current, metric),
            delta=math.nan,
            allowed=0.0,
            status=NOT_COMPARED,
            n=0,
            reason=found.reason,
            fails_check=found.fails,
        )
        for metric, tol, found in absent
    ]


def _standings(
    baseline: Baseline,
    current: EvalResult,
    records: list[QueryRecord],
    settings: GateSettings,
) -> tuple[list[tuple[str, Tolerance]], list[tuple[str, Tolerance, Standing]]]:
    """The gated metrics compared on ``records``, and those that are not (with
    why: gate/comparison/integrity.py)."""
    gated: list[tuple[str, Tolerance]] = []
    absent: list[tuple[str, Tolerance, Standing]] = []
    for metric, tol in settings.gated():
        found = standing(metric, baseline, current, records)
        if found is None:
            gated.append((metric, tol))
        elif found is not NOT_GATED:
            absent.append((metric, tol, found))
    return gated, absent


@dataclass(frozen=True)
class _Column:
    """One gated metric's per-question values, which changes float drift
    explains, and each question's share of the mean change's variance."""

    before: FloatArray
    after: FloatArray
    explained: npt.NDArray[np.bool_]
    low: float
    high: float
    cells: FloatArray
    z: float
    metrics: int = 1
    """How many metrics are gated (the groups' minimum detectable effect)."""


def _check(
    metric: str,
    tol: Tolerance,
    col: _Column,
    baseline: Baseline,
    current: EvalResult,
    records: Sequence[QueryRecord],
    settings: GateSettings,
    *,
    subset: bool,
    mde: int | None,
) -> MetricCheck:
    """One metric's verdict under ``settings.mode``."""
    import numpy as np

    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    before_mean = nan_if_absent(baseline.metrics[metric].mean)
    after_mean = round(current.metrics[metric].mean, MEAN_DECIMALS)
    if subset:  # both means over the shared questions, comparable
        before_mean, after_mean = column_mean(col.before), column_mean(col.after)
    allowed = tol.allowed(before_mean) if not math.isnan(before_mean) else 0.0
    column = col.after - col.before
    finite = ~np.isnan(column)
    moved = finite & (column != 0)
    raw = float(column[finite].mean()) if finite.any() else math.nan
    se = math.nan
    counted = column
    if settings.mode == "mean":
        delta = after_mean - before_mean
        status = interval_status(sign * delta, sign * delta, -allowed, 0.0)
    elif settings.mode == "paired":
        delta = raw
        g_low, g_high = sorted((sign * col.low, sign * col.high))
        status = interval_status(g_high, g_low, -allowed, 0.0)
    else:
        counted = np.where(col.explained, 0.0, column)  # drift alone not counted
        delta = float(counted[finite].mean()) if finite.any() else math.nan
        se = standard_error(col.cells, finite)
        status = decide(sign * delta, allowed, col.z * se)
    groups = _groups(counted, col, baseline, records, sign, tol, settings)
    whole = ""  # a document (tag) beyond its own tolerance fails the check
    if status != REGRESSED and any(g.kind in settings.group_kinds for g in groups):
        whole, status = status, REGRESSED
    gains = sign * column
    order = np.argsort(np.where(finite, gains, np.inf), kind="stable")
    worse = [i for i in order.tolist() if finite[i] and gains[i] < 0]
    n = int(finite.sum())
    return MetricCheck(
        metric=metric,
        tolerance=tol,
        before=before_mean,
        after=after_mean,
        delta=delta,
        allowed=allowed,
        status=status,
        n=n,
        low=None if settings.mode == "mean" else col.low,
        high=None if settings.mode == "mean" else col.high,
        worst=tuple(
            ChangedQuery(
                records[i].id,
                records[i].question,
                records[i].doc_id,
                float(col.before[i]),
                float(col.after[i]),
            )
            for i in worse[: settings.worst]
        ),
        by_group=group_means(column, [q.doc_id for q in records]),
        changed=int(moved.sum()),
        worse=tuple((records[i].id, records[i].doc_id) for i in worse),
        drift=int((moved & col.explained).sum()),
        se=se,
        hides=allowed + col.z * se if not math.isnan(se) else math.nan,
        mde=nan_if_absent(detectable_points(mde, n, before_mean)),
        groups=groups,
        whole=whole,
    )


def _groups(
    counted: FloatArray,
    col: _Column,
    baseline: Baseline,
    records: Sequence[QueryRecord],
    sign: float,
    tol: Tolerance,
    settings: GateSettings,
) -> tuple[GroupDrop, ...]:
    """The documents and tags beyond their own tolerance (groups.py)."""
    return documents_and_tags(
        counted,
        col.before,
        col.cells,
        records,
        baseline.questions,
        sign=sign,
        tolerance=tol,
        z=col.z,
        metrics=col.metrics,
        confidence=settings.confidence,
    )


def decide(gain: float, allowed: float, noise: float) -> str:
    """The ``changes`` verdict of a mean change signed so that positive is
    better (``gain``), against the tolerance ``allowed`` and the margin the
    noise adds (``z * SE``), the first that matches: ``regressed`` beyond both,
    ``noisy`` beyond the tolerance only, ``improved`` above both, ``ok``."""
    if math.isnan(gain):
        return OK
    if gain < -allowed - noise - _EPS:
        return REGRESSED
    if gain < -allowed - _EPS:
        return NOISY
    if gain > allowed + noise + _EPS:
        return IMPROVED
    return OK


def interval_status(worst: float, best: float, floor: float, ceiling: float) -> str:
    """``regressed`` when ``worst`` is below ``floor``, ``improved`` when
    ``best`` is above ``ceiling``, else ``ok`` (NaN: ok): the ``paired`` and
    ``mean`` modes' verdict."""
    if math.isnan(worst):
        return OK
    if worst < floor - _EPS:
        return REGRESSED
    if best > ceiling + _EPS:
        return IMPROVED
    return OK
