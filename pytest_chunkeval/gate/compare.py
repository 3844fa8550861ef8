"""The regression gate: per-metric tolerances and a paired bootstrap (SPEC §4).

A tolerance is the worsening a metric may show before the gate fails, absolute
(``iou:-0.002``, ``recall:-1pp``) or relative to the baseline mean (``recall:-1%``).
Direction is known per metric (:data:`HIGHER_IS_BETTER`), so "worse" means lower
recall but would mean a higher cost.

``paired`` mode (the default) compares the same queries before and after: the
per-query deltas are resampled (a seeded bootstrap, so a verdict never flips
between two runs of the same code) into a confidence interval of the mean delta.
A metric fails only when the whole interval lies beyond the tolerance, and improves
only when the whole interval lies above zero. With several metrics gated, the
intervals are simultaneous (Bonferroni): at 95% confidence, runs that differ by
noise alone fail at most about 5% of the time whatever the number of metrics.
``mean`` mode compares the two means against the tolerance, nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_chunkeval.errors import DataError
from pytest_chunkeval.gate.baseline import MEAN_DECIMALS, QUERY_DECIMALS
from pytest_chunkeval.gate.changes import BaselineChanges, baseline_changes
from pytest_chunkeval.gate.tolerances import (
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    HIGHER_IS_BETTER,
    GateSettings,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.baseline import Baseline
    from pytest_chunkeval.gate.tolerances import Tolerance

    FloatArray = npt.NDArray[np.float64]

_BLOCK_CELLS = 2_000_000  # resample indices drawn at once (bounds memory)


def bootstrap_intervals(
    values: npt.ArrayLike | Sequence[Sequence[float]],
    level: float,
    *,
    samples: int = DEFAULT_SAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[FloatArray, FloatArray]:
    """Percentile bootstrap intervals of the column means of ``values`` (n, m).

    All columns share the same resamples (the same queries drawn), so metrics stay
    paired with each other. NaN cells are left out of their column's mean. The
    resamples are drawn as one index matrix per block (no Python loop over them).
    """
    import numpy as np

    data = np.asarray(values, dtype=np.float64)
    if data.ndim == 1:
        data = data[:, None]
    n, m = data.shape
    if n == 0:
        nan = np.full(m, math.nan)
        return nan, nan.copy()
    if samples < 1:
        raise ValueError(f"samples must be positive, got {samples}")
    if not np.any(data):  # nothing moved: the interval is exactly [0, 0]
        return np.zeros(m), np.zeros(m)
    valid = ~np.isnan(data)
    filled = np.where(valid, data, 0.0)
    partial = np.asarray(~valid.all(axis=0), dtype=bool)
    # Small index types draw and gather several times faster.
    index_type = np.int16 if n <= np.iinfo(np.int16).max else np.int64
    rng = np.random.default_rng(seed)
    means = np.empty((samples, m))
    block = max(1, _BLOCK_CELLS // n)
    for start in range(0, samples, block):
        size = min(block, samples - start)
        draws = rng.integers(0, n, size=(size, n), dtype=index_type)
        for j in range(m):
            sums = filled[:, j][draws].sum(axis=1)
            if partial[j]:
                with np.errstate(invalid="ignore", divide="ignore"):
                    sums /= valid[:, j][draws].sum(axis=1)
            else:
                sums /= n
            means[start : start + size, j] = sums
    alpha = 1.0 - level
    with np.errstate(invalid="ignore"):
        low = np.nanquantile(means, alpha / 2, axis=0)
        high = np.nanquantile(means, 1 - alpha / 2, axis=0)
    return np.asarray(low, np.float64), np.asarray(high, np.float64)


class GateError(DataError):
    """The two sides of a comparison cannot be paired."""


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
    allowed: float
    status: str  # "ok" | "regressed" | "improved" | "not compared"
    n: int
    low: float | None = None  # interval of the mean delta (paired mode)
    high: float | None = None
    worst: tuple[ChangedQuery, ...] = ()
    by_group: Mapping[str, float] = field(default_factory=dict)
    changed: int = 0  # queries whose value moved
    worse: tuple[tuple[str, str], ...] = ()
    """Every query whose value got worse: (id, document), worst first."""


@dataclass(frozen=True)
class GateReport:
    """The verdicts of one comparison."""

    checks: tuple[MetricCheck, ...]
    settings: GateSettings
    n: int
    changes: BaselineChanges = field(default_factory=BaselineChanges)
    """What differs besides the metrics (configuration, documents, questions)."""

    @property
    def regressed(self) -> list[MetricCheck]:
        return [c for c in self.checks if c.status == "regressed"]

    @property
    def improved(self) -> list[MetricCheck]:
        return [c for c in self.checks if c.status == "improved"]

    @property
    def passed(self) -> bool:
        return not self.regressed

    @property
    def not_compared(self) -> list[MetricCheck]:
        """Gated metrics the baseline does not hold (recorded before they existed)."""
        return [c for c in self.checks if c.status == "not compared"]

    @property
    def level(self) -> float:
        """Confidence of each metric's interval (Bonferroni over compared metrics)."""
        compared = len(self.checks) - len(self.not_compared)
        return per_metric_level(self.settings.confidence, compared)


def per_metric_level(confidence: float, metrics: int) -> float:
    """Each interval's level so that ``metrics`` of them hold jointly."""
    return 1.0 - (1.0 - confidence) / max(metrics, 1)


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
            + " (another unit of measurement, so other quantities)"
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
            "the query set was replaced; record a new baseline"
        )
    subset = bool(changes.added or changes.removed or changes.unplaced)
    ids = [q.id for q in records]
    # Python's round, as baseline files are written (np.round differs on exact
    # binary halves such as 0.42125), so an unchanged run has zero deltas.
    after = np.array(
        [[round(q.metric(m), QUERY_DECIMALS) for m, _ in gated] for q in records],
        dtype=np.float64,
    ).reshape(len(records), len(gated))
    before = np.array(
        [[_nan(baseline.queries.get(i, {}).get(m)) for m, _ in gated] for i in ids],
        dtype=np.float64,
    ).reshape(len(records), len(gated))
    deltas = after - before
    level = per_metric_level(settings.confidence, len(gated))
    if settings.mode == "paired":
        low, high = bootstrap_intervals(
            deltas, level, samples=settings.samples, seed=settings.seed
        )
    checks = []
    for j, (metric, tol) in enumerate(gated):
        sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
        before_mean = (
            _nan(baseline.metrics[metric].mean)
            if metric in (baseline.metrics)
            else math.nan
        )
        after_mean = round(current.metrics[metric].mean, MEAN_DECIMALS)
        if subset:  # both means over the shared questions, comparable
            before_mean = _mean(before[:, j])
            after_mean = _mean(after[:, j])
        allowed = tol.allowed(before_mean) if not math.isnan(before_mean) else 0.0
        column = deltas[:, j]
        finite = ~np.isnan(column)
        gains = sign * column
        if settings.mode == "paired":
            delta = float(column[finite].mean()) if finite.any() else math.nan
            g_low, g_high = sorted((sign * float(low[j]), sign * float(high[j])))
            ci: tuple[float | None, float | None] = (float(low[j]), float(high[j]))
        else:
            delta = after_mean - before_mean
            g_low = g_high = sign * delta
            ci = (None, None)
        eps = 1e-12
        if math.isnan(g_high):
            status = "ok"
        elif g_high < -allowed - eps:
            status = "regressed"
        elif g_low > eps:
            status = "improved"
        else:
            status = "ok"
        order = np.argsort(np.where(finite, gains, np.inf), kind="stable")
        worst = tuple(
            ChangedQuery(
                records[i].id,
                records[i].question,
                records[i].doc_id,
                float(before[i, j]),
                float(after[i, j]),
            )
            for i in order[: settings.worst].tolist()
            if finite[i] and gains[i] < 0
        )
        checks.append(
            MetricCheck(
                metric=metric,
                tolerance=tol,
                before=before_mean,
                after=after_mean,
                delta=delta,
                allowed=allowed,
                status=status,
                n=int(finite.sum()),
                low=ci[0],
                high=ci[1],
                worst=worst,
                by_group=_group_means(column, [q.doc_id for q in records]),
                changed=int(np.count_nonzero(column[finite])),
                worse=tuple(
                    (records[i].id, records[i].doc_id)
                    for i in order.tolist()
                    if finite[i] and gains[i] < 0
                ),
            )
        )
    checks += [
        MetricCheck(
            metric=metric,
            tolerance=tol,
            before=math.nan,
            after=round(current.metrics[metric].mean, MEAN_DECIMALS),
            delta=math.nan,
            allowed=0.0,
            status="not compared",
            n=0,
        )
        for metric, tol in absent
    ]
    return GateReport(tuple(checks), settings, len(records), changes)


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
