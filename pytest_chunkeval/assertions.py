"""Assertion helpers on an :class:`~pytest_chunkeval.engine.results.EvalResult`:
one ``assert_<metric>_at_least`` per threshold metric of the metric table
(``core/metric_names.py``), all of them :func:`assert_metric_at_least`.

::

    from pytest_chunkeval import assert_recall_at_least, percentile, share_at_least
    from pytest_chunkeval.assertions import assert_iou_at_least

    assert_recall_at_least(result, 0.80)                     # mean recall >= 0.80
    assert_recall_at_least(result, 0.50, statistic="p10")    # 10th percentile
    assert_recall_at_least(result, 0.75, statistic=share_at_least(1.0))
    #   ... at least 75% of queries have their excerpts fully retrieved
    assert_iou_at_least(result, 0.05, group="finance.md")    # one source document

A failure raises ``AssertionError`` whose first line says the metric, statistic,
observed and required values and the configuration, followed by the five worst
queries: question, the excerpt text that was missed, and what was retrieved instead.

May import: ``core/``, ``engine/`` (types only), ``util/`` and ``errors`` (see
docs/architecture.md#layering).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.core.locate import preview
from pytest_chunkeval.core.metric_names import METRIC_NAMES
from pytest_chunkeval.core.metrics import JUDGED_METRICS, METRICS, REL_METRICS
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.util.text import plural

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult, QueryRecord, SpanTuple

WORST_QUERIES = 5
RETRIEVED_SHOWN = 3
TEXT_WIDTH = 70

FloatArray = npt.NDArray[np.float64]


class UnknownGroup(ConfigError, KeyError):
    """``group=`` names no group of the result (a ``KeyError`` too, as before)."""

    def __str__(self) -> str:
        # KeyError's own __str__ would repr() the message.
        return str(self.args[0]) if self.args else ""


def check_group(result: EvalResult, group: str | None) -> None:
    """:class:`UnknownGroup` unless ``group`` is None or a group of ``result``."""
    __tracebackhide__ = True
    if group is not None and group not in result.groups:
        raise UnknownGroup(
            f"group={group!r} is not a group of {result.describe()}; groups are the "
            f"queries' source documents: {', '.join(map(repr, result.groups))}"
        )


@dataclass(frozen=True)
class Statistic:
    """A summary of per-query metric values that an assertion compares."""

    name: str
    """How it is printed: ``mean``, ``p10``, ``share of queries with recall >= 1``."""
    compute: Callable[[FloatArray], float]
    level: float | None = None
    """For a share: queries below this level are the ones that count against it."""

    def label(self, metric: str) -> str:
        return self.name.replace("{metric}", metric)


def _mean(values: FloatArray) -> float:
    return float(values.mean())


def _median(values: FloatArray) -> float:
    return float(np.median(values))


MEAN = Statistic("mean", _mean)
MEDIAN = Statistic("median", _median)


def percentile(q: float) -> Statistic:
    """The ``q``-th percentile of per-query values (linear interpolation):
    ``percentile(10)`` is the value 90% of queries reach."""
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be between 0 and 100, got {q!r}")

    def compute(values: FloatArray) -> float:
        return float(np.percentile(values, q))

    return Statistic(f"p{q:g}", compute)


def share_at_least(level: float) -> Statistic:
    """The fraction of queries whose value is at least ``level``."""
    _check_fraction(level, "level")

    def compute(values: FloatArray) -> float:
        return float(np.mean(values >= level - 1e-12))

    return Statistic(
        f"share of queries with {{metric}} >= {level:g}", compute, level=level
    )


_PERCENTILE = re.compile(r"p(\d+(?:\.\d+)?)")


def as_statistic(value: str | Statistic) -> Statistic:
    """``"mean"``, ``"median"``, ``"p10"`` (a percentile) or a :class:`Statistic`."""
    if isinstance(value, Statistic):
        return value
    if value == "mean":
        return MEAN
    if value == "median":
        return MEDIAN
    match = _PERCENTILE.fullmatch(value)
    if match:
        return percentile(float(match.group(1)))
    raise ValueError(
        f"unknown statistic {value!r}; use 'mean', 'median', 'pNN' (a percentile, "
        "e.g. 'p10'), percentile(q) or share_at_least(level)"
    )


def _check_fraction(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a number in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(
            f"{what} must be in [0, 1] (a fraction: 0.8 means 80%), got {value!r}"
        )
    return float(value)


# ------------------------------------------------------------------------ checks


def check_metric(
    result: EvalResult,
    metric: str,
    minimum: float,
    *,
    statistic: str | Statistic = "mean",
    group: str | None = None,
) -> str | None:
    """The failure text if ``statistic`` of ``metric`` is below ``minimum``, else
    ``None``. Raises ``ValueError`` for a metric the result does not define."""
    __tracebackhide__ = True
    check_group(result, group)
    known = METRICS + JUDGED_METRICS + REL_METRICS
    if metric not in known:
        raise ValueError(f"unknown metric {metric!r}; expected one of {known}")
    if metric not in result.metrics:
        if metric in JUDGED_METRICS:
            raise ValueError(
                f"{metric} was not measured for {result.describe()}: judged metrics "
                "need a judge (chunkeval_judge / judge= in the marker, or "
                "evaluate(judge=...); see docs/judged.md)"
            )
        raise ValueError(
            f"{metric} was not measured for {result.describe()} (a result written "
            "before the metric existed, or of another kind); re-run the evaluation"
        )
    minimum = _check_fraction(minimum, "minimum")
    stat = as_statistic(statistic)
    values = result.values(metric, group)
    values = values[~np.isnan(values)]
    if values.size == 0:
        if not result.queries:
            why = "there are no queries"
        elif METRIC_NAMES[metric].needs_chunking:
            why = "it is undefined for a whole retriever scored without a chunking"
        elif metric in JUDGED_METRICS:
            why = (
                "no question has a usable judgment (the judge's answers could not "
                "be used; the judging line of the summary says why)"
            )
        else:
            why = "no query has a value (a result recorded before it existed?)"
        raise ValueError(
            f"{metric} cannot be checked for {result.describe()}"
            f"{_group_text(group)}: {why}"
        )
    observed = stat.compute(values)
    if observed >= minimum - 1e-12:
        return None
    return failure_text(result, metric, stat, observed, minimum, group)


def _group_text(group: str | None) -> str:
    return f", group {group!r}" if group is not None else ""


def failure_text(
    result: EvalResult,
    metric: str,
    statistic: Statistic,
    observed: float,
    minimum: float,
    group: str | None = None,
) -> str:
    """One summary line, then the worst queries with what was missed."""
    n = sum(1 for q in result.queries if group in (None, q.doc_id))
    label = statistic.label(metric)
    # A share names its metric already ("share of queries with recall >= 1").
    measured = (
        f"{label} is {observed:.3f}, below"
        if metric in label
        else f"{metric} {label} {observed:.3f} is below"
    )
    head = (
        f"{measured} the required {minimum:.3f} ({result.describe()}"
        f"{_group_text(group)}; {plural(n, 'query', 'queries')})"
    )
    # Only queries below what is required are worth a reviewer's attention.
    cutoff = minimum if statistic.level is None else statistic.level
    below = worst_queries(result, metric, group, n=len(result.queries), below=cutoff)
    worst = below[:WORST_QUERIES]
    if not worst:
        return head
    queries = "query" if len(worst) == 1 else "queries"
    of = f"{len(below)} " if len(below) > len(worst) else ""
    lines = [head, f"{len(worst)} worst {queries} by {metric} ({of}below {cutoff:g}):"]
    for rank, record in enumerate(worst, 1):
        lines += _query_lines(result, record, metric, rank)
    return "\n".join(lines)


def worst_queries(
    result: EvalResult,
    metric: str,
    group: str | None = None,
    n: int = WORST_QUERIES,
    *,
    below: float = math.inf,
) -> list[QueryRecord]:
    """The ``n`` queries with the lowest ``metric`` (ties by id), among those
    whose value is below ``below``."""
    records = [
        q
        for q in result.queries
        if group in (None, q.doc_id)
        and not math.isnan(q.metric(metric))
        and q.metric(metric) < below
    ]
    records.sort(key=lambda q: (q.metric(metric), q.id))
    return records[:n]


def _text(result: EvalResult, span: SpanTuple) -> str:
    doc, start, end = span
    where = f"{doc}[{start}:{end}]"
    if result.corpus is None or doc not in result.corpus:
        return where
    return f"{where} {preview(result.text(span), TEXT_WIDTH)}"


def _query_lines(
    result: EvalResult, record: QueryRecord, metric: str, rank: int
) -> list[str]:
    lines = [
        f"  {rank}. {record.id}  {metric} {record.metric(metric):.3f}  "
        f"{preview(record.question, TEXT_WIDTH)}"
    ]
    if "gold_relationships" in record.details:  # a relationship result
        return lines + _relationship_lines(record)
    for span, covered in zip(record.excerpts, record.excerpt_coverage, strict=False):
        if covered < 1.0:
            lines.append(
                f"     missed ({covered:.0%} retrieved): {_text(result, span)}"
            )
    if len(lines) == 1:
        lines.append("     every excerpt was retrieved")
    if not record.retrieved:
        lines.append("     retrieved: nothing")
    for i, span in enumerate(record.retrieved[:RETRIEVED_SHOWN], 1):
        relevant = any(_overlaps(span, e) for e in record.excerpts)
        tag = "relevant" if relevant else "instead"
        lines.append(f"     retrieved #{i} ({tag}): {_text(result, span)}")
    more = len(record.retrieved) - RETRIEVED_SHOWN
    if more > 0:
        lines.append(f"     ... and {more} more retrieved")
    return lines


def _relationship_lines(record: QueryRecord) -> list[str]:
    lines = []
    for s, p, o, matched in record.details["gold_relationships"]:
        if not matched:
            lines.append(f"     missed relationship: {s} | {p} | {o}")
    if len(lines) == 0:
        lines.append("     every gold relationship was retrieved")
    retrieved = record.details.get("retrieved_relationships", [])
    if not retrieved:
        lines.append("     retrieved: nothing")
    for i, (s, p, o, matched) in enumerate(retrieved[:RETRIEVED_SHOWN], 1):
        tag = "relevant" if matched else "instead"
        lines.append(f"     retrieved #{i} ({tag}): {s} | {p} | {o}")
    return lines


def _overlaps(a: SpanTuple, b: SpanTuple) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


# ----------------------------------------------------------------------- helpers


def assert_metric_at_least(
    result: EvalResult,
    metric: str,
    minimum: float,
    *,
    statistic: str | Statistic = "mean",
    group: str | None = None,
) -> None:
    """Fail unless ``statistic`` of ``metric`` (overall, or for the queries of one
    ``group``: a source document id) is at least ``minimum`` (a fraction)."""
    __tracebackhide__ = True
    message = check_metric(result, metric, minimum, statistic=statistic, group=group)
    if message is not None:
        raise AssertionError(message)


class AtLeast(Protocol):
    """An assertion helper of one metric: ``assert_recall_at_least(result, 0.8)``."""

    def __call__(
        self,
        result: EvalResult,
        minimum: float,
        *,
        statistic: str | Statistic = "mean",
        group: str | None = None,
    ) -> None: ...


def at_least(metric: str) -> AtLeast:
    """The assertion helper of ``metric``, from its row of the metric table: one
    implementation, :func:`assert_metric_at_least`, for every threshold metric."""
    row = METRIC_NAMES[metric]

    def helper(
        result: EvalResult,
        minimum: float,
        *,
        statistic: str | Statistic = "mean",
        group: str | None = None,
    ) -> None:
        __tracebackhide__ = True
        assert_metric_at_least(
            result, metric, minimum, statistic=statistic, group=group
        )

    helper.__name__ = helper.__qualname__ = f"assert_{metric}_at_least"
    helper.__module__ = __name__
    helper.__doc__ = (
        f"Fail unless ``statistic`` (default the mean) of {row.header} "
        f"({row.meaning}) reaches ``minimum``; ``group``: the questions of one "
        "source document."
    )
    return helper


# One line per threshold metric of the table (tests/test_layout.py checks that
# each has one): their names are what a user's editor completes.
assert_recall_at_least = at_least("recall")
assert_precision_at_least = at_least("precision")
assert_iou_at_least = at_least("iou")
assert_f1_at_least = at_least("f1")
assert_precision_omega_at_least = at_least("precision_omega")
assert_mrr_at_least = at_least("mrr")
assert_ndcg_at_least = at_least("ndcg")
assert_complete_at_least = at_least("complete")
assert_context_relevance_tokens_at_least = at_least("context_relevance_tokens")
assert_rel_recall_at_least = at_least("rel_recall")
assert_rel_precision_at_least = at_least("rel_precision")
assert_evidence_recall_at_least = at_least("evidence_recall")
assert_evidence_precision_at_least = at_least("evidence_precision")
assert_evidence_iou_at_least = at_least("evidence_iou")
assert_evidence_f1_at_least = at_least("evidence_f1")


def assert_context_relevance_at_least(
    result: EvalResult,
    minimum: float,
    *,
    statistic: str | Statistic = "mean",
    group: str | None = None,
    tokens: bool = False,
) -> None:
    """Fail unless judged context relevance (docs/judged.md#the-two-measures: the share
    of the retrieved chunks' sentences a judge found relevant; ``tokens=True``: the
    share of their tokens, as :func:`assert_context_relevance_tokens_at_least`)
    reaches ``minimum``. Needs a result evaluated with a judge."""
    __tracebackhide__ = True
    metric = "context_relevance_tokens" if tokens else "context_relevance"
    assert_metric_at_least(result, metric, minimum, statistic=statistic, group=group)
