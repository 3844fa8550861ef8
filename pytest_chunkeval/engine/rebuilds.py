"""An approximate store's index built ``r`` times (docs/baselines.md, "Repeats").

A store that declares ``approximate = True`` (Chroma's HNSW) returns results
that depend on the order its vectors were inserted in and on its seeds: the
same vectors indexed again can rank a near tie the other way. Its index is
built ``r`` times (default 3, ``chunkeval_repeats``): the store's own index,
then ``rebuild(seed)`` for seeds ``1 .. r - 1``; each question's value is the
mean over the builds. Each build's rows are cached under its seed (a warm run
builds nothing); the time spent building and searching again is the repeats'
cost (``rebuild_seconds``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from pytest_chunkeval.core.metrics import QueryScores, without_ground_truth
from pytest_chunkeval.engine.repeats import (
    REPEATED_METRICS,
    Values,
    per_question,
    store_rebuilds,
)
from pytest_chunkeval.engine.retrieve import RetrievalInputs, retrieve
from pytest_chunkeval.engine.search_cache import SearchCache
from pytest_chunkeval.stores._base import IdArray, Retrieval, is_approximate
from pytest_chunkeval.stores.rerank import Reranker

Repeated = tuple[dict[int, Values], dict[str, Any]]
"""The values of each question in each build, and what the builds found."""


def builds(store: object, configured: int | None = None) -> int:
    """Times ``store``'s index is built: ``r`` for an approximate one, else 1."""
    return store_rebuilds(configured) if is_approximate(store) else 1


def rebuilt_scores(
    store: object,
    inputs: RetrievalInputs,
    k_max: int,
    cache: SearchCache,
    timings: dict[str, float],
    *,
    first: tuple[Retrieval, QueryScores],
    scored: Callable[[IdArray], QueryScores],
    has_excerpts: list[bool],
    reranker: Reranker | None = None,
    configured: int | None = None,
) -> Repeated | None:
    """Every question's values over ``r`` builds (``first``: the store's own
    index, its rows and scores; ``scored``: the scores of other rows), and the
    noise record; None for a store that does not declare approximate search."""
    r = builds(store, configured)
    if r < 2:
        return None
    found, scores = first
    began = time.perf_counter()
    all_scores = [scores]
    differ = False
    for seed in range(1, r):
        again = retrieve(
            store,  # type: ignore[arg-type]
            inputs,
            k_max,
            cache,
            timings,
            reranker=reranker,
            seed=seed,
        )
        differ = differ or not np.array_equal(again.ids, found.ids)
        all_scores.append(scored(again.ids))
    seconds = time.perf_counter() - began
    columns: list[Mapping[str, Any]] = []
    for s in all_scores:
        s = without_ground_truth(s, has_excerpts)
        columns.append({m: s.metric(m) for m in REPEATED_METRICS})
    values = per_question(columns)
    return dict(enumerate(values)), {
        "noisy": ["store"] if differ else [],
        "repeats": r,
        "rebuild_seconds": round(seconds, 3),
    }
