"""The regression gate: each gated metric's verdict against its baseline
(docs/baselines.md, "What a verdict means").

A tolerance is the worsening a metric may show before the gate fails, absolute
(``iou:-0.002``, ``recall:-1pp``) or relative to the baseline mean (``recall:-1%``).
Direction is known per metric (:data:`HIGHER_IS_BETTER`), so "worse" means lower
recall but would mean a higher cost.

``changes`` mode (the default) compares the same questions before and after, and
a per-question change is real unless measured noise explains it
(:mod:`~pytest_chunkeval.gate.noise`). With the changes noise explains set to 0
(the adjusted mean change):

- ``regressed``: the adjusted mean change is below -tolerance;
- ``noisy``: the raw mean change is below -tolerance, the adjusted one is not
  (passes, and names the questions);
- ``improved``: the adjusted mean change is above +tolerance;
- ``ok`` otherwise.

``paired`` mode decides by the seeded paired bootstrap interval of the mean
change (regressed when the whole interval lies beyond the tolerance, improved when
it lies above zero; Bonferroni over the gated metrics); ``mean`` mode by the
difference of the means. In every mode the report names the questions lost
(retrieved in the baseline, missed now, a real change) and carries the sampling
view (:mod:`~pytest_chunkeval.gate.sampling`): the bootstrap interval and the
set's minimum detectable effect.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_chunkeval.errors import DataError
from pytest_chunkeval.gate.baseline import MEAN_DECIMALS, QUERY_DECIMALS
from pytest_chunkeval.gate.changes import BaselineChanges, baseline_changes
from pytest_chunkeval.gate.flips import FLIP_METRICS
from pytest_chunkeval.gate.noise import explain_noise
from pytest_chunkeval.gate.sampling import (
    bootstrap_intervals,
    detectable_points,
    detectable_questions,
    per_metric_level,
)
from pytest_chunkeval.gate.tolerances import HIGHER_IS_BETTER, GateSettings
from pytest_chunkeval.gate.verdicts import (
    IMPROVED,
    NOISY,
    NOT_COMPARED,
    OK,
    REGRESSED,
    GatedMetric,
    num,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from pytest_chunkeval.engine.results import EvalResult, QueryRecord
    from pytest_chunkeval.gate.baseline import Baseline
    from pytest_chunkeval.gate.tolerances import Tolerance

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
RECORDED_BEFORE = "recorded before it existed"


class GateError(DataError):
    """The two sides of a comparison cannot be paired; ``reason`` says why in a
    few words (a report's ``not compared (reason)``)."""

    def __init__(self, message: str, reason: str = "not comparable") -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class ChangedQuery:
    """One query's value of a metric before and after."""

    id: str
    question: str
    doc_id: str
    before: float
    after: float


@dataclass(frozen=True)
class MetricCheck:
    """The verdict on one metric. Deltas are ``after - before`` (raw direction)."""

    metric: str
    tolerance: Tolerance
    before: float
    after: float
    delta: float
    """The mean change: of the per-question changes (``changes``, ``paired``), of
    the means (``mean``)."""
    allowed: float
    status: str  # regressed | noisy | improved | ok | not compared
    n: int
    low: float | None = None  # the bootstrap interval of the mean change
    high: float | None = None
    worst: tuple[ChangedQuery, ...] = ()
    by_group: Mapping[str, float] = field(default_factory=dict)
    changed: int = 0  # queries whose value moved
    worse: tuple[tuple[str, str], ...] = ()
    """Every query whose value got worse: (id, document), worst first."""
    adjusted: float = math.nan
    """``changes`` mode: the mean change with the changes noise explains set to 0."""
    noisy: int = 0
    """Changed questions whose change noise explains."""
    mde: float = math.nan
    """The minimum detectable effect in the metric's units (sampling view)."""
    reason: str = ""
    """Why the metric was not compared."""


@dataclass(frozen=True)
class GateReport:
    """The verdicts of one comparison."""

    checks: tuple[MetricCheck, ...]
    settings: GateSettings
    n: int
    changes: BaselineChanges = field(default_factory=BaselineChanges)
    """What differs besides the metrics (configuration, documents, questions)."""
    noise: Mapping[str, str] = field(default_factory=dict)
    """Changed question id -> the kind of noise that explains its change."""
    lost: tuple[str, ...] = ()
    """Questions retrieved in the baseline (recall > 0) and missed now, a real
    change: named whatever the verdict."""
    mde_questions: int | None = None
    """The sampling view: questions that must be lost in one direction before
    the bootstrap interval can tell (None: not even all of them)."""

    @property
    def regressed(self) -> list[MetricCheck]:
        return [c for c in self.checks if c.status == REGRESSED]

    @property
    def improved(self) -> list[MetricCheck]:
        return [c for c in self.checks if c.status == IMPROVED]

    @property
    def noisy(self) -> list[MetricCheck]:
        return [c for c in self.checks if c.status == NOISY]

    @property
    def passed(self) -> bool:
        return not self.regressed

    @property
    def not_compared(self) -> list[MetricCheck]:
        """Gated metrics the comparison left out (``reason`` says why)."""
        return [c for c in self.checks if c.status == NOT_COMPARED]

    @property
    def verdict(self) -> str:
        """The comparison's verdict: the worst of its metrics' (regressed, noisy,
        improved, ok); ``not compared`` when no metric was."""
        for status in (REGRESSED, NOISY, IMPROVED):
            if any(c.status == status for c in self.checks):
                return status
        if self.checks and len(self.not_compared) == len(self.checks):
            return NOT_COMPARED
        return OK

    @property
    def level(self) -> float:
        """Confidence of each metric's interval (Bonferroni over compared metrics)."""
        compared = len(self.checks) - len(self.not_compared)
        return per_metric_level(self.settings.confidence, compared)


def gated_metrics(report: GateReport) -> tuple[GatedMetric, ...]:
    """The report's checks as :class:`GatedMetric` (NaN becomes None)."""
    return tuple(
        GatedMetric(
            c.metric,
            num(c.before),
            num(c.after),
            num(c.delta),
            num(c.low),
            num(c.high),
            c.status,
            report.settings.confidence,
            adjusted=num(c.adjusted),
            reason=c.reason,
            tolerance=str(c.tolerance),
            allowed=c.allowed,
            changed=c.changed,
            noisy=c.noisy,
            n=c.n,
            mde=num(c.mde),
            mde_questions=report.mde_questions if c.reason == "" else None,
        )
        for c in report.checks
    )


def compare(
    baseline: Baseline, current: EvalResult, settings: GateSettings | None = None
) -> GateReport:
    """Compare ``current`` against ``baseline`` on every gated metric, paired on
    the questions both have (:attr:`GateReport.changes` says what else differs).
    :class:`GateError` when they cannot be compared at all."""
    import numpy as np

    settings = settings or GateSettings()
    changes = baseline_changes(baseline, current)
    if changes.incomparable:
        raise GateError(
            "the numbers cannot be compared: "
            + "; ".join(str(c) for c in changes.incomparable)
            + " (another unit of measurement, so other quantities)",
            "another unit",
        )
    measured = [
        (m, tol)
        for m, tol in settings.gated()
        if m in current.metrics and current.metrics[m].n > 0
    ]
    # A baseline recorded before a metric existed holds no values for it: that
    # metric is reported "not compared", never compared against NaN or zero.
    gated = [(m, tol) for m, tol in measured if m in baseline.metrics]
    absent = [(m, tol) for m, tol in measured if m not in baseline.metrics]
    # Paired on the questions both runs have; the others are listed in changes.
    records = [q for q in current.queries if q.id in baseline.queries]
    if not records:
        raise GateError(
            "no question in common with the baseline ("
            f"{len(baseline.queries)} recorded, {len(current.queries)} now): "
            "the query set was replaced; record a new baseline",
            "no question in common",
        )
    ids = [q.id for q in records]
    before, after = _values(baseline, records, [m for m, _ in gated])
    deltas = after - before
    moved = np.nan_to_num(deltas) != 0
    flip = _flip_metric(baseline, current)
    changed_ids = [
        i
        for row, i in enumerate(ids)
        if moved[row].any() or _flipped(baseline, records[row], flip)
    ]
    noise = explain_noise(baseline, current, changes, changed_ids)
    explained = np.array([i in noise for i in ids], dtype=bool)
    level = per_metric_level(settings.confidence, len(gated))
    low = high = np.full(len(gated), math.nan)
    if settings.mode != "mean":
        low, high = bootstrap_intervals(
            deltas, level, samples=settings.samples, seed=settings.seed
        )
    mde = detectable_questions(len(records), len(gated), settings.confidence)
    subset = bool(changes.added or changes.removed or changes.unplaced)
    checks = [
        _check(
            metric,
            tol,
            _Column(
                before[:, j], after[:, j], explained, float(low[j]), float(high[j])
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
    checks += [
        MetricCheck(
            metric=metric,
            tolerance=tol,
            before=math.nan,
            after=round(current.metrics[metric].mean, MEAN_DECIMALS),
            delta=math.nan,
            allowed=0.0,
            status=NOT_COMPARED,
            n=0,
            reason=RECORDED_BEFORE,
        )
        for metric, tol in absent
    ]
    lost = tuple(
        r.id
        for r in records
        if r.id not in noise and _flipped(baseline, r, flip, lost_only=True)
    )
    return GateReport(
        tuple(checks),
        settings,
        len(records),
        changes,
        {i: noise[i] for i in ids if i in noise},
        lost,
        mde,
    )


@dataclass(frozen=True)
class _Column:
    """One gated metric's per-question values, and which changes noise explains."""

    before: FloatArray
    after: FloatArray
    explained: npt.NDArray[np.bool_]
    low: float
    high: float


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
    before_mean = _nan(baseline.metrics[metric].mean)
    after_mean = round(current.metrics[metric].mean, MEAN_DECIMALS)
    if subset:  # both means over the shared questions, comparable
        before_mean, after_mean = _mean(col.before), _mean(col.after)
    allowed = tol.allowed(before_mean) if not math.isnan(before_mean) else 0.0
    column = col.after - col.before
    finite = ~np.isnan(column)
    moved = finite & (column != 0)
    raw = float(column[finite].mean()) if finite.any() else math.nan
    adjusted = math.nan
    if settings.mode == "mean":
        delta = after_mean - before_mean
        status = _status(sign * delta, sign * delta, -allowed, 0.0)
    elif settings.mode == "paired":
        delta = raw
        g_low, g_high = sorted((sign * col.low, sign * col.high))
        status = _status(g_high, g_low, -allowed, 0.0)
    else:
        delta = raw
        kept = np.where(col.explained, 0.0, column)
        adjusted = float(kept[finite].mean()) if finite.any() else math.nan
        status = _status(sign * adjusted, sign * adjusted, -allowed, allowed)
        if status != REGRESSED and sign * raw < -allowed - _EPS:
            status = NOISY
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
        by_group=_group_means(column, [q.doc_id for q in records]),
        changed=int(moved.sum()),
        worse=tuple((records[i].id, records[i].doc_id) for i in worse),
        adjusted=adjusted,
        noisy=int((moved & col.explained).sum()),
        mde=_nan(detectable_points(mde, n, before_mean)),
    )


def _status(worst: float, best: float, floor: float, ceiling: float) -> str:
    """``regressed`` when ``worst`` is below ``floor``, ``improved`` when
    ``best`` is above ``ceiling``, else ``ok`` (NaN: ok)."""
    if math.isnan(worst):
        return OK
    if worst < floor - _EPS:
        return REGRESSED
    if best > ceiling + _EPS:
        return IMPROVED
    return OK


def _values(
    baseline: Baseline, records: Sequence[QueryRecord], metrics: Sequence[str]
) -> tuple[FloatArray, FloatArray]:
    """Per question and metric, the baseline's and the current values."""
    import numpy as np

    # Python's round, as baseline files are written (np.round differs on exact
    # binary halves such as 0.42125), so an unchanged run has zero deltas.
    after = np.array(
        [[round(q.metric(m), QUERY_DECIMALS) for m in metrics] for q in records],
        dtype=np.float64,
    ).reshape(len(records), len(metrics))
    before = np.array(
        [[_nan(baseline.queries[q.id].get(m)) for m in metrics] for q in records],
        dtype=np.float64,
    ).reshape(len(records), len(metrics))
    return before, after


def _flip_metric(baseline: Baseline, current: EvalResult) -> str | None:
    """The metric that says whether a question was retrieved, if both sides
    hold it (recall, or a relationship result's own)."""
    return next(
        (
            m
            for m in FLIP_METRICS
            if m in current.metrics and any(m in v for v in baseline.queries.values())
        ),
        None,
    )


def _flipped(
    baseline: Baseline, record: QueryRecord, metric: str | None, lost_only: bool = False
) -> bool:
    """Whether the question changed sides (retrieved / missed): lost only, or
    either way."""
    if metric is None:
        return False
    before = _nan(baseline.queries[record.id].get(metric))
    after = record.metric(metric)
    if math.isnan(before) or math.isnan(after):
        return False
    if lost_only:
        return before > 0 and after == 0
    return (before > 0) != (after > 0)


def _mean(column: FloatArray) -> float:
    import numpy as np

    finite = column[~np.isnan(column)]
    return round(float(finite.mean()), MEAN_DECIMALS) if finite.size else math.nan


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _group_means(column: FloatArray, groups: Sequence[str]) -> dict[str, float]:
    import numpy as np

    out: dict[str, float] = {}
    labels = np.asarray(groups, dtype=object)
    for g in sorted(set(groups)):
        values = column[(labels == g) & ~np.isnan(column)]
        if values.size:
            out[g] = float(values.mean())
    return out
