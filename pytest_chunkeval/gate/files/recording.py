"""What a baseline keeps of a result's numbers and configuration, rounded as
written (docs/baselines.md, "What is in one").

Per-question values keep 4 decimals (0.01 points: far below any tolerance worth
setting, and coarse enough that float noise of another BLAS does not churn the
file); means and stds keep 6; a variance (a question's ``var``, the run's
``noise.mean_variance``) 6 significant digits of its value at 12 decimals, so
the ``1e-35`` a sum of equal floats leaves reads as 0. The gate rounds the
current run the same way before comparing, so an unchanged run gives deltas of
exactly zero. A file's reader takes any finite number: one written unrounded
by an older version reads as it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pytest_chunkeval.gate.files.portable import record_portable_store

QUERY_DECIMALS = 4
MEAN_DECIMALS = 6
VARIANCE_DIGITS = 6
"""Significant digits kept of a variance (after :data:`VARIANCE_DECIMALS`)."""
VARIANCE_DECIMALS = 12
"""Below ``0.5e-12`` a variance is float residue, written as 0."""
# Names and paths of the data, not its content (the hashes identify that); a
# query file's path may differ between machines and must not look like drift.
VOLATILE_CONFIG_KEYS = frozenset({"corpus", "queries"})


def rounded(value: float | None, decimals: int) -> float | None:
    """``value`` rounded to ``decimals`` (None for None or NaN; never -0.0)."""
    if value is None or math.isnan(value):
        return None
    out = round(float(value), decimals)
    return 0.0 if out == 0 else out  # no "-0.0" in files


def rounded_variance(value: float) -> float:
    """A variance as a baseline writes it (see the module's docstring)."""
    out = float(f"{round(float(value), VARIANCE_DECIMALS):.{VARIANCE_DIGITS}g}")
    return 0.0 if out == 0 else out


def noise_record(noise: Mapping[str, Any]) -> dict[str, Any]:
    """What a baseline keeps of a run's ``noise``: no timing, the mean
    variances rounded."""
    out = {k: v for k, v in noise.items() if k != "rebuild_seconds"}
    means = out.get("mean_variance")
    if isinstance(means, Mapping):
        out["mean_variance"] = {m: rounded_variance(v) for m, v in means.items()}
    return out


def recorded_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """What a baseline keeps of a result's configuration: what determines the
    numbers, never where a store lives (``record_portable_store``) nor volatile keys."""
    out = {k: v for k, v in config.items() if k not in VOLATILE_CONFIG_KEYS}
    record_portable_store(out)
    return out


def chunk_record(chunks: Mapping[str, float]) -> dict[str, float]:
    """A chunking's count and mean size; a whole retriever's (``score``) mean
    results per question instead of a count, which would be results x questions."""
    mean = rounded(float(chunks.get("mean_units", 0.0)), 2) or 0.0
    per_question = chunks.get("results_per_query")
    if per_question is not None:
        per = rounded(float(per_question), 2) or 0.0
        return {"results_per_question": per, "mean_units": mean}
    return {"count": int(chunks.get("count", 0)), "mean_units": mean}
