"""Documents and tags whose drop is beyond their own tolerance (docs/baselines.md,
"Documents and tags"): a drop the whole set's mean dilutes is named, never silent.

For each document with questions compared, its mean change ``delta_g`` (drift
explained not counted, as for the whole set) is beyond its own tolerance when

    delta_g < -max(tolerance_g, mde_g) - z * SE_g

with ``tolerance_g`` the set's tolerance (a relative one on the document's own
baseline mean), ``mde_g`` the document's minimum detectable effect in points
(``m * mean / n`` of its ``n`` questions, gate/comparison/sampling.py: a
document of few questions must lose most of them before it can tell) and
``SE_g`` the noise of its mean change (gate/comparison/noise.py). Such documents
are named in every report beside the whole set's verdict; with
``chunkeval_gate_by = "document"`` they fail the check.

A tag (a question's ``metadata["tags"]``, docs/formats.md; the current run's
tags and those its baseline recorded) is a group of questions checked the same
way; a question may have several. Tags fail the check with
``chunkeval_gate_by = "tag"``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.gate.comparison.noise import standard_error
from pytest_chunkeval.gate.comparison.sampling import (
    detectable_points,
    detectable_questions,
)
from pytest_chunkeval.gate.comparison.verdicts import GroupDrop

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from pytest_chunkeval.config.tolerances import Tolerance
    from pytest_chunkeval.engine.results import QueryRecord

    FloatArray = npt.NDArray[np.float64]

_EPS = 1e-12


def beyond_their_own(
    counted: FloatArray,
    before: FloatArray,
    cells: FloatArray,
    groups: Sequence[Sequence[str]],
    kind: str,
    *,
    sign: float,
    tolerance: Tolerance,
    z: float,
    metrics: int,
    confidence: float,
) -> tuple[GroupDrop, ...]:
    """The groups of ``kind`` ("document", "tag") whose mean change of one metric
    (``counted``, per question, raw direction; ``sign`` -1 where lower is better)
    is beyond their own tolerance, worst first. ``groups`` holds each question's
    group names (its document: ``[doc_id]``; its tags: any number). A group every
    question is in is the whole set, whose verdict is the set's: never named
    apart (a set of one document names none)."""
    import numpy as np

    n = len(groups)
    members: dict[str, list[int]] = {}
    for i, names in enumerate(groups):
        for name in set(names):
            members.setdefault(name, []).append(i)
    finite = ~np.isnan(counted)
    found = []
    for name in sorted(members):
        if len(members[name]) == n:
            continue
        mask = np.zeros(n, dtype=bool)
        mask[members[name]] = True
        mask &= finite
        size = int(mask.sum())
        if size == 0:
            continue
        delta = float(counted[mask].mean())
        mean = float(np.nanmean(before[mask]))
        mde = detectable_points(
            detectable_questions(size, metrics, confidence), size, mean
        )
        own = max(tolerance.allowed(mean), math.inf if mde is None else mde)
        se = standard_error(cells[mask], np.ones(size, dtype=bool))
        if sign * delta < -own - z * se - _EPS:
            found.append(GroupDrop(name, size, delta, own, se, kind))
    return tuple(sorted(found, key=lambda g: sign * g.delta))


def documents_and_tags(
    counted: FloatArray,
    before: FloatArray,
    cells: FloatArray,
    records: Sequence[QueryRecord],
    recorded: Mapping[str, Mapping[str, Any]],
    *,
    sign: float,
    tolerance: Tolerance,
    z: float,
    metrics: int,
    confidence: float,
) -> tuple[GroupDrop, ...]:
    """The documents, then the tags (the run's, and those the baseline
    ``recorded`` per question), beyond their own tolerance."""
    tags = [sorted({*q.tags, *recorded.get(q.id, {}).get("tags", ())}) for q in records]
    # a question's document is its one group of that kind
    documents = [[q.doc_id] for q in records]
    return tuple(
        g
        for kind, labels in (("document", documents), ("tag", tags))
        for g in beyond_their_own(
            counted,
            before,
            cells,
            labels,
            kind,
            sign=sign,
            tolerance=tolerance,
            z=z,
            metrics=metrics,
            confidence=confidence,
        )
    )
