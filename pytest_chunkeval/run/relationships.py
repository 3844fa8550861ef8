"""``chunkeval.relationships(...)``: a Graph-RAG evaluation in the pytest session,
memoized like ``chunkeval.evaluate`` on what determines its result."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from pytest_chunkeval.errors import ChunkevalError

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.relationships.extractors import Extractor
    from pytest_chunkeval.run.components import Components
    from pytest_chunkeval.run.config import RunConfig
    from pytest_chunkeval.run.datasets import Datasets


class MemoizingSession(Protocol):
    """What a relationship evaluation needs of the session (the session is
    one): its components, its data sets, and its memo."""

    components: Components
    datasets: Datasets

    def memoized(
        self,
        key: tuple[object, ...],
        compute: Callable[[], EvalResult],
        nodeid: str,
        label: str | None,
    ) -> EvalResult: ...


def _stderr(line: str) -> None:
    # The cost estimate of a paid extraction (pytest shows it with -s, or with
    # the test's captured output).
    print(line, file=sys.stderr, flush=True)


def relationships(
    session: MemoizingSession,
    run: RunConfig,
    chunker: object,
    extractor: object,
    *,
    nodeid: str,
    k: int,
    label: str | None = None,
) -> EvalResult:
    """The relationship result of ``chunker`` with ``extractor`` under ``run``.

    Keyed, as ``evaluate`` is, on what determines the result: a chunker spec, else
    the spans the chunker produced; an extractor spec, else its identity (name and
    version, which also key its cached answers)."""
    from pytest_chunkeval.engine.chunking import Chunking
    from pytest_chunkeval.relationships.evaluate import evaluate_relationships
    from pytest_chunkeval.relationships.specs import get_extractor

    session.components.ensure_registered()
    try:
        spec = chunker.strip() if isinstance(chunker, str) else None
        if spec is None:
            spec = session.components.spec_of(chunker)
        obj = session.components.chunker(chunker)
        if spec is not None:
            chunker_key: tuple[object, ...] = ("spec", spec)
        else:
            chunking = Chunking(obj, session.datasets.corpus(run))
            chunker_key = ("chunks", obj.name, chunking.digest())
        extractor_obj: str | Extractor
        if isinstance(extractor, str):
            extractor_obj = extractor
            extractor_key = ("spec", extractor.strip())
        else:
            extractor_obj = get_extractor(extractor)  # type: ignore[arg-type]
            extractor_key = ("identity", extractor_obj.identity)
    except ChunkevalError as exc:  # anything else is a bug: traceback
        raise ChunkevalError(str(exc)) from None
    key = ("relationships", run.key, k, chunker_key, extractor_key)

    def compute() -> EvalResult:
        return evaluate_relationships(
            obj,
            session.datasets.corpus(run),
            session.datasets.queries(run),
            extractor=extractor_obj,
            k=k,
            embedder=run.embedder,
            store=session.components.store(run.store),
            unit=run.unit,
            tokenizer=run.tokenizer,
            cache=session.components.cache(run.cache_dir),
            progress=None,
            log=_stderr,
            copies=run.copies,
        )

    return session.memoized(key, compute, nodeid, label)
