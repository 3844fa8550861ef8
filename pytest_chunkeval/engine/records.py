"""From per-query scores to an :class:`EvalResult`: each query's record (its
stored and chosen excerpt spans, retrieved spans, metrics, losses, judged
values) and the summaries, shared by ``evaluate`` and ``score``; and the one
builder of an :class:`EvalResult` (:func:`result_of`), which the relationship
evaluation uses too. Assembly only: the judge ran before (``judging/score.py``),
its judgments come in as a :class:`~pytest_chunkeval.judging.score.Judged`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.core.absent import present
from pytest_chunkeval.core.metrics import (
    JUDGED_METRICS,
    METRICS,
    MetricStats,
    QueryScores,
    QuerySpans,
    describe,
    summarize,
    without_ground_truth,
)
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.engine.results import (
    EvalResult,
    QueryRecord,
    SpanTuple,
    StageResult,
)

if TYPE_CHECKING:
    from pytest_chunkeval.judging.score import Judged, JudgedQuery


def losses_of(
    scores: QueryScores, exact: QueryScores | None
) -> dict[str, npt.NDArray[np.float64]]:
    """Per query, where recall was lost (docs/metrics.md); NaN where undefined."""
    ceiling, recall = scores.metric("ceiling"), scores.metric("recall")
    out = {"chunking": 1.0 - ceiling, "search": ceiling - scores.depth_recall}
    if exact is not None:
        out["approximation"] = exact.metric("recall") - recall
        out["exact_recall"] = exact.metric("recall")
        out["store_recall"] = recall
    return out


Scored = tuple[
    list[QueryRecord], dict[str, MetricStats], dict[str, dict[str, MetricStats]]
]
"""Each query's record, the summaries over all queries and per document group."""


def judging_for(judge: Any, cache_dir: Path, read_only: bool = False) -> Any:
    if judge is None:
        return None
    from pytest_chunkeval.judging.run import Judging
    from pytest_chunkeval.judging.specs import get_judge
    from pytest_chunkeval.llm.answers import AnswerCache

    if isinstance(judge, Judging):
        return judge
    answers = AnswerCache(cache_dir, read_only=read_only)
    return Judging(get_judge(judge), cache=answers)


def build_result(
    label: str,
    config: dict[str, Any],
    corpus: Corpus,
    queries: QuerySet,
    units: UnitMap,
    excerpts: QuerySpans,
    retrieved: QuerySpans,
    scores: QueryScores,
    chunk_stats: dict[str, float],
    timings: dict[str, float],
    chunk_spans: list[SpanTuple],
    stages: dict[str, StageResult] | None = None,
    judged: Judged | None = None,
    exact: QueryScores | None = None,
    evidence: list[dict[str, Any]] | None = None,
) -> EvalResult:
    """The result of an evaluation: each query's record, the summaries over
    queries and document groups, and what the evaluation measured besides
    (``judged``: the judge's judgments, its identity added to the result's
    configuration; ``config`` itself is left as given)."""
    scores = without_ground_truth(scores, [bool(q.excerpts) for q in queries])
    by_query = retrieved.to_lists(units.doc_ids, len(queries))
    judged_values: dict[str, Any] | None = None
    if judged is not None:
        timings = {**timings, "judge": timings.get("judge", 0.0) + judged.seconds}
        judged_values = judged.values()
        config = {**config, "judge": judged.identity}
    losses = losses_of(scores, exact)
    records = query_records(
        queries,
        scores,
        by_query,
        units.doc_ids,
        judged.queries if judged is not None else None,
        losses,
        evidence,
    )
    overall, groups = summarize(
        scores, [q.doc_id for q in queries], judged_values, metrics=METRICS
    )
    loss = {part: describe(v) for part, v in losses.items()}
    return result_of(
        label,
        config,
        corpus,
        queries,
        (records, overall, groups),
        (chunk_stats, chunk_spans),
        timings,
        stages=stages or {},
        loss={part: s for part, s in loss.items() if s.n > 0},
    )


def result_of(
    label: str,
    config: dict[str, Any],
    corpus: Corpus,
    queries: QuerySet,
    scored: Scored,
    chunks: tuple[dict[str, float], list[SpanTuple]],
    timings: dict[str, float],
    **parts: Any,
) -> EvalResult:
    """The result of an evaluation of ``corpus`` and ``queries``: its label and
    configuration, its records and summaries (``scored``), its chunks' stats and
    spans, its timings, and what the kind of evaluation adds (``stages``,
    ``loss``, ``graph``...)."""
    records, overall, groups = scored
    chunk_stats, chunk_spans = chunks
    return EvalResult(
        label=label,
        config=config,
        corpus_hash=corpus.content_hash,
        queries_hash=queries.content_hash,
        metrics=overall,
        groups=groups,
        queries=records,
        chunks=chunk_stats,
        timings=timings,
        chunk_spans=chunk_spans,
        corpus=corpus,
        **parts,
    )


def query_records(
    queries: QuerySet,
    scores: QueryScores,
    retrieved: list[list[SpanTuple]],
    doc_ids: tuple[str, ...],
    judged: Sequence[JudgedQuery] | None,
    losses: dict[str, npt.NDArray[np.float64]],
    evidence: list[dict[str, Any]] | None = None,
) -> list[QueryRecord]:
    """Each query's record from the per-query scores (absent values None), its
    retrieved spans, its judgment (None: not judged), where its recall was lost
    and what tells noise from a change (``evidence``)."""
    coverage = scores.excerpt_coverage.tolist()
    chosen = _spans_by_row(scores.chosen, doc_ids)
    # every column as a list first: indexing numpy arrays per query costs more
    # than the records (47,200 of them at 100x)
    metric = {m: _present(scores.metric(m)) for m in METRICS}
    counts = zip(
        *(
            np.asarray(a).astype(np.int64).tolist()
            for a in (
                scores.excerpt_units,
                scores.retrieved_units,
                scores.first_relevant_rank,
            )
        ),
        strict=True,
    )
    lost = {p: _present(v) for p, v in losses.items()}
    records, row = [], 0
    for i, (q, (units, taken, first)) in enumerate(zip(queries, counts, strict=True)):
        n_ex = len(q.excerpts)
        j = None if judged is None else judged[i]
        values = {m: column[i] for m, column in metric.items()}
        if j is not None:
            values.update((m, present(j.metric(m))) for m in JUDGED_METRICS)
        records.append(
            QueryRecord(
                id=q.id,
                question=q.text,
                doc_id=q.doc_id,
                excerpts=tuple((e.doc_id, e.start, e.end) for e in q.excerpts),
                retrieved=tuple(retrieved[i]),
                excerpt_units=units,
                retrieved_units=taken,
                first_relevant_rank=first,
                excerpt_coverage=tuple(coverage[row : row + n_ex]),
                scores=values,
                details={} if j is None else {"judged": [list(s) for s in j.judged]},
                loss={p: x for p, v in lost.items() if (x := v[i]) is not None},
                evidence=evidence[i] if evidence is not None else {},
                chosen=_differing(chosen[row : row + n_ex], q.excerpts),
                tags=q.tags,
            )
        )
        row += n_ex
    return records


def _present(values: npt.NDArray[Any]) -> list[float | None]:
    """``present()`` of each value: a float, None where NaN."""
    return [
        None if v != v else v  # NaN is the one value unequal to itself
        for v in np.asarray(values, dtype=np.float64).tolist()
    ]


def _spans_by_row(spans: QuerySpans, ids: tuple[str, ...]) -> list[SpanTuple]:
    return [
        (ids[d], s, e)
        for d, s, e in zip(
            spans.doc.tolist(), spans.start.tolist(), spans.end.tolist(), strict=True
        )
    ]


def _differing(chosen: list[SpanTuple], excerpts: Any) -> tuple[SpanTuple, ...]:
    """The chosen spans when any differs from the stored ones, else ``()``."""
    stored = [(e.doc_id, e.start, e.end) for e in excerpts]
    return () if chosen == stored else tuple(chosen)
