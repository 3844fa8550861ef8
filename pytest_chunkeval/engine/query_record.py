"""``QueryRecord``: one question's outcome in an :class:`~pytest_chunkeval.engine.
results.EvalResult` (its JSON is the ``queries`` list of the result's schema)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.core.metrics import METRICS

SpanTuple = tuple[str, int, int]


@dataclass(frozen=True)
class QueryRecord:
    """One query's outcome: every metric by name in :attr:`scores`."""

    id: str
    question: str
    doc_id: str
    excerpts: tuple[SpanTuple, ...]
    retrieved: tuple[SpanTuple, ...]
    excerpt_units: int
    retrieved_units: int
    first_relevant_rank: int  # 1-based, 0 = nothing relevant retrieved
    excerpt_coverage: tuple[float, ...]
    scores: Mapping[str, float | None] = field(default_factory=dict)
    """Every metric measured for this query, by its name in the metric table
    (core/metric_names.py; docs/metrics.md): the chunk metrics (``recall``...),
    the judged ones with a judge, the relationship ones of a relationship
    evaluation. ``None``: not measured for this query (no excerpts, no chunking,
    an unusable judgment), never 0."""
    details: Mapping[str, Any] = field(default_factory=dict)
    """What produced ``scores`` (e.g. the retrieved relationships), JSON values."""
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
    repeats (engine/repeats.py); empty: asked once. ``scores`` holds the means;
    ``retrieved`` and ``evidence`` are the first repeat's."""
    tags: tuple[str, ...] = ()
    """The question's tags (its ``metadata["tags"]``, docs/formats.md); the
    gate names tags beyond their own tolerance (docs/baselines.md)."""

    @property
    def scored_excerpts(self) -> tuple[SpanTuple, ...]:
        """The spans scored: ``chosen`` if any, else the stored ``excerpts``."""
        return self.chosen or self.excerpts

    def metric(self, name: str) -> float:
        """The value of metric ``name``; NaN when it was not measured."""
        value = self.scores.get(name)
        return math.nan if value is None else float(value)

    if not TYPE_CHECKING:  # the attributes of earlier releases, for one more

        def __getattr__(self, name: str) -> float | None:
            if name not in METRICS:
                raise AttributeError(
                    f"{type(self).__name__!r} object has no attribute {name!r}"
                )
            warnings.warn(
                f"QueryRecord.{name} is deprecated and goes in the next release: "
                f"use record.scores[{name!r}] (every metric by name, "
                "docs/metrics.md)",
                DeprecationWarning,
                stacklevel=2,
            )
            return self.scores.get(name)

    def to_json(self) -> dict[str, Any]:
        # built key by key (47,200 records at 100x); the chunk metrics are keys of
        # their own (the result's schema), the others under "scores"
        out: dict[str, Any] = {
            "id": self.id,
            "question": self.question,
            "doc_id": self.doc_id,
            "excerpts": [list(s) for s in self.excerpts],
            "retrieved": [list(s) for s in self.retrieved],
        }
        scores = self.scores
        for m in METRICS:
            out[m] = scores.get(m)
        out["excerpt_units"] = self.excerpt_units
        out["retrieved_units"] = self.retrieved_units
        out["first_relevant_rank"] = self.first_relevant_rank
        out["excerpt_coverage"] = list(self.excerpt_coverage)
        if self.chosen:
            out["chosen"] = [list(s) for s in self.chosen]
        others = {m: v for m, v in scores.items() if m not in _CHUNK}
        values = self.__dict__
        for name in ("loss", "evidence"):
            if values[name]:
                out[name] = dict(values[name])
        if others:
            out["scores"] = others
        if self.details:
            out["details"] = dict(self.details)
        if self.repeats:
            out["repeats"] = {m: list(v) for m, v in self.repeats.items()}
        if self.tags:
            out["tags"] = list(self.tags)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QueryRecord:
        # Results written before docs/metrics.md lack the rank metrics: None,
        # never 0.
        scores = {m: data.get(m) for m in METRICS}
        scores.update(data.get("scores", {}))
        return cls(
            id=data["id"],
            question=data["question"],
            doc_id=data["doc_id"],
            excerpts=tuple((s[0], int(s[1]), int(s[2])) for s in data["excerpts"]),
            retrieved=tuple((s[0], int(s[1]), int(s[2])) for s in data["retrieved"]),
            excerpt_units=data["excerpt_units"],
            retrieved_units=data["retrieved_units"],
            first_relevant_rank=data["first_relevant_rank"],
            excerpt_coverage=tuple(data["excerpt_coverage"]),
            scores=scores,
            details=dict(data.get("details", {})),
            loss=dict(data.get("loss", {})),
            chosen=tuple((s[0], int(s[1]), int(s[2])) for s in data.get("chosen", [])),
            evidence=dict(data.get("evidence", {})),
            repeats={
                m: (float(v[0]), float(v[1]), int(v[2]))
                for m, v in data.get("repeats", {}).items()
            },
            tags=tuple(str(t) for t in data.get("tags", ())),
        )


_CHUNK = frozenset(METRICS)
