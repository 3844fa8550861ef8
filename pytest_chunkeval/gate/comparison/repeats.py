"""The repeats a comparison asks of a result (docs/baselines.md, "Repeats").

- A component the baseline found noisy is repeated in every later run until a
  baseline is recorded without it: a ``score()`` retriever that answered the
  same twice in this run is asked again until it has ``r`` answers when the
  baseline says it was noisy (:func:`as_the_baseline_measured`).
- Confirm before failing: before a ``score()`` retriever that looked
  deterministic in this run is reported ``regressed``, its changed questions
  are asked ``r`` more times; if any answer differs it is noisy, and the run is
  decided again with repeats (:func:`confirmed`).

Both go through the result's probe (engine/reask.py ``Probe``); a result
without one (a chunker's evaluation, a result read back from JSON) is as it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_chunkeval.core.absent import nan_if_absent
from pytest_chunkeval.gate.files.recording import QUERY_DECIMALS

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.files.baseline import Baseline


def _repeated(result: EvalResult) -> bool:
    return bool(result.noise.get("repeats"))


def as_the_baseline_measured(baseline: Baseline, result: EvalResult) -> EvalResult:
    """``result`` with repeats when the baseline found its retriever noisy and
    this run asked each question twice only."""
    noisy = baseline.noise.get("noisy") or ()
    if "retriever" not in noisy or _repeated(result) or result.probe is None:
        return result
    repeated: EvalResult = result.probe.repeated_like(result)
    return repeated


def changed(
    baseline: Baseline, result: EvalResult, metrics: Sequence[str]
) -> list[str]:
    """The questions whose value of one of ``metrics`` differs from the
    baseline's (as the baseline file rounds it)."""
    out = []
    for record in result.queries:
        stored = baseline.queries.get(record.id)
        if stored is None:
            continue
        for m in metrics:
            before = nan_if_absent(stored.get(m))
            now = round(record.metric(m), QUERY_DECIMALS)
            if not (math.isnan(before) and math.isnan(now)) and before != now:
                out.append(record.id)
                break
    return out


def confirmed(
    baseline: Baseline, result: EvalResult, metrics: Sequence[str]
) -> EvalResult | None:
    """Confirm before failing: when ``result``'s retriever looked deterministic,
    ask its changed questions again; the result with repeats when an answer
    differed (decide again with it), else None (the failure stands)."""
    probe = result.probe
    if probe is None or _repeated(result):
        return None
    ids = changed(baseline, result, metrics)
    if not ids or not probe.confirm(ids):
        return None
    repeated: EvalResult = probe.repeated_like(result)
    return repeated
