"""pytest-chunkeval: token-level retrieval metrics for RAG chunking, as pytest tests.

The assertion helpers are importable from here; they (and the numpy-based engine)
load on first access, so importing the package stays cheap.
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

_LAZY = {
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
    "Statistic",
    "assert_f1_at_least",
    "assert_iou_at_least",
    "assert_metric_at_least",
    "assert_precision_at_least",
    "assert_precision_omega_at_least",
    "assert_recall_at_least",
    "percentile",
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
