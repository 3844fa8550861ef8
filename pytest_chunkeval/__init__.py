"""pytest-chunkeval: token-level retrieval metrics for RAG chunking, as pytest tests.

The public API is the ``TYPE_CHECKING`` imports below, each name written once:
what a test evaluates (``evaluate``, ``score``, ``evaluate_relationships`` and
their ``EvalResult``, the ``chunkeval`` fixture's ``Evaluator``), the data it
evaluates on, what a query set can tell (``inspect_queries``, ``calibrate_judge``),
the extension protocols and what a registration hook receives, the assertion
helpers most tests use and the error and warning roots. Families live in their
modules: every ``assert_<metric>_at_least`` in :mod:`pytest_chunkeval.assertions`,
the chunker classes in :mod:`pytest_chunkeval.chunkers`, the error classes in
:mod:`pytest_chunkeval.errors`.

Each name loads on first access (the lazy table and ``__all__`` are read from those
imports), so importing the package, which pytest does in every run, stays cheap.
A name that moved keeps working for one release, with a ``DeprecationWarning``
naming its new home (``_MOVED``).
"""

from __future__ import annotations

import importlib
import re
from functools import cache
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


@cache
def _public() -> dict[str, str]:
    """Public name -> its module, read from the ``TYPE_CHECKING`` imports above
    (a text scan: cheap enough for the lookups pytest's imports make here;
    tests/test_layout.py checks it against the parsed imports)."""
    with open(__file__, encoding="utf-8") as file:
        source = file.read()
    block = source.split("if TYPE_CHECKING:", 1)[1].split("# isort: on", 1)[0]
    return {
        name: module
        for module, name in re.findall(
            r"^ +from ([\w.]+) import \(?\s*(\w+) as \2\b", block, re.MULTILINE
        )
    }


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return sorted(_public())
    module = _public().get(name)
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
    return sorted({*globals(), *_public()})
