"""A baseline's anchor (docs/baselines.md, "An update never ratchets"): the
per-question values at the last update that accepted a verdict other than
``ok``, or at creation.

Drops each just under the tolerance, recorded one by one with
``--chunkeval-update``, would otherwise move a baseline anywhere in green steps
(100 -> 98.63 in four). The gate compares a run with the baseline and with its
anchor by the same rule (:func:`anchor_baseline` is the anchor as a baseline to
compare with); an update keeps the anchor when both say ``ok`` and moves it to
the new values otherwise (:func:`anchored`). The file keeps an anchored value
only where it differs from the recorded one (``questions.<id>.anchor``), so a
baseline that never drifted shows no anchor values at all.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.gate.comparison.verdicts import OK
from pytest_chunkeval.gate.files.baseline import Baseline
from pytest_chunkeval.gate.files.recording import MEAN_DECIMALS

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.comparison.report import GateReport
    from pytest_chunkeval.gate.tolerances import GateSettings

UNKNOWN_DATE = "by an older version"
"""How an anchor read from a file written before anchors (schema 1-4) is dated."""


def anchor_date(baseline: Baseline) -> str:
    """When ``baseline``'s anchor was recorded (``2026-11-27``)."""
    date = baseline.anchor.get("date")
    return date if isinstance(date, str) and date else UNKNOWN_DATE


def anchor_baseline(baseline: Baseline) -> Baseline | None:
    """``baseline`` with its anchored values (means recomputed from them), to
    compare a run with; None when the anchor is the recorded values."""
    if not baseline.anchored_elsewhere:
        return None
    from pytest_chunkeval.core.metrics import MetricStats

    values = baseline.anchor_values()
    metrics = {}
    for metric, stats in baseline.metrics.items():
        column = [
            float(v)
            for q in values.values()
            if (v := q.get(metric)) is not None and not math.isnan(float(v))
        ]
        mean = round(sum(column) / len(column), MEAN_DECIMALS) if column else math.nan
        metrics[metric] = MetricStats(mean, stats.std, len(column) or stats.n)
    return replace(baseline, queries=values, metrics=metrics)


def since_anchor(
    baseline: Baseline, result: EvalResult, settings: GateSettings
) -> GateReport | None:
    """The comparison of ``result`` with ``baseline``'s anchor (None when the
    anchor is the recorded values: the comparison with the baseline is it)."""
    from pytest_chunkeval.gate.comparison.compare import compare

    anchor = anchor_baseline(baseline)
    return None if anchor is None else compare(anchor, result, settings)


def anchored(
    new: Baseline,
    old: Baseline | None,
    result: EvalResult,
    settings: GateSettings,
    today: str | None = None,
) -> Baseline:
    """``new`` (an update's baseline of ``result``) with its anchor: ``old``'s
    kept when the update's verdicts against ``old`` and its anchor are both
    ``ok``; else, as on creation (``old`` None), anchored at ``new``'s own
    values, dated ``today``."""
    date = today or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    if old is None or not _accepts_ok(old, result, settings):
        return replace(new, anchor={"date": date})
    kept = old.anchor_values()
    questions: dict[str, Mapping[str, Any]] = dict(new.questions)
    for qid, values in new.queries.items():
        before = kept.get(qid)
        if before is None:  # a question added since: anchored as recorded
            continue
        differs = {
            m: before[m] for m in values if m in before and before[m] != values[m]
        }
        if differs:
            questions[qid] = {**questions.get(qid, {}), "anchor": differs}
    return replace(new, questions=questions, anchor={"date": anchor_date(old)})


def _accepts_ok(old: Baseline, result: EvalResult, settings: GateSettings) -> bool:
    """Whether an update of ``old`` to ``result`` accepts only ``ok``: against
    the baseline and against its anchor, nothing beyond the tolerance and no
    question left out. A comparison that cannot be made accepts a change."""
    from pytest_chunkeval.gate.comparison.compare import compare
    from pytest_chunkeval.gate.comparison.integrity import DamagedBaseline
    from pytest_chunkeval.gate.comparison.report import GateError

    try:
        reports = [compare(old, result, settings)]
        since = since_anchor(old, result, settings)
    except (GateError, DamagedBaseline):
        return False
    if since is not None:
        reports.append(since)
    return all(r.verdict == OK and not r.incomplete for r in reports)
