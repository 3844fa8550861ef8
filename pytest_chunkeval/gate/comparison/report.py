"""The verdicts of one comparison as data (:class:`GateReport`: one
:class:`MetricCheck` per gated metric, what else changed, which changes float
drift explains, the repeats that measured the noise, the lost questions, the
sampling view), computed by
:func:`~pytest_chunkeval.gate.comparison.compare.compare`; :func:`gated_metrics`
gives the reports' view of it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_chunkeval.core.absent import present
from pytest_chunkeval.errors import DataError
from pytest_chunkeval.gate.comparison.changes import BaselineChanges
from pytest_chunkeval.gate.comparison.sampling import per_metric_level
from pytest_chunkeval.gate.comparison.verdicts import (
    IMPROVED,
    NOISY,
    NOT_COMPARED,
    OK,
    REGRESSED,
    GatedMetric,
    GroupDrop,
)
from pytest_chunkeval.gate.tolerances import GateSettings

if TYPE_CHECKING:
    from pytest_chunkeval.config.tolerances import Tolerance


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
    drift: int = 0
    """Changed questions whose change float drift explains (not counted)."""
    se: float = math.nan
    """``changes`` mode: the standard error of ``delta`` measured by repeats
    (0 when neither run found noise)."""
    hides: float = math.nan
    """``changes`` mode: the largest drop the measured noise could hide, the
    tolerance plus ``z * se``, in the metric's units."""
    mde: float = math.nan
    """The minimum detectable effect in the metric's units (sampling view)."""
    reason: str = ""
    """Why the metric was not compared."""
    fails_check: bool = False
    """A metric not compared for a reason that fails the check (its values
    unusable), not one it passes with (recorded before it existed)."""
    groups: tuple[GroupDrop, ...] = ()
    """Documents whose change is beyond their own tolerance
    (gate/comparison/groups.py)."""
    whole: str = ""
    """The whole set's own verdict where a document or tag beyond its own
    tolerance made ``status`` regressed (``chunkeval_gate_by``); "" where
    ``status`` is the whole set's."""

    @property
    def own(self) -> str:
        """The whole set's verdict (what its row of a table shows)."""
        return self.whole or self.status


@dataclass(frozen=True)
class GateReport:
    """The verdicts of one comparison."""

    checks: tuple[MetricCheck, ...]
    settings: GateSettings
    n: int
    changes: BaselineChanges = field(default_factory=BaselineChanges)
    """What differs besides the metrics (configuration, documents, questions)."""
    noise: Mapping[str, str] = field(default_factory=dict)
    """Changed question id -> ``drift`` where float drift explains its change
    (gate/comparison/drift.py): the only changes not counted."""
    lost: tuple[str, ...] = ()
    """Questions retrieved in the baseline (recall > 0) and missed now, a real
    change: named whatever the verdict."""
    mde_questions: int | None = None
    """The sampling view: questions that must be lost in one direction before
    the bootstrap interval can tell (None: no question)."""
    repeats: tuple[str, ...] = ()
    """What measured each side's noise (``now: retriever noisy: 4 repeats of
    36 questions, 180 requests``); empty when neither run found noise."""

    @property
    def incomplete(self) -> str:
        """Why the comparison is not enough to pass ("" when it is): more of the
        baseline's questions not compared (removed, edited, no longer
        placeable: ``BaselineChanges.incomplete``) than
        ``settings.max_left_out`` allows, or a gated metric
        with unusable values (a judge whose answers could not be used)."""
        left_out = self.changes.incomplete(self.settings.max_left_out)
        reasons = [left_out] if left_out else []
        reasons += [
            f"{c.metric}: {c.reason}" for c in self.not_compared if c.fails_check
        ]
        return "; ".join(reasons)

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
            present(c.before),
            present(c.after),
            present(c.delta),
            present(c.low),
            present(c.high),
            c.status,
            report.settings.confidence,
            se=present(c.se),
            hides=present(c.hides),
            repeats="; ".join(report.repeats),
            reason=c.reason,
            tolerance=str(c.tolerance),
            allowed=c.allowed,
            changed=c.changed,
            drift=c.drift,
            n=c.n,
            mde=present(c.mde),
            mde_questions=report.mde_questions if c.reason == "" else None,
            groups=c.groups,
            decided_by=_decided_by(c, report.settings.group_kinds),
        )
        for c in report.checks
    )


def _decided_by(check: MetricCheck, kinds: tuple[str, ...]) -> str:
    """``tag billing`` (``document big.md; tag billing``): the groups that made
    the check regressed where the whole set's own verdict was another
    (``chunkeval_gate_by``), each kind named; ""."""
    if not check.whole:
        return ""
    parts = []
    for kind in kinds:
        names = [g.group for g in check.groups if g.kind == kind]
        if names:
            parts.append(f"{kind} {', '.join(names)}")
    return "; ".join(parts)
