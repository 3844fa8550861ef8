"""Scoring a whole retriever (docs/concepts.md#the-metrics-of-one-query without a
chunking): what a callable, an object with ``.retrieve``/``.invoke`` or a mapping
returned for each question, located in the corpus (engine/locating.py), asked
again when its answers vary (engine/reask.py) and scored like chunks
(:func:`score`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.config.scoring import DEFAULT_COPIES
from pytest_chunkeval.core.metrics import (
    QueryScores,
    QuerySpans,
    score_queries,
    without_ground_truth,
)
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.engine.chunking import stage_result
from pytest_chunkeval.engine.locating import (
    LocatedResults,
    RetrievedItem,
    Retriever,
)
from pytest_chunkeval.engine.reask import Answers, Asker, Probe, ask
from pytest_chunkeval.engine.records import build_result
from pytest_chunkeval.engine.repeats import REPEATED_METRICS, per_question, with_repeats
from pytest_chunkeval.engine.results import EvalResult, SpanTuple, StageResult
from pytest_chunkeval.engine.retrieve import timed as _timed
from pytest_chunkeval.engine.setup import (
    EvaluationError,
    EvaluationSetup,
    check_ground_truth,
    check_queries,
)
from pytest_chunkeval.tokenizers.base import Tokenizer


def _candidate_stage(
    pools: Sequence[Sequence[SpanTuple]],
    results: Sequence[Sequence[SpanTuple]],
    setup: EvaluationSetup,
) -> StageResult:
    """A two-stage retriever's pool, measured at ``k`` = each query's result count."""
    k_final = np.array([len(r) for r in results], dtype=np.int64)
    units = setup.units
    return stage_result(
        "candidates",
        max((len(p) for p in pools), default=0),
        units,
        setup.excerpts,
        QuerySpans.from_lists(pools, units),
        QuerySpans.from_lists(
            [p[:k] for p, k in zip(pools, k_final.tolist(), strict=True)], units
        ),
        k_final,
        len(pools),
        setup.excerpt_copies,
    )


def score(
    retrieved: Mapping[str, Sequence[RetrievedItem]] | Retriever | Any,
    corpus: Corpus,
    queries: QuerySet,
    *,
    k: int | None = None,
    unit: str = "token",
    tokenizer: str | Tokenizer | None = None,
    label: str = "retriever",
    config: Mapping[str, Any] | None = None,
    judge: Any = None,
    cache: str | Path | None = None,
    locate: str = "exact",
    copies: str = DEFAULT_COPIES,
    setup: EvaluationSetup | None = None,
    repeats: int | None = None,
    factory: bool = False,
    noisy: bool = False,
) -> EvalResult:
    """Score a whole retriever: ``retrieved`` maps query id -> results, or is called
    with each question (or is what :func:`locate_results` returned). Results are
    texts (placed in the corpus, ``locate``: ``exact`` or ``normalized``, see
    :mod:`~pytest_chunkeval.engine.placing`) or spans; with ``k``, only the first
    ``k`` of each question count, as a store's top ``k`` do in :func:`evaluate`.

    A two-stage retriever may answer a :class:`TwoStage` (or a mapping with
    ``"candidates"`` and ``"results"``): ``result.stages["candidates"]`` then holds
    the pool's recall, its first ``k``'s (``k`` = the number of results) and its
    ``ceiling``, the best any ``k`` of its rows reach, beside the final recall.

    ``copies``: ``"any"`` scores each excerpt at the copy of its text the results
    reach best and places a text found more than once at the occurrence nearest
    the question's excerpts; ``"strict"`` scores the stored spans and refuses such
    a text (docs/concepts.md, "Identical text").

    ``precision_omega``, ``ndcg`` and ``ceiling`` need a chunking: left out
    (``None``). ``judge`` adds the judged metrics, as in :func:`evaluate`, cached
    under ``cache`` (default: the evaluation cache). ``setup``: the data and
    settings resolved already (then ``unit``, ``tokenizer``, ``cache`` and
    ``copies`` are its own).

    Repeats (docs/baselines.md, "Repeats"): every question is asked twice; when
    an answer differs the retriever is noisy, and each question (a fixed sample
    of 200 on larger sets) is asked until it has ``repeats`` answers (default 8
    under 50 questions, else 4), its values the mean of theirs.
    ``factory=True``: ``retrieved`` is a function building a fresh retriever for
    every ask (noise that shows only between processes); ``noisy=True``
    declares the retriever noisy (repeated without the test).
    """
    check_queries(queries)
    check_ground_truth(queries, judge, None)
    if setup is None:
        setup = EvaluationSetup.resolve(
            corpus,
            queries,
            store=None,
            unit=unit,
            tokenizer=tokenizer,
            cache=cache,
            copies=copies,
        )
    setup = _with_call(setup, retrieved, k, locate=locate, judge=judge, repeats=repeats)
    asker = None
    if isinstance(retrieved, LocatedResults):
        retrieved = Answers((retrieved,))
    elif not isinstance(retrieved, Answers):
        asker = Asker(retrieved, corpus, queries, k=k, locate=locate, factory=factory)
        asker.copies = setup.copies
        retrieved = ask(asker, repeats, noisy=noisy)
    extra = dict(config) if config else {}
    judging = setup.judging(judge)

    def rescore(answers: Answers) -> EvalResult:
        return scored(setup, answers, label, extra, judging)

    result = rescore(retrieved)
    if asker is not None:
        result.probe = Probe(asker, retrieved, rescore, repeats)
    return result


def _with_call(
    setup: EvaluationSetup, retrieved: Any, k: int | None, **settings: Any
) -> EvaluationSetup:
    """``setup`` with this call's own settings in its spec (what the record
    says): ``k`` when given (results located already: what they were cut to)."""
    if k is None and isinstance(retrieved, LocatedResults):
        k = retrieved.k
    return setup.with_run(**settings, **({} if k is None else {"k": k}))


def scored(
    setup: EvaluationSetup,
    answers: Answers,
    label: str,
    config: dict[str, Any],
    judging: Any,
) -> EvalResult:
    """The result of a whole retriever's answers: the first ask's, with the
    repeated questions' means (engine/repeats.py)."""
    result = _scored(setup, answers.first, label, dict(config), judging)
    if not answers.sampled:
        return result
    with _timed(result.timings, "score"):
        columns = [_columns(setup, located) for located in answers.asks]
        values = per_question(columns)
        repeated = {i: values[i] for i in answers.sampled}
    return with_repeats(result, repeated, answers.noise())


def _columns(
    setup: EvaluationSetup, located: LocatedResults
) -> dict[str, npt.NDArray[np.float64]]:
    """Per repeated metric, each question's value in one ask (NaN: absent)."""
    n = len(setup.queries)
    spans = QuerySpans.from_lists([list(s) for s in located.per_query], setup.units)
    scores = without_ground_truth(
        score_queries(
            setup.units, setup.excerpts, spans, n, copies=setup.excerpt_copies
        ),
        [bool(q.excerpts) for q in setup.queries],
    )
    return {m: scores.metric(m) for m in REPEATED_METRICS}


def _scored(
    setup: EvaluationSetup,
    located: LocatedResults,
    label: str,
    config: dict[str, Any],
    judging: Any,
) -> EvalResult:
    """The result of a whole retriever's located results."""
    n = len(setup.queries)
    if len(located.per_query) != n:
        raise EvaluationError(
            f"results for {len(located.per_query)} queries, the query set has {n}"
        )
    per_query = [list(spans) for spans in located.per_query]
    timings: dict[str, float] = {"retrieve": located.seconds}
    stages: dict[str, StageResult] = {}
    with _timed(timings, "score"):
        spans = QuerySpans.from_lists(per_query, setup.units)
        scores = score_queries(
            setup.units, setup.excerpts, spans, n, copies=setup.excerpt_copies
        )
        if located.candidates is not None:
            stages["candidates"] = _candidate_stage(
                located.candidates, per_query, setup
            )
    judged = None
    if judging is not None:
        from pytest_chunkeval.judging.score import judge_retrieved

        judged = judge_retrieved(
            judging, setup.queries, spans, setup.corpus, setup.units
        )
    return build_result(
        label,
        setup.config(label, **config),
        setup.corpus,
        setup.queries,
        setup.units,
        setup.excerpts,
        spans,
        scores,
        _result_stats(located, spans, scores, setup.units),
        timings,
        [],
        stages,
        judged=judged,
    )


def _result_stats(
    located: LocatedResults, spans: QuerySpans, scores: QueryScores, units: UnitMap
) -> dict[str, float]:
    """What a whole retriever returned, as a chunking's stats: the results'
    count and mean size, per query, and the units sent."""
    lo, hi = units.to_units(spans.doc, spans.start, spans.end)
    sizes = (spans.end - spans.start).astype(np.float64)
    n = len(located.per_query)
    return {
        "count": int(sizes.size),
        "mean_units": float((hi - lo).mean()) if sizes.size else 0.0,
        "mean_chars": float(sizes.mean()) if sizes.size else 0.0,
        "results_per_query": located.mean_results,
        "sent_units": float(scores.retrieved_units.mean()) if n else 0.0,
    }
