"""The per-question values a comparison pairs (docs/baselines.md, "What a
verdict means"): each side's value of each gated metric per question, which
questions moved or flipped (retrieved / missed), and the means of a column,
whole or by group."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_chunkeval.core.absent import nan_if_absent
from pytest_chunkeval.gate.comparison.flips import FLIP_METRICS
from pytest_chunkeval.gate.files.recording import MEAN_DECIMALS, QUERY_DECIMALS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from pytest_chunkeval.engine.results import EvalResult, QueryRecord
    from pytest_chunkeval.gate.files.baseline import Baseline

    FloatArray = npt.NDArray[np.float64]


def changed_questions(
    baseline: Baseline,
    records: Sequence[QueryRecord],
    deltas: FloatArray,
    flip: str | None,
) -> list[str]:
    """The ids of the questions whose gated values moved or that flipped."""
    import numpy as np

    moved = np.nan_to_num(deltas) != 0
    return [
        r.id
        for row, r in enumerate(records)
        if moved[row].any() or flipped(baseline, r, flip)
    ]


def question_values(
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
    stored = baseline.queries
    before = np.array(
        [[nan_if_absent(stored[q.id].get(m)) for m in metrics] for q in records],
        dtype=np.float64,
    ).reshape(len(records), len(metrics))
    return before, after


def flip_metric(baseline: Baseline, current: EvalResult) -> str | None:
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


def flipped(
    baseline: Baseline, record: QueryRecord, metric: str | None, lost_only: bool = False
) -> bool:
    """Whether the question changed sides (retrieved / missed): lost only, or
    either way."""
    if metric is None:
        return False
    before = nan_if_absent(baseline.queries[record.id].get(metric))
    after = record.metric(metric)
    if math.isnan(before) or math.isnan(after):
        return False
    if lost_only:
        return before > 0 and after == 0
    return (before > 0) != (after > 0)


def mean_of(side: Baseline | EvalResult, metric: str) -> float:
    stats = side.metrics.get(metric)
    return math.nan if stats is None else round(stats.mean, MEAN_DECIMALS)


def column_mean(column: FloatArray) -> float:
    import numpy as np

    finite = column[~np.isnan(column)]
    return round(float(finite.mean()), MEAN_DECIMALS) if finite.size else math.nan


def group_means(column: FloatArray, groups: Sequence[str]) -> dict[str, float]:
    import numpy as np

    out: dict[str, float] = {}
    labels = np.asarray(groups, dtype=object)
    for g in sorted(set(groups)):
        values = column[(labels == g) & ~np.isnan(column)]
        if values.size:
            out[g] = float(values.mean())
    return out
