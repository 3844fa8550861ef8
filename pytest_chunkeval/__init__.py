"""pytest-chunkeval: token-level retrieval metrics for RAG chunking, as pytest tests.

The public API is importable from here: ``evaluate``/``score`` and their
``EvalResult``, the data types (``Corpus``, ``QuerySet``, ``load_benchmark``),
``get_chunker``/``as_chunker``, and the assertion helpers. Each loads on first
access, so importing the package (which pytest does in every run) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .assertions import (
        Statistic,
        assert_f1_at_least,
        assert_iou_at_least,
        assert_metric_at_least,
        assert_precision_at_least,
        assert_precision_omega_at_least,
        assert_recall_at_least,
        percentile,
        share_at_least,
    )
    from .benchmarks import load_benchmark
    from .chunkers import as_chunker, get_chunker
    from .corpus import Corpus, Document
    from .engine import evaluate, score
    from .queries import Excerpt, Query, QuerySet
    from .results import EvalResult

_LAZY = {
    "evaluate": "engine",
    "score": "engine",
    "EvalResult": "results",
    "Corpus": "corpus",
    "Document": "corpus",
    "Excerpt": "queries",
    "Query": "queries",
    "QuerySet": "queries",
    "load_benchmark": "benchmarks",
    "get_chunker": "chunkers",
    "as_chunker": "chunkers",
    "Statistic": "assertions",
    "assert_f1_at_least": "assertions",
    "assert_iou_at_least": "assertions",
    "assert_metric_at_least": "assertions",
    "assert_precision_at_least": "assertions",
    "assert_precision_omega_at_least": "assertions",
    "assert_recall_at_least": "assertions",
    "percentile": "assertions",
    "share_at_least": "assertions",
}

__all__ = [
    "Corpus",
    "Document",
    "EvalResult",
    "Excerpt",
    "Query",
    "QuerySet",
    "Statistic",
    "as_chunker",
    "assert_f1_at_least",
    "assert_iou_at_least",
    "assert_metric_at_least",
    "assert_precision_at_least",
    "assert_precision_omega_at_least",
    "assert_recall_at_least",
    "evaluate",
    "get_chunker",
    "load_benchmark",
    "percentile",
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
