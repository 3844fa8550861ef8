"""The evaluation engine: chunk, embed (cached), index, retrieve, score
(docs/retrieval.md).

``evaluate`` measures a chunker inside the report's retrieval protocol; ``score``
measures whatever a user's own retriever returns. Both produce an ``EvalResult``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pytest_chunkeval.chunkers import Chunker
from pytest_chunkeval.config.defaults import (
    DEFAULT_EMBEDDER,
    DEFAULT_K,
    DEFAULT_STORE,
    K,
    check_budget,
    check_k,
)
from pytest_chunkeval.config.scoring import DEFAULT_COPIES
from pytest_chunkeval.core.metrics import QueryScores, QuerySpans, score_queries
from pytest_chunkeval.core.query_spans import columns
from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.base import Embedder
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.engine.cache_dir import CacheDir
from pytest_chunkeval.engine.chunk_texts import ChunkTexts
from pytest_chunkeval.engine.chunking import (
    Chunking,
    budget_ranks,
    retrieval_stages,
    spans_of,
)
from pytest_chunkeval.engine.evidence import approximate, noise_evidence, search
from pytest_chunkeval.engine.keys import collection_key, result_key
from pytest_chunkeval.engine.margins import declared_epsilon
from pytest_chunkeval.engine.rebuilds import Repeated, rebuilt_scores
from pytest_chunkeval.engine.records import build_result
from pytest_chunkeval.engine.repeats import with_repeats
from pytest_chunkeval.engine.result_cache import (
    read_result,
    store_result,
)
from pytest_chunkeval.engine.results import EvalResult, StageResult
from pytest_chunkeval.engine.retrieve import RetrievalInputs
from pytest_chunkeval.engine.retrieve import timed as _timed
from pytest_chunkeval.engine.setup import (
    EvaluationSetup,
    check_ground_truth,
    check_queries,
)
from pytest_chunkeval.stores import AnyStore
from pytest_chunkeval.stores.rerank import Reranker, get_reranker
from pytest_chunkeval.tokenizers.base import Tokenizer


def evaluate(
    chunker: str | Chunker | Callable[[str], Any],
    corpus: Corpus,
    queries: QuerySet,
    *,
    embedder: str | Embedder | Callable[[list[str]], Any] = DEFAULT_EMBEDDER,
    store: str | AnyStore = DEFAULT_STORE,
    rerank: str | Reranker | None = None,
    k: K = DEFAULT_K,
    budget: int | None = None,
    unit: str = "token",
    tokenizer: str | Tokenizer | None = None,
    cache: CacheDir | EmbeddingCache | str | Path | None = None,
    progress: bool | None = None,
    label: str | None = None,
    chunking: Chunking | None = None,
    judge: Any = None,
    copies: str = DEFAULT_COPIES,
    setup: EvaluationSetup | None = None,
    repeats: int | None = None,
) -> EvalResult:
    """Chunk every document, embed chunks and queries (cached), index them all in one
    store, retrieve ``k`` chunks per query (``"min"``: as many as overlap its
    excerpts) and score the retrieved spans at the token (or char) level.

    ``store`` searches vectors (``exact``, ``chroma``), texts (``bm25``: no embedder
    runs) or both (``hybrid``); ``rerank`` re-scores its top candidates
    (``cross-encoder:PATH?n=20``) and keeps ``k`` (each stage's recall in
    ``result.stages``). ``budget`` (units per query, docs/metrics.md): the presence
    metrics and ``complete`` read the ranks whose summed length fits it.
    ``copies``: ``"any"`` scores each excerpt at the copy of its text the scored
    ranks reach best, ``"strict"`` at its stored span (docs/concepts.md, "Identical
    text"). ``judge`` (``"llm:MODEL"``, a registered name, a judge or a
    ``Judging``) also judges each retrieved context (docs/judged.md), cached beside
    the embeddings. ``chunking``: the chunks of ``chunker`` when the caller has
    them. ``setup``: the data and components resolved already (the plugin
    resolves them once per configuration); ``embedder``, ``store``, ``unit``,
    ``tokenizer``, ``cache`` and ``copies`` are then its own. ``repeats``: times
    a store that declares approximate search is built (default 3; each
    question's value the mean over the builds, docs/baselines.md, "Repeats")."""
    check_queries(queries)
    k = check_k(k)
    budget = check_budget(budget)
    check_ground_truth(queries, judge, k)
    setup = EvaluationSetup.given_or_resolved(
        setup, chunker, corpus, queries, embedder, store, unit, tokenizer, cache, copies
    ).with_run(k=k, budget=budget, rerank=rerank, judge=judge)
    if repeats is not None:
        setup = setup.with_run(repeats=repeats)
    reranker = get_reranker(rerank) if rerank is not None else None
    config = setup.config(
        setup.chunker.name if setup.chunker is not None else "",
        **(
            {"rerank": reranker.identity, "rerank_candidates": reranker.candidates}
            if reranker is not None
            else {}
        ),
    )
    # a judged evaluation is never cached (docs/performance.md, "The result cache")
    key = result_key(setup, config, label=label, chunking=chunking, reranker=reranker)
    stored = setup.cache.store("results")
    found = read_result(stored, key, setup, config) if key is not None else None
    if found is not None:
        return found
    timings = dict.fromkeys(("chunk", "embed", "index", "search", "score"), 0.0)
    with _timed(timings, "chunk"):
        chunking = setup.chunking(chunking)
    inputs = _inputs(setup, chunking, timings, progress)
    with _timed(timings, "score"):
        ranks = _depths(setup, chunking, k, budget)
    scored = _retrieve(setup, chunking, inputs, ranks, budget, reranker, timings)
    del inputs  # the vectors, before the records are built (docs/performance.md)
    result = _assemble(setup, chunking, scored, config, timings, label, judge, budget)
    if scored.repeated is not None:
        result = with_repeats(result, *scored.repeated)
    if key is not None and chunking.fallback_share is None:
        store_result(stored, key, result)
    return result


def _assemble(
    setup: EvaluationSetup,
    chunking: Chunking,
    scored: _Scored,
    config: dict[str, Any],
    timings: dict[str, float],
    label: str | None,
    judge: Any,
    budget: int | None,
) -> EvalResult:
    """The result: records, summaries, chunk stats and (with a budget) what the
    budget kept."""
    n = len(setup.queries)
    scores = scored.scores
    chunk_stats = setup.chunk_stats(chunking)
    # Units sent to the LLM per query (|tr|): the cost axis of a budget sweep.
    chunk_stats["sent_units"] = float(scores.retrieved_units.mean()) if n else 0.0
    judging, judged = setup.judging(judge), None
    if judging is not None:
        from pytest_chunkeval.judging.score import judge_retrieved

        judged = judge_retrieved(
            judging, setup.queries, scored.retrieved, setup.corpus, setup.units
        )
    result = build_result(
        label or config["chunker"],
        config,
        setup.corpus,
        setup.queries,
        setup.units,
        setup.excerpts,
        scored.retrieved,
        scores,
        chunk_stats,
        timings,
        chunking.spans(),
        scored.stages,
        exact=scored.exact,
        judged=judged,
        evidence=scored.evidence,
    )
    if budget is not None:
        result.budget = {
            "budget": budget,
            "over_budget": float(scores.over_budget.mean()) if n else 0.0,
            "mean_units": chunk_stats["sent_units"],
        }
    return result


def _inputs(
    setup: EvaluationSetup,
    chunking: Chunking,
    timings: dict[str, float],
    progress: bool | None,
) -> RetrievalInputs:
    """The texts to search and, for a vector store, the key of their collection,
    the questions' vectors now (they key the search cache) and the chunks' when a
    search needs them (through the cache), so a warm run never reads those."""
    texts = ChunkTexts([d.text for d in chunking.corpus], chunking.doc, chunking.bounds)
    inputs = RetrievalInputs(
        texts, [q.text for q in setup.queries], chunk_bounds=chunking.bounds
    )
    embedder, cache = setup.embedder, setup.cache.embeddings
    name = setup.chunker.name if setup.chunker is not None else "the chunker"
    if embedder is None:
        return inputs
    with _timed(timings, "embed", f"questions of {name}"):
        inputs.query_vectors = cache.embed(
            embedder, inputs.query_texts, progress=progress
        )

    def load() -> Any:  # not through ``inputs``: no cycle keeps the vectors alive
        with _timed(timings, "embed", f"chunks of {name}"):
            return cache.embed(embedder, texts, progress=progress)

    inputs.chunk_vector_loader = load
    inputs.collection_key = collection_key(
        chunking.digest(), embedder, inputs.vectors_of_chunks
    )
    return inputs


def _depths(
    setup: EvaluationSetup, chunking: Chunking, k: K, budget: int | None
) -> tuple[IntArray, IntArray, IntArray]:
    """Per query, the ``k`` asked (its Ω count for ``"min"``), the depth scored
    (at most the chunk count) and the ranks to fetch (enough to pass a budget)."""
    n = len(setup.queries)
    chunk_index = chunking.index(setup.units)
    per_query_k = (
        chunk_index.omega_counts(setup.units, setup.excerpts, n)
        if k == "min"
        else np.full(n, k, dtype=np.int64)
    )
    depth = np.minimum(per_query_k, len(chunking))
    fetch = per_query_k  # the search cache is keyed on the depth asked
    if budget is not None:
        chunk_units = chunk_index.unit_hi - chunk_index.unit_lo
        fetch = np.maximum(depth, budget_ranks(chunk_units, budget))
    return per_query_k, depth, fetch


@dataclass(frozen=True)
class _Scored:
    retrieved: QuerySpans
    scores: QueryScores
    stages: dict[str, StageResult]
    exact: QueryScores | None
    evidence: list[dict[str, Any]]
    repeated: Repeated | None = None


def _retrieve(
    setup: EvaluationSetup,
    chunking: Chunking,
    inputs: RetrievalInputs,
    ranks: tuple[IntArray, IntArray, IntArray],
    budget: int | None,
    reranker: Reranker | None,
    timings: dict[str, float],
) -> _Scored:
    """Search (cached), then score the store's lists, each earlier stage's, and
    (an approximate store) exact search's; with what tells noise from a change,
    and an approximate store's other builds (engine/rebuilds.py)."""
    n = len(setup.queries)
    store = setup.store
    assert store is not None
    per_query_k, depth, fetch = ranks
    k_max = int(fetch.max()) if n else 0
    cache = setup.cache.search
    found, reference = search(store, inputs, k_max, cache, timings, reranker=reranker)
    with _timed(timings, "score"):
        scored_at = functools.partial(  # unlike a closure, no Python frame
            score_queries,
            setup.units,
            setup.excerpts,
            depth=depth,
            budget=budget,
            copies=setup.excerpt_copies,
        )
        index = chunking.index(setup.units)
        listed = spans_of(found.ids, fetch, chunking)
        scores = scored_at(listed, n, index)
        stages = retrieval_stages(
            found.stages,
            per_query_k,
            chunking,
            setup.units,
            setup.excerpts,
            n,
            setup.excerpt_copies,
        )
        exact = None
        if reference is not None and approximate(store):
            exact_listed = spans_of(reference.ids[:, :k_max], fetch, chunking)
            exact = scored_at(exact_listed, n, index)
    repeated = rebuilt_scores(
        store,
        inputs,
        k_max,
        cache,
        timings,
        first=(found, scores),
        scored=lambda ids: scored_at(spans_of(ids, fetch, chunking), n, index),
        has_excerpts=[bool(q.excerpts) for q in setup.queries],
        reranker=reranker,
        configured=setup.spec.repeats,
    )
    taken = listed.query[scores.kept] if budget is not None else None
    epsilon = declared_epsilon(setup.embedder)
    evidence = noise_evidence(
        store, inputs, found, reference, fetch, depth, taken, epsilon
    )
    retrieved = QuerySpans(*(a[scores.kept] for a in columns(listed)))
    return _Scored(retrieved, scores, stages, exact, evidence, repeated)
