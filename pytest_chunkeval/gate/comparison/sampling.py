"""The sampling view of a comparison: what a set of questions of this size can
tell, reported beside the verdict and never used to forgive a real drop
(docs/baselines.md, "What a verdict means").

- :func:`bootstrap_intervals`: the paired bootstrap interval of the mean change
  (the whole verdict in ``paired`` mode, information in ``changes`` mode);
- :func:`detectable_questions`: the set's minimum detectable effect, the number of
  questions that must be lost in one direction before the bootstrap can tell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_chunkeval.gate.tolerances import DEFAULT_SAMPLES, DEFAULT_SEED

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]

_BLOCK_CELLS = 2_000_000  # resample indices drawn at once (bounds memory)


def per_metric_level(confidence: float, metrics: int) -> float:
    """Each interval's level so that ``metrics`` of them hold jointly."""
    return 1.0 - (1.0 - confidence) / max(metrics, 1)


def detectable_questions(n: int, metrics: int, confidence: float) -> int | None:
    """The smallest ``m`` with ``(1 - m/n)^n < alpha / (2 g)``: with ``n``
    questions and ``g`` gated metrics at confidence ``1 - alpha``, the paired
    bootstrap interval can exclude zero only once ``m`` questions moved the
    same way (a resample that draws none of them has a mean change of zero).
    At most ``n``; None without questions."""
    if n <= 0:
        return None
    bound = (1.0 - confidence) / (2 * max(metrics, 1))
    return next(m for m in range(1, n + 1) if (1.0 - m / n) ** n < bound)


def detectable_points(m: int | None, n: int, mean: float) -> float | None:
    """The minimum detectable effect of a metric in its own units: ``m`` of ``n``
    questions lost, each from the mean baseline value ``mean`` (``m * mean / n``)."""
    if m is None or n <= 0 or math.isnan(mean):
        return None
    return m * abs(mean) / n


def bootstrap_intervals(
    values: npt.ArrayLike | Sequence[Sequence[float]],
    level: float,
    *,
    samples: int = DEFAULT_SAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[FloatArray, FloatArray]:
    """Percentile bootstrap intervals of the column means of ``values`` (n, m).

    All columns share the same resamples (the same queries drawn), so metrics stay
    paired with each other. NaN cells are left out of their column's mean. The
    resamples are drawn as one index matrix per block (no Python loop over them).
    """
    import numpy as np

    data = np.asarray(values, dtype=np.float64)
    if data.ndim == 1:
        data = data[:, None]
    n, m = data.shape
    if n == 0:
        nan = np.full(m, math.nan)
        return nan, nan.copy()
    if samples < 1:
        raise ValueError(f"samples must be positive, got {samples}")
    if not np.any(data):  # nothing moved: the interval is exactly [0, 0]
        return np.zeros(m), np.zeros(m)
    valid = ~np.isnan(data)
    filled = np.where(valid, data, 0.0)
    partial = np.asarray(~valid.all(axis=0), dtype=bool)
    # Small index types draw and gather several times faster.
    index_type = np.int16 if n <= np.iinfo(np.int16).max else np.int64
    rng = np.random.default_rng(seed)
    means = np.empty((samples, m))
    block = max(1, _BLOCK_CELLS // n)
    for start in range(0, samples, block):
        size = min(block, samples - start)
        draws = rng.integers(0, n, size=(size, n), dtype=index_type)
        for j in range(m):
            sums = filled[:, j][draws].sum(axis=1)
            if partial[j]:
                with np.errstate(invalid="ignore", divide="ignore"):
                    sums /= valid[:, j][draws].sum(axis=1)
            else:
                sums /= n
            means[start : start + size, j] = sums
    alpha = 1.0 - level
    with np.errstate(invalid="ignore"):
        low = np.nanquantile(means, alpha / 2, axis=0)
        high = np.nanquantile(means, 1 - alpha / 2, axis=0)
    return np.asarray(low, np.float64), np.asarray(high, np.float64)
