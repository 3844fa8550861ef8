"""The noise of a comparison's mean change (docs/baselines.md, "What a verdict
means"): noise widens the margin a drop must clear, it never removes a
question's change from the mean.

A component is deterministic unless a run found it noisy (``EvalResult.noise``:
a ``score()`` retriever answering differently when asked again, an approximate
store rebuilt); then each question's value is the mean of its ``r`` repeats,
with its sample variance (denominator ``r - 1``). For each gated metric the
standard error of the mean change over the ``n`` questions compared is

    SE = sqrt(sum_i (v_now,i / r_now,i + v_base,i / r_base,i)) / n

where a side's ``v_i`` is its own variance where it repeated question ``i``;
the mean variance of its repeated questions where it found the component noisy
but asked ``i`` once; the other side's ``v_i`` where it found the component
deterministic and the other side found it noisy; 0 only where neither side
found noise. :func:`z_value` is the one-sided normal quantile the drop must
clear in SEs, Bonferroni over the gated metrics.

The records this reads: ``QueryRecord.repeats`` (metric -> (mean, variance,
r)) and ``EvalResult.noise`` for the current run; a baseline's per-question
``var`` and ``r`` (gate/files/questions.py) and its ``noise`` for the baseline. A
field a side lacks reads as its default: asked once, variance 0, no noise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.util.text import plural

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from pytest_chunkeval.engine.results import EvalResult, QueryRecord
    from pytest_chunkeval.gate.files.baseline import Baseline

    FloatArray = npt.NDArray[np.float64]

VARYING = frozenset({"retriever", "store"})
"""Components whose noise is measured by repeats (an embedder's is its
declared float drift bound, docs/baselines.md "Float drift")."""


def z_value(confidence: float, metrics: int) -> float:
    """The one-sided normal quantile ``z(1 - alpha / g)`` at confidence
    ``1 - alpha`` over ``g`` gated metrics: 2.13 at 95% over three."""
    alpha = (1.0 - confidence) / max(metrics, 1)
    return NormalDist().inv_cdf(1.0 - alpha)


@dataclass(frozen=True)
class Side:
    """One side's repeats: per question id and metric its variance and ``r``
    where it repeated the question, which components it found noisy, and the
    mean variance of its repeated questions per metric."""

    variances: Mapping[str, Mapping[str, tuple[float, int]]] = field(
        default_factory=dict
    )
    noisy: frozenset[str] = frozenset()
    mean_variance: Mapping[str, float] = field(default_factory=dict)
    noise: Mapping[str, Any] = field(default_factory=dict)
    """The side's whole noise record (repeats, cost), for the reports."""

    @property
    def varies(self) -> bool:
        """Whether this side found a component whose noise repeats measure."""
        return bool(self.noisy & VARYING)

    def cell(self, qid: str, metric: str) -> tuple[float, int] | None:
        """``(variance, r)`` of a question's metric on this side; None where
        the side found no noise (deterministic)."""
        own = self.variances.get(qid, {}).get(metric)
        if own is not None:
            return own
        if self.varies:
            return _mean_variance(self, metric), 1
        return None


def current_side(result: EvalResult) -> Side:
    """The current run's repeats (``QueryRecord.repeats``, ``EvalResult.noise``)."""
    noise = result.noise
    variances: dict[str, dict[str, tuple[float, int]]] = {}
    for record in result.queries:
        cells = {
            m: (float(v), int(r))
            for m, (_, v, r) in record.repeats.items()
            if int(r) > 1 and _finite(v)
        }
        if cells:
            variances[record.id] = cells
    return _side(variances, noise)


def baseline_side(baseline: Baseline) -> Side:
    """The baseline's repeats: its questions' ``var`` and ``r``, its ``noise``."""
    noise = baseline.noise
    variances: dict[str, dict[str, tuple[float, int]]] = {}
    for qid, record in baseline.questions.items():
        r = record.get("r", 1)
        var = record.get("var")
        if isinstance(r, int) and r > 1 and isinstance(var, Mapping):
            variances[qid] = {
                str(m): (float(v), r) for m, v in var.items() if _finite(v)
            }
    return _side(variances, noise)


def _side(
    variances: dict[str, dict[str, tuple[float, int]]], noise: Mapping[str, Any]
) -> Side:
    noisy = noise.get("noisy") or ()
    means = noise.get("mean_variance") or {}
    return Side(
        variances,
        frozenset(str(c) for c in noisy),
        {str(m): float(v) for m, v in means.items() if _finite(v)},
        dict(noise),
    )


def _mean_variance(side: Side, metric: str) -> float:
    """The mean variance of a side's repeated questions for ``metric``: its
    recorded one, else the mean over the questions it repeated."""
    if metric in side.mean_variance:
        return side.mean_variance[metric]
    found = [c[metric][0] for c in side.variances.values() if metric in c]
    return sum(found) / len(found) if found else 0.0


def _finite(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


def cell_variances(
    before: Side, now: Side, records: Sequence[QueryRecord], metrics: Sequence[str]
) -> FloatArray:
    """Per question and metric, ``v_now / r_now + v_base / r_base`` by the
    rules of the module docstring."""
    import numpy as np

    out = np.zeros((len(records), len(metrics)), dtype=np.float64)
    if not (before.varies or now.varies):
        # neither side found noise: SE = 0. The variances of a side that
        # repeated and found nothing varying (a store rebuilt into the same
        # rankings) are float residue (1e-35), not noise to report.
        return out
    for i, record in enumerate(records):
        for j, metric in enumerate(metrics):
            mine = now.cell(record.id, metric)
            theirs = before.cell(record.id, metric)
            if mine is None and theirs is not None:
                mine = (theirs[0], 1)  # asked once, with the other side's noise
            if theirs is None and mine is not None:
                theirs = (mine[0], 1)
            if mine is None or theirs is None:
                continue
            out[i, j] = mine[0] / mine[1] + theirs[0] / theirs[1]
    return out


def standard_error(cells: FloatArray, finite: npt.NDArray[np.bool_]) -> float:
    """``sqrt(sum of cells) / n`` over the questions compared (``finite``)."""
    n = int(finite.sum())
    if n == 0:
        return 0.0
    return math.sqrt(float(cells[finite].sum())) / n


def repeats_text(side: Side) -> str:
    """What measured a side's noise, in a few words: ``retriever noisy: 4
    repeats of 36 questions, 180 requests``; "" when it found none."""
    noise = side.noise
    if not side.varies:
        return ""
    parts = [f"{', '.join(sorted(side.noisy))} noisy"]
    repeats, sampled = noise.get("repeats"), noise.get("sampled")
    if isinstance(repeats, int):
        what = f"{repeats} repeats"
        if isinstance(sampled, int):
            what += f" of {plural(sampled, 'question')}"
        parts.append(what)
    requests = noise.get("requests")
    if isinstance(requests, int) and requests:
        parts.append(f"{requests} requests")
    seconds = noise.get("rebuild_seconds")
    if _finite(seconds) and seconds:
        parts.append(f"{float(seconds):.1f} s rebuilding")
    return parts[0] + (": " + ", ".join(parts[1:]) if len(parts) > 1 else "")
