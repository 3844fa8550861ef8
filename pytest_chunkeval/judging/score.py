"""Judge what was retrieved for each query and score its context relevance.

The engine calls :func:`judge_retrieved` after retrieval, with the retrieved spans
per query; every query is judged (with or without excerpts). A query whose judge
answer was unusable gets no values (absent, never zero).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.judging.relevance import (
    CR_METRICS,
    SpanTuple,
    build_context,
    context_relevance,
    judged_corpus_spans,
)
from pytest_chunkeval.judging.run import Judging


@dataclass(frozen=True)
class JudgedQuery:
    """One query's judged spans (corpus coordinates) and its two measures (NaN
    when the judge gave no usable answer)."""

    judged: tuple[SpanTuple, ...]
    context_relevance: float
    context_relevance_tokens: float

    @property
    def ok(self) -> bool:
        return not math.isnan(self.context_relevance)

    def metric(self, name: str) -> float:
        if name not in CR_METRICS:
            raise KeyError(name)
        value: float = getattr(self, name)
        return value


ABSENT = JudgedQuery((), math.nan, math.nan)


def judge_retrieved(
    judging: Judging,
    queries: QuerySet,
    retrieved: Sequence[Sequence[SpanTuple]],
    corpus: Corpus,
    units: UnitMap,
) -> list[JudgedQuery]:
    """Judge each query's retrieved context (rank order) and score it."""
    texts = {d.id: d.text for d in corpus}
    contexts: list[tuple[str, list[int]]] = []
    items: list[tuple[str, str]] = []
    for q, spans in zip(queries, retrieved, strict=True):
        context, offsets = build_context([texts[d][s:e] for d, s, e in spans])
        contexts.append((context, offsets))
        items.append((q.text, context))
    judgments = judging.judge_all(items)
    out: list[JudgedQuery] = []
    for spans, (_, offsets), judgment in zip(
        retrieved, contexts, judgments, strict=True
    ):
        if judgment is None:
            out.append(ABSENT)
            continue
        judged = judged_corpus_spans(judgment, spans, offsets)
        r = context_relevance(spans, judged, texts, units)
        out.append(
            JudgedQuery(tuple(judged), r.context_relevance, r.context_relevance_tokens)
        )
    return out
