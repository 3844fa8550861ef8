"""Whether a gated metric can be compared at all, failing closed
(docs/baselines.md, "Fail closed").

- a baseline whose values of a gated metric are missing or not finite is
  damaged (:class:`DamagedBaseline`): refused, never compared as zero or NaN
  ("recall - points: within tolerance" passed such files before);
- a metric the baseline's schema predates (the rank metrics before schema 3), or
  a judged metric the baseline measured no judge for: ``not compared (recorded
  before it existed)`` / ``not compared (not measured in the baseline)``, and
  the check passes;
- a judged metric whose answers this run could not use (a judge answering
  garbage): ``not compared (n unusable)``, and the check fails.

Only the standard library: the caller holds the numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_chunkeval.core.metric_names import JUDGED, PRESENCE, names
from pytest_chunkeval.errors import DataError

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult, QueryRecord
    from pytest_chunkeval.gate.files.baseline import Baseline

RECORDED_BEFORE = "recorded before it existed"
NOT_MEASURED = "not measured in the baseline"
ALWAYS_RECORDED = names(PRESENCE)
"""Metrics every baseline schema records: absent from a file, it is damaged."""
SCHEMA_OF_ALL = 3
"""From this schema on, a baseline records every metric its result measured."""
SINCE_RULES: Mapping[str, int] = {}
"""A metric that exists from a version of the scoring rules on (``config
["scoring_rules"]``, absent = 1): a baseline of older rules predates it."""


class DamagedBaseline(DataError):
    """A baseline's values of a gated metric are missing or not finite."""


@dataclass(frozen=True)
class Standing:
    """Why a gated metric is not compared, and whether that fails the check."""

    reason: str
    fails: bool = False


NOT_GATED = Standing("")
"""A gated metric measured on neither side: left out, nothing to say."""


def standing(
    metric: str,
    baseline: Baseline,
    current: EvalResult,
    records: Sequence[QueryRecord],
) -> Standing | None:
    """None when ``metric`` is compared on ``records`` (the questions both runs
    have); :data:`NOT_GATED` when neither side measured it; else why it is not
    compared. :class:`DamagedBaseline` when the baseline's values of it cannot
    be trusted."""
    now = current.metrics.get(metric)
    measured = now is not None and now.n > 0
    recorded = baseline.metrics.get(metric)
    judged = metric in names(JUDGED)
    judging = judged and bool(current.config.get("judge"))
    if recorded is None:
        if not measured:
            return NOT_GATED
        if judged and not baseline.config.get("judge"):
            return Standing(NOT_MEASURED)
        rules = int(baseline.config.get("scoring_rules", 1))
        if metric in ALWAYS_RECORDED or (
            baseline.schema >= SCHEMA_OF_ALL and rules >= SINCE_RULES.get(metric, 1)
        ):
            raise DamagedBaseline(f"{metric} is missing from its metrics")
        return Standing(RECORDED_BEFORE)
    if not (measured or judging):
        return NOT_GATED  # not measured now (a judge removed): said by config
    if recorded.n > 0 and math.isnan(recorded.mean):
        raise DamagedBaseline(f"the mean of {metric} is missing")
    unusable = 0
    for record in records:
        value = baseline.queries[record.id].get(metric)
        after = record.metric(metric)
        if value is None and not math.isnan(after) and not judged:
            raise DamagedBaseline(
                f"{metric} of question {record.id!r} is missing or null"
            )
        if value is not None and math.isnan(after) and judging:
            unusable += 1
    if unusable:
        return Standing(f"{unusable} unusable", fails=True)
    return None if measured else NOT_GATED
