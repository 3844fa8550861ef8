"""pytest-chunkeval: token-level retrieval metrics for RAG chunking, as pytest tests.

The public API is importable from here: ``evaluate``/``score`` and their
``EvalResult``, the ``chunkeval`` fixture's type ``Evaluator``, the data types
(``Corpus``, ``QuerySet``, ``load_benchmark``, ``load_beir``),
``get_chunker``/``as_chunker``, the extension protocols (``Chunker``, ``Embedder``,
``Store``, ``TextStore``, ``Tokenizer``, ``Extractor``, ``Judge``) and what a
registration hook receives (``Registry``, ``Signature``, ``Param``), the assertion
helpers, ``inspect_queries`` (what a query set can tell), ``calibrate_judge``, and
the error root ``ChunkevalError`` with its families. Each loads on first access, so
importing the package (which pytest does in every run) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_chunkeval.chunkers import as_chunker, get_chunker
    from pytest_chunkeval.chunkers.base import Chunker
    from pytest_chunkeval.chunkers.cluster import ClusterSemanticChunker
    from pytest_chunkeval.chunkers.fixed import FixedTokenChunker
    from pytest_chunkeval.chunkers.llm import LLMSemanticChunker
    from pytest_chunkeval.chunkers.recursive import RecursiveTokenChunker
    from pytest_chunkeval.chunkers.semantic import (
        KamradtModifiedChunker,
        KamradtSemanticChunker,
    )
    from pytest_chunkeval.chunkers.sentence import SentenceChunker
    from pytest_chunkeval.config.registry import Param, Registry, Signature
    from pytest_chunkeval.data.beir import load_beir
    from pytest_chunkeval.data.benchmarks import load_benchmark
    from pytest_chunkeval.data.corpus import Corpus, Document
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.data.query_types import Excerpt, Query
    from pytest_chunkeval.embedders.base import Embedder
    from pytest_chunkeval.engine.evaluate import evaluate
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.engine.score import score
    from pytest_chunkeval.engine.two_stage import TwoStage
    from pytest_chunkeval.errors import (
        CheckFailed,
        ChunkevalError,
        ChunkevalWarning,
        ConfigError,
        DataError,
        FileAccessError,
        MissingFile,
        UnavailableError,
    )
    from pytest_chunkeval.gate.assertions import (
        Statistic,
        assert_complete_at_least,
        assert_context_relevance_at_least,
        assert_context_relevance_tokens_at_least,
        assert_evidence_f1_at_least,
        assert_evidence_iou_at_least,
        assert_evidence_precision_at_least,
        assert_evidence_recall_at_least,
        assert_f1_at_least,
        assert_iou_at_least,
        assert_metric_at_least,
        assert_mrr_at_least,
        assert_ndcg_at_least,
        assert_precision_at_least,
        assert_precision_omega_at_least,
        assert_recall_at_least,
        assert_rel_precision_at_least,
        assert_rel_recall_at_least,
        percentile,
        share_at_least,
    )
    from pytest_chunkeval.judging.judge import CallableJudge, Judge
    from pytest_chunkeval.judging.specs import register_judge
    from pytest_chunkeval.quality.calibration import calibrate_judge
    from pytest_chunkeval.quality.inspection import inspect_queries
    from pytest_chunkeval.relationships.evaluate import evaluate_relationships
    from pytest_chunkeval.relationships.extractors import CallableExtractor, Extractor
    from pytest_chunkeval.run.evaluator import Evaluator
    from pytest_chunkeval.stores._base import Store, TextStore
    from pytest_chunkeval.tokenizers.base import Tokenizer

_LAZY = {
    "Chunker": "chunkers.base",
    "FixedTokenChunker": "chunkers.fixed",
    "RecursiveTokenChunker": "chunkers.recursive",
    "SentenceChunker": "chunkers.sentence",
    "KamradtSemanticChunker": "chunkers.semantic",
    "KamradtModifiedChunker": "chunkers.semantic",
    "ClusterSemanticChunker": "chunkers.cluster",
    "LLMSemanticChunker": "chunkers.llm",
    "evaluate": "engine.evaluate",
    "score": "engine.score",
    "EvalResult": "engine.results",
    "TwoStage": "engine.two_stage",
    "evaluate_relationships": "relationships.evaluate",
    "CallableExtractor": "relationships.extractors",
    "CallableJudge": "judging.judge",
    "register_judge": "judging.specs",
    "calibrate_judge": "quality.calibration",
    "inspect_queries": "quality.inspection",
    "Corpus": "data.corpus",
    "Document": "data.corpus",
    "Excerpt": "data.query_types",
    "Query": "data.query_types",
    "QuerySet": "data.queries",
    "load_benchmark": "data.benchmarks",
    "load_beir": "data.beir",
    "get_chunker": "chunkers",
    "as_chunker": "chunkers",
    "Statistic": "gate.assertions",
    "assert_complete_at_least": "gate.assertions",
    "assert_context_relevance_at_least": "gate.assertions",
    "assert_context_relevance_tokens_at_least": "gate.assertions",
    "assert_rel_recall_at_least": "gate.assertions",
    "assert_rel_precision_at_least": "gate.assertions",
    "assert_evidence_recall_at_least": "gate.assertions",
    "assert_evidence_precision_at_least": "gate.assertions",
    "assert_evidence_iou_at_least": "gate.assertions",
    "assert_evidence_f1_at_least": "gate.assertions",
    "assert_f1_at_least": "gate.assertions",
    "assert_mrr_at_least": "gate.assertions",
    "assert_ndcg_at_least": "gate.assertions",
    "assert_iou_at_least": "gate.assertions",
    "assert_metric_at_least": "gate.assertions",
    "assert_precision_at_least": "gate.assertions",
    "assert_precision_omega_at_least": "gate.assertions",
    "assert_recall_at_least": "gate.assertions",
    "percentile": "gate.assertions",
    "share_at_least": "gate.assertions",
    "CheckFailed": "errors",
    "ChunkevalError": "errors",
    "ChunkevalWarning": "errors",
    "ConfigError": "errors",
    "DataError": "errors",
    "FileAccessError": "errors",
    "MissingFile": "errors",
    "UnavailableError": "errors",
    "Evaluator": "run.evaluator",
    "Embedder": "embedders.base",
    "Store": "stores._base",
    "TextStore": "stores._base",
    "Tokenizer": "tokenizers.base",
    "Extractor": "relationships.extractors",
    "Judge": "judging.judge",
    "Registry": "config.registry",
    "Param": "config.registry",
    "Signature": "config.registry",
}

__all__ = [
    "CallableExtractor",
    "CallableJudge",
    "CheckFailed",
    "Chunker",
    "ChunkevalError",
    "ChunkevalWarning",
    "ClusterSemanticChunker",
    "ConfigError",
    "Corpus",
    "DataError",
    "Document",
    "Embedder",
    "EvalResult",
    "Evaluator",
    "Excerpt",
    "Extractor",
    "FileAccessError",
    "FixedTokenChunker",
    "Judge",
    "KamradtModifiedChunker",
    "KamradtSemanticChunker",
    "LLMSemanticChunker",
    "MissingFile",
    "Param",
    "Query",
    "QuerySet",
    "RecursiveTokenChunker",
    "Registry",
    "SentenceChunker",
    "Signature",
    "Statistic",
    "Store",
    "TextStore",
    "Tokenizer",
    "TwoStage",
    "UnavailableError",
    "as_chunker",
    "assert_complete_at_least",
    "assert_context_relevance_at_least",
    "assert_context_relevance_tokens_at_least",
    "assert_evidence_f1_at_least",
    "assert_evidence_iou_at_least",
    "assert_evidence_precision_at_least",
    "assert_evidence_recall_at_least",
    "assert_f1_at_least",
    "assert_iou_at_least",
    "assert_metric_at_least",
    "assert_mrr_at_least",
    "assert_ndcg_at_least",
    "assert_precision_at_least",
    "assert_precision_omega_at_least",
    "assert_recall_at_least",
    "assert_rel_precision_at_least",
    "assert_rel_recall_at_least",
    "calibrate_judge",
    "evaluate",
    "evaluate_relationships",
    "get_chunker",
    "inspect_queries",
    "load_beir",
    "load_benchmark",
    "percentile",
    "register_judge",
    "score",
    "share_at_least",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
