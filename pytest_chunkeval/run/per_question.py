"""``@pytest.mark.chunkeval(per_question=True)``: one test item per question.

The plugin parametrizes the ``chunkeval`` fixture of such a test over the query
ids of its query set (:func:`question_ids`). Every item runs the test body, but its
``chunkeval`` calls are evaluated once: the first item of a test (and of its other
parameters) that runs in a process evaluates them, the others replay those results,
matched by call order and arguments (run/shared.py). Each item is then judged on its
own question only (:func:`check_question`, on ``EvalResult.only``): its
``min_question_<metric>`` thresholds and, with ``baseline=True``, whether its
question flipped from retrieved (recall > 0) to missed (recall 0) or dropped
beyond the item tolerance (10 points) against the item's own baseline file. A
mean
threshold (``min_recall``) judges a whole set and is refused with ``per_question``
(run/marker.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_chunkeval.config.evaluation import EvaluationSpec
from pytest_chunkeval.core.locate import preview
from pytest_chunkeval.engine.labels import UNSCORED
from pytest_chunkeval.run.marker import MarkerOptions

if TYPE_CHECKING:
    from pytest_chunkeval.data.query_types import UnplacedQuery
    from pytest_chunkeval.engine.results import EvalResult, QueryRecord
    from pytest_chunkeval.run.evaluator import Evaluator
    from pytest_chunkeval.run.session import ChunkevalSession


def question_ids(session: ChunkevalSession, marker: MarkerOptions) -> list[str]:
    """The query ids of the test's query set (settings with its marker on top),
    including the questions an edited corpus can no longer place (listed last):
    each of those items says so when it runs (:func:`check_question`), instead
    of a collection error that would stop the session."""
    run = EvaluationSpec.from_settings(
        session.settings, marker.overrides if marker else None
    )
    queries, unplaced = session.datasets.placeable(run)
    return [q.id for q in queries] + [u.id for u in unplaced]


def question_of(result: EvalResult, question: str) -> QueryRecord:
    for record in result.queries:
        if record.id == question:
            return record
    raise KeyError(question)


def _values(record: QueryRecord, metrics: Sequence[str]) -> str:
    parts = []
    for metric in metrics:
        value = record.metric(metric)
        parts.append(f"{metric} {'-' if math.isnan(value) else f'{value:.3f}'}")
    return ", ".join(parts)


def question_report(evaluator: Evaluator) -> tuple[list[tuple[str, str]], str]:
    """A per-question item's JUnit properties (``chunkeval.question``, then per
    result its configuration and the question's metrics) and its report section
    (one line per result: the question's metrics)."""
    question = evaluator.question
    assert question is not None
    properties = [("chunkeval.question", question)]
    lines = []
    for result in evaluator.results:
        properties.append(("chunkeval.config", result.describe()))
        left = _left_out(result, question)
        if left is not None:
            lines.append(
                f"{question} {preview(left.question, 70)} [{result.label}]: left "
                f"out, no longer placeable ({left.doc_id}: {preview(left.reason, 80)})"
            )
            continue
        record = question_of(result, question)
        for metric in result.metrics:
            value = record.metric(metric)
            if not math.isnan(value):
                properties.append((f"chunkeval.{metric}", f"{value:.4f}"))
        shown = [m for m in _SHOWN if m in result.metrics]
        lines.append(
            f"{record.id} {preview(record.question, 70)} [{result.label}]: "
            f"{_values(record, shown)}"
        )
    return properties, "\n".join(lines)


_SHOWN = ("recall", "precision", "iou", "rel_recall", "context_relevance")


def _left_out(result: EvalResult, question: str) -> UnplacedQuery | None:
    """The question as ``result`` left it out (its excerpts can no longer be
    placed in the edited corpus), or None."""
    return next((u for u in result.unplaced if u.id == question), None)


def check_question(evaluator: Evaluator) -> str | None:
    """The item's own checks once its body passed, every one: its question's
    thresholds and (``baseline=True``) its baseline and a flip from retrieved
    to missed. The failure texts as one, or None. A question the edited
    corpus can no longer place is left out of a baseline comparison, as in a
    whole-set one: the item is then skipped with the reason
    (:attr:`Evaluator.left_out`)."""
    marker, nodeid, question = evaluator.marker, evaluator.nodeid, evaluator.question
    assert question is not None
    if not evaluator.results:
        return (
            f"{nodeid}: @pytest.mark.chunkeval(per_question=True) judges the "
            "question's share of the test's results, but the test produced none: "
            "call chunkeval.evaluate(...) or chunkeval.score(...)"
        )
    left = [u for r in evaluator.results if (u := _left_out(r, question))]
    if left:
        if not marker.baseline:  # only a baseline comparison leaves it out
            return evaluator.comparisons.unplaced_outside_baseline(every=True)
        evaluator.leave_out(
            f"{nodeid}: question {question} {preview(left[0].question, 70)} can no "
            f"longer be placed in the corpus ({left[0].doc_id}: "
            f"{preview(left[0].reason, 90)}), so its baseline comparison leaves it "
            "out; fix or remove it in the query set, then re-record:\n  "
            + evaluator.session.baselines.command(nodeid)
        )
        return None
    # Every check, as for a whole-set test: a missed threshold does not hide
    # the question's flip against its baseline.
    failures = [_threshold_failure(evaluator, question)]
    if marker.baseline:
        failures.append(_check_baselines(evaluator, question))
    return "\n\n".join(f for f in failures if f) or None


def _threshold_failure(evaluator: Evaluator, question: str) -> str | None:
    """The item's ``min_question_<metric>`` thresholds on its question."""
    marker, nodeid = evaluator.marker, evaluator.nodeid
    failures = []
    for result in evaluator.results:
        record = question_of(result, question)
        for metric, minimum in marker.question_thresholds.items():
            if metric not in result.metrics:
                continue  # a chunk result has no rel_recall, and vice versa
            value = record.metric(metric)
            if math.isnan(value) or value < minimum:
                failures.append(_below(result, record, metric, value, minimum))
    if not failures:
        return None
    stated = ", ".join(
        f"min_question_{m}={v:g}" for m, v in marker.question_thresholds.items()
    )
    head = f"{nodeid}: @pytest.mark.chunkeval({stated}) not met"
    return "\n\n".join([head, *failures])


def _below(
    result: EvalResult, record: QueryRecord, metric: str, value: float, minimum: float
) -> str:
    shown = "undefined" if math.isnan(value) else f"{value:.3f}"
    head = (
        f"question {record.id} {preview(record.question, 70)} [{result.label}]: "
        f"{metric} {shown} < {minimum:g}"
    )
    if record.id in result.unscored:  # docs/formats.md
        head += f" ({UNSCORED})"
    return "\n".join([head, *_evidence(result, record)])


def _evidence(result: EvalResult, record: QueryRecord) -> list[str]:
    """The question's excerpts (with how much of each was retrieved) and its
    first retrieved chunks, one line each."""
    lines = []
    if result.corpus is not None:
        for i, excerpt in enumerate(record.excerpts):
            covered = (
                record.excerpt_coverage[i] if i < len(record.excerpt_coverage) else 0
            )
            lines.append(
                f"  excerpt {i + 1} ({excerpt[0]}, {covered:.0%} retrieved): "
                f"{preview(result.text(excerpt), 80)}"
            )
        for rank, span in enumerate(record.retrieved[:3]):
            lines.append(
                f"  retrieved #{rank + 1} ({span[0]}): {preview(result.text(span), 80)}"
            )
    return lines


def _check_baselines(evaluator: Evaluator, question: str) -> str | None:
    """Each result's share of the question against the item's baseline file
    (written, not compared, under ``--chunkeval-update``): a flip from retrieved
    to missed fails, unless noise explains it (then the item passes as
    ``noisy``), and so does a drop of a gated metric beyond the item tolerance
    (10 points, by the gate's rule on that one question: gate/outcome/together.py);
    a smaller drop is the whole set's rule's, the items decided together."""
    from pytest_chunkeval.gate.files.baseline import BaselineError
    from pytest_chunkeval.gate.outcome.checking import BaselineRegression

    store = evaluator.session.baselines
    failures = []
    for result in evaluator.results:
        try:
            outcome = evaluator.comparisons.check_part(result.only(question), result)
        except BaselineRegression as exc:
            if not exc.report.lost:  # a drop beyond the item tolerance
                failures.append(str(exc))
                continue
            outcome = store.outcomes[-1]  # a flip: said as one, below
        except BaselineError as exc:
            failures.append(str(exc))
            continue
        flipped = outcome.flips
        if not store.update and flipped and flipped.noisy and not flipped.lost:
            why = flipped.noisy[0].why
            store.regressed(
                outcome,
                f"{evaluator.nodeid}: question {question} flipped from retrieved to "
                f"missed, a change noise explains ({why}) [{result.label}]",
                status="noisy",
            )
            continue
        if store.update or not flipped or not flipped.lost:
            continue
        flip = flipped.lost[0]
        record = question_of(result, question)
        message = (
            f"{evaluator.nodeid}: question {question} flipped from retrieved "
            f"to missed: {flipped.metric} {flip.before:.4f} in {outcome.path}, "
            f"{flip.after:g} now [{result.label}]\n"
            f"  question: {preview(record.question, 70)}\n"
            + "\n".join(_evidence(result, record))
            + "\nIf the change is intended, re-record the baseline:\n  "
            + store.command(evaluator.nodeid)
        )
        store.regressed(outcome, message)
        failures.append(message)
    return "\n\n".join(failures) or None
