"""Repeats of a noisy component (docs/baselines.md, "Repeats"): how many, which
questions, and the result whose questions hold the mean of their repeats.

A noisy component (a user's retriever whose answers vary, an approximate store
built again in another order) is measured ``r`` times; each repeated question's
metric values (its record's ``scores``) become the mean of its ``r`` values and
its ``repeats`` hold, per metric, ``(mean, sample variance with denominator
r - 1, r)``. Judged metrics are
never repeated (a judge's answers cost money): they stay the first repeat's.

On a set of more than :data:`MAX_SAMPLED` questions only a fixed sample is
repeated (:func:`sample`): the questions whose ids hash lowest, so the baseline
and a later run repeat the same questions, and adding a question moves the
sample by one at most.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pytest_chunkeval.core.metrics import METRICS, describe
from pytest_chunkeval.engine.results import EvalResult, QueryRecord

REPEATED_METRICS: tuple[str, ...] = METRICS
"""The metrics repeats measure (the chunk and rank metrics; judged ones never)."""
RETRIEVER_REPEATS = 4
"""``r`` of a noisy retriever (``chunkeval_repeats``), on sets of
:data:`SMALL_SET` questions or more."""
SMALL_SET_REPEATS = 8
"""``r`` of a noisy retriever on a set under :data:`SMALL_SET` questions."""
SMALL_SET = 50
STORE_REBUILDS = 3
"""Times an approximate store's index is built (``chunkeval_repeats`` overrides)."""
MAX_SAMPLED = 200
"""Questions repeated at most; the others are asked once."""

Values = Mapping[str, Sequence[float]]
"""Per metric, one question's value in each repeat."""


def retriever_repeats(n_questions: int, configured: int | None = None) -> int:
    """``r`` for a noisy retriever: ``configured`` (``chunkeval_repeats``), else
    :data:`SMALL_SET_REPEATS` under :data:`SMALL_SET` questions, else
    :data:`RETRIEVER_REPEATS`."""
    if configured is not None:
        return configured
    return SMALL_SET_REPEATS if n_questions < SMALL_SET else RETRIEVER_REPEATS


def store_rebuilds(configured: int | None = None) -> int:
    """Times an approximate store's index is built."""
    return STORE_REBUILDS if configured is None else configured


def _rank(qid: str) -> bytes:
    return hashlib.sha256(f"chunkeval-repeats\0{qid}".encode()).digest()


def sample(ids: Sequence[str], limit: int = MAX_SAMPLED) -> list[int]:
    """The positions (in ``ids``' order) of the questions to repeat: all of them
    up to ``limit``, else the ``limit`` whose ids hash lowest (the same in every
    run that holds them)."""
    if len(ids) <= limit:
        return list(range(len(ids)))
    chosen = sorted(range(len(ids)), key=lambda i: _rank(ids[i]))[:limit]
    return sorted(chosen)


def per_question(columns: Sequence[Mapping[str, Any]]) -> list[Values]:
    """Per question, per metric, its values in each repeat: ``columns`` holds,
    per repeat, each metric's per-question values (NaN: not measured)."""
    if not columns:
        return []
    n = len(next(iter(columns[0].values()), ()))
    return [
        {m: [float(c[m][i]) for c in columns] for m in columns[0]} for i in range(n)
    ]


def _stats(values: Sequence[float]) -> tuple[float, float, int] | None:
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return None
    r = len(finite)
    mean = math.fsum(finite) / r
    var = math.fsum((v - mean) ** 2 for v in finite) / (r - 1) if r > 1 else 0.0
    return (mean, var, r)


def _repeated(record: QueryRecord, values: Values) -> QueryRecord:
    """``record`` with each metric's mean over its repeats, and the repeats."""
    repeats = {m: s for m, v in values.items() if (s := _stats(v)) is not None}
    means = {m: s[0] for m, s in repeats.items() if m in REPEATED_METRICS}
    scores = {**record.scores, **means}
    return dataclasses.replace(record, repeats=repeats, scores=scores)


def with_repeats(
    result: EvalResult,
    repeated: Mapping[int, Values],
    noise: Mapping[str, Any],
) -> EvalResult:
    """``result`` (the first repeat) with the questions at the positions of
    ``repeated`` holding the means of their values, its summaries made again
    from them, and ``noise``: what was repeated (``noisy``, ``repeats``,
    ``requests``...), with ``sampled`` and ``mean_variance`` added here."""
    records = [
        _repeated(q, repeated[i]) if i in repeated else q
        for i, q in enumerate(result.queries)
    ]
    metrics = dict(result.metrics)
    groups = {g: dict(stats) for g, stats in result.groups.items()}
    for m in REPEATED_METRICS:
        if m not in metrics:
            continue
        values = np.array([q.metric(m) for q in records], dtype=np.float64)
        metrics[m] = describe(values)
        for g in groups:
            mask = np.array([q.doc_id == g for q in records], dtype=bool)
            groups[g][m] = describe(values[mask])
    return dataclasses.replace(
        result,
        queries=records,
        metrics=metrics,
        groups=groups,
        noise={
            **noise,
            "sampled": len(repeated),
            "mean_variance": mean_variance(records),
        },
    )


def mean_variance(records: Sequence[QueryRecord]) -> dict[str, float]:
    """Per metric, the mean variance over the questions repeated: what a
    question asked once in a noisy run takes as its own (docs/baselines.md)."""
    out: dict[str, float] = {}
    for m in REPEATED_METRICS:
        found = [q.repeats[m][1] for q in records if m in q.repeats]
        if found:
            out[m] = math.fsum(found) / len(found)
    return out
