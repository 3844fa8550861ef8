"""What makes a baseline file damaged besides its layout (docs/baselines.md,
"Fail closed"): a key twice in one object, a number that is not finite, a
value outside its metric's range, impossible repeats, a mean its questions'
values contradict. Plain checks raising
``ValueError``; gate/files/baseline.py turns them into
:class:`~pytest_chunkeval.gate.files.baseline.BaselineCorrupt` naming the file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.errors import DataError
from pytest_chunkeval.gate.files.recording import MEAN_DECIMALS, QUERY_DECIMALS

if TYPE_CHECKING:
    from pytest_chunkeval.core.metrics import MetricStats

DEFAULTS: Mapping[str, Any] = {
    "anchor": {},
    "noise": {},
    "var": {},
    "r": 1,
    "tags": (),
}
"""What a field an older baseline lacks reads as (docs/baselines.md, "What is
in one"): anchored at the recorded values, a deterministic run, variance 0,
one repeat, no tags."""


class DuplicateKey(DataError):
    """A JSON object holding one key twice (the baseline reader names the file)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing a key it holds twice (which copy a reader keeps
    differs between readers: a file whose meaning depends on it is damaged)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def optional_object(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    """An optional object of the file; absent reads as :data:`DEFAULTS`."""
    value = data.get(key, DEFAULTS[key])
    if not isinstance(value, Mapping):
        raise TypeError(f"{key}: expected an object, got {value!r}")
    return dict(value)


def out_of_range(
    metrics: Mapping[str, MetricStats],
    queries: Mapping[str, Mapping[str, float | None]],
    groups: Mapping[str, Mapping[str, float | None]],
    questions: Mapping[str, Mapping[str, Any]],
) -> str:
    """What makes the file's values impossible ("" when none does): a metric's
    value outside [0, 1], a repeat count below 1, a negative variance."""
    from pytest_chunkeval.core.metric_names import METRIC_NAMES

    def bad(metric: str, value: Any) -> bool:
        row = METRIC_NAMES.get(metric)
        if row is None or not row.percent or not isinstance(value, (int, float)):
            return False
        return not math.isnan(value) and not 0.0 <= float(value) <= 1.0

    for m, s in metrics.items():
        if bad(m, s.mean):
            return f"the mean of {m} is {s.mean!r}, outside its range [0, 1]"
    for kind, table in (("question", queries), ("document", groups)):
        for name, values in table.items():
            for m, v in values.items():
                if bad(m, v):
                    return f"{m} of {kind} {name!r} is {v!r}, outside its range [0, 1]"
    for qid, record in questions.items():
        anchored = record.get("anchor", {})
        if not isinstance(anchored, Mapping):
            return f"the anchor of question {qid!r} is not an object"
        for m, v in anchored.items():
            if v is not None and (bad(m, v) or not isinstance(v, (int, float))):
                return f"the anchored {m} of question {qid!r} is {v!r}"
        r = record.get("r", DEFAULTS["r"])
        if type(r) is not int or r < 1:
            return f"question {qid!r} records {r!r} repeats (at least 1)"
        var = record.get("var", DEFAULTS["var"])
        if not isinstance(var, Mapping) or any(
            not isinstance(v, (int, float)) or not 0.0 <= v < math.inf
            for v in var.values()
        ):
            return f"question {qid!r} records a variance that is not a number >= 0"
        tags = record.get("tags", DEFAULTS["tags"])
        if not isinstance(tags, (list, tuple)) or not all(
            isinstance(t, str) and t for t in tags
        ):
            return f"the tags of question {qid!r} are {tags!r}, not a list of names"
    return ""


ROUNDING = 0.5 * 10**-QUERY_DECIMALS + 0.5 * 10**-MEAN_DECIMALS + 1e-9
"""How far a written mean may lie from the mean of its written question
values: each value is rounded to 4 decimals (the mean of their errors is at
most half the last digit), the mean itself to 6."""


def contradicted_mean(
    metrics: Mapping[str, MetricStats],
    queries: Mapping[str, Mapping[str, float | None]],
) -> str:
    """A metric whose ``metrics`` row says another mean than its questions'
    values ("" when none does), further than rounding explains. The gate
    decides on the question values and shows the row's mean beside the
    verdict: a file edited by hand in one place and not the other would show
    a number the decision never used. Checked where the row's ``n`` is the
    count of its questions' values (a judged metric's ``n`` counts its judged
    questions, the others are null); a question whose value is missing is
    named by the gate (gate/comparison/integrity.py), and a metric not
    recorded per question (a file written before it) has nothing to check."""
    for m, s in metrics.items():
        values = [v for q in queries.values() if (v := q.get(m)) is not None]
        if not values or len(values) != s.n:
            continue
        mean = math.fsum(values) / len(values)
        if math.isnan(s.mean) or abs(mean - s.mean) > ROUNDING:
            return (
                f"its metrics row {m!r} says mean {s.mean!r}, but its "
                f"{len(values)} questions' values average {mean:.6f} (more than "
                "their rounding explains: edited in one place and not the other?)"
            )
    return ""


def number_or_nan(value: Any) -> float:
    return math.nan if value is None else finite(value)


def number_or_none(value: Any) -> float | None:
    return None if value is None else finite(value)


def finite(value: Any) -> float:
    """A number of the file; NaN and infinities are never written, so one read
    means the file was damaged."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number or null, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"non-finite value {value!r}")
    return float(value)
