"""Which changes of a comparison noise explains (docs/baselines.md, "Noise is
measured, not assumed").

Only run-to-run noise can make a change that is not real, and each kind is
known or measured from evidence the run and the baseline hold, never assumed.
A question whose retrieved texts are the same as the baseline's (``found``)
changed for another reason (its judgments, its excerpts' placement): no noise
explains it. Otherwise:

- deterministic parts (exact and BM25 search and their fusion, a local embedder,
  cached vectors, committed judgments) contribute none;
- ``approximation``: an approximate store (Chroma's HNSW) changed a question's
  result while exact search on the same vectors did not (the same texts), and
  the store's configuration is the same;
- ``margin``: the question's decisive margin, in the baseline or now, is below
  :data:`~pytest_chunkeval.engine.margins.EPSILON` (a near tie that float drift
  across machines can swap), and neither the configuration, nor the chunking,
  nor a document the question involves (its own, its excerpts', what it
  retrieves) changed;
- ``unstable``: a user's retriever (``score()``) asked the question again, past
  every cache, and answered differently (:mod:`~pytest_chunkeval.engine.reask`).

A change nothing here explains is real.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult, QueryRecord
    from pytest_chunkeval.gate.baseline import Baseline
    from pytest_chunkeval.gate.changes import BaselineChanges

NOISE_KINDS: dict[str, str] = {
    "approximation": "the store's result changed, exact search on the same "
    "vectors did not",
    "margin": "a near tie: its decisive margin is below the float drift bound",
    "unstable": "the retriever answered differently when asked again",
}
"""Each kind of noise, as the reports explain it."""


def explain_noise(
    baseline: Baseline,
    current: EvalResult,
    changes: BaselineChanges,
    changed: Sequence[str],
    *,
    order: bool = False,
) -> dict[str, str]:
    """Question id -> the kind of noise (:data:`NOISE_KINDS`) that explains its
    change, for the ``changed`` questions that noise explains; the others'
    changes are real. ``order``: a gated metric reads the order of the ranks
    (a rank metric), so the order margin decides, not the decisive one."""
    from pytest_chunkeval.engine.margins import EPSILON

    records = {q.id: q for q in current.queries}
    store_changed = any(c.key == "store" for c in changes.config)
    steady = not changes.config and baseline.chunks.get("count") == current.chunks.get(
        "count"
    )
    touched = _touched(changes)
    key = "order" if order or "budget" in current.config else "margin"
    out: dict[str, str] = {}
    for qid in changed:
        record = records[qid]
        old = baseline.questions.get(qid, {})
        now = record.evidence
        if _same(old.get("found"), now.get("found")):
            continue  # the same texts retrieved: noise moved nothing here
        if not store_changed and _same(old.get("exact"), now.get("exact")):
            out[qid] = "approximation"
        elif (
            steady
            and touched is not None
            and _below(_margin(old, key), _margin(now, key), EPSILON)
            and not (_documents(record) & touched)
        ):
            out[qid] = "margin"
    probe = current.probe
    rest = [q for q in changed if q not in out]
    if probe is not None and rest:
        out.update(probe.unstable(rest))
    return out


def _margin(evidence: Mapping[str, Any], key: str) -> Any:
    """The margin ``key`` of a question's evidence; a baseline leaves out an
    order margin equal to the decisive one."""
    return evidence.get(key, evidence.get("margin"))


def _same(before: Any, after: Any) -> bool:
    return isinstance(before, str) and before == after


def _below(before: Any, after: Any, epsilon: float) -> bool:
    """Whether a recorded margin is below ``epsilon`` on either side (None: no
    decisive gap, absent: not measured)."""
    return any(
        isinstance(m, (int, float)) and not isinstance(m, bool) and m < epsilon
        for m in (before, after)
    )


def _touched(changes: BaselineChanges) -> frozenset[str] | None:
    """The documents edited, added or removed; None when the corpus changed and
    which documents is unknown (an old baseline)."""
    if changes.corpus_changed and not changes.documents_known:
        return None
    return frozenset(d.doc_id for d in changes.documents)


def _documents(record: QueryRecord) -> set[str]:
    """The documents a question involves: its own, its excerpts', and those of
    what it retrieved."""
    return {
        record.doc_id,
        *(doc for doc, _, _ in record.excerpts),
        *(doc for doc, _, _ in record.retrieved),
    }


def noise_of(reasons: Mapping[str, str]) -> str:
    """The kinds of noise in ``reasons``, counted: ``2 approximation, 1 margin``."""
    counts: dict[str, int] = {}
    for why in reasons.values():
        counts[why] = counts.get(why, 0) + 1
    return ", ".join(f"{n} {why}" for why, n in counts.items())
