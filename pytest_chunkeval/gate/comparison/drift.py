"""Float drift across machines: the one change of a question the gate does not
count (docs/baselines.md, "Float drift").

The same vectors embedded on another machine differ in their last bits, and two
chunks whose scores are that close can swap. A changed question's change is
drift, and not counted, only when all of these hold:

- its **baseline** decisive margin (the order margin where a rank metric is
  gated or a token budget decides) was below the ε the baseline recorded: the
  current run's margins are never evidence (a broken embedder makes every
  margin zero);
- nothing that determines the numbers changed: every configuration field,
  model and file identity (the corpus, the chunking); library versions are
  named by the report but do not count;
- the swap is checked, never assumed: the baseline recorded the text hashes and
  scores of its top ``k`` + 1 ranks, and every chunk that entered or left the
  top ``k`` (for a rank metric, every chunk that moved inside it) scores now
  within ε of the current ``k``-th score (of the score now at its former rank).

Each side records its ranks (``top``, ``k``, ``eps``: engine/evidence.py) only
where its own margin was below ε; a question whose current margin is not below
ε swapped nothing within ε.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.comparison.changes import BaselineChanges
    from pytest_chunkeval.gate.files.baseline import Baseline

DRIFT = "drift"
DRIFT_TEXT = "float drift: a near tie in the baseline swapped within ε"
"""A question whose change drift explains, as the reports say it."""
NOT_COUNTING = ("versions",)
"""Configuration keys (library versions) named by a report but not counting
against drift."""


def explain_drift(
    baseline: Baseline,
    current: EvalResult,
    changes: BaselineChanges,
    changed: Sequence[str],
    *,
    order: bool = False,
) -> dict[str, str]:
    """Question id -> :data:`DRIFT` for each of the ``changed`` questions whose
    change float drift explains (see the module docstring). ``order``: a gated
    metric reads the order of the ranks (a rank metric)."""
    if not _steady(baseline, current, changes):
        return {}
    order = order or "budget" in current.config
    key = "order" if order else "margin"
    records = {q.id: q for q in current.queries}
    out: dict[str, str] = {}
    for qid in changed:
        old = baseline.questions.get(qid, {})
        now = records[qid].evidence
        eps = _number(old.get("eps"))
        margin = _number(old.get(key, old.get("margin")))
        if eps is None or margin is None or margin >= eps:
            continue
        if swapped_within(old, now, eps, order=order or old.get("ordered") is True):
            out[qid] = DRIFT
    return out


def _steady(baseline: Baseline, current: EvalResult, changes: BaselineChanges) -> bool:
    """Whether every configuration field (library versions aside), model and
    file identity is the baseline's."""
    config = [c for c in changes.config if not c.key.startswith(NOT_COUNTING)]
    return (
        not config
        and not changes.incomparable
        and not changes.corpus_changed
        and baseline.chunks.get("count") == current.chunks.get("count")
    )


def swapped_within(
    old: Mapping[str, Any], now: Mapping[str, Any], eps: float, *, order: bool
) -> bool:
    """Whether the ranks recorded in ``old`` (a baseline question's ``top`` and
    ``k``) became those of ``now`` by swaps within ``eps`` of the current
    scores; False when either side recorded no ranks, the depths differ, or
    nothing swapped."""
    from pytest_chunkeval.engine.margins import relative_gap

    k = old.get("k")
    before, after = _ranks(old.get("top")), _ranks(now.get("top"))
    if not isinstance(k, int) or k != now.get("k") or not before or not after:
        return False
    if len(after) < k:
        return False
    was = [h for h, _ in before[:k]]
    is_ = [h for h, _ in after[:k]]
    score = _first(after)
    kth = after[k - 1][1]

    def near(text: str, reference: float) -> bool:
        found = score.get(text)
        if found is None:
            return False
        high, low = max(found, reference), min(found, reference)
        return relative_gap(high, low) < eps

    moved = set(was) ^ set(is_)
    if not all(near(h, kth) for h in moved):
        return False
    reordered = [
        (p, h) for p, h in enumerate(was) if p < len(is_) and is_[p] != h and h in is_
    ]
    if order and not all(near(h, after[p][1]) for p, h in reordered):
        return False
    return bool(moved) or (order and bool(reordered))


def _ranks(top: Any) -> list[tuple[str, float]]:
    """A recorded ``top``: ``[[text hash, score], ...]`` in rank order; empty
    when absent or malformed."""
    if not isinstance(top, list):
        return []
    out = []
    for item in top:
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not isinstance(item[0], str)
            or _number(item[1]) is None
        ):
            return []
        out.append((item[0], float(item[1])))
    return out


def _first(ranks: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Each text's score at its first rank (identical texts score the same)."""
    out: dict[str, float] = {}
    for text, score in ranks:
        out.setdefault(text, score)
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)
