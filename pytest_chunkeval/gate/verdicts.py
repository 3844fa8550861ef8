"""The baseline verdicts: what each check outcome's status means
(:data:`VERDICT_OF`, worst first in :data:`ORDER`), the numbers behind a
verdict (:class:`GatedMetric`: per gated metric the baseline, the change and its
confidence interval), and the one-line verdict of a session (``2 regressions, 1
improvement, 14 unchanged``) that the reports open with. A report row's verdict
is :mod:`pytest_chunkeval.gate.rows`'."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_chunkeval.gate.compare import GateReport

VERDICT_OF = {
    "passed": "passed",
    "unchanged": "passed",
    "improved": "improved",
    "regressed": "regressed",
    "created": "created",
    "updated": "updated",
    "missing": "missing",
    "corrupt": "not compared",
    "mismatch": "not compared",
    "unwritable": "not compared",
    "not recorded": "not compared",
    "not compared": "not compared",
}
ORDER = ("regressed", "missing", "not compared", "improved", "created", "updated")
"""Worst first: a test with several baselines gets the worst one's verdict."""


def worst(verdicts: Iterable[str]) -> str:
    """The worst of ``verdicts`` ("passed" when all passed, "" when none)."""
    seen = set(verdicts)
    for verdict in ORDER:
        if verdict in seen:
            return verdict
    return "passed" if seen else ""


_NOUNS = {
    "regressed": ("regression", "regressions"),
    "improved": ("improvement", "improvements"),
    "passed": ("unchanged", "unchanged"),
}


def headline(verdicts: Mapping[str, str]) -> str:
    """``2 regressions, 1 improvement, 14 unchanged`` (then missing, not compared,
    created, updated when there are any); "" when no test checked a baseline."""
    counts: dict[str, int] = {}
    for verdict in verdicts.values():
        counts[verdict] = counts.get(verdict, 0) + 1
    parts = []
    for verdict in ("regressed", "improved", "passed", *ORDER[1:3], *ORDER[4:]):
        n = counts.get(verdict, 0)
        if verdict in _NOUNS:
            one, many = _NOUNS[verdict]
            parts.append(f"{n} {one if n == 1 else many}")
        elif n:
            parts.append(f"{n} {verdict}")
    return ", ".join(parts) if verdicts else ""


def verdict_text(verdict: str) -> str:
    """A verdict or metric status as a report cell shows it: a regression in
    capitals (``REGRESSED``), "-" for none."""
    return "REGRESSED" if verdict == "regressed" else verdict or "-"


def severity(verdict: str, outcome: str = "") -> int:
    """Sort key of a report row, worst first: regressed, missing, not compared,
    then a failed test, then everything else (improved, created, passed...)."""
    if verdict in ORDER[:3]:
        return ORDER.index(verdict)
    return 3 if outcome == "failed" else 4


@dataclass(frozen=True)
class GatedMetric:
    """One gated metric of a baseline comparison, as the reports show it.

    Values are fractions (0-1); ``delta`` is ``now - baseline`` (the mean of the
    per-query deltas in paired mode), ``low``/``high`` its confidence interval
    (None in mean mode); ``status`` is ``ok``, ``regressed``, ``improved`` or
    ``not compared``; ``confidence`` the joint level of the intervals."""

    metric: str
    before: float | None
    after: float | None
    delta: float | None
    low: float | None
    high: float | None
    status: str
    confidence: float

    @property
    def unchanged(self) -> bool:
        """No question moved: a paired change whose interval is exactly [0, 0].
        (Equal means in mean mode do not say so: questions may have moved both
        ways.)"""
        return self.delta == 0 and self.low == 0 and self.high == 0

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "baseline": self.before,
            "now": self.after,
            "delta": self.delta,
            "low": self.low,
            "high": self.high,
            "status": self.status,
            "confidence": self.confidence,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GatedMetric:
        return cls(
            str(data["metric"]),
            _num(data.get("baseline")),
            _num(data.get("now")),
            _num(data.get("delta")),
            _num(data.get("low")),
            _num(data.get("high")),
            str(data.get("status", "ok")),
            float(data.get("confidence", 0.95)),
        )


def gated_metrics(report: GateReport) -> tuple[GatedMetric, ...]:
    """The report's checks as :class:`GatedMetric` (NaN becomes None)."""
    return tuple(
        GatedMetric(
            c.metric,
            _num(c.before),
            _num(c.after),
            _num(c.delta),
            _num(c.low),
            _num(c.high),
            c.status,
            report.settings.confidence,
        )
        for c in report.checks
    )


def _num(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number
