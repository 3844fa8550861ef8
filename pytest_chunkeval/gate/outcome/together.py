"""Per-question items decided together (docs/baselines.md, "Per-question
baselines").

Each item of a ``per_question`` test compares one question with its own file,
and fails alone only when its question is lost or drops beyond the item
tolerance (:data:`ITEM_TOLERANCE`, 10 points). At the end of the session the
items of one test function, under one report row, are also decided together,
on their questions' changes pooled, by the whole set's rule each item was
checked under (its :class:`SetRule`: mode, tolerance, confidence), as a
whole-set check in that mode decides (docs/baselines.md, "Modes"):

- ``changes``: the mean change ``delta``, its standard error
  ``sqrt(sum se_i^2) / n`` from the items' repeats, ``z`` Bonferroni over the
  gated metrics, then ``regressed`` when ``delta < -tolerance - z * SE``;
- ``paired``: the seeded paired bootstrap interval of the questions' mean
  change, ``regressed`` when it lies wholly beyond the tolerance;
- ``mean``: the difference of the means against the tolerance.

Six items each 5 points worse pass alone and fail together. Items of one
function checked under different rules (a rule is the session's, or the
test's own) are decided under each, and the worst verdict stands: no rule
excuses a drop another catches.

A function whose items this session ran only in part (``-k``, a node id) is not
decided: a subset is not the set its baselines were recorded as; nor is one
whose items already failed alone (a question lost or beyond the item
tolerance): the run fails, and those items name the questions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace

from pytest_chunkeval.config.tolerances import HIGHER_IS_BETTER, Tolerance
from pytest_chunkeval.core.metric_names import format_points
from pytest_chunkeval.gate.comparison.compare import decide, interval_status
from pytest_chunkeval.gate.comparison.groups import beyond_their_own
from pytest_chunkeval.gate.comparison.noise import z_value
from pytest_chunkeval.gate.comparison.sampling import (
    bootstrap_intervals,
    per_metric_level,
)
from pytest_chunkeval.gate.comparison.verdicts import (
    IMPROVED,
    NOISY,
    OK,
    REGRESSED,
    GatedMetric,
    GroupDrop,
    groups_line,
)
from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome
from pytest_chunkeval.gate.tolerances import GateSettings, SetRule

ITEM_TOLERANCE = Tolerance(0.10, points=True)
"""How far one question's gated metric may drop before its item fails on its
own (docs/baselines.md, "Per-question baselines"): 10 points, absolute."""

COMPARED = frozenset({OK, NOISY, IMPROVED, REGRESSED})
"""An item's statuses that compared its question (its numbers count)."""

TOGETHER = "per-question items together"
"""How an outcome of items decided together ends its reason."""


def item_settings(settings: GateSettings) -> GateSettings:
    """The settings a per-question item's own check is decided by: ``settings``
    with each gated metric at :data:`ITEM_TOLERANCE` (the whole set's rule is
    its function's, decided together)."""
    gated = [m for m, _ in settings.gated()]
    return replace(settings, tolerances=dict.fromkeys(gated, ITEM_TOLERANCE))


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
    re-records a test's baselines. Each item is decided by the rule it
    recorded (``settings``' for one that recorded none)."""
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
        rules = dict.fromkeys(o.rule or settings.rule() for o in items)
        decisions = [(r, g) for r in rules if (g := pooled(items, r.settings()))]
        if decisions:
            outcome = _outcome(function, row, items, decisions, command(function))
            together.append(outcome)
    return together


def pooled(
    items: Sequence[CheckOutcome], settings: GateSettings
) -> tuple[GatedMetric, ...]:
    """Each gated metric of ``items``' questions, pooled and decided by
    ``settings``' tolerances in its mode, as a whole-set check would be."""
    found = []
    for metric, tolerance in settings.gated():
        values = [
            (o, v)
            for o in items
            for v in o.values
            if v.metric == metric and v.n > 0 and v.delta is not None
        ]
        if values:
            found.append((metric, tolerance, values))
    z = z_value(settings.confidence, len(found))
    intervals = _intervals(items, [m for m, _, _ in found], settings)
    return tuple(
        _pooled(metric, tolerance, values, (z, len(found)), settings, intervals[j])
        for j, (metric, tolerance, values) in enumerate(found)
    )


def _intervals(
    items: Sequence[CheckOutcome], metrics: Sequence[str], settings: GateSettings
) -> list[tuple[float | None, float | None]]:
    """``paired`` mode: the seeded bootstrap interval of the questions' mean
    change per metric, all metrics on the same resamples (a question without a
    metric's value is left out of its mean); else no interval."""
    if settings.mode != "paired" or not metrics:
        return [(None, None)] * len(metrics)
    deltas = [
        [
            next(
                (v.delta for v in o.values if v.metric == m and v.n > 0),
                None,
            )
            for m in metrics
        ]
        for o in items
    ]
    low, high = bootstrap_intervals(
        [[math.nan if d is None else d for d in row] for row in deltas],
        per_metric_level(settings.confidence, len(metrics)),
        samples=settings.samples,
        seed=settings.seed,
    )
    return [(float(a), float(b)) for a, b in zip(low, high, strict=True)]


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None and not math.isnan(v)]
    return sum(known) / len(known) if known else None


def _pooled(
    metric: str,
    tolerance: Tolerance,
    pairs: Sequence[tuple[CheckOutcome, GatedMetric]],
    bonferroni: tuple[float, int],
    settings: GateSettings,
    interval: tuple[float | None, float | None],
) -> GatedMetric:
    """One metric of the items pooled (``pairs``: each item and its value),
    decided in ``settings``' mode, then by its documents and tags
    (``chunkeval_gate_by``); ``bonferroni``: ``z`` and the metrics gated."""
    values = [v for _, v in pairs]
    z = bonferroni[0]
    n = len(values)
    before = _mean([v.before for v in values])
    after = _mean([v.after for v in values])
    delta = sum(v.delta or 0.0 for v in values) / n
    allowed = tolerance.allowed(before) if before is not None else 0.0
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    low, high = interval
    se: float | None = None
    if settings.mode == "mean":
        if before is not None and after is not None:
            delta = after - before
        status = interval_status(sign * delta, sign * delta, -allowed, 0.0)
    elif settings.mode == "paired" and low is not None and high is not None:
        g_low, g_high = sorted((sign * low, sign * high))
        status = interval_status(g_high, g_low, -allowed, 0.0)
    else:
        se = math.sqrt(sum((v.se or 0.0) ** 2 for v in values)) / n
        status = decide(sign * delta, allowed, z * se)
    groups = _groups(pairs, sign, tolerance, bonferroni, settings.confidence)
    deciding = [g for g in groups if g.kind in settings.group_kinds]
    decided_by = ""
    if status != REGRESSED and deciding:  # docs/baselines.md, "Documents and tags"
        status = REGRESSED
        decided_by = "; ".join(
            f"{k} {', '.join(g.group for g in deciding if g.kind == k)}"
            for k in settings.group_kinds
            if any(g.kind == k for g in deciding)
        )
    return GatedMetric(
        metric,
        before,
        after,
        delta,
        low,
        high,
        status,
        settings.confidence,
        se=se,
        hides=None if se is None else allowed + z * se,
        tolerance=str(tolerance),
        allowed=allowed,
        changed=sum(1 for v in values if v.delta),
        drift=sum(v.drift for v in values),
        n=n,
        groups=groups,
        decided_by=decided_by,
    )


def _groups(
    pairs: Sequence[tuple[CheckOutcome, GatedMetric]],
    sign: float,
    tolerance: Tolerance,
    bonferroni: tuple[float, int],
    confidence: float,
) -> tuple[GroupDrop, ...]:
    """The documents, then the tags, of the items' questions whose mean change
    is beyond their own tolerance, as a whole-set check finds them
    (gate/comparison/groups.py)."""
    import numpy as np

    values = [v for _, v in pairs]
    counted = np.array([v.delta or 0.0 for v in values], dtype=np.float64)
    before = np.array(
        [math.nan if v.before is None else v.before for v in values], dtype=np.float64
    )
    cells = np.array([(v.se or 0.0) ** 2 for v in values], dtype=np.float64)
    kinds = (
        ("document", [[o.document] if o.document else [] for o, _ in pairs]),
        ("tag", [list(o.tags) for o, _ in pairs]),
    )
    return tuple(
        g
        for kind, labels in kinds
        for g in beyond_their_own(
            counted,
            before,
            cells,
            labels,
            kind,
            sign=sign,
            tolerance=tolerance,
            z=bonferroni[0],
            metrics=bonferroni[1],
            confidence=confidence,
        )
    )


_WORST = (REGRESSED, NOISY, IMPROVED, OK)


def _status(gated: Sequence[GatedMetric]) -> str:
    statuses = {g.status for g in gated}
    return next((s for s in _WORST if s in statuses), OK)


def _clause(g: GatedMetric, rule: SetRule) -> str:
    """``recall -5.71 points (tolerance -1pp, SE 0.00): regressed``; in
    ``paired`` mode its interval instead of the SE, in ``mean`` mode neither."""
    if rule.mode == "paired" and g.low is not None and g.high is not None:
        noise = (
            f"paired, {100 * rule.confidence:g}% CI "
            f"[{format_points(g.low, True)}, {format_points(g.high, True)}]"
        )
    elif rule.mode == "mean":
        noise = "mean mode"
    else:
        noise = f"SE {format_points(g.se)}"
    by = f" ({g.decided_by})" if g.decided_by else ""
    return (
        f"{g.metric} {format_points(g.delta, True)} points (tolerance "
        f"{g.tolerance}, {noise}): {g.status}{by}"
    )


def _outcome(
    function: str,
    row: str,
    items: Sequence[CheckOutcome],
    decisions: Sequence[tuple[SetRule, tuple[GatedMetric, ...]]],
    command: str,
) -> CheckOutcome:
    """The function's outcome: the worst verdict of its decisions (one per
    rule its items were checked under), with that decision's numbers."""
    ranked = sorted(decisions, key=lambda d: _WORST.index(_status(d[1])))
    gated = ranked[0][1]
    status = _status(gated)
    n = len({o.question for o in items})
    reason = f"its {n} {TOGETHER}"
    if len(decisions) == 1:
        (rule, found), *_ = decisions
        changes = ", ".join(_clause(g, rule) for g in found)
    else:
        changes = f"decided under each of the {len(decisions)} rules its items " + (
            "were checked under, the worst stands: "
            + "; ".join(
                f"{rule}: " + ", ".join(_clause(g, rule) for g in found)
                for rule, found in decisions
            )
        )
    named = [line for g in gated if (line := groups_line(g.metric, g.groups))]
    message = f"{function}: {status} ({reason}): {changes}"
    message += "".join(f"\n  {line}" for line in named)
    if status == REGRESSED:
        beyond = (
            "a document or tag of their questions dropped beyond its own "
            "tolerance (chunkeval_gate_by)"
            if any(g.decided_by for g in gated)
            else "their questions dropped beyond the whole set's tolerance"
        )
        message += (
            "\nEach item passed alone (within the item tolerance, 10 points); "
            f"together {beyond}. "
            f"If the change is intended, re-record the baselines:\n  {command}"
        )
    return CheckOutcome(
        function, items[0].path, status, message, row, gated, reason=reason
    )
