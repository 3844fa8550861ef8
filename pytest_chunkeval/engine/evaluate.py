"""The evaluation engine: chunk, embed (cached), index, retrieve, score (SPEC §5).

``evaluate`` measures a chunker inside the report's retrieval protocol; ``score``
measures whatever a user's own retriever returns. Both produce an ``EvalResult``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.chunkers import (
    Chunker,
    ChunkerError,
    check_pieces,
    get_chunker,
    validate_chunks,
)
from pytest_chunkeval.config.defaults import (
    DEFAULT_EMBEDDER,
    DEFAULT_K,
    DEFAULT_STORE,
    K,
    check_budget,
    check_k,
    check_unit,
)
from pytest_chunkeval.core.locate import locate, preview
from pytest_chunkeval.core.metrics import (
    JUDGED_METRICS,
    METRICS,
    RANK_METRICS,
    ChunkIndex,
    QueryScores,
    QuerySpans,
    describe,
    pool_ceiling,
    score_queries,
    summarize,
    without_ground_truth,
)
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Query
from pytest_chunkeval.embedders.base import Embedder
from pytest_chunkeval.embedders.registry import get_embedder
from pytest_chunkeval.engine.cache import EmbeddingCache, default_cache_dir
from pytest_chunkeval.engine.results import (
    EvalResult,
    QueryRecord,
    SpanTuple,
    StageResult,
)
from pytest_chunkeval.engine.retrieve import RetrievalInputs, retrieve
from pytest_chunkeval.engine.retrieve import timed as _timed
from pytest_chunkeval.engine.search_cache import SearchCache
from pytest_chunkeval.engine.two_stage import split_stages
from pytest_chunkeval.stores import AnyStore, get_store, uses_vectors
from pytest_chunkeval.stores._base import FusionStore, Store, TextStore
from pytest_chunkeval.stores.exact import ExactStore
from pytest_chunkeval.stores.rerank import Reranker, get_reranker
from pytest_chunkeval.tokenizers.base import Tokenizer, get_tokenizer


class EvaluationError(ValueError):
    """The inputs of an evaluation do not fit together; the message says where."""


_UNIT_MAPS: dict[tuple[str, str, str], UnitMap] = {}
_UNIT_MAPS_KEPT = 8


def unit_map(corpus: Corpus, unit: str, tokenizer: Tokenizer | None) -> UnitMap:
    """The corpus' unit axis; each document is tokenized once per process (for the
    few most recently used corpora)."""
    name = tokenizer.name if tokenizer is not None and unit == "token" else ""
    key = (corpus.content_hash, unit, name)
    found = _UNIT_MAPS.pop(key, None)
    if found is None:
        found = UnitMap(corpus.ids, [d.text for d in corpus], unit, tokenizer)
    _UNIT_MAPS[key] = found  # most recent last
    while len(_UNIT_MAPS) > _UNIT_MAPS_KEPT:
        del _UNIT_MAPS[next(iter(_UNIT_MAPS))]
    return found


class Chunking:
    """All chunks of a corpus under one chunker, as spans in corpus order."""

    def __init__(self, chunker: Chunker, corpus: Corpus) -> None:
        docs, bounds = [], []
        take_fallbacks = getattr(chunker, "take_fallbacks", None)
        if callable(take_fallbacks):
            take_fallbacks()  # count this chunking's windows only
        for i, doc in enumerate(corpus):
            try:
                found = check_pieces(chunker.chunk_spans(doc.text), chunker.name)
                spans = np.asarray(found, dtype=np.int64)
            except ChunkerError as exc:
                raise ChunkerError(f"document {doc.id!r}: {exc}") from exc
            spans = spans.reshape(-1, 2)
            validate_chunks(doc.text, spans, chunker=chunker.name, doc_id=doc.id)
            docs.append(np.full(spans.shape[0], i, dtype=np.int64))
            bounds.append(spans)
        self.doc = np.concatenate(docs) if docs else np.zeros(0, np.int64)
        self.bounds = np.concatenate(bounds) if bounds else np.zeros((0, 2), np.int64)
        self.corpus = corpus
        self.fallback_share: float | None = None
        """Share of a model-driven chunker's windows split by its fallback."""
        if callable(take_fallbacks):
            fell_back, windows = take_fallbacks()
            if windows and fell_back == windows:
                raise ChunkerError(
                    f"chunker {chunker.name!r}: the model gave no usable answer for "
                    f"any of the {windows} window(s), so every chunk would come from "
                    "the fallback split, not from the model (is it the right model, "
                    "a chat endpoint? see the LLMChunkerFallbackWarning messages)"
                )
            if fell_back:
                self.fallback_share = fell_back / windows

    def __len__(self) -> int:
        return int(self.doc.size)

    def texts(self) -> list[str]:
        texts = [d.text for d in self.corpus]
        return [
            texts[d][s:e]
            for d, (s, e) in zip(self.doc.tolist(), self.bounds.tolist(), strict=True)
        ]

    def spans(self) -> list[SpanTuple]:
        ids = self.corpus.ids
        return [
            (ids[d], s, e)
            for d, (s, e) in zip(self.doc.tolist(), self.bounds.tolist(), strict=True)
        ]

    def digest(self) -> str:
        h = hashlib.sha256(self.corpus.content_hash.encode())
        h.update(self.doc.tobytes())
        h.update(self.bounds.tobytes())
        return h.hexdigest()

    def index(self, units: UnitMap) -> ChunkIndex:
        return ChunkIndex(units, self.doc, self.bounds[:, 0], self.bounds[:, 1])


def _kept(hits: npt.NDArray[np.int64], per_query_k: npt.NDArray[np.int64]) -> Any:
    """(query, row) of the hits within each query's depth, in rank order."""
    keep = (np.arange(hits.shape[1])[None, :] < per_query_k[:, None]) & (hits >= 0)
    rows, cols = np.nonzero(keep)
    return rows.astype(np.int64), hits[rows, cols]


def _spans_of(
    hits: npt.NDArray[np.int64], per_query_k: npt.NDArray[np.int64], chunking: Chunking
) -> QuerySpans:
    rows, ids = _kept(hits, per_query_k)
    return QuerySpans(
        rows, chunking.doc[ids], chunking.bounds[ids, 0], chunking.bounds[ids, 1]
    )


def _stages(
    stages: Mapping[str, npt.NDArray[np.int64]],
    per_query_k: npt.NDArray[np.int64],
    chunking: Chunking,
    units: UnitMap,
    excerpts: QuerySpans,
    n_queries: int,
) -> dict[str, StageResult]:
    """Recall of each earlier stage over its whole list and over its first k, and
    the best any k of its rows reach (what a later stage choosing k could reach)."""
    out = {}
    for name, hits in stages.items():
        depth = np.full(n_queries, hits.shape[1], dtype=np.int64)
        spans = _spans_of(hits, depth, chunking)
        out[name] = stage_result(
            name,
            int(hits.shape[1]),
            units,
            excerpts,
            spans,
            _spans_of(hits, per_query_k, chunking),
            per_query_k,
            n_queries,
        )
    return out


def stage_result(
    name: str,
    depth: int,
    units: UnitMap,
    excerpts: QuerySpans,
    pool: QuerySpans,
    first_k: QuerySpans,
    k: npt.NDArray[np.int64],
    n_queries: int,
) -> StageResult:
    """An earlier stage's pool: its recall, its first k's, and C_k over the pool."""
    whole = score_queries(units, excerpts, pool, n_queries)
    at_k = score_queries(units, excerpts, first_k, n_queries)
    ids = units.doc_ids
    per_query: list[list[SpanTuple]] = [[] for _ in range(n_queries)]
    for q, d, s, e in zip(
        pool.query.tolist(),
        pool.doc.tolist(),
        pool.start.tolist(),
        pool.end.tolist(),
        strict=True,
    ):
        per_query[q].append((ids[d], s, e))
    return StageResult(
        name,
        depth,
        describe(whole.recall),
        describe(at_k.recall),
        tuple(tuple(p) for p in per_query),
        ceiling=describe(pool_ceiling(units, excerpts, pool, n_queries, k)),
    )


def budget_ranks(chunk_units: npt.NDArray[np.int64], budget: int) -> int:
    """Ranks to fetch so that every query's list passes ``budget``: any ``n`` chunks
    hold at least as many units as the ``n`` smallest, so the first ``n`` whose
    smallest sum exceeds the budget always do (or all chunks, if none)."""
    total = np.cumsum(np.sort(chunk_units))
    return min(int(np.searchsorted(total, budget, side="right")) + 1, total.size)


def _excerpt_spans(queries: QuerySet, units: UnitMap) -> QuerySpans:
    return QuerySpans.from_lists([[e.span for e in q.excerpts] for q in queries], units)


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
) -> EvalResult:
    """Chunk every document, embed chunks and queries (cached), index them all in one
    store, retrieve ``k`` chunks per query (``"min"``: as many as overlap its
    excerpts) and score the retrieved spans at the token (or char) level.

    ``judge`` (``"llm:MODEL"``, a registered name, a judge or a ``Judging``) also
    judges each retrieved context: ``context_relevance`` and its token variant
    (SPEC §10), needed for questions without excerpts. Judgments are cached beside
    the embedding cache.

    ``store`` may search vectors (``exact``, ``chroma``), texts (``bm25``: no
    embedder runs) or both (``hybrid``); ``rerank`` re-scores the store's top
    candidates (``cross-encoder:PATH?n=20``) and keeps ``k``. Earlier stages' recall
    is in ``result.stages``. ``chunking``: the chunks of ``chunker`` on ``corpus``
    when the caller has them already (the plugin chunks once to key its memo).

    ``budget`` (units per query, SPEC §9) scores, for the presence metrics and
    ``complete``, the ranks whose summed length fits it (whole chunks; the first that
    does not fit ends the list); mrr, ndcg and ceiling read the first ``k`` ranks.
    ``result.loss`` says where recall was lost."""
    _check_queries(queries)
    k = check_k(k)
    budget = check_budget(budget)
    unit = check_unit(unit)
    _check_ground_truth(queries, judge, k)
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
            chunking = Chunking(chunker_obj, corpus)
        elif chunking.corpus.content_hash != corpus.content_hash:
            raise EvaluationError("the chunking given is of another corpus")
        if len(chunking) == 0:
            raise EvaluationError(f"chunker {chunker_obj.name!r} produced no chunks")
    inputs = RetrievalInputs(chunking.texts(), [q.text for q in queries])
    if embedder_obj is not None:
        with _timed(timings, "embed"):
            vectors = emb_cache.embed(
                embedder_obj, inputs.chunk_texts + inputs.query_texts, progress=progress
            )
            inputs.chunk_vectors = vectors[: len(chunking)]
            inputs.query_vectors = vectors[len(chunking) :]
        inputs.collection_key = hashlib.sha256(
            f"{chunking.digest()}\0{embedder_obj.identity}".encode()
        ).hexdigest()
    with _timed(timings, "score"):
        units = unit_map(corpus, unit, tok)
        excerpts = _excerpt_spans(queries, units)
        chunk_index = chunking.index(units)
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
    found = retrieve(store_obj, inputs, k_max, search_cache, timings, reranker=reranker)
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
        )
        retrieved = QuerySpans(*(a[scores.kept] for a in _columns(listed)))
        stages = _stages(
            found.stages, per_query_k, chunking, units, excerpts, len(queries)
        )
    exact_scores = None
    if reranker is None and _approximate(store_obj):
        exact = retrieve(ExactStore(), inputs, k_max, search_cache, timings)
        with _timed(timings, "score"):
            exact_scores = score_queries(
                units,
                excerpts,
                _spans_of(exact.ids, fetch, chunking),
                len(queries),
                chunk_index,
                depth=depth,
                budget=budget,
            )
    config: dict[str, Any] = {
        "chunker": chunker_obj.name,
        "embedder": (
            _spec_of(embedder, embedder_obj.identity) if embedder_obj else None
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
    result = _result(
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
        judging=_judging(judge, emb_cache.directory, emb_cache.read_only),
    )
    if budget is not None:
        result.budget = {
            "budget": budget,
            "over_budget": float(scores.over_budget.mean()) if len(queries) else 0.0,
            "mean_units": float(scores.retrieved_units.mean()) if len(queries) else 0.0,
        }
    return result


def _columns(spans: QuerySpans) -> tuple[Any, Any, Any, Any]:
    return spans.query, spans.doc, spans.start, spans.end


def _approximate(store: object) -> bool:
    """A vector store other than exact search (HNSW...): its loss is measurable."""
    return isinstance(store, Store) and not isinstance(
        store, (ExactStore, TextStore, FusionStore)
    )


def _losses(
    scores: QueryScores, exact: QueryScores | None
) -> dict[str, npt.NDArray[np.float64]]:
    """Per query, where recall was lost (SPEC §9); NaN where undefined."""
    out = {
        "chunking": 1.0 - scores.ceiling,
        "search": scores.ceiling - scores.depth_recall,
    }
    if exact is not None:
        out["approximation"] = exact.recall - scores.recall
        out["exact_recall"] = exact.recall
        out["store_recall"] = scores.recall
    return out


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
            f"no question of {where} has excerpts: give a judge (judge='llm:MODEL' "
            "or a registered name) to measure context relevance (SPEC §10)"
        )


def _judging(judge: Any, cache_dir: Path, read_only: bool = False) -> Any:
    if judge is None:
        return None
    from pytest_chunkeval.judging.run import Judging
    from pytest_chunkeval.judging.specs import get_judge
    from pytest_chunkeval.llm.answers import AnswerCache

    if isinstance(judge, Judging):
        return judge
    answers = AnswerCache(cache_dir, read_only=read_only)
    return Judging(get_judge(judge), cache=answers)


def _result(
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
    judging: Any = None,
    exact: QueryScores | None = None,
) -> EvalResult:
    ids = units.doc_ids
    scores = without_ground_truth(scores, [bool(q.excerpts) for q in queries])
    retrieved_by_query: list[list[SpanTuple]] = [[] for _ in range(len(queries))]
    for q, d, s, e in zip(
        retrieved.query.tolist(),
        retrieved.doc.tolist(),
        retrieved.start.tolist(),
        retrieved.end.tolist(),
        strict=True,
    ):
        retrieved_by_query[q].append((ids[d], s, e))
    judged_values: dict[str, Any] | None = None
    judged: list[Any] = [None] * len(queries)
    if judging is not None:
        from pytest_chunkeval.judging.score import judge_retrieved

        with _timed(timings, "judge"):
            judged = judge_retrieved(
                judging, queries, retrieved_by_query, corpus, units
            )
        judged_values = {
            m: np.array([j.metric(m) for j in judged], dtype=np.float64)
            for m in JUDGED_METRICS
        }
        config["judge"] = judging.judge.identity
    coverage = scores.excerpt_coverage.tolist()
    records, row = [], 0
    po = scores.precision_omega
    losses = _losses(scores, exact)
    ranked = {m: scores.metric(m) for m in RANK_METRICS}
    for i, q in enumerate(queries):
        n_ex = len(q.excerpts)
        j = judged[i]
        records.append(
            QueryRecord(
                id=q.id,
                question=q.text,
                doc_id=q.doc_id,
                excerpts=tuple((e.doc_id, e.start, e.end) for e in q.excerpts),
                retrieved=tuple(retrieved_by_query[i]),
                recall=_present(scores.recall[i]),
                precision=_present(scores.precision[i]),
                iou=_present(scores.iou[i]),
                f1=_present(scores.f1[i]),
                precision_omega=_present(po[i]),
                excerpt_units=int(scores.excerpt_units[i]),
                retrieved_units=int(scores.retrieved_units[i]),
                first_relevant_rank=int(scores.first_relevant_rank[i]),
                excerpt_coverage=tuple(coverage[row : row + n_ex]),
                scores={}
                if j is None
                else {m: _present(j.metric(m)) for m in JUDGED_METRICS},
                details={} if j is None else {"judged": [list(s) for s in j.judged]},
                mrr=_present(ranked["mrr"][i]),
                ndcg=_present(ranked["ndcg"][i]),
                complete=_present(ranked["complete"][i]),
                ceiling=_present(ranked["ceiling"][i]),
                loss={
                    part: float(v[i])
                    for part, v in losses.items()
                    if not np.isnan(v[i])
                },
            )
        )
        row += n_ex
    overall, groups = summarize(
        scores,
        [q.doc_id for q in queries],
        judged_values,
        metrics=METRICS,
    )
    loss = {part: describe(v) for part, v in losses.items()}
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
        stages=stages or {},
        loss={part: s for part, s in loss.items() if s.n > 0},
    )


def _present(value: Any) -> float | None:
    """A metric value, or None where it is absent (NaN)."""
    number = float(value)
    return None if np.isnan(number) else number


# ----------------------------------------------------------------- whole retrievers

RetrievedItem = Any  # str | Span | (doc_id, start, end) | object with text or span
Retriever = Callable[[str], Sequence[RetrievedItem]]


def _retriever_name(retriever: Any) -> str:
    name = getattr(retriever, "__qualname__", None)
    return name if isinstance(name, str) else type(retriever).__qualname__


def _results_list(found: Any, who: str, query: Query) -> list[RetrievedItem]:
    """The retriever's answer as a list; a bare text (iterated it would be one
    result per character), ``None`` or a non-iterable is an error naming both."""
    where = f"{who} for query {query.id!r} ({preview(query.text, 50)})"
    if isinstance(found, (str, bytes)):
        raise EvaluationError(
            f"{where} returned a single {type(found).__name__} {preview(str(found))} "
            "instead of a list of results; return a list (e.g. [text]) of texts or "
            "(doc_id, start, end) spans"
        )
    if found is None or not hasattr(found, "__iter__"):
        raise EvaluationError(
            f"{where} returned {type(found).__name__} ({found!r:.60}) instead of a "
            "list of results (texts or (doc_id, start, end) spans)"
        )
    return list(found)


def _answer_lists(
    answer: Any, who: str, query: Query
) -> tuple[list[RetrievedItem] | None, list[RetrievedItem]]:
    """``(candidates, results)`` of one answer: candidates only from a two-stage
    answer (:class:`TwoStage` or a mapping with both keys), else ``None``."""
    where = f"{who} for query {query.id!r} ({preview(query.text, 50)})"
    try:
        candidates, results = split_stages(answer, where)
    except TypeError as exc:
        raise EvaluationError(str(exc)) from None
    return (
        None if candidates is None else _results_list(candidates, who, query),
        _results_list(results, who, query),
    )


def _call_retriever(retriever: Any, query: Query) -> tuple[Any, str]:
    """The retriever's raw answer for ``query`` and how to name the retriever."""
    who = _retriever_name(retriever)
    for method in ("retrieve", "invoke"):
        fn = getattr(retriever, method, None)
        if callable(fn):
            return fn(query.text), f"retriever {who}.{method}()"
    if callable(retriever):
        return retriever(query.text), f"retriever {who}()"
    raise TypeError(
        f"a retriever must be callable (query text -> list of texts or spans) or "
        f"have .retrieve()/.invoke(); got {type(retriever).__name__}"
    )


def _locate_item(
    item: RetrievedItem, query: Query, corpus: Corpus, rank: int
) -> SpanTuple:
    where = f"query {query.id!r} ({preview(query.text, 50)}), result #{rank + 1}"
    if isinstance(item, tuple) and len(item) == 3 and isinstance(item[0], str):
        doc_id, start, end = item[0], int(item[1]), int(item[2])
    elif all(hasattr(item, a) for a in ("doc_id", "start", "end")):
        doc_id, start, end = item.doc_id, int(item.start), int(item.end)
    else:
        text = getattr(item, "page_content", getattr(item, "text", item))
        if not isinstance(text, str):
            raise EvaluationError(
                f"{where}: expected a text, a (doc_id, start, end) span or an object "
                f"with .page_content/.text, got {type(item).__name__}"
            )
        return _find_text(text, query, corpus, where)
    if doc_id not in corpus:
        raise EvaluationError(f"{where}: document {doc_id!r} is not in the corpus")
    n = len(corpus[doc_id].text)
    if not 0 <= start < end <= n:
        raise EvaluationError(
            f"{where}: span ({start}, {end}) is not inside {doc_id!r} (length {n})"
        )
    return (doc_id, start, end)


def _find_text(text: str, query: Query, corpus: Corpus, where: str) -> SpanTuple:
    # The query's own document first: retrieved text usually comes from there.
    order = [query.doc_id] + [d for d in corpus.ids if d != query.doc_id]
    for doc_id in order:
        if doc_id in corpus:
            found = locate(corpus[doc_id].text, text)
            if found is not None:
                return (doc_id, found[0], found[1])
    raise EvaluationError(
        f"{where}: retrieved text {preview(text)} was not found in the corpus "
        f"(not verbatim, nor with whitespace ignored)"
    )


@dataclass(frozen=True)
class LocatedResults:
    """What a whole retriever returned, as corpus spans per query (the first ``k``
    of each list when ``k`` is set): all that its score depends on."""

    per_query: tuple[tuple[SpanTuple, ...], ...]
    k: int | None
    seconds: float
    candidates: tuple[tuple[SpanTuple, ...], ...] | None = None
    """A two-stage retriever's first-stage rows per query (all of them)."""

    def digest(self) -> str:
        """Equal digests, equal scores (for one corpus and query set)."""
        blob = json.dumps(
            [self.k, self.per_query, self.candidates], separators=(",", ":")
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    @property
    def mean_results(self) -> float:
        """Results scored per query, on average."""
        n = len(self.per_query)
        return sum(len(spans) for spans in self.per_query) / n if n else 0.0


def locate_results(
    retrieved: Mapping[str, Sequence[RetrievedItem]] | Retriever | Any,
    corpus: Corpus,
    queries: QuerySet,
    *,
    k: int | None = None,
) -> LocatedResults:
    """Ask the retriever every question (or read the mapping) and locate each of
    the first ``k`` results (all when ``k`` is None) in the corpus."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise EvaluationError(
            f"k must be a positive number of results per question (or None: all), "
            f"got {k!r}"
        )
    per_query: list[tuple[SpanTuple, ...]] = []
    pools: list[tuple[SpanTuple, ...] | None] = []
    began = time.perf_counter()
    for q in queries:
        if isinstance(retrieved, Mapping):
            if q.id not in retrieved:
                raise EvaluationError(f"no results given for query {q.id!r}")
            answer, who = retrieved[q.id], "the results mapping"
        else:
            answer, who = _call_retriever(retrieved, q)
        candidates, items = _answer_lists(answer, who, q)
        if k is not None:
            items = items[:k]
        per_query.append(
            tuple(_locate_item(item, q, corpus, r) for r, item in enumerate(items))
        )
        pools.append(
            None
            if candidates is None
            else tuple(
                _locate_item(item, q, corpus, r) for r, item in enumerate(candidates)
            )
        )
    staged = [p is not None for p in pools]
    if any(staged) and not all(staged):
        plain = queries[staged.index(False)].id
        raise EvaluationError(
            f"the retriever answered candidates and results for some queries but a "
            f"plain list for query {plain!r}: answer the same shape for every query"
        )
    return LocatedResults(
        tuple(per_query),
        k,
        time.perf_counter() - began,
        tuple(p or () for p in pools) if pools and all(staged) else None,
    )


def _candidate_stage(
    pools: Sequence[Sequence[SpanTuple]],
    results: Sequence[Sequence[SpanTuple]],
    units: UnitMap,
    excerpts: QuerySpans,
) -> StageResult:
    """A two-stage retriever's pool, measured at ``k`` = each query's result count."""
    k_final = np.array([len(r) for r in results], dtype=np.int64)
    return stage_result(
        "candidates",
        max((len(p) for p in pools), default=0),
        units,
        excerpts,
        QuerySpans.from_lists(pools, units),
        QuerySpans.from_lists(
            [p[:k] for p, k in zip(pools, k_final.tolist(), strict=True)], units
        ),
        k_final,
        len(pools),
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
) -> EvalResult:
    """Score a whole retriever: ``retrieved`` maps query id -> results, or is called
    with each question (or is what :func:`locate_results` returned). Results are
    texts (located in the corpus) or spans; with ``k``, only the first ``k`` of
    each question count, as a store's top ``k`` do in :func:`evaluate`.

    A two-stage retriever may answer a :class:`TwoStage` (or a mapping with
    ``"candidates"`` and ``"results"``): ``result.stages["candidates"]`` then holds
    the pool's recall, its first ``k``'s (``k`` = the number of results) and its
    ``ceiling``, the best any ``k`` of its rows reach, beside the final recall.

    ``precision_omega``, ``ndcg`` and ``ceiling`` need a chunking and are left out
    (``None``); ``mrr`` and ``complete`` are measured.
    ``judge`` adds the judged metrics, as in :func:`evaluate`; its answers are
    cached under ``cache`` (default: the evaluation cache directory).
    """
    _check_queries(queries)
    unit = check_unit(unit)
    _check_ground_truth(queries, judge, None)
    tok = get_tokenizer(tokenizer) if unit == "token" else None
    located = (
        retrieved
        if isinstance(retrieved, LocatedResults)
        else locate_results(retrieved, corpus, queries, k=k)
    )
    if len(located.per_query) != len(queries):
        raise EvaluationError(
            f"results for {len(located.per_query)} queries, the query set has "
            f"{len(queries)}"
        )
    per_query = [list(spans) for spans in located.per_query]
    timings: dict[str, float] = {"retrieve": located.seconds}
    stages: dict[str, StageResult] = {}
    with _timed(timings, "score"):
        units = unit_map(corpus, unit, tok)
        excerpts = _excerpt_spans(queries, units)
        spans = QuerySpans.from_lists(per_query, units)
        scores = score_queries(units, excerpts, spans, len(queries))
        if located.candidates is not None:
            stages["candidates"] = _candidate_stage(
                located.candidates, per_query, units, excerpts
            )
    sizes = np.array([e - s for spans_ in per_query for _, s, e in spans_], np.float64)
    lo, hi = units.to_units(spans.doc, spans.start, spans.end)
    chunk_stats = {
        "count": int(sizes.size),
        "mean_units": float((hi - lo).mean()) if sizes.size else 0.0,
        "mean_chars": float(sizes.mean()) if sizes.size else 0.0,
        "results_per_query": located.mean_results,
    }
    cfg = {
        "chunker": label,
        "embedder": None,
        "store": None,
        "k": located.k,
        "unit": unit,
        "tokenizer": tok.name if tok is not None else None,
        "corpus": corpus.name,
        "queries": queries.source or "queries",
        **(dict(config) if config else {}),
    }
    return _result(
        label,
        cfg,
        corpus,
        queries,
        units,
        excerpts,
        spans,
        scores,
        chunk_stats,
        timings,
        [],
        stages,
        judging=_judging(
            judge, Path(cache) if cache is not None else default_cache_dir()
        ),
    )
