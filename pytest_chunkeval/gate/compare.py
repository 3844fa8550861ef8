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

import argparse
import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.baseline import Baseline

    FloatArray = npt.NDArray[np.float64]

# Only the standard library at import time: the plugin parses tolerances at start-up
# and must not pay for numpy there. numpy is imported where the gate computes.

HIGHER_IS_BETTER: dict[str, bool] = {
    "recall": True,
    "precision": True,
    "iou": True,
    "f1": True,
    "precision_omega": True,
}
"""Direction of each metric the gate knows (every one of ``metrics.METRICS``)."""

# F1 is a monotone function of IoU query by query, and precision_omega measures the
# chunking alone: gating them by default would add metrics (and so widen the
# simultaneous intervals) without adding information. Configure them to gate them.
DEFAULT_GATED: tuple[str, ...] = ("recall", "precision", "iou")
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SAMPLES = 10_000
DEFAULT_SEED = 0
DEFAULT_WORST = 5
GATE_MODES: tuple[str, ...] = ("paired", "mean")

# Baselines store per-query values with 4 decimals and means with 6 (see
# baseline.py); the current run is rounded the same way before comparing, so an
# unchanged run gives deltas of exactly zero.
QUERY_DECIMALS = 4
MEAN_DECIMALS = 6
_BLOCK_CELLS = 2_000_000  # resample indices drawn at once (bounds memory)
_TOLERANCE_FORM = "METRIC:-NUMBER[%|pp] (e.g. 'recall:-1%, iou:-0.002')"
_OFF = ("off", "none")


# ---------------------------------------------------------------- tolerances


@dataclass(frozen=True)
class Tolerance:
    """How much worse a metric may get: ``amount`` absolute (a fraction of 1), or
    relative to the baseline mean when ``relative``."""

    amount: float = 0.0
    relative: bool = False
    points: bool = False  # written in percentage points; only changes ``str()``

    def allowed(self, baseline_mean: float) -> float:
        """The absolute worsening allowed for a metric whose baseline mean is given."""
        if self.relative:
            return self.amount * abs(baseline_mean)
        return self.amount

    def __str__(self) -> str:
        if self.relative:
            return f"-{_short(100 * self.amount)}%"
        if self.points:
            return f"-{_short(100 * self.amount)}pp"
        return f"-{_short(self.amount)}"


Tolerances = dict[str, Tolerance | None]
"""metric -> tolerance; ``None`` means "not gated" (written ``metric:off``)."""


def _short(x: float) -> str:
    return f"{x:.6g}"


def _metric_name(name: str) -> str:
    if name == "*" or name in HIGHER_IS_BETTER:
        return name
    close = difflib.get_close_matches(name, list(HIGHER_IS_BETTER), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise argparse.ArgumentTypeError(
        f"unknown metric {name!r}{hint}; known: {', '.join(HIGHER_IS_BETTER)}, "
        "or '*' for all"
    )


_VALUE = re.compile(
    r"^(?P<sign>[+-]?)\s*(?P<num>\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>%|pp)?$"
)


def parse_tolerance_value(text: str | float, metric: str = "") -> Tolerance | None:
    """``-1%`` (relative), ``-1pp`` (percentage points), ``-0.002`` (absolute) or
    ``off``; an unsigned number means the same drop. Raises ArgumentTypeError."""
    where = f"{metric}: " if metric else ""
    if isinstance(text, bool):
        raise argparse.ArgumentTypeError(f"{where}expected a tolerance, got {text!r}")
    if isinstance(text, (int, float)):
        text = repr(float(text))
    value = text.strip().lower()
    if value in _OFF:
        return None
    match = _VALUE.match(value)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"{where}bad tolerance {text!r}; expected -NUMBER (absolute, e.g. "
            "-0.002), -NUMBER% (relative to the baseline mean), -NUMBERpp "
            "(percentage points) or 'off'"
        )
    if match["sign"] == "+":
        raise argparse.ArgumentTypeError(
            f"{where}tolerance {text!r} is positive; a tolerance is the drop you "
            f"accept, written with a minus sign (e.g. -{match['num']}"
            f"{match['unit'] or ''})"
        )
    number = float(match["num"])
    unit = match["unit"]
    if unit == "%":
        if number > 100:
            raise argparse.ArgumentTypeError(
                f"{where}relative tolerance {text!r} is above 100%"
            )
        return Tolerance(number / 100, relative=True)
    if unit == "pp":
        if number > 100:
            raise argparse.ArgumentTypeError(
                f"{where}tolerance {text!r} is above 100 percentage points"
            )
        return Tolerance(number / 100, points=True)
    if number > 1:
        raise argparse.ArgumentTypeError(
            f"{where}absolute tolerance {text!r} is above 1, but metrics are "
            f"fractions in [0, 1]; did you mean -{match['num']}% (relative) or "
            f"-{match['num']}pp (percentage points)?"
        )
    return Tolerance(number)


def parse_tolerances(text: str) -> Tolerances:
    """``"recall:-1%, iou:-0.002, f1:off"`` -> ``{metric: Tolerance | None}``.

    ``*`` sets every metric (later items override it). Raises ArgumentTypeError
    (pytest-benchmark's ``parse_compare_fail`` style) with what is allowed.
    """
    out: Tolerances = {}
    seen: set[str] = set()
    for raw in re.split(r"[,\n]", text):
        item = raw.strip()
        if not item:
            continue
        name, sep, value = item.partition(":")
        if not sep or not name.strip() or not value.strip():
            raise argparse.ArgumentTypeError(
                f"bad tolerance item {item!r}; expected {_TOLERANCE_FORM}"
            )
        metric = _metric_name(name.strip())
        if metric in seen:
            raise argparse.ArgumentTypeError(
                f"metric {metric!r} is given twice in {text.strip()!r}"
            )
        seen.add(metric)
        tol = parse_tolerance_value(value, metric)
        if metric == "*":
            for m in HIGHER_IS_BETTER:
                out.setdefault(m, tol)
        else:
            out[metric] = tol
    return out


def coerce_tolerances(value: str | Mapping[str, Any] | None) -> Tolerances:
    """Tolerances from a call: a string as in ini, or ``{metric: "-1%" | -0.002}``."""
    if value is None:
        return {}
    if isinstance(value, str):
        return parse_tolerances(value)
    if not isinstance(value, Mapping):
        raise argparse.ArgumentTypeError(
            f"tolerance must be a string such as 'recall:-1%' or a mapping "
            f"{{metric: tolerance}}, got {type(value).__name__}"
        )
    out: Tolerances = {}
    for name, raw in value.items():
        metric = _metric_name(str(name))
        if raw is not None and not isinstance(raw, (str, int, float, Tolerance)):
            raise argparse.ArgumentTypeError(
                f"{metric}: expected a tolerance such as '-1%' or -0.002, got "
                f"{type(raw).__name__} {raw!r}"
            )
        tol = raw if raw is None or isinstance(raw, Tolerance) else None
        if isinstance(raw, (str, int, float)):
            tol = parse_tolerance_value(raw, metric)
        targets = list(HIGHER_IS_BETTER) if metric == "*" else [metric]
        for m in targets:
            if metric != "*" or m not in value:
                out[m] = tol
    return out


def format_tolerances(tolerances: Mapping[str, Tolerance | None]) -> str:
    """The inverse of :func:`parse_tolerances` (metrics in canonical order)."""
    order = [m for m in HIGHER_IS_BETTER if m in tolerances]
    return ", ".join(f"{m}:{tolerances[m] or 'off'}" for m in order)


def parse_confidence(text: str | float) -> float:
    """``95%``, ``95`` or ``0.95`` -> 0.95; between 50% and 100% exclusive."""
    raw = text.strip() if isinstance(text, str) else text
    try:
        if isinstance(raw, str) and raw.endswith("%"):
            value = float(raw[:-1]) / 100
        else:
            value = float(raw)
            if value > 1:
                value /= 100
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"bad confidence {text!r}; expected a level such as 95% or 0.95"
        ) from None
    if not 0.5 <= value < 1:
        raise argparse.ArgumentTypeError(
            f"confidence {text!r} must be at least 50% and below 100% (e.g. 95%)"
        )
    return value


def parse_gate_mode(text: str) -> str:
    """``paired`` (bootstrap over per-query deltas) or ``mean`` (means only)."""
    value = text.strip().lower()
    if value not in GATE_MODES:
        raise argparse.ArgumentTypeError(
            f"bad gate mode {text!r}; expected one of {', '.join(GATE_MODES)}"
        )
    return value


def default_tolerances() -> Tolerances:
    """Zero tolerance on :data:`DEFAULT_GATED`: any drop beyond noise fails."""
    return {m: Tolerance() for m in DEFAULT_GATED}


@dataclass(frozen=True)
class GateSettings:
    """Everything a comparison needs besides the two results."""

    tolerances: Mapping[str, Tolerance | None] = field(
        default_factory=default_tolerances
    )
    mode: str = "paired"
    confidence: float = DEFAULT_CONFIDENCE
    samples: int = DEFAULT_SAMPLES
    seed: int = DEFAULT_SEED
    worst: int = DEFAULT_WORST

    @classmethod
    def from_options(
        cls,
        tolerance: str | None = None,
        mode: str | None = None,
        confidence: str | float | None = None,
    ) -> GateSettings:
        """Session settings from ini/flag strings (None: the default). A configured
        tolerance replaces the default one: only the metrics it names are gated.
        Raises ArgumentTypeError for bad values (a usage error at startup)."""
        base = cls()
        tolerances = (
            base.tolerances if tolerance is None else parse_tolerances(tolerance)
        )
        return replace(base, tolerances=tolerances).override(
            mode=mode, confidence=confidence
        )

    def gated(self) -> list[tuple[str, Tolerance]]:
        """(metric, tolerance) pairs that are gated, in canonical metric order."""
        return [
            (m, tol)
            for m in HIGHER_IS_BETTER
            if (tol := self.tolerances.get(m)) is not None
        ]

    def override(
        self,
        *,
        tolerance: str | Mapping[str, Any] | None = None,
        mode: str | None = None,
        confidence: str | float | None = None,
    ) -> GateSettings:
        """These settings with a call's overrides: tolerances merge per metric."""
        merged = dict(self.tolerances)
        merged.update(coerce_tolerances(tolerance))
        return replace(
            self,
            tolerances=merged,
            mode=self.mode if mode is None else parse_gate_mode(mode),
            confidence=(
                self.confidence if confidence is None else parse_confidence(confidence)
            ),
        )


# ---------------------------------------------------------------- bootstrap


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


# ---------------------------------------------------------------- comparison


class GateError(ValueError):
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
    status: str  # "ok" | "regressed" | "improved"
    n: int
    low: float | None = None  # interval of the mean delta (paired mode)
    high: float | None = None
    worst: tuple[ChangedQuery, ...] = ()
    by_group: Mapping[str, float] = field(default_factory=dict)
    changed: int = 0  # queries whose value moved

    @property
    def higher_is_better(self) -> bool:
        return HIGHER_IS_BETTER.get(self.metric, True)


@dataclass(frozen=True)
class GateReport:
    """The verdicts of one comparison."""

    checks: tuple[MetricCheck, ...]
    settings: GateSettings
    n: int

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
    def level(self) -> float:
        """Confidence of each metric's interval (Bonferroni over gated metrics)."""
        return per_metric_level(self.settings.confidence, len(self.checks))


def per_metric_level(confidence: float, metrics: int) -> float:
    """Each interval's level so that ``metrics`` of them hold jointly."""
    return 1.0 - (1.0 - confidence) / max(metrics, 1)


def compare(
    baseline: Baseline, current: EvalResult, settings: GateSettings | None = None
) -> GateReport:
    """Compare ``current`` against ``baseline`` on every gated metric."""
    import numpy as np

    settings = settings or GateSettings()
    gated = [
        (m, tol)
        for m, tol in settings.gated()
        if m in current.metrics and current.metrics[m].n > 0
    ]
    records = current.queries
    ids = [q.id for q in records]
    if settings.mode == "paired":
        missing = [i for i in baseline.queries if i not in set(ids)]
        extra = [i for i in ids if i not in baseline.queries]
        if missing or extra:
            raise GateError(
                "cannot pair the queries with the baseline: "
                + "; ".join(
                    f"{label} {len(lst)} ({', '.join(lst[:5])}"
                    f"{', ...' if len(lst) > 5 else ''})"
                    for label, lst in (("missing", missing), ("new", extra))
                    if lst
                )
            )
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
            )
        )
    return GateReport(tuple(checks), settings, len(records))


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


# ---------------------------------------------------------------- text


def _pts(x: float | None, signed: bool = False) -> str:
    if x is None or math.isnan(x):
        return "-"
    return f"{100 * x:+.2f}" if signed else f"{100 * x:.2f}"


def _ci(check: MetricCheck) -> str:
    if check.low is None or check.high is None:
        return "-"
    return f"[{_pts(check.low, True)}, {_pts(check.high, True)}]"


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def method_line(report: GateReport) -> str:
    """How the verdict was reached, in one line."""
    s = report.settings
    if s.mode == "mean":
        return "means compared against the tolerance (mode 'mean')"
    joint = (
        f", simultaneous over {len(report.checks)} metrics"
        if len(report.checks) > 1
        else ""
    )
    return (
        f"paired over {report.n} queries: bootstrap CI of the mean delta "
        f"({s.samples} resamples, seed {s.seed}), {100 * s.confidence:g}% "
        f"confidence{joint}"
    )


def report_table(report: GateReport) -> str:
    """One row per gated metric, in points (percent); deltas signed."""
    from pytest_chunkeval.reporting.table import format_rows

    ci_head = f"{100 * report.settings.confidence:g}% CI"
    headers = ["metric", "baseline", "now", "delta", ci_head, "tolerance", "verdict"]
    rows = [
        [
            c.metric,
            _pts(c.before),
            _pts(c.after),
            _pts(c.delta, True),
            _ci(c),
            f"{c.tolerance} ({_pts(-c.allowed, True)})"
            if c.tolerance.relative
            else str(c.tolerance),
            {"regressed": "REGRESSED", "improved": "improved"}.get(c.status, "ok"),
        ]
        for c in report.checks
    ]
    return format_rows(headers, rows)


def _verdict_line(check: MetricCheck) -> str:
    if check.low is not None and check.high is not None:
        where = f"mean delta {_pts(check.delta, True)} points, CI {_ci(check)}"
    else:
        where = f"{_pts(check.before)} -> {_pts(check.after)}"
    if check.status == "regressed":
        return (
            f"{check.metric} got worse: {where}, beyond the tolerance "
            f"{check.tolerance} ({_pts(-check.allowed, True)} points)"
        )
    return f"{check.metric} improved: {where}"


def format_failure(report: GateReport, *, test: str, path: str, command: str) -> str:
    """The text of a failed gate: verdict, table, worst queries, update command."""
    lines = [f"chunkeval baseline regression in {test}"]
    lines += [f"  {_verdict_line(c)}" for c in report.regressed]
    lines += [f"baseline: {path}", method_line(report), "", report_table(report)]
    for check in report.regressed:
        if check.by_group and len(check.by_group) > 1:
            parts = ", ".join(f"{g} {_pts(d, True)}" for g, d in check.by_group.items())
            lines += ["", f"{check.metric} delta by corpus (points): {parts}"]
        if check.worst:
            lines += [
                "",
                f"queries whose {check.metric} got worse the most "
                f"({check.changed} of {check.n} queries changed):",
            ]
            rows = [
                [
                    _clip(q.id, 32),
                    f"{_pts(q.before)} → {_pts(q.after)}",
                    _clip(q.question, 90),
                ]
                for q in check.worst
            ]
            width = [max(len(r[i]) for r in rows) for i in range(2)]
            lines += [
                f"  {r[0].ljust(width[0])}  {r[1].rjust(width[1])}  {r[2]}"
                for r in rows
            ]
    lines += [
        "",
        "If the new numbers are intended, update the baseline:",
        f"  {command}",
    ]
    return "\n".join(lines)


def format_improvement(report: GateReport, *, test: str, command: str) -> str:
    """A passing run that improved beyond noise: what improved, how to record it."""
    parts = "; ".join(_verdict_line(c) for c in report.improved)
    return f"{test}: {parts}. Record the new baseline with: {command}"
