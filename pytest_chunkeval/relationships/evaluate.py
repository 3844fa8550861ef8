"""``evaluate_relationships``: which chunking gives the best retrieved relationships?

The method (docs/relationships.md#the-method):

1. Chunk the corpus; extract relationships from every distinct chunk text (cached).
2. Merge them into one graph (:mod:`.graph`): entities and predicates by normalized
   name, each relationship once with all its evidence spans.
3. Gold relationships per question, independent of the chunking (:mod:`.gold`).
4. Embed every relationship as ``subject predicate object`` and every question with
   the configured embedder (embedding cache), index them in the configured store and
   retrieve the top ``k`` relationships per question.
5. Score: ``rel_recall`` / ``rel_precision`` against the gold set (:mod:`.scoring`),
   and the presence metrics on the evidence spans of the retrieved relationships against
   the question's excerpts, named ``evidence_*`` (``evidence_precision_omega`` takes
   as Ω every evidence span of the graph that overlaps an excerpt). A sentence that
   backs several retrieved relationships of one question is counted once in
   ``|tr|`` (a Graph-RAG context would quote it once); distinct overlapping spans
   count their shared units twice, as chunks do (docs/concepts.md).
"""

from __future__ import annotations

import hashlib
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pytest_chunkeval.chunkers import Chunker, get_chunker
from pytest_chunkeval.config.defaults import (
    DEFAULT_EMBEDDER,
    DEFAULT_K,
    DEFAULT_STORE,
    check_unit,
)
from pytest_chunkeval.config.scoring import DEFAULT_COPIES
from pytest_chunkeval.core.copies import ExcerptCopies
from pytest_chunkeval.core.metrics import (
    REL_METRICS,
    ChunkIndex,
    MetricStats,
    QuerySpans,
    describe,
    score_queries,
)
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.base import Embedder
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.registry import get_embedder
from pytest_chunkeval.engine.chunking import Chunking, unit_map
from pytest_chunkeval.engine.copies import copies_for, scoring_config
from pytest_chunkeval.engine.evaluate import EvaluationError, _resolve_cache, _spec_of
from pytest_chunkeval.engine.results import EvalResult, QueryRecord, SpanTuple
from pytest_chunkeval.engine.retrieve import (
    RetrievalInputs,
    retrieve,
    texts_digest,
    timed,
)
from pytest_chunkeval.engine.search_cache import SearchCache
from pytest_chunkeval.llm.answers import AnswerCache
from pytest_chunkeval.relationships.extraction import (
    ExtractionStats,
    cost_plan,
    extract_texts,
)
from pytest_chunkeval.relationships.extractors import Extractor
from pytest_chunkeval.relationships.gold import excerpt_texts, gold_relationships
from pytest_chunkeval.relationships.graph import Relationship, RelationshipGraph
from pytest_chunkeval.relationships.scoring import match_matrix, relationship_scores
from pytest_chunkeval.relationships.specs import get_extractor
from pytest_chunkeval.stores import AnyStore, get_store, uses_vectors
from pytest_chunkeval.tokenizers.base import Tokenizer, get_tokenizer

__all__ = ["REL_METRICS", "evaluate_relationships"]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(
            f"k must be a positive integer (relationships retrieved per question), "
            f"got {k!r}"
        )
    return k


def _graph_key(relationships: list[Relationship], embedder: Embedder) -> str:
    """The collection key: the relationship texts in order and the embedder."""
    texts = texts_digest([r.text for r in relationships])
    return hashlib.sha256(
        f"chunkeval-relationships\0{texts}\0{embedder.identity}".encode()
    ).hexdigest()


def evaluate_relationships(
    chunker: str | Chunker | Callable[[str], Any],
    corpus: Corpus,
    queries: QuerySet,
    *,
    extractor: str | Extractor | Callable[[str], Any],
    k: int = int(DEFAULT_K),
    embedder: str | Embedder | Callable[[list[str]], Any] = DEFAULT_EMBEDDER,
    store: str | AnyStore = DEFAULT_STORE,
    unit: str = "token",
    tokenizer: str | Tokenizer | None = None,
    cache: EmbeddingCache | str | Path | None = None,
    progress: bool | None = None,
    label: str | None = None,
    log: Callable[[str], None] | None = _stderr,
    copies: str = DEFAULT_COPIES,
    price: tuple[float, float] | None = None,
) -> EvalResult:
    """Extract relationships from ``chunker``'s chunks, retrieve the top ``k`` per
    question and score them against gold relationships extracted from the
    questions' excerpts (or given in the query file).

    ``extractor``: ``"llm:MODEL"``, an object with ``identity`` and
    ``extract(text)``, or a function ``text -> [(subject, predicate, object,
    evidence), ...]``. Answers and embeddings are cached under ``cache`` (default:
    the evaluation cache). ``log`` receives the cost estimate before an LLM
    extractor's first request (default: stderr; None: silent). ``copies``: as
    in :func:`~pytest_chunkeval.engine.evaluate.evaluate`, for the evidence
    metrics. ``price``: USD per 1000 prompt and completion tokens for the cost
    estimate (default: the model's built-in price, if known).
    """
    k = _check_k(k)
    unit = check_unit(unit)
    chunker_obj = get_chunker(chunker)
    extractor_obj = get_extractor(extractor)
    store_obj = get_store(store)
    embedder_obj = get_embedder(embedder) if uses_vectors(store_obj) else None
    tok = get_tokenizer(tokenizer) if unit == "token" else None
    emb_cache = _resolve_cache(cache)
    answers = AnswerCache(emb_cache.directory, read_only=emb_cache.read_only)
    timings = dict.fromkeys(
        ("chunk", "extract", "embed", "index", "search", "score"), 0.0
    )
    stats = ExtractionStats()
    gold_stats = ExtractionStats()

    with timed(timings, "chunk"):
        chunking = Chunking(chunker_obj, corpus, emb_cache)
        if len(chunking) == 0:
            raise EvaluationError(f"chunker {chunker_obj.name!r} produced no chunks")
    chunk_spans = chunking.spans()
    chunk_texts = chunking.texts()
    plan = cost_plan(
        extractor_obj, excerpt_texts(queries, corpus)[1] + chunk_texts, answers, price
    )
    if plan is not None and plan.requests and log is not None:
        log(f"relationship extraction: {plan}")
    with timed(timings, "extract"):
        gold = gold_relationships(
            queries,
            corpus,
            extractor_obj,
            cache=answers,
            stats=gold_stats,
            progress=progress,
        )
        extractions = extract_texts(
            extractor_obj,
            chunk_texts,
            cache=answers,
            where=lambda i: (
                f"chunk {i + 1} of {chunker_obj.name!r} "
                f"({chunk_spans[i][0]}:{chunk_spans[i][1]}-{chunk_spans[i][2]})"
            ),
            stats=stats,
            progress=progress,
        )
        graph = RelationshipGraph()
        for (doc_id, start, _), found in zip(chunk_spans, extractions, strict=True):
            graph.add(doc_id, start, found.relationships)
        relationships = graph.relationships()

    hits: list[list[int]] = [[] for _ in range(len(queries))]
    if relationships:
        inputs = RetrievalInputs(
            [r.text for r in relationships], [q.text for q in queries]
        )
        if embedder_obj is not None:
            with timed(timings, "embed"):
                vectors = emb_cache.embed(
                    embedder_obj,
                    inputs.chunk_texts + inputs.query_texts,
                    progress=progress,
                )
            n = len(relationships)
            inputs.chunk_vectors, inputs.query_vectors = vectors[:n], vectors[n:]
            inputs.collection_key = _graph_key(relationships, embedder_obj)
        ranked = retrieve(
            store_obj,
            inputs,
            min(k, len(relationships)),
            SearchCache(emb_cache.directory, read_only=emb_cache.read_only),
            timings,
        )
        hits = [[int(i) for i in row if i >= 0] for row in ranked.ids.tolist()]

    with timed(timings, "score"):
        units = unit_map(corpus, unit, tok, emb_cache)
        retrieved = [[relationships[i] for i in row] for row in hits]
        excerpt_copies = copies_for(
            copies, corpus, queries, emb_cache.directory, read_only=emb_cache.read_only
        )
        records, overall, groups = _score(
            units, queries, retrieved, gold, relationships, excerpt_copies
        )
        chunk_index = chunking.index(units)
        chunk_units = chunk_index.unit_hi - chunk_index.unit_lo
    config = {
        "chunker": chunker_obj.name,
        "extractor": _spec_of(extractor, extractor_obj.identity),
        "extractor_identity": extractor_obj.identity,
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
        "retrieves": "relationships",
        **scoring_config(copies),
    }
    sizes = np.diff(chunking.bounds, axis=1).reshape(-1)
    chunk_stats = {
        "count": len(chunking),
        "mean_chars": float(sizes.mean()),
        "mean_units": float(chunk_units.mean()),
    }
    graph_stats = {
        "relationships": len(relationships),
        "entities": len(graph.entities),
        "extraction": stats.to_json(),
        "gold_extraction": gold_stats.to_json(),
        "gold_relationships": sum(len(g) for g in gold),
        "questions_without_gold": sum(1 for g in gold if not g),
    }
    return EvalResult(
        label=label or chunker_obj.name,
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
        graph=graph_stats,
    )


def _evidence_of(retrieved: list[Relationship]) -> list[SpanTuple]:
    """Evidence spans of a ranked list: rank order, each distinct span once."""
    return list(dict.fromkeys(span for rel in retrieved for span in rel.evidence))


def _score(
    units: UnitMap,
    queries: QuerySet,
    retrieved: list[list[Relationship]],
    gold: list[list[Relationship]],
    relationships: list[Relationship],
    copies: ExcerptCopies | None = None,
) -> tuple[
    list[QueryRecord], dict[str, MetricStats], dict[str, dict[str, MetricStats]]
]:
    n = len(queries)
    excerpts = QuerySpans.from_lists(
        [[(e.doc_id, e.start, e.end) for e in q.excerpts] for q in queries], units
    )
    evidence = [_evidence_of(r) for r in retrieved]
    spans = QuerySpans.from_lists(evidence, units)
    graph_spans = sorted({s for rel in relationships for s in rel.evidence})
    index = ChunkIndex(
        units,
        units.doc_indices([s[0] for s in graph_spans]),
        np.asarray([s[1] for s in graph_spans], dtype=np.int64),
        np.asarray([s[2] for s in graph_spans], dtype=np.int64),
    )
    scores = score_queries(units, excerpts, spans, n, index, copies=copies)
    rel = [relationship_scores(r, g) for r, g in zip(retrieved, gold, strict=True)]
    values: dict[str, np.ndarray] = {  # in REL_METRICS order
        "rel_recall": np.array([r for r, _ in rel], dtype=np.float64),
        "rel_precision": np.array([p for _, p in rel], dtype=np.float64),
        "evidence_recall": scores.recall,
        "evidence_precision": scores.precision,
        "evidence_iou": scores.iou,
        "evidence_f1": scores.f1,
        "evidence_precision_omega": scores.precision_omega,
    }
    coverage = scores.excerpt_coverage.tolist()
    records, row = [], 0
    for i, q in enumerate(queries):
        hit_r, hit_g = match_matrix(retrieved[i], gold[i])
        records.append(
            QueryRecord(
                id=q.id,
                question=q.text,
                doc_id=q.doc_id,
                excerpts=tuple((e.doc_id, e.start, e.end) for e in q.excerpts),
                retrieved=tuple(evidence[i]),
                recall=None,
                precision=None,
                iou=None,
                f1=None,
                precision_omega=None,
                excerpt_units=int(scores.excerpt_units[i]),
                retrieved_units=int(scores.retrieved_units[i]),
                first_relevant_rank=_first_match(hit_r),
                excerpt_coverage=tuple(coverage[row : row + len(q.excerpts)]),
                scores={m: _opt(v[i]) for m, v in values.items()},
                details={
                    "retrieved_relationships": [
                        [r.subject, r.predicate, r.object, hit]
                        for r, hit in zip(retrieved[i], hit_r, strict=True)
                    ],
                    "gold_relationships": [
                        [g.subject, g.predicate, g.object, hit]
                        for g, hit in zip(gold[i], hit_g, strict=True)
                    ],
                },
            )
        )
        row += len(q.excerpts)
    overall = {m: describe(v) for m, v in values.items()}
    groups: dict[str, dict[str, MetricStats]] = {}
    labels = np.asarray([q.doc_id for q in queries])
    for g in sorted(set(labels.tolist())):
        mask = labels == g
        groups[g] = {m: describe(v[mask]) for m, v in values.items()}
    return records, overall, groups


def _first_match(hits: list[bool]) -> int:
    return next((i + 1 for i, hit in enumerate(hits) if hit), 0)


def _opt(value: float) -> float | None:
    return None if math.isnan(value) else float(value)
