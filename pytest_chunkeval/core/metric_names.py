"""The metrics chunkeval reports, one row each, and how they are shown.

Every name, column header, terminal label, direction and marker keyword other
modules show comes from :data:`METRIC_TABLE`: the engine's metric tuples, the
marker's ``min_*`` keywords, the gate's directions, the tables, the terminal
summary and the reports. Adding a metric is adding a row (and computing it).

Standard library only: the plugin reads this at start-up (marker keywords,
tolerances) and must not load numpy for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

PRESENCE = "presence"
"""docs/concepts.md#the-metrics-of-one-query: what share of the excerpts the retrieved
chunks cover, and at what cost (recall, precision, IoU, F1, Precision Ω)."""
RANK = "rank"
"""docs/metrics.md: rank-aware (mrr, ndcg), whole evidence (complete), the chunking's
best (ceiling)."""
JUDGED = "judged"
"""docs/judged.md#the-two-measures: reference-free, from a judge's spans (see
``judging/``)."""
RELATIONSHIP = "relationship"
"""Relationship retrieval (Graph-RAG, see ``relationships/``), apart from chunk
metrics."""


@dataclass(frozen=True)
class MetricName:
    """How one metric is named and shown."""

    name: str
    """Key in results, baselines, tolerances and history: ``precision_omega``."""
    header: str
    """Column header of tables and reports: ``PrecisionΩ``."""
    short: str
    """Label of the terminal summary (ASCII: any console prints it): ``P_omega``."""
    family: str
    """Which evaluation produces it: :data:`PRESENCE`, :data:`RANK`, ..."""
    higher_is_better: bool = True
    """Direction: the gate calls a move against it a regression."""
    marker: bool = False
    """``@pytest.mark.chunkeval(min_<name>=...)`` accepts a threshold on it."""
    percent: bool = True
    """A fraction in [0, 1], shown in percent."""
    meaning: str = ""
    """What it measures, in a few words (the assertion helper's docstring)."""
    needs_chunking: bool = False
    """Undefined for a whole retriever scored without a chunking (``score``)."""

    @property
    def marker_keyword(self) -> str:
        """The marker's threshold keyword: ``min_precision_omega``."""
        return f"min_{self.name}"


M = MetricName
METRIC_TABLE: tuple[MetricName, ...] = (
    M(
        "recall",
        "Recall",
        "recall",
        PRESENCE,
        marker=True,
        meaning="share of excerpt tokens retrieved",
    ),
    M(
        "precision",
        "Precision",
        "precision",
        PRESENCE,
        marker=True,
        meaning="share of retrieved tokens that are relevant",
    ),
    M(
        "iou",
        "IoU",
        "IoU",
        PRESENCE,
        marker=True,
        meaning="excerpt tokens and retrieved tokens, intersection over union",
    ),
    M(
        "f1",
        "F1",
        "F1",
        PRESENCE,
        marker=True,
        meaning="harmonic mean of recall and precision",
    ),
    M(
        "precision_omega",
        "PrecisionΩ",
        "P_omega",
        PRESENCE,
        marker=True,
        meaning="precision at perfect recall, a property of the chunking",
        needs_chunking=True,
    ),
    M(
        "mrr",
        "MRR",
        "MRR",
        RANK,
        marker=True,
        meaning="1 / rank of the first chunk overlapping an excerpt, 0 when none",
    ),
    M(
        "ndcg",
        "nDCG",
        "nDCG",
        RANK,
        marker=True,
        meaning="new excerpt tokens per rank, discounted, against the best ranking "
        "of this chunking",
        needs_chunking=True,
    ),
    M(
        "complete",
        "Complete",
        "complete",
        RANK,
        marker=True,
        meaning="share of questions whose every excerpt token was retrieved",
    ),
    M("ceiling", "Ceiling", "ceiling", RANK, needs_chunking=True),
    M(
        "context_relevance",
        "Context relevance",
        "CR",
        JUDGED,
        marker=True,
        meaning="share of the retrieved chunks' sentences a judge found relevant; "
        "needs a judge",
    ),
    M(
        "context_relevance_tokens",
        "Context relevance (tokens)",
        "CR_tok",
        JUDGED,
        marker=True,
        meaning="share of the retrieved chunks' tokens a judge found relevant; "
        "needs a judge",
    ),
    M(
        "rel_recall",
        "Rel recall",
        "rel_recall",
        RELATIONSHIP,
        marker=True,
        meaning="gold relationships matched by a retrieved one / gold relationships",
    ),
    M(
        "rel_precision",
        "Rel precision",
        "rel_precision",
        RELATIONSHIP,
        marker=True,
        meaning="retrieved relationships matching a gold one / retrieved relationships",
    ),
    M(
        "evidence_recall",
        "Evidence recall",
        "ev_recall",
        RELATIONSHIP,
        marker=True,
        meaning="recall with the retrieved relationships' evidence spans as chunks",
    ),
    M(
        "evidence_precision",
        "Evidence precision",
        "ev_precision",
        RELATIONSHIP,
        marker=True,
        meaning="precision with the retrieved relationships' evidence spans as chunks",
    ),
    M(
        "evidence_iou",
        "Evidence IoU",
        "ev_IoU",
        RELATIONSHIP,
        marker=True,
        meaning="IoU with the retrieved relationships' evidence spans as chunks",
    ),
    M(
        "evidence_f1",
        "Evidence F1",
        "ev_F1",
        RELATIONSHIP,
        marker=True,
        meaning="F1 with the retrieved relationships' evidence spans as chunks",
    ),
    M("evidence_precision_omega", "Evidence PrecisionΩ", "ev_P_omega", RELATIONSHIP),
)
del M

METRIC_NAMES: dict[str, MetricName] = {m.name: m for m in METRIC_TABLE}
"""Every row by metric name."""

UNIT_LABELS: dict[str, str] = {"token": "tok", "char": "chr"}
"""Short label of a length unit, after a number: ``180 tok``."""


def names(family: str) -> tuple[str, ...]:
    """The metric names of one family, in table order."""
    return tuple(m.name for m in METRIC_TABLE if m.family == family)


def header(name: str) -> str:
    """The column header of ``name`` (the name itself when not in the table)."""
    row = METRIC_NAMES.get(name)
    return row.header if row is not None else name


def short_label(name: str) -> str:
    """The terminal label of ``name`` (the name itself when not in the table)."""
    row = METRIC_NAMES.get(name)
    return row.short if row is not None else name


def thresholds() -> dict[str, str]:
    """Marker threshold keyword -> metric: ``{"min_recall": "recall", ...}``."""
    return {m.marker_keyword: m.name for m in METRIC_TABLE if m.marker}


def directions(*families: str) -> dict[str, bool]:
    """Metric -> higher is better, for the metrics of ``families``."""
    return {m.name: m.higher_is_better for m in METRIC_TABLE if m.family in families}


def unit_label(unit: str) -> str:
    """``tok`` for ``token``, ``chr`` for ``char``; other units as given."""
    return UNIT_LABELS.get(unit, unit)


def format_percent(
    value: float | None, digits: int = 1, *, signed: bool = False
) -> str:
    """A fraction in percent without the sign (``0.4567`` -> ``45.7``); ``-`` for
    a missing or undefined (NaN) value. ``signed`` writes ``+`` on gains; a value
    that rounds to zero never shows as ``-0``."""
    if value is None or math.isnan(float(value)):
        return "-"
    # Rounded first, + 0.0 turns -0.0 into 0.0: never a "-0.0" for a tiny loss.
    shown = round(100 * float(value), digits) + 0.0
    return f"{shown:{'+' if signed else ''}.{digits}f}"


def format_points(value: float | None, signed: bool = False) -> str:
    """A fraction as percentage points with two decimals, as the gate shows
    baselines and changes (``-13.30``)."""
    return format_percent(value, 2, signed=signed)


MAX_CHANGE_DIGITS = 4
"""The most decimals :func:`format_change` shows to make its three numbers agree."""


def format_change(
    before: float | None,
    after: float | None,
    delta: float | None = None,
    digits: int | None = None,
) -> tuple[str, str, str]:
    """A baseline, the value now and the change between them, in points, with
    the fewest decimals (two at least) at which the change shown is the
    difference of the two values shown: ``7.096 -> 7.104: +0.008`` where two
    decimals would read ``7.10 -> 7.10: +0.01``. ``delta``: the change as
    measured (default ``after - before``); when no precision up to
    :data:`MAX_CHANGE_DIGITS` makes them agree (a change over other questions
    than the means), two decimals. ``digits``: a table's one precision for
    its column (:func:`column_digits`) instead."""
    if digits is None:
        digits = column_digits([(before, after, delta)])
    change = delta if before is None or after is None or delta is not None else None
    if change is None and before is not None and after is not None:
        change = after - before
    return (
        format_percent(before, digits),
        format_percent(after, digits),
        format_percent(change, digits, signed=True),
    )


def column_digits(
    cells: Iterable[tuple[float | None, float | None, float | None]],
) -> int:
    """The one precision of a table's baseline / now / change columns: the
    fewest decimals (two at least, :data:`MAX_CHANGE_DIGITS` at most) at which
    every row's change shown is the difference of its values shown (rows
    without both values or a change do not count); when none is, the most any row needs
    on its own (a change over other questions than the means may agree at
    none: two for it)."""
    rows = [
        (b, a, a - b if d is None else d)
        for b, a, d in cells
        if b is not None and a is not None and not (d is not None and math.isnan(d))
    ]
    places = range(2, MAX_CHANGE_DIGITS + 1)
    for digits in places:
        if all(_agree(b, a, d, digits) for b, a, d in rows):
            return digits
    return max(next((p for p in places if _agree(b, a, d, p)), 2) for b, a, d in rows)


def _agree(before: float, after: float, change: float, digits: int) -> bool:
    shown = [format_percent(v, digits) for v in (before, after)]
    if "-" in shown:
        return True  # undefined: nothing to agree with
    difference = (float(shown[1]) - float(shown[0])) / 100
    return format_percent(difference, digits, signed=True) == format_percent(
        change, digits, signed=True
    )


def format_pair(before: float, after: float) -> tuple[str, str]:
    """Two values in points, with two decimals unless those show a change as no
    change (``7.096 -> 7.104``, never ``7.10 -> 7.10``)."""
    for digits in range(2, MAX_CHANGE_DIGITS + 1):
        shown = format_percent(before, digits), format_percent(after, digits)
        if shown[0] != shown[1] or before == after:
            break
    return shown


def format_interval(low: float | None, high: float | None) -> str:
    """A confidence interval in signed points (``[-27.11, -2.53]``); ``-`` when
    there is none (mean mode)."""
    if low is None or high is None:
        return "-"
    return f"[{format_points(low, True)}, {format_points(high, True)}]"


def format_mean_std(mean: float | None, std: float | None, digits: int = 1) -> str:
    """``mean ± std`` in percent; the mean alone without a std; ``-`` when the
    mean is missing or undefined."""
    text = format_percent(mean, digits)
    if text == "-" or std is None:
        return text
    return f"{text} ± {format_percent(std, digits)}"
