"""Judge what was retrieved for each query and score its context relevance.

The engine calls :func:`judge_retrieved` after retrieval, with the retrieved spans
of every query; every query is judged (with or without excerpts). A query whose
judge answer was unusable gets no values (absent, never zero). What it returns,
:class:`Judged`, is what the result's records and summaries take.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.core.query_spans import QuerySpans
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
    """One query's judged spans (corpus coordinates) and its judged metrics by name
    (NaN when the judge gave no usable answer)."""

    judged: tuple[SpanTuple, ...]
    scores: Mapping[str, float]

    def metric(self, name: str) -> float:
        return self.scores[name]


ABSENT = JudgedQuery((), dict.fromkeys(CR_METRICS, math.nan))


@dataclass(frozen=True)
class Judged:
    """Every query's judgment in one evaluation, by the judge ``identity``."""

    identity: str
    queries: tuple[JudgedQuery, ...]
    seconds: float
    """How long judging took (the result's ``judge`` timing)."""

    def values(self) -> dict[str, npt.NDArray[np.float64]]:
        """Per judged metric, each query's value (NaN: no usable judgment)."""
        return {
            m: np.array([j.metric(m) for j in self.queries], dtype=np.float64)
            for m in CR_METRICS
        }


def judge_retrieved(
    judging: Judging,
    queries: QuerySet,
    retrieved: QuerySpans,
    corpus: Corpus,
    units: UnitMap,
) -> Judged:
    """Judge each query's retrieved context (rank order) and score it."""
    started = time.perf_counter()
    texts = {d.id: d.text for d in corpus}
    per_query = retrieved.to_lists(units.doc_ids, len(queries))
    contexts: list[tuple[str, list[int]]] = []
    items: list[tuple[str, str]] = []
    for q, spans in zip(queries, per_query, strict=True):
        context, offsets = build_context([texts[d][s:e] for d, s, e in spans])
        contexts.append((context, offsets))
        items.append((q.text, context))
    judgments = judging.judge_all(items)
    out: list[JudgedQuery] = []
    for spans, (_, offsets), judgment in zip(
        per_query, contexts, judgments, strict=True
    ):
        if judgment is None:
            out.append(ABSENT)
            continue
        judged = judged_corpus_spans(judgment, spans, offsets)
        r = context_relevance(spans, judged, texts, units)
        # each judged metric of the table is the field of its name (relevance.py)
        scores = {m: float(getattr(r, m)) for m in CR_METRICS}
        out.append(JudgedQuery(tuple(judged), scores))
    seconds = time.perf_counter() - started
    return Judged(judging.judge.identity, tuple(out), seconds)
