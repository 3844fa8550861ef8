"""What a query set can tell: its minimum detectable effect, and which of several
configurations it cannot tell apart.

The minimum detectable effect is the gate's (``docs/baselines.md``, "What a
verdict means"): with ``n`` questions, ``g`` gated metrics and confidence
``1 - alpha``, the smallest number ``m`` of questions that must move in one
direction before the paired bootstrap can tell a change from sampling noise; in
points of a metric, ``m * mean / n``. Without a run the points are given at a
mean of 1 (an upper bound).

Given two or more configurations (chunkers evaluated on the set), each pair is
compared question by question on every gated metric: the paired bootstrap
interval of the mean difference (simultaneous over the metrics, as the gate's),
and the difference against the detectable effect at the first configuration's
mean. A pair the set **cannot tell apart** has every interval containing zero
and every difference below the detectable effect.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.gate.comparison.sampling import (
    bootstrap_intervals,
    detectable_points,
    detectable_questions,
    per_metric_level,
)

METRICS = ("recall", "precision", "iou")
"""The metrics the gate checks by default."""


def detectable(
    n: int,
    *,
    metrics: Sequence[str] = METRICS,
    confidence: float = 0.95,
    means: dict[str, float] | None = None,
) -> dict[str, Any]:
    """The set's minimum detectable effect in questions and, per metric, in
    points (at ``means``, else at a mean of 1)."""
    m = detectable_questions(n, len(metrics), confidence)
    values = means if means is not None else dict.fromkeys(metrics, 1.0)
    points = {
        metric: 100 * p
        for metric in metrics
        if (p := detectable_points(m, n, values.get(metric, np.nan))) is not None
    }
    return {
        "n": n,
        "questions": m,
        "metrics": len(metrics),
        "confidence": confidence,
        "points": points,
        "at_mean": "run" if means is not None else 1.0,
    }


def separability(
    corpus: Corpus,
    queries: QuerySet,
    chunkers: Sequence[Any],
    *,
    metrics: Sequence[str] = METRICS,
    confidence: float = 0.95,
    **evaluate_options: Any,
) -> dict[str, Any]:
    """Evaluate each of ``chunkers`` on the questions with excerpts and compare
    every pair (see the module docstring). ``evaluate_options``: ``embedder``,
    ``store``, ``k``, ``unit``, ``cache``... (None values take the defaults)."""
    from pytest_chunkeval.engine.evaluate import evaluate

    options = {k: v for k, v in evaluate_options.items() if v is not None}
    asked = QuerySet([q for q in queries if q.excerpts], source=queries.source)
    results = [evaluate(c, corpus, asked, **options) for c in chunkers]
    n = len(asked)
    m = detectable_questions(n, len(metrics), confidence)
    level = per_metric_level(confidence, len(metrics))
    values = [
        np.column_stack([r.values(metric) for metric in metrics]) for r in results
    ]
    pairs = []
    for i, j in itertools.combinations(range(len(results)), 2):
        deltas = values[j] - values[i]
        low, high = bootstrap_intervals(deltas, level)
        compared: dict[str, Any] = {}
        apart = False
        for c, metric in enumerate(metrics):
            delta = float(np.nanmean(deltas[:, c]))
            base = results[i].mean(metric)
            points = detectable_points(m, n, base)
            mde = 100 * points if points is not None else float("nan")
            compared[metric] = {
                "delta": delta,
                "low": float(low[c]),
                "high": float(high[c]),
                "detectable_points": mde,
            }
            if not (low[c] <= 0 <= high[c]) or not 100 * abs(delta) < mde:
                apart = True
        pairs.append(
            {
                "a": results[i].label,
                "b": results[j].label,
                "metrics": compared,
                "indistinguishable": not apart,
            }
        )
    return {
        "configurations": [
            {"label": r.label, "means": {m_: r.mean(m_) for m_ in metrics}}
            for r in results
        ],
        "confidence": confidence,
        "pairs": pairs,
        "means": {m_: results[0].mean(m_) for m_ in metrics} if results else {},
    }
