"""``QueryRecord``: one question's outcome in an :class:`~pytest_chunkeval.engine.
results.EvalResult` (its JSON is the ``queries`` list of the result's schema)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_chunkeval.core.metrics import METRICS, RANK_METRICS

SpanTuple = tuple[str, int, int]


@dataclass(frozen=True)
class QueryRecord:
    """One query's outcome."""

    id: str
    question: str
    doc_id: str
    excerpts: tuple[SpanTuple, ...]
    retrieved: tuple[SpanTuple, ...]
    recall: float | None  # the chunk metrics: None when not measured
    precision: float | None
    iou: float | None
    f1: float | None
    precision_omega: float | None
    excerpt_units: int
    retrieved_units: int
    first_relevant_rank: int  # 1-based, 0 = nothing relevant retrieved
    excerpt_coverage: tuple[float, ...]
    scores: Mapping[str, float | None] = field(default_factory=dict)
    """Metrics other than the chunk metrics (e.g. ``rel_recall``), by name."""
    details: Mapping[str, Any] = field(default_factory=dict)
    """What produced ``scores`` (e.g. the retrieved relationships), JSON values."""
    mrr: float | None = None  # docs/metrics.md; None when not measured
    ndcg: float | None = None  # None without a chunking
    complete: float | None = None
    ceiling: float | None = None  # None without a chunking
    loss: Mapping[str, float] = field(default_factory=dict)
    """Where this query's recall was lost (``chunking``, ``search``...)."""
    evidence: Mapping[str, Any] = field(default_factory=dict)
    """What tells noise from a real change of this query (engine/evidence.py):
    ``found``, ``margin``, ``order``, ``exact``; empty when none was measured."""
    chosen: tuple[SpanTuple, ...] = ()
    """Per stored excerpt, the span scored when it differs from the stored one
    (the copy of its text the retriever reached, docs/concepts.md); empty when
    every excerpt was scored at its stored span."""
    repeats: Mapping[str, tuple[float, float, int]] = field(default_factory=dict)
    """Per metric, ``(mean, sample variance (r - 1), r)`` of this question's
    repeats (engine/repeats.py); empty: asked once. The metric fields hold the
    means; ``retrieved`` and ``evidence`` are the first repeat's."""

    @property
    def scored_excerpts(self) -> tuple[SpanTuple, ...]:
        """The spans scored: ``chosen`` if any, else the stored ``excerpts``."""
        return self.chosen or self.excerpts

    def metric(self, name: str) -> float:
        value = self.scores[name] if name in self.scores else getattr(self, name)
        return math.nan if value is None else float(value)

    def to_json(self) -> dict[str, Any]:
        # built key by key (47,200 records at 100x)
        out: dict[str, Any] = {
            "id": self.id,
            "question": self.question,
            "doc_id": self.doc_id,
            "excerpts": [list(s) for s in self.excerpts],
            "retrieved": [list(s) for s in self.retrieved],
        }
        values = self.__dict__
        for m in METRICS:
            out[m] = values[m]
        out["excerpt_units"] = self.excerpt_units
        out["retrieved_units"] = self.retrieved_units
        out["first_relevant_rank"] = self.first_relevant_rank
        out["excerpt_coverage"] = list(self.excerpt_coverage)
        if self.chosen:
            out["chosen"] = [list(s) for s in self.chosen]
        for name in ("loss", "evidence", "scores", "details"):
            if values[name]:
                out[name] = dict(values[name])
        if self.repeats:
            out["repeats"] = {m: list(v) for m, v in self.repeats.items()}
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QueryRecord:
        return cls(
            id=data["id"],
            question=data["question"],
            doc_id=data["doc_id"],
            excerpts=tuple((s[0], int(s[1]), int(s[2])) for s in data["excerpts"]),
            retrieved=tuple((s[0], int(s[1]), int(s[2])) for s in data["retrieved"]),
            recall=data["recall"],
            precision=data["precision"],
            iou=data["iou"],
            f1=data["f1"],
            precision_omega=data["precision_omega"],
            excerpt_units=data["excerpt_units"],
            retrieved_units=data["retrieved_units"],
            first_relevant_rank=data["first_relevant_rank"],
            excerpt_coverage=tuple(data["excerpt_coverage"]),
            scores=dict(data.get("scores", {})),
            details=dict(data.get("details", {})),
            # Results written before docs/metrics.md lack these: None, never 0.
            **{m: data.get(m) for m in RANK_METRICS},
            loss=dict(data.get("loss", {})),
            chosen=tuple((s[0], int(s[1]), int(s[2])) for s in data.get("chosen", [])),
            evidence=dict(data.get("evidence", {})),
            repeats={
                m: (float(v[0]), float(v[1]), int(v[2]))
                for m, v in data.get("repeats", {}).items()
            },
        )
