"""The option table's parsers of what the gate allows (docs/baselines.md):
per-metric tolerances (absolute, ``pp`` or relative to the baseline mean), the
gate mode, the confidence of the sampling view and the share of questions a
comparison may leave out. The gate's settings built from them are
``gate/tolerances.py``'s.

Only the standard library at import time: the plugin parses tolerances at
start-up and must not pay for numpy there.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from pytest_chunkeval.core.metric_names import (
    JUDGED,
    PRESENCE,
    RANK,
    RELATIONSHIP,
    directions,
)
from pytest_chunkeval.errors import ConfigError

HIGHER_IS_BETTER: dict[str, bool] = directions(PRESENCE, RANK, JUDGED, RELATIONSHIP)
"""Direction of each metric the gate knows (``metrics.METRICS``, the judged and the
relationship metrics), from the metric table."""

GATE_MODES: tuple[str, ...] = ("changes", "paired", "mean")
"""``changes``: the mean of the per-question changes against the tolerance,
widened by the noise repeats measured (docs/baselines.md);
``paired``: the bootstrap interval of the mean change decides; ``mean``: the
difference of the means decides."""
_TOLERANCE_FORM = "METRIC:-NUMBER[%|pp] (e.g. 'recall:-1%, iou:-0.002')"
_OFF = ("off", "none")


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
        sign = "-" if self.amount else ""  # a zero tolerance is "0", not "-0"
        if self.relative:
            return f"{sign}{_short(100 * self.amount)}%"
        if self.points:
            return f"{sign}{_short(100 * self.amount)}pp"
        return f"{sign}{_short(self.amount)}"


Tolerances = dict[str, Tolerance | None]
"""metric -> tolerance; ``None`` means "not gated" (written ``metric:off``)."""


def _short(x: float) -> str:
    return f"{x:.6g}"


def metric_name(name: str) -> str:
    """``name`` when the gate knows the metric (or ``*``: all), else ConfigError."""
    if name == "*" or name in HIGHER_IS_BETTER:
        return name
    close = difflib.get_close_matches(name, list(HIGHER_IS_BETTER), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(
        f"unknown metric {name!r}{hint}; known: {', '.join(HIGHER_IS_BETTER)}, "
        "or '*' for all"
    )


_VALUE = re.compile(
    r"^(?P<sign>[+-]?)\s*(?P<num>\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>%|pp)?$"
)


def parse_tolerance_value(text: str | float, metric: str = "") -> Tolerance | None:
    """``-1%`` (relative), ``-1pp`` (percentage points), ``-0.002`` (absolute) or
    ``off``; an unsigned number means the same drop. Raises ConfigError."""
    where = f"{metric}: " if metric else ""
    if isinstance(text, bool):
        raise ConfigError(f"{where}expected a tolerance, got {text!r}")
    if isinstance(text, (int, float)):
        text = repr(float(text))
    value = text.strip().lower()
    if value in _OFF:
        return None
    match = _VALUE.match(value)
    if match is None:
        raise ConfigError(
            f"{where}bad tolerance {text!r}; expected -NUMBER (absolute, e.g. "
            "-0.002), -NUMBER% (relative to the baseline mean), -NUMBERpp "
            "(percentage points) or 'off'"
        )
    if match["sign"] == "+":
        raise ConfigError(
            f"{where}tolerance {text!r} is positive; a tolerance is the drop you "
            f"accept, written with a minus sign (e.g. -{match['num']}"
            f"{match['unit'] or ''})"
        )
    number = float(match["num"])
    unit = match["unit"]
    if unit == "%":
        if number > 100:
            raise ConfigError(f"{where}relative tolerance {text!r} is above 100%")
        return Tolerance(number / 100, relative=True)
    if unit == "pp":
        if number > 100:
            raise ConfigError(
                f"{where}tolerance {text!r} is above 100 percentage points"
            )
        return Tolerance(number / 100, points=True)
    if number > 1:
        raise ConfigError(
            f"{where}absolute tolerance {text!r} is above 1, but metrics are "
            f"fractions in [0, 1]; did you mean -{match['num']}% (relative) or "
            f"-{match['num']}pp (percentage points)?"
        )
    return Tolerance(number)


def parse_tolerances(text: str) -> Tolerances:
    """``"recall:-1%, iou:-0.002, f1:off"`` -> ``{metric: Tolerance | None}``.

    ``*`` sets every metric (later items override it). Raises ConfigError
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
            raise ConfigError(
                f"bad tolerance item {item!r}; expected {_TOLERANCE_FORM}"
            )
        metric = metric_name(name.strip())
        if metric in seen:
            raise ConfigError(f"metric {metric!r} is given twice in {text.strip()!r}")
        seen.add(metric)
        tol = parse_tolerance_value(value, metric)
        if metric == "*":
            for m in HIGHER_IS_BETTER:
                out.setdefault(m, tol)
        else:
            out[metric] = tol
    return out


def _fraction(raw: str | float, *, bare_percent: bool) -> float:
    """``N%`` as N / 100, else the number (``bare_percent``: a number above 1 is
    a percentage too). Raises ValueError."""
    if isinstance(raw, str) and raw.endswith("%"):
        return float(raw[:-1]) / 100
    value = float(raw)
    return value / 100 if bare_percent and value > 1 else value


def parse_confidence(text: str | float) -> float:
    """``95%``, ``95`` or ``0.95`` -> 0.95; between 50% and 100% exclusive."""
    raw = text.strip() if isinstance(text, str) else text
    try:
        value = _fraction(raw, bare_percent=True)
    except ValueError:
        raise ConfigError(
            f"bad confidence {text!r}; expected a level such as 95% or 0.95"
        ) from None
    if not 0.5 <= value < 1:
        raise ConfigError(
            f"confidence {text!r} must be at least 50% and below 100% (e.g. 95%)"
        )
    return value


def parse_share(text: str | float) -> float:
    """A share of questions: ``10%``, ``0.1`` or ``0`` -> a fraction in [0, 1]."""
    raw = text.strip() if isinstance(text, str) else text
    try:
        value = _fraction(raw, bare_percent=False)
    except ValueError:
        raise ConfigError(
            f"bad share {text!r}; expected a percentage such as 10% or a fraction "
            "such as 0.1"
        ) from None
    if not 0 <= value <= 1:
        hint = f" (did you mean {raw}%?)" if isinstance(raw, str) and value > 1 else ""
        raise ConfigError(f"share {text!r} must be between 0 and 100%{hint}")
    return value


def parse_gate_mode(text: str) -> str:
    """``changes`` (per-question changes, noise measured), ``paired`` (bootstrap
    over per-query deltas) or ``mean`` (means only)."""
    value = text.strip().lower()
    if value not in GATE_MODES:
        raise ConfigError(
            f"bad gate mode {text!r}; expected one of {', '.join(GATE_MODES)}"
        )
    return value


GATE_BY: tuple[str, ...] = ("set", "document", "tag")
"""What a check fails on (docs/baselines.md, "Documents and tags"): ``set``,
the whole set's mean (documents and tags beyond their own tolerance are named);
``document``, also any document beyond its own tolerance; ``tag``, also any
tag (a question's ``metadata["tags"]``) beyond its own. ``document, tag``:
both kinds of group are decided."""


def parse_gate_by(text: str) -> str:
    """``set``, ``document``, ``tag`` or several (``document, tag``, or
    space-separated): the canonical text, the kinds in :data:`GATE_BY`'s order
    and ``set`` left out beside a group kind (the whole set always decides)."""
    if not isinstance(text, str):
        raise ConfigError(
            f"bad chunkeval_gate_by {text!r}: a string such as 'document, tag', "
            f"got {type(text).__name__}"
        )
    names = [n for n in re.split(r"[\s,]+", text.strip().lower()) if n]
    unknown = [n for n in names if n not in GATE_BY]
    if unknown or not names:
        raise ConfigError(
            f"bad chunkeval_gate_by {text!r}; expected one of {', '.join(GATE_BY)}, "
            "or several separated by commas (document, tag)"
        )
    kinds = [k for k in GATE_BY if k in names and k != "set"]
    return ", ".join(kinds) or "set"
