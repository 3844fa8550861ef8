"""Per-question items decided together (docs/baselines.md, "Per-question
baselines").

Each item of a ``per_question`` test compares one question with its own file,
and fails alone only when its question is lost or drops beyond the item
tolerance (10 points). At the end of the session the items of one test
function, under one report row, are also decided together by the whole set's
rule (docs/baselines.md, "What a verdict means") on their questions' changes
pooled: the mean change ``delta``, its standard error ``sqrt(sum se_i^2) / n``
from the items' repeats, ``z`` Bonferroni over the gated metrics, then
``regressed`` when ``delta < -tolerance - z * SE``. Six items each 5 points
worse pass alone and fail together.

A function whose items this session ran only in part (``-k``, a node id) is not
decided: a subset is not the set its baselines were recorded as; nor is one
whose items already failed alone (a question lost or beyond the item
tolerance): the run fails, and those items name the questions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence

from pytest_chunkeval.config.tolerances import HIGHER_IS_BETTER, Tolerance
from pytest_chunkeval.core.metric_names import format_points
from pytest_chunkeval.gate.comparison.compare import decide
from pytest_chunkeval.gate.comparison.noise import z_value
from pytest_chunkeval.gate.comparison.verdicts import (
    IMPROVED,
    NOISY,
    OK,
    REGRESSED,
    GatedMetric,
)
from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome
from pytest_chunkeval.gate.tolerances import GateSettings

COMPARED = frozenset({OK, NOISY, IMPROVED, REGRESSED})
"""An item's statuses that compared its question (its numbers count)."""

TOGETHER = "per-question items together"
"""How an outcome of items decided together ends its reason."""


def quiet(outcome: CheckOutcome) -> bool:
    """An ``ok`` of items decided together: it gives its row the function's
    numbers, and the summary neither counts nor lists it (its items are)."""
    return outcome.status == OK and outcome.reason.endswith(TOGETHER)


def item_function(nodeid: str, question: str) -> str:
    """The test an item is a question of: ``t.py::test_q`` of
    ``t.py::test_q[q-bark]``, ``t.py::test_q[fixed:20:0]`` of
    ``t.py::test_q[fixed:20:0-q-bark]``."""
    if nodeid.endswith(f"[{question}]"):
        return nodeid[: -len(question) - 2]
    if nodeid.endswith(f"-{question}]"):
        return nodeid[: -len(question) - 2] + "]"
    return nodeid


def _items_of(function: str, collected: Collection[str]) -> int:
    """How many collected node ids are items of ``function``."""
    prefix = function[:-1] + "-" if function.endswith("]") else function + "["
    return sum(1 for n in collected if n.startswith(prefix))


def decided_together(
    outcomes: Sequence[CheckOutcome],
    settings: GateSettings,
    collected: Collection[str],
    command: Callable[[str], str],
) -> list[CheckOutcome]:
    """One outcome per test function and row whose per-question items all
    compared their question this session: the items decided together
    (``reason``: ``its N per-question items together``); ``command(nodeid)``
    re-records a test's baselines."""
    groups: dict[tuple[str, str], list[CheckOutcome]] = {}
    for o in outcomes:
        if o.question and o.values and o.status in COMPARED:
            key = (item_function(o.nodeid, o.question), o.row)
            groups.setdefault(key, []).append(o)
    together = []
    for (function, row), items in groups.items():
        if len({o.question for o in items}) < _items_of(function, collected):
            continue  # only some ran: not the recorded set
        if any(o.status == REGRESSED for o in items):
            continue  # failing already, by the items that name the questions
        gated = pooled(items, settings)
        if gated:
            together.append(_outcome(function, row, items, gated, command(function)))
    return together


def pooled(
    items: Sequence[CheckOutcome], settings: GateSettings
) -> tuple[GatedMetric, ...]:
    """Each gated metric of ``items``' questions, pooled and decided by the
    whole set's rule."""
    found = []
    for metric, tolerance in settings.gated():
        values = [
            v
            for o in items
            for v in o.values
            if v.metric == metric and v.n > 0 and v.delta is not None
        ]
        if values:
            found.append((metric, tolerance, values))
    z = z_value(settings.confidence, len(found))
    return tuple(
        _pooled(metric, tolerance, values, z, settings.confidence)
        for metric, tolerance, values in found
    )


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None and not math.isnan(v)]
    return sum(known) / len(known) if known else None


def _pooled(
    metric: str,
    tolerance: Tolerance,
    values: Sequence[GatedMetric],
    z: float,
    confidence: float,
) -> GatedMetric:
    n = len(values)
    before = _mean([v.before for v in values])
    delta = sum(v.delta or 0.0 for v in values) / n
    se = math.sqrt(sum((v.se or 0.0) ** 2 for v in values)) / n
    allowed = tolerance.allowed(before) if before is not None else 0.0
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    return GatedMetric(
        metric,
        before,
        _mean([v.after for v in values]),
        delta,
        None,
        None,
        decide(sign * delta, allowed, z * se),
        confidence,
        se=se,
        hides=allowed + z * se,
        tolerance=str(tolerance),
        allowed=allowed,
        changed=sum(1 for v in values if v.delta),
        drift=sum(v.drift for v in values),
        n=n,
    )


def _outcome(
    function: str,
    row: str,
    items: Sequence[CheckOutcome],
    gated: tuple[GatedMetric, ...],
    command: str,
) -> CheckOutcome:
    statuses = {g.status for g in gated}
    status = next((s for s in (REGRESSED, NOISY, IMPROVED) if s in statuses), OK)
    n = len({o.question for o in items})
    reason = f"its {n} {TOGETHER}"
    changes = ", ".join(
        f"{g.metric} {format_points(g.delta, True)} points (tolerance "
        f"{g.tolerance}, SE {format_points(g.se)}): {g.status}"
        for g in gated
    )
    message = f"{function}: {status} ({reason}): {changes}"
    if status == REGRESSED:
        message += (
            "\nEach item passed alone (within the item tolerance, 10 points); "
            "together their questions dropped beyond the whole set's tolerance. "
            f"If the change is intended, re-record the baselines:\n  {command}"
        )
    return CheckOutcome(
        function, items[0].path, status, message, row, gated, reason=reason
    )
