"""The evaluation engine: chunk, embed (cached), index, retrieve, score
(docs/retrieval.md).

``evaluate`` measures a chunker inside the report's retrieval protocol; ``score``
measures whatever a user's own retriever returns. Both produce an ``EvalResult``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pytest_chunkeval.chunkers import Chunker, get_chunker
from pytest_chunkeval.config.defaults import (
    DEFAULT_EMBEDDER,
    DEFAULT_K,
    DEFAULT_STORE,
    K,
    check_budget,
    check_k,
    check_unit,
)
from pytest_chunkeval.config.scoring import DEFAULT_COPIES, check_copies
from pytest_chunkeval.config.specs import SpecError
from pytest_chunkeval.core.metrics import (
    QuerySpans,
    score_queries,
)
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.base import Embedder
from pytest_chunkeval.embedders.cache import EmbeddingCache, default_cache_dir
from pytest_chunkeval.embedders.registry import EMBEDDERS, get_embedder
from pytest_chunkeval.engine.chunking import (
    Chunking,
    _excerpt_spans,
    _spans_of,
    _stages,
    budget_ranks,
    unit_map,
)
from pytest_chunkeval.engine.copies import copies_for, scoring_config
from pytest_chunkeval.engine.evidence import approximate, noise_evidence, search
from pytest_chunkeval.engine.records import build_result, judging_for
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.engine.retrieve import RetrievalInputs
from pytest_chunkeval.engine.retrieve import timed as _timed
from pytest_chunkeval.engine.search_cache import SearchCache
from pytest_chunkeval.errors import DataError
from pytest_chunkeval.stores import AnyStore, get_store, uses_vectors
from pytest_chunkeval.stores.rerank import Reranker, get_reranker
from pytest_chunkeval.tokenizers.base import Tokenizer, get_tokenizer


class EvaluationError(DataError):
    """The inputs of an evaluation do not fit together; the message says where."""


def _resolve_cache(cache: EmbeddingCache | str | Path | None) -> EmbeddingCache:
    if isinstance(cache, EmbeddingCache):
        return cache
    return EmbeddingCache(default_cache_dir() if cache is None else cache)


def _check_queries(queries: QuerySet) -> None:
    # Zero questions would give empty means and a baseline that always passes.
    if len(queries) == 0:
        source = queries.source or "the query set"
        raise EvaluationError(
            f"{source} holds no query: an evaluation needs at least one question "
            "(a query file with only its header line loads none)"
        )


def _spec_of(value: object, resolved_name: str) -> str:
    return value if isinstance(value, str) else resolved_name


def _embedder_label(value: object, identity: str) -> str:
    """The embedder's canonical spec (``hashing`` -> ``hashing:256``), else its
    identity (objects)."""
    if not isinstance(value, str):
        return identity
    try:
        return EMBEDDERS.label(value)
    except SpecError:  # resolved already: only a hook-registered oddity gets here
        return value.strip()


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
    cache: EmbeddingCache | str | Path | None = None,
    progress: bool | None = None,
    label: str | None = None,
    chunking: Chunking | None = None,
    judge: Any = None,
    copies: str = DEFAULT_COPIES,
) -> EvalResult:
    """Chunk every document, embed chunks and queries (cached), index them all in one
    store, retrieve ``k`` chunks per query (``"min"``: as many as overlap its
    excerpts) and score the retrieved spans at the token (or char) level.

    ``judge`` (``"llm:MODEL"``, a registered name, a judge or a ``Judging``) also
    judges each retrieved context: ``context_relevance`` and its token variant
    (docs/judged.md#the-two-measures), needed for questions without excerpts. Judgments
    are cached beside the embedding cache.

    ``store`` may search vectors (``exact``, ``chroma``), texts (``bm25``: no
    embedder runs) or both (``hybrid``); ``rerank`` re-scores the store's top
    candidates (``cross-encoder:PATH?n=20``) and keeps ``k``. Earlier stages' recall
    is in ``result.stages``. ``chunking``: the chunks of ``chunker`` on ``corpus``
    when the caller has them already (the plugin chunks once to key its memo).

    ``budget`` (units per query, docs/metrics.md) scores, for the presence metrics
    and ``complete``, the ranks whose summed length fits it (whole chunks; the first
    that does not fit ends the list); mrr, ndcg and ceiling read the first ``k``
    ranks. ``result.loss`` says where recall was lost.

    ``copies`` (docs/concepts.md, "Identical text"): ``"any"`` scores each excerpt
    at the copy of its text the scored ranks reach best (identical excerpts of a
    question merged; the chosen spans in each record's ``chosen``); ``"strict"``
    scores the stored spans only."""
    _check_queries(queries)
    k = check_k(k)
    budget = check_budget(budget)
    unit = check_unit(unit)
    _check_ground_truth(queries, judge, k)
    copies = check_copies(copies)
    chunker_obj = get_chunker(chunker)
    store_obj = get_store(store)
    reranker = get_reranker(rerank) if rerank is not None else None
    embedder_obj = get_embedder(embedder) if uses_vectors(store_obj) else None
    tok = get_tokenizer(tokenizer) if unit == "token" else None
    emb_cache = _resolve_cache(cache)
    adopt_cache = getattr(chunker_obj, "adopt_cache", None)
    if callable(adopt_cache):  # a chunker that embeds uses this evaluation's cache
        adopt_cache(emb_cache)
    timings = dict.fromkeys(("chunk", "embed", "index", "search", "score"), 0.0)

    with _timed(timings, "chunk"):
        if chunking is None:
            chunking = Chunking(chunker_obj, corpus, emb_cache)
        elif chunking.corpus.content_hash != corpus.content_hash:
            raise EvaluationError("the chunking given is of another corpus")
        if len(chunking) == 0:
            raise EvaluationError(f"chunker {chunker_obj.name!r} produced no chunks")
    inputs = RetrievalInputs(chunking.texts(), [q.text for q in queries])
    if embedder_obj is not None:
        _embed(inputs, emb_cache, embedder_obj, progress, timings, chunker_obj.name)
        inputs.collection_key = hashlib.sha256(
            f"{chunking.digest()}\0{embedder_obj.identity}".encode()
        ).hexdigest()
    with _timed(timings, "score"):
        units = unit_map(corpus, unit, tok, emb_cache)
        excerpts = _excerpt_spans(queries, units)
        chunk_index = chunking.index(units)
        excerpt_copies = copies_for(
            copies,
            corpus,
            queries,
            emb_cache.directory,
            read_only=emb_cache.read_only,
        )
        per_query_k = (
            chunk_index.omega_counts(units, excerpts, len(queries))
            if k == "min"
            else np.full(len(queries), k, dtype=np.int64)
        )
        chunk_units = chunk_index.unit_hi - chunk_index.unit_lo
        depth = np.minimum(per_query_k, len(chunking))
        fetch = per_query_k  # the search cache is keyed on the depth asked
        if budget is not None:
            fetch = np.maximum(depth, budget_ranks(chunk_units, budget))
    k_max = int(fetch.max()) if len(queries) else 0
    search_cache = SearchCache(emb_cache.directory, read_only=emb_cache.read_only)
    found, ref = search(store_obj, inputs, k_max, search_cache, timings, reranker)
    with _timed(timings, "score"):
        listed = _spans_of(found.ids, fetch, chunking)
        scores = score_queries(
            units,
            excerpts,
            listed,
            len(queries),
            chunk_index,
            depth=depth,
            budget=budget,
            copies=excerpt_copies,
        )
        retrieved = QuerySpans(*(a[scores.kept] for a in _columns(listed)))
        stages = _stages(
            found.stages,
            per_query_k,
            chunking,
            units,
            excerpts,
            len(queries),
            excerpt_copies,
        )
    exact_scores = None
    if ref is not None and approximate(store_obj):
        with _timed(timings, "score"):
            exact_scores = score_queries(
                units,
                excerpts,
                _spans_of(ref.ids[:, :k_max], fetch, chunking),
                len(queries),
                chunk_index,
                depth=depth,
                budget=budget,
                copies=excerpt_copies,
            )
    config: dict[str, Any] = {
        "chunker": chunker_obj.name,
        "embedder": (
            _embedder_label(embedder, embedder_obj.identity) if embedder_obj else None
        ),
        "embedder_identity": embedder_obj.identity if embedder_obj else None,
        "store": getattr(store_obj, "name", _spec_of(store, type(store_obj).__name__)),
        "k": k,
        "unit": unit,
        "tokenizer": tok.name if tok is not None else None,
        "corpus": corpus.name,
        "queries": queries.source or "queries",
    }
    if budget is not None:  # absent, not null, so older baselines keep matching
        config["budget"] = budget
    config.update(scoring_config(copies))
    if reranker is not None:
        config["rerank"] = reranker.identity
        config["rerank_candidates"] = int(reranker.candidates)
    chunk_stats = {
        "count": len(chunking),
        "mean_units": float(chunk_units.mean()),
        "mean_chars": float(np.diff(chunking.bounds, axis=1).mean()),
    }
    if chunking.fallback_share is not None:
        chunk_stats["fallback_share"] = chunking.fallback_share
    # Units sent to the LLM per query (|tr|): the cost axis of a budget sweep.
    chunk_stats["sent_units"] = (
        float(scores.retrieved_units.mean()) if len(queries) else 0.0
    )
    taken = listed.query[scores.kept] if budget is not None else None
    result = build_result(
        label or chunker_obj.name,
        config,
        corpus,
        queries,
        units,
        excerpts,
        retrieved,
        scores,
        chunk_stats,
        timings,
        chunking.spans(),
        stages,
        exact=exact_scores,
        judging=judging_for(judge, emb_cache.directory, emb_cache.read_only),
        evidence=noise_evidence(store_obj, inputs, found, ref, fetch, depth, taken),
    )
    if budget is not None:
        result.budget = {
            "budget": budget,
            "over_budget": float(scores.over_budget.mean()) if len(queries) else 0.0,
            "mean_units": float(scores.retrieved_units.mean()) if len(queries) else 0.0,
        }
    return result


def _embed(
    inputs: RetrievalInputs,
    cache: EmbeddingCache,
    embedder: Embedder,
    progress: bool | None,
    timings: dict[str, float],
    name: str,
) -> None:
    """The questions' vectors now: they key the search cache. The chunks' when a
    search needs them (through the cache), so a warm run never reads those.
    ``name``: the chunker's, for the progress lines."""
    with _timed(timings, "embed", f"questions of {name}"):
        inputs.query_vectors = cache.embed(
            embedder, inputs.query_texts, progress=progress
        )

    def load() -> Any:
        with _timed(timings, "embed", f"chunks of {name}"):
            return cache.embed(embedder, inputs.chunk_texts, progress=progress)

    inputs.chunk_vector_loader = load


def _columns(spans: QuerySpans) -> tuple[Any, Any, Any, Any]:
    return spans.query, spans.doc, spans.start, spans.end


def _check_ground_truth(queries: QuerySet, judge: Any, k: Any) -> None:
    """Questions without excerpts need a judge, and cannot size ``k="min"``."""
    bare = [q for q in queries if not q.excerpts]
    if not bare:
        return
    where = f"{queries.source or 'the query set'}"
    if k == "min":
        raise EvaluationError(
            f"k='min' needs excerpts, but {len(bare)} question(s) of {where} have "
            f"none (first: {bare[0].id!r}); give a number for k"
        )
    if judge is None and len(bare) == len(queries):
        raise EvaluationError(
            f"no question of {where} has excerpts: give a judge to measure context "
            "relevance (docs/judged.md): 'llm:MODEL' or a registered name, as judge= "
            "(evaluate(), the chunkeval marker) or the chunkeval_judge setting"
        )
