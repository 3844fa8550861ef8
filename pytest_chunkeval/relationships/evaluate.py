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

import sys
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
)
from pytest_chunkeval.config.scoring import DEFAULT_COPIES
from pytest_chunkeval.core.absent import present
from pytest_chunkeval.core.metrics import (
    METRICS,
    REL_METRICS,
    ChunkIndex,
    MetricStats,
    QuerySpans,
    describe,
    score_queries,
)
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.base import Embedder
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.engine.cache_dir import CacheDir
from pytest_chunkeval.engine.chunking import Chunking
from pytest_chunkeval.engine.keys import graph_key
from pytest_chunkeval.engine.records import Scored, result_of
from pytest_chunkeval.engine.results import EvalResult, QueryRecord, SpanTuple
from pytest_chunkeval.engine.retrieve import (
    RetrievalInputs,
    retrieve,
    timed,
)
from pytest_chunkeval.engine.setup import EvaluationSetup
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.relationships.extraction import (
    ExtractionStats,
    cost_plan,
    extract_texts,
)
from pytest_chunkeval.relationships.extractors import (
    Extractor,
    TextExtraction,
    extraction_owner,
    extractor_cache_identity,
)
from pytest_chunkeval.relationships.gold import excerpt_texts, gold_relationships
from pytest_chunkeval.relationships.graph import Relationship, RelationshipGraph
from pytest_chunkeval.relationships.scoring import match_matrix, relationship_scores
from pytest_chunkeval.relationships.specs import get_extractor
from pytest_chunkeval.stores import AnyStore
from pytest_chunkeval.tokenizers.base import Tokenizer

__all__ = ["REL_METRICS", "evaluate_relationships"]

_PHASES = ("chunk", "extract", "embed", "index", "search", "score")
EVIDENCE = "evidence_"
"""The relationship metrics named ``evidence_<m>`` are chunk metric ``m`` with the
retrieved relationships' evidence spans as chunks (docs/relationships.md)."""


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(
            f"k must be a positive integer (relationships retrieved per question), "
            f"got {k!r}"
        )
    return k


def _graph_key(
    relationships: list[Relationship], embedder: Embedder, vectors: Any
) -> str:
    """The collection key: the relationship texts in order and the embedder
    (its vectors when it has no cache identity)."""
    return graph_key([r.text for r in relationships], embedder, lambda: vectors)


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
    cache: CacheDir | EmbeddingCache | str | Path | None = None,
    progress: bool | None = None,
    label: str | None = None,
    log: Callable[[str], None] | None = _stderr,
    copies: str = DEFAULT_COPIES,
    price: tuple[float, float] | None = None,
    setup: EvaluationSetup | None = None,
) -> EvalResult:
    """Extract relationships from ``chunker``'s chunks, retrieve the top ``k`` per
    question and score them against gold relationships extracted from the
    questions' excerpts (or given in the query file).

    ``extractor``: ``"llm:MODEL"``, an object with ``identity`` and
    ``extract(text)``, or a function ``text -> [(subject, predicate, object,
    evidence), ...]``; its answers are cached beside the embeddings. ``log`` gets
    the cost estimate before an LLM's first request (None: silent), at ``price``
    (USD per 1000 prompt and completion tokens; default: the model's, if known).
    ``copies`` and ``setup``: as for :func:`~pytest_chunkeval.engine.evaluate.evaluate`.
    """
    k = _check_k(k)
    setup = EvaluationSetup.given_or_resolved(
        setup, chunker, corpus, queries, embedder, store, unit, tokenizer, cache, copies
    ).with_run(k=k)  # this call's own settings: what the spec records
    chunker_obj = setup.chunker
    assert chunker_obj is not None
    extractor_obj = get_extractor(extractor)
    timings = dict.fromkeys(_PHASES, 0.0)
    with timed(timings, "chunk"):
        chunking = setup.chunking()
    with timed(timings, "extract"):
        extracted = _extract(setup, chunking, extractor_obj, progress, log, price)
    relationships = extracted.graph.relationships()
    hits = _search(setup, relationships, k, timings, progress)
    with timed(timings, "score"):
        retrieved = [[relationships[i] for i in row] for row in hits]
        scored = _score(setup, retrieved, extracted.gold, relationships)
        chunk_stats = setup.chunk_stats(chunking)
    config = setup.config(
        chunker_obj.name,
        extractor=extractor if isinstance(extractor, str) else extractor_obj.identity,
        extractor_identity=extractor_obj.identity,
        retrieves="relationships",
    )
    return result_of(
        label or chunker_obj.name,
        config,
        corpus,
        queries,
        scored,
        (chunk_stats, chunking.spans()),
        timings,
        graph=extracted.stats(),
    )


@dataclass(frozen=True)
class _Extracted:
    graph: RelationshipGraph
    gold: list[list[Relationship]]
    chunk_stats: ExtractionStats
    gold_stats: ExtractionStats

    def stats(self) -> dict[str, Any]:
        """What the extraction found, for ``result.graph``."""
        return {
            "relationships": len(self.graph.relationships()),
            "entities": len(self.graph.entities),
            "extraction": self.chunk_stats.to_json(),
            "gold_extraction": self.gold_stats.to_json(),
            "gold_relationships": sum(len(g) for g in self.gold),
            "questions_without_gold": sum(1 for g in self.gold if not g),
        }


def _extract(
    setup: EvaluationSetup,
    chunking: Chunking,
    extractor: Extractor,
    progress: bool | None,
    log: Callable[[str], None] | None,
    price: tuple[float, float] | None = None,
) -> _Extracted:
    """The gold relationships of each question (from its excerpts) and the graph
    of the relationships extracted from every chunk (answers cached)."""
    answers = setup.cache.answers()
    memo: dict[str, TextExtraction] | None = None
    if extractor_cache_identity(extractor) is None:  # asked every run, once each
        owner = extraction_owner(extractor)  # kept: its id is not reused
        memo = setup.remembered.setdefault(("extractions", id(owner)), (owner, {}))[1]
    chunk_spans = chunking.spans()
    chunk_texts = chunking.texts()
    name = setup.chunker.name if setup.chunker is not None else ""
    excerpts = excerpt_texts(setup.queries, setup.corpus)[1]
    plan = cost_plan(extractor, excerpts + chunk_texts, answers, price)
    if plan is not None and plan.requests and log is not None:
        log(f"relationship extraction: {plan}")
    stats, gold_stats = ExtractionStats(), ExtractionStats()
    gold = gold_relationships(
        setup.queries,
        setup.corpus,
        extractor,
        cache=answers,
        stats=gold_stats,
        progress=progress,
        memo=memo,
    )
    extractions = extract_texts(
        extractor,
        chunk_texts,
        cache=answers,
        where=lambda i: (
            f"chunk {i + 1} of {name!r} "
            f"({chunk_spans[i][0]}:{chunk_spans[i][1]}-{chunk_spans[i][2]})"
        ),
        stats=stats,
        progress=progress,
        memo=memo,
    )
    graph = RelationshipGraph()
    for (doc_id, start, _), found in zip(chunk_spans, extractions, strict=True):
        graph.add(doc_id, start, found.relationships)
    return _Extracted(graph, gold, stats, gold_stats)


def _search(
    setup: EvaluationSetup,
    relationships: list[Relationship],
    k: int,
    timings: dict[str, float],
    progress: bool | None,
) -> list[list[int]]:
    """Per question, the rows of the ``k`` relationships retrieved, best first."""
    if not relationships:
        return [[] for _ in range(len(setup.queries))]
    inputs = RetrievalInputs(
        [r.text for r in relationships], [q.text for q in setup.queries]
    )
    embedder = setup.embedder
    cache = setup.cache
    if embedder is not None:
        with timed(timings, "embed"):
            vectors = cache.embeddings.embed(
                embedder, [*inputs.chunk_texts, *inputs.query_texts], progress=progress
            )
        n = len(relationships)
        inputs.chunk_vectors, inputs.query_vectors = vectors[:n], vectors[n:]
        inputs.collection_key = _graph_key(relationships, embedder, vectors[:n])
    assert setup.store is not None
    ranked = retrieve(
        setup.store,
        inputs,
        min(k, len(relationships)),
        cache.search,
        timings,
    )
    return [[int(i) for i in row if i >= 0] for row in ranked.ids.tolist()]


def _evidence_of(retrieved: list[Relationship]) -> list[SpanTuple]:
    """Evidence spans of a ranked list: rank order, each distinct span once."""
    return list(dict.fromkeys(span for rel in retrieved for span in rel.evidence))


def _score(
    setup: EvaluationSetup,
    retrieved: list[list[Relationship]],
    gold: list[list[Relationship]],
    relationships: list[Relationship],
) -> Scored:
    units, queries, copies = setup.units, setup.queries, setup.excerpt_copies
    n = len(queries)
    excerpts = setup.excerpts
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
    values: dict[str, np.ndarray] = {
        "rel_recall": np.array([r for r, _ in rel], dtype=np.float64),
        "rel_precision": np.array([p for _, p in rel], dtype=np.float64),
    }
    for m in REL_METRICS:  # evidence_<m>: the chunk metric m of the evidence spans
        if m.startswith(EVIDENCE):
            values[m] = scores.metric(m.removeprefix(EVIDENCE))
    values = {m: values[m] for m in REL_METRICS}  # in the table's order
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
                excerpt_units=int(scores.excerpt_units[i]),
                retrieved_units=int(scores.retrieved_units[i]),
                first_relevant_rank=_first_match(hit_r),
                excerpt_coverage=tuple(coverage[row : row + len(q.excerpts)]),
                tags=q.tags,
                scores={
                    **dict.fromkeys(METRICS),  # no chunk metric: None, never 0
                    **{m: present(v[i]) for m, v in values.items()},
                },
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
