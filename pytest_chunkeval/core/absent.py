"""A metric that was not measured (a query without excerpts, a whole retriever's
``ndcg``): NaN in arrays, None in records, JSON and reports, never 0
(docs/concepts.md). One pair of conversions, used wherever values cross over."""

from __future__ import annotations

import math
from typing import Any


def present(value: Any) -> float | None:
    """A metric value as a float, or None where it is absent (None or NaN)."""
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def nan_if_absent(value: float | None) -> float:
    """A metric value as a float, NaN where it is absent (None)."""
    return math.nan if value is None else float(value)
