"""Summaries of a distribution shared by the inspection's measures."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

QUANTILES: tuple[tuple[str, int], ...] = (
    ("min", 0),
    ("p10", 10),
    ("p25", 25),
    ("median", 50),
    ("p75", 75),
    ("p90", 90),
    ("max", 100),
)


def distribution(values: Sequence[float] | np.ndarray[Any, Any]) -> dict[str, Any]:
    """``n``, ``mean`` and quantiles (numpy's linear interpolation) of the finite
    ``values``; only ``n`` (0) when there are none."""
    arr = np.asarray(values, dtype=np.float64)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return {"n": 0}
    out: dict[str, Any] = {"n": int(arr.size), "mean": float(arr.mean())}
    for name, q in QUANTILES:
        out[name] = float(np.percentile(arr, q))
    return out


def shares_at_least(
    values: Sequence[float] | np.ndarray[Any, Any], thresholds: Sequence[float]
) -> dict[str, float]:
    """Per threshold (as text, ``"0.5"``), the share of finite values >= it."""
    arr = np.asarray(values, dtype=np.float64)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return {}
    return {f"{t:g}": float((arr >= t).mean()) for t in thresholds}


def histogram(
    values: Sequence[float] | np.ndarray[Any, Any], edges: Sequence[float]
) -> list[int]:
    """Counts of finite values per bin ``[edges[i], edges[i + 1])``, the last bin
    closed (numpy's rule)."""
    arr = np.asarray(values, dtype=np.float64)
    arr = arr[np.isfinite(arr)]
    counts, _ = np.histogram(arr, bins=np.asarray(edges, dtype=np.float64))
    return [int(c) for c in counts]


def fraction(part: int, whole: int) -> float:
    """``part / whole``, NaN for an empty whole."""
    return part / whole if whole else math.nan
