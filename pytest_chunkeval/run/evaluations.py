"""The session's three evaluations: ``chunkeval.evaluate`` (a chunker),
``chunkeval.score`` (a whole retriever) and ``chunkeval.relationships`` (Graph-RAG),
each memoized on its :class:`~pytest_chunkeval.engine.setup.EvaluationSetup` (what
the data and the components are) and on what only it varies (the chunker's spec or
spans, the retriever's spans, the extractor, ``k``...).

The setup of a configuration is resolved once per session and shared by all three.
"""

from __future__ import annotations

import dataclasses
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_chunkeval.config.evaluation import EvaluationSpec
    from pytest_chunkeval.config.options import K
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.engine.chunking import Chunking
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.engine.setup import EvaluationSetup
    from pytest_chunkeval.run.components import Components
    from pytest_chunkeval.run.datasets import Datasets


class MemoizingSession(Protocol):
    """What an evaluation needs of the session (the session is one)."""

    components: Components
    datasets: Datasets
    setups: dict[tuple[object, ...], EvaluationSetup]

    def judging(self, run: EvaluationSpec) -> Any: ...

    def keep_alive(self, obj: object) -> None: ...

    def memoized(
        self,
        key: tuple[object, ...],
        compute: Callable[[], EvalResult],
        nodeid: str,
        label: str | None,
        *,
        row: tuple[object, ...] | None = None,
    ) -> EvalResult: ...


def _stderr(line: str) -> None:
    # The cost estimate of a paid extraction (pytest shows it with -s, or with
    # the test's captured output).
    print(line, file=sys.stderr, flush=True)


def setup_of(
    session: MemoizingSession,
    run: EvaluationSpec,
    queries: QuerySet | None = None,
    *,
    retrieval: bool = True,
) -> EvaluationSetup:
    """The evaluation setup of ``run`` on ``queries`` (default: its query set),
    resolved once per session; ``retrieval=False``: without store and embedder
    (a whole retriever's results are scored)."""
    from pytest_chunkeval.engine.keys import setup_key
    from pytest_chunkeval.engine.setup import EvaluationSetup

    if queries is None:
        queries = session.datasets.queries(run)
    key = setup_key(run, queries.content_hash, retrieval=retrieval)
    if key not in session.setups:
        session.components.ensure_registered()
        session.setups[key] = EvaluationSetup.resolve(
            session.datasets.corpus(run),
            queries,
            embedder=run.embedder,
            store=session.components.store(run.store) if retrieval else None,
            unit=run.unit,
            tokenizer=run.tokenizer,
            cache=session.components.cache(run.cache_dir),
            copies=run.copies,
        )
    return session.setups[key].with_spec(run)


def chunker_key(
    session: MemoizingSession, setup: EvaluationSetup, chunker: object
) -> tuple[tuple[object, ...], Chunking | None]:
    """What identifies a chunker's chunks: its canonical spec (a spec string, or
    an object made here from one), else the spans it produced (then also the
    chunking, so that it is not chunked twice)."""
    from pytest_chunkeval.engine.chunking import Chunking

    components = session.components
    spec = components.chunker_label(chunker) if isinstance(chunker, str) else None
    if spec is None:
        spec = components.spec_of(chunker)
    if spec is not None:
        return ("spec", spec), None
    chunked = setup.with_chunker(components.chunker(chunker))
    assert chunked.chunker is not None
    chunking = Chunking(chunked.chunker, setup.corpus, setup.cache)
    return ("chunks", chunked.chunker.name, chunking.digest()), chunking


def evaluate(
    session: MemoizingSession,
    run: EvaluationSpec,
    chunker: object,
    *,
    nodeid: str,
    k: K | None = None,
    budget: int | None = None,
    label: str | None = None,
    lenient: bool = False,
) -> EvalResult:
    """The result of ``chunker`` under ``run``, memoized by what determines it:
    a spec string by the spec; any other object is run every time (chunking is
    cheap) and keyed on the spans it produced, so a chunker changed between two
    tests is evaluated again while an unchanged one reuses everything.

    ``lenient`` (a test with a baseline to compare against): queries whose
    excerpts can no longer be placed in an edited corpus are left out and listed
    in the result's ``unplaced``, instead of failing the evaluation."""
    from pytest_chunkeval.engine.evaluate import evaluate as run_evaluation
    from pytest_chunkeval.engine.keys import evaluation_memo

    if k is not None:
        run = dataclasses.replace(run, k=k)
    if budget is not None:
        run = dataclasses.replace(run, budget=budget)
    queries, unplaced = session.datasets.placeable(run) if lenient else (None, ())
    setup = setup_of(session, run, queries)
    subject, chunking = chunker_key(session, setup, chunker)
    key = evaluation_memo(setup, subject, tuple(u.id for u in unplaced))

    def compute() -> EvalResult:
        result = run_evaluation(
            session.components.chunker(chunker),
            setup.corpus,
            setup.queries,
            rerank=run.rerank,
            k=run.k,
            budget=run.budget,
            progress=None,
            chunking=chunking,
            judge=session.judging(run),
            setup=setup,
            repeats=run.repeats,
        )
        return dataclasses.replace(result, unplaced=unplaced)

    return session.memoized(key, compute, nodeid, label)


def score(
    session: MemoizingSession,
    run: EvaluationSpec,
    retriever: object,
    *,
    nodeid: str,
    label: str | None = None,
    lenient: bool = False,
    factory: bool = False,
    noisy: bool = False,
) -> EvalResult:
    """The result of a whole retriever. It is asked every question in every call
    (it may have changed), twice, and more when its answers vary (engine/reask.py:
    ``factory``, ``noisy``); scoring is memoized by the spans it returned.

    Its summary row is named by ``label`` (else a module-level function's
    qualified name): results under one label share a row, across xdist workers
    too, so give different retrievers different labels. ``lenient``: as for
    :func:`evaluate`."""
    from pytest_chunkeval.engine.keys import score_memo
    from pytest_chunkeval.engine.reask import Answers, Asker, Probe, ask
    from pytest_chunkeval.engine.score import scored

    queries, unplaced = (
        session.datasets.placeable(run)
        if lenient
        else (session.datasets.queries(run), ())
    )
    setup = setup_of(session, run, queries, retrieval=False)
    data = score_memo(setup)
    qualname = getattr(retriever, "__qualname__", None)
    name = label or (
        qualname if isinstance(qualname, str) else type(retriever).__qualname__
    )
    asker = Asker(
        retriever,
        setup.corpus,
        queries,
        k=run.score_k,
        locate=run.locate,
        copies=run.copies,
        factory=factory,
    )
    answers = ask(asker, run.repeats, noisy=noisy)
    digest = answers.digest()
    key = (*data, name, digest, tuple(u.id for u in unplaced))
    named = retriever_key(retriever, label)
    if isinstance(named[1], int):
        # Its row names an object of this process: kept alive, so that its id
        # is never reused by another object during the session.
        session.keep_alive(retriever)

    def rescore(given: Answers) -> EvalResult:
        judging = setup.judging(session.judging(run))
        result = scored(setup, given, name, {}, judging)
        return dataclasses.replace(result, unplaced=unplaced)

    result = session.memoized(
        key, lambda: rescore(answers), nodeid, label, row=(*data, digest, named)
    )
    if result.probe is None:  # the gate asks it again (engine/reask.py)
        result.probe = Probe(asker, answers, rescore, run.repeats)
    return result


def relationships(
    session: MemoizingSession,
    run: EvaluationSpec,
    chunker: object,
    extractor: object,
    *,
    nodeid: str,
    k: int,
    label: str | None = None,
) -> EvalResult:
    """The relationship result of ``chunker`` with ``extractor`` under ``run``.

    Keyed, as ``evaluate`` is, on what determines the result: a chunker spec, else
    the spans the chunker produced; an extractor spec, else its cache identity
    (name and version, which also key its cached answers), else (a function
    without a ``cache_version``, computed every time) the object itself; its
    summary row then by its name where that names one function only."""
    from pytest_chunkeval.engine.keys import relationships_memo
    from pytest_chunkeval.relationships.evaluate import evaluate_relationships
    from pytest_chunkeval.relationships.extractors import (
        Extractor,
        extraction_owner,
        extractor_cache_identity,
    )
    from pytest_chunkeval.relationships.specs import get_extractor

    setup = setup_of(session, run)
    subject, _ = chunker_key(session, setup, chunker)
    extractor_obj: str | Extractor
    row = None
    if isinstance(extractor, str):
        extractor_obj = extractor
        extractor_key: tuple[str, object] = ("spec", extractor.strip())
    else:
        extractor_obj = get_extractor(extractor)  # type: ignore[arg-type]
        identity = extractor_cache_identity(extractor_obj)
        if identity is not None:
            extractor_key = ("identity", identity)
        else:
            owner = extraction_owner(extractor_obj)
            session.keep_alive(owner)  # its id is not reused during the session
            extractor_key = ("object", id(owner))
            if "<" not in extractor_obj.identity:  # not a lambda nor a local one
                name = ("name", extractor_obj.identity)
                row = relationships_memo(setup, k, subject, name)
    key = relationships_memo(setup, k, subject, extractor_key)

    def compute() -> EvalResult:
        return evaluate_relationships(
            session.components.chunker(chunker),
            setup.corpus,
            setup.queries,
            extractor=extractor_obj,
            k=k,
            progress=None,
            log=_stderr,
            setup=setup,
        )

    return session.memoized(key, compute, nodeid, label, row=row)


def retriever_key(retriever: object, label: str | None) -> tuple[str, object]:
    """What names a retriever's summary row in every process: its label, else the
    qualified name of a module-level function or class. Anything else (instances,
    mappings, lambdas, closures, bound methods) is only itself, as a chunker
    object is for ``evaluate``: ``("object", id)``."""
    if label:
        return ("label", label)
    if isinstance(retriever, (types.FunctionType, type)):
        name = f"{retriever.__module__}.{retriever.__qualname__}"
        if "<" not in name:  # not <lambda> nor <locals>: one object per module
            return ("name", name)
    return ("object", id(retriever))
