"""pytest-chunkeval: token-level retrieval metrics for RAG chunking, as pytest tests.

The public API is :data:`_PUBLIC` below, each name with the module that defines
it (``__all__`` is its names), and the ``TYPE_CHECKING`` imports that tell type
checkers the same (``tests/test_layout.py`` checks that the two agree): what a
test evaluates (``evaluate``, ``score``, ``evaluate_relationships`` and
their ``EvalResult``, the ``chunkeval`` fixture's ``Evaluator``), the data it
evaluates on, what a query set can tell (``inspect_queries``, ``calibrate_judge``),
the extension protocols and what a registration hook receives, the assertion
helpers most tests use and the error and warning roots. Families live in their
modules: every ``assert_<metric>_at_least`` in :mod:`pytest_chunkeval.assertions`,
the chunker classes in :mod:`pytest_chunkeval.chunkers`, the error classes in
:mod:`pytest_chunkeval.errors`.

Each name loads on first access, so importing the package, which pytest does in
every run, stays cheap. The table is data, not read from this file's text: an
install without sources (``.pyc`` only, a zip) resolves it too.
A name that moved keeps working for one release, with a ``DeprecationWarning``
naming its new home (``_MOVED``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # isort: off
    # (grouped by what a test does with them, one name a line)
    # Evaluating
    from pytest_chunkeval.engine.evaluate import evaluate as evaluate
    from pytest_chunkeval.engine.results import EvalResult as EvalResult
    from pytest_chunkeval.engine.score import score as score
    from pytest_chunkeval.engine.two_stage import TwoStage as TwoStage
    from pytest_chunkeval.relationships.evaluate import (
        evaluate_relationships as evaluate_relationships,
    )
    from pytest_chunkeval.run.evaluator import Evaluator as Evaluator

    # The data
    from pytest_chunkeval.data.beir import load_beir as load_beir
    from pytest_chunkeval.data.benchmarks import load_benchmark as load_benchmark
    from pytest_chunkeval.data.corpus import Corpus as Corpus
    from pytest_chunkeval.data.corpus import Document as Document
    from pytest_chunkeval.data.queries import QuerySet as QuerySet
    from pytest_chunkeval.data.query_types import Excerpt as Excerpt
    from pytest_chunkeval.data.query_types import Query as Query

    # What a query set and a judge can tell
    from pytest_chunkeval.quality.calibration import calibrate_judge as calibrate_judge
    from pytest_chunkeval.quality.inspection import inspect_queries as inspect_queries

    # Components, and what a registration hook receives
    from pytest_chunkeval.chunkers import as_chunker as as_chunker
    from pytest_chunkeval.chunkers import get_chunker as get_chunker
    from pytest_chunkeval.chunkers.base import Chunker as Chunker
    from pytest_chunkeval.config.registry import Param as Param
    from pytest_chunkeval.config.registry import Registry as Registry
    from pytest_chunkeval.config.registry import Signature as Signature
    from pytest_chunkeval.embedders.base import Embedder as Embedder
    from pytest_chunkeval.judging.judge import CallableJudge as CallableJudge
    from pytest_chunkeval.judging.judge import Judge as Judge
    from pytest_chunkeval.judging.specs import register_judge as register_judge
    from pytest_chunkeval.relationships.extractors import (
        CallableExtractor as CallableExtractor,
    )
    from pytest_chunkeval.relationships.extractors import Extractor as Extractor
    from pytest_chunkeval.stores import Store as Store
    from pytest_chunkeval.stores import TextStore as TextStore
    from pytest_chunkeval.tokenizers.base import Tokenizer as Tokenizer

    # Assertions (every metric's: pytest_chunkeval.assertions)
    from pytest_chunkeval.assertions import (
        assert_metric_at_least as assert_metric_at_least,
    )
    from pytest_chunkeval.assertions import (
        assert_recall_at_least as assert_recall_at_least,
    )
    from pytest_chunkeval.assertions import percentile as percentile
    from pytest_chunkeval.assertions import share_at_least as share_at_least

    # Errors (every class: pytest_chunkeval.errors)
    from pytest_chunkeval.errors import ChunkevalError as ChunkevalError
    from pytest_chunkeval.errors import ChunkevalWarning as ChunkevalWarning
    # isort: on

_PUBLIC = {
    # Evaluating
    "evaluate": "pytest_chunkeval.engine.evaluate",
    "EvalResult": "pytest_chunkeval.engine.results",
    "score": "pytest_chunkeval.engine.score",
    "TwoStage": "pytest_chunkeval.engine.two_stage",
    "evaluate_relationships": "pytest_chunkeval.relationships.evaluate",
    "Evaluator": "pytest_chunkeval.run.evaluator",
    # The data
    "load_beir": "pytest_chunkeval.data.beir",
    "load_benchmark": "pytest_chunkeval.data.benchmarks",
    "Corpus": "pytest_chunkeval.data.corpus",
    "Document": "pytest_chunkeval.data.corpus",
    "QuerySet": "pytest_chunkeval.data.queries",
    "Excerpt": "pytest_chunkeval.data.query_types",
    "Query": "pytest_chunkeval.data.query_types",
    # What a query set and a judge can tell
    "calibrate_judge": "pytest_chunkeval.quality.calibration",
    "inspect_queries": "pytest_chunkeval.quality.inspection",
    # Components, and what a registration hook receives
    "as_chunker": "pytest_chunkeval.chunkers",
    "get_chunker": "pytest_chunkeval.chunkers",
    "Chunker": "pytest_chunkeval.chunkers.base",
    "Param": "pytest_chunkeval.config.registry",
    "Registry": "pytest_chunkeval.config.registry",
    "Signature": "pytest_chunkeval.config.registry",
    "Embedder": "pytest_chunkeval.embedders.base",
    "CallableJudge": "pytest_chunkeval.judging.judge",
    "Judge": "pytest_chunkeval.judging.judge",
    "register_judge": "pytest_chunkeval.judging.specs",
    "CallableExtractor": "pytest_chunkeval.relationships.extractors",
    "Extractor": "pytest_chunkeval.relationships.extractors",
    "Store": "pytest_chunkeval.stores",
    "TextStore": "pytest_chunkeval.stores",
    "Tokenizer": "pytest_chunkeval.tokenizers.base",
    # Assertions (every metric's: pytest_chunkeval.assertions)
    "assert_metric_at_least": "pytest_chunkeval.assertions",
    "assert_recall_at_least": "pytest_chunkeval.assertions",
    "percentile": "pytest_chunkeval.assertions",
    "share_at_least": "pytest_chunkeval.assertions",
    # Errors (every class: pytest_chunkeval.errors)
    "ChunkevalError": "pytest_chunkeval.errors",
    "ChunkevalWarning": "pytest_chunkeval.errors",
}
"""Every public name and the module that defines it: loaded from there on first
access. The ``TYPE_CHECKING`` imports above say the same to type checkers."""

__all__ = sorted(_PUBLIC)

_MOVED = {
    **dict.fromkeys(
        ("FixedTokenChunker", "RecursiveTokenChunker", "SentenceChunker"),
        "pytest_chunkeval.chunkers",
    ),
    **dict.fromkeys(
        ("KamradtSemanticChunker", "KamradtModifiedChunker"),
        "pytest_chunkeval.chunkers.semantic",
    ),
    "ClusterSemanticChunker": "pytest_chunkeval.chunkers.cluster",
    "LLMSemanticChunker": "pytest_chunkeval.chunkers.llm",
    **dict.fromkeys(
        (
            "CheckFailed",
            "ConfigError",
            "DataError",
            "FileAccessError",
            "MissingFile",
            "UnavailableError",
        ),
        "pytest_chunkeval.errors",
    ),
}
"""Names this package exported before and the module that has them now: they
still resolve here, with a ``DeprecationWarning``, until the next release. So do
``Statistic`` and every ``assert_<metric>_at_least`` (:data:`_ASSERTIONS`)."""
_ASSERTIONS = "pytest_chunkeval.assertions"


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip __getattr__
        return value
    moved = _MOVED.get(name)
    if moved is None and (name == "Statistic" or name.startswith("assert_")):
        moved = _ASSERTIONS
    value = None
    if moved is not None:
        value = getattr(importlib.import_module(moved), name, None)
    if value is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings

    warnings.warn(
        f"pytest_chunkeval.{name} moved: import it from {moved} (the old name "
        "goes in the next release)",
        DeprecationWarning,
        stacklevel=2,
    )
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
