"""The session's memos, in memory (``run/evaluations.py``): what determines a
result in one process, every component by its identity, an object without one
by the object (docs/performance.md, "What a cache keys on")."""

from __future__ import annotations

from pytest_chunkeval.config.evaluation import EvaluationSpec
from pytest_chunkeval.engine.keys.identities import (
    embedder_identity,
    reranker_identity,
    store_identity,
)
from pytest_chunkeval.engine.keys.result import EvaluationSetup
from pytest_chunkeval.tokenizers.base import tokenizer_identity


def setup_key(
    spec: EvaluationSpec, queries_hash: str, *, retrieval: bool
) -> tuple[object, ...]:
    """The session's setup of ``spec`` on a query set (``retrieval=False``:
    without store and embedder)."""
    return (
        spec.dataset_key,
        queries_hash,
        (spec.embedder, spec.store) if retrieval else None,
        spec.unit,
        spec.tokenizer if spec.unit == "token" else None,
        spec.cache_dir,
        spec.copies,
    )


def memo_key(setup: EvaluationSetup) -> tuple[object, ...]:
    """What, besides the chunker, the retriever and the per-run settings (k,
    budget, judge), determines a result: equal keys, equal results."""
    tokenizer, store, embedder = setup.tokenizer, setup.store, setup.embedder
    return (
        setup.corpus.content_hash,
        setup.queries.content_hash,
        setup.unit,
        None
        if tokenizer is None
        else _or_object(tokenizer_identity(tokenizer), tokenizer),
        None if embedder is None else _or_object(embedder_identity(embedder), embedder),
        None if store is None else _or_object(store_identity(store), store),
        setup.copies,
        str(setup.cache.directory),
    )


def evaluation_memo(
    setup: EvaluationSetup, subject: tuple[object, ...], unplaced: tuple[str, ...]
) -> tuple[object, ...]:
    """A chunker's evaluation in a session: the setup, its spec's per-run
    settings, what identifies the chunker's chunks (``subject``) and the
    questions left out (a lenient run scores another query set)."""
    spec = setup.spec
    key: tuple[object, ...] = ("evaluate", memo_key(setup), spec.k, spec.budget)
    key = (*key, _reranker(spec.rerank), spec.judge, spec.repeats, subject)
    return (*key, ("unplaced", unplaced)) if unplaced else key


def score_memo(setup: EvaluationSetup) -> tuple[object, ...]:
    """What, besides its answers, determines a whole retriever's result in a
    session (the caller adds the answers' digest)."""
    return ("score", memo_key(setup), setup.spec.judge, setup.spec.locate)


def relationships_memo(
    setup: EvaluationSetup,
    k: int,
    subject: tuple[object, ...],
    extractor: tuple[str, object],
) -> tuple[object, ...]:
    """A relationship evaluation in a session: the setup, ``k``, the chunker's
    chunks and the extractor's spec or identity."""
    return ("relationships", memo_key(setup), k, subject, extractor)


def _reranker(rerank: object) -> object:
    """A reranker by its identity now and its candidates (a cross-encoder's
    files replaced before it loaded are another reranker), as the result key
    has it."""
    if rerank is None:
        return None
    from pytest_chunkeval.stores.rerank import get_reranker

    reranker = get_reranker(rerank)  # type: ignore[arg-type]
    return (_or_object(reranker_identity(reranker), reranker), reranker.candidates)


def _or_object(identity: str | None, component: object) -> object:
    """An identity, else for a model whose files are not on disk yet its name
    and revision (what it loads in this session: ``NAME@main``), else the
    object itself (kept alive by the session's setup: its id is not reused
    meanwhile)."""
    from pytest_chunkeval.util.model_files import LazyModel

    if identity is not None:
        return identity
    if isinstance(component, LazyModel):
        return ("unresolved", str(getattr(component, "identity", "")))
    return ("object", id(component))
