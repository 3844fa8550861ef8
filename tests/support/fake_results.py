"""Small synthetic ``EvalResult`` objects with chosen per-query values (fast tests of
baselines, the gate and reports without running an evaluation)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pytest_chunkeval.core.metrics import METRICS, describe
from pytest_chunkeval.engine.results import EvalResult, QueryRecord

CONFIG: dict[str, Any] = {
    "chunker": "recursive:200:0",
    "embedder": "hashing",
    "embedder_identity": "hashing:256@1",
    "store": "exact",
    "k": 5,
    "unit": "token",
    "tokenizer": "cl100k_base",
    "corpus": "general",
    "queries": "/somewhere/queries.jsonl",
}


def make_result(
    recall: Sequence[float],
    *,
    precision: Sequence[float] | None = None,
    iou: Sequence[float] | None = None,
    precision_omega: Sequence[float | None] | None = None,
    ids: Sequence[str] | None = None,
    docs: Sequence[str] | None = None,
    config: Mapping[str, Any] | None = None,
    corpus_hash: str = "c" * 64,
    queries_hash: str = "q" * 64,
    label: str | None = None,
) -> EvalResult:
    """A result whose queries have the given metric values (F1 follows IoU)."""
    n = len(recall)
    precision = precision if precision is not None else [r / 10 for r in recall]
    iou = iou if iou is not None else list(precision)
    omega = precision_omega if precision_omega is not None else [0.5] * n
    ids = ids if ids is not None else [f"q{i:03d}" for i in range(n)]
    docs = docs if docs is not None else [("a.md", "b.md")[i % 2] for i in range(n)]
    cfg = {**CONFIG, **(config or {})}
    records = [
        QueryRecord(
            id=ids[i],
            question=f"What is question number {i}?",
            doc_id=docs[i],
            excerpts=((docs[i], 0, 10),),
            retrieved=((docs[i], 0, 20),),
            excerpt_units=10,
            retrieved_units=20,
            first_relevant_rank=1 if recall[i] > 0 else 0,
            excerpt_coverage=(float(recall[i]),),
            scores={
                **dict.fromkeys(METRICS),
                "recall": float(recall[i]),
                "precision": float(precision[i]),
                "iou": float(iou[i]),
                "f1": 2 * float(iou[i]) / (1 + float(iou[i])),
                "precision_omega": _opt(omega[i]),
            },
        )
        for i in range(n)
    ]

    def stats(rows: Sequence[QueryRecord]) -> dict[str, Any]:
        return {
            m: describe(np.array([q.metric(m) for q in rows], dtype=np.float64))
            for m in METRICS
        }

    groups = {
        g: stats([q for q in records if q.doc_id == g]) for g in sorted(set(docs))
    }
    return EvalResult(
        label=label or str(cfg["chunker"]),
        config=cfg,
        corpus_hash=corpus_hash,
        queries_hash=queries_hash,
        metrics=stats(records),
        groups=groups,
        queries=records,
        chunks={"count": 100, "mean_units": 180.0, "mean_chars": 800.0},
        timings={"chunk": 0.1, "embed": 0.2},
    )


def _opt(value: float | None) -> float | None:
    return None if value is None else float(value)


def spread(n: int, seed: int = 0) -> list[float]:
    """``n`` recall-like values in [0, 1], many at 0 and 1 like real ones."""
    rng = np.random.default_rng(seed)
    values = rng.choice(
        [0.0, 0.25, 0.5, 0.75, 1.0], size=n, p=[0.3, 0.1, 0.1, 0.1, 0.4]
    )
    return [float(v) for v in values]


def config_change_lines(baseline: Any, result: EvalResult) -> list[str]:
    """The configuration changes between a baseline and a result, as text."""
    from pytest_chunkeval.gate.comparison.changes import config_changes

    judged, refused = config_changes(baseline.config, result.config)
    return [str(c) for c in (*judged, *refused)]
