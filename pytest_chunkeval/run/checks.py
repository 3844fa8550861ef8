"""The checks a test's ``@pytest.mark.chunkeval`` asks for once its body
passed: its thresholds and its baseline comparisons (``baseline=True``), every
one of them, so that a missed threshold never hides a regression."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.run.evaluator import Evaluator
    from pytest_chunkeval.run.marker import MarkerOptions


def after_test(
    nodeid: str, marker: MarkerOptions, evaluator: Evaluator | None
) -> str | None:
    """The marker's checks once the test body passed, every one of them:
    thresholds and baselines (``baseline=True``), so that a missed threshold
    does not hide a regression; the failure texts as one, or None."""
    if marker.per_question and evaluator is not None:
        from pytest_chunkeval.run.per_question import check_question

        return check_question(evaluator)
    failures = [_threshold_failure(nodeid, marker, evaluator)]
    if marker.baseline:
        if evaluator is None:
            failures.append(
                f"{nodeid}: @pytest.mark.chunkeval(baseline=True) needs the "
                "chunkeval fixture: request it and call chunkeval.evaluate(...) "
                "or chunkeval.score(...)"
            )
        else:
            failures.append(evaluator.comparisons.check_marker_baselines())
    return "\n\n".join(f for f in failures if f) or None


def _threshold_failure(
    nodeid: str, marker: MarkerOptions, evaluator: Evaluator | None
) -> str | None:
    if not marker.thresholds:
        return None
    if evaluator is not None:
        # A threshold on questions left out would judge another question set.
        message = evaluator.comparisons.unplaced_outside_baseline(every=True)
        if message is not None:
            return message
    results = evaluator.results if evaluator is not None else []
    return check_thresholds(nodeid, marker.thresholds, results)


def check_thresholds(
    nodeid: str, thresholds: Mapping[str, float], results: Sequence[EvalResult]
) -> str | None:
    """Failure text when a result misses a marker threshold (or there is none)."""
    stated = ", ".join(f"min_{m}={v:g}" for m, v in thresholds.items())
    if not results:
        return (
            f"{nodeid}: @pytest.mark.chunkeval({stated}) states thresholds but the "
            "test produced no chunkeval result: request the chunkeval fixture and "
            "call chunkeval.evaluate(...) or chunkeval.score(...)"
        )
    from pytest_chunkeval.assertions import check_metric

    failures = []
    for metric, minimum in thresholds.items():
        # A chunk result has no rel_recall, a relationship result no recall: each
        # threshold applies to the results that define its metric.
        measured = [r for r in results if metric in r.metrics]
        if not measured:
            failures.append(
                f"min_{metric}: none of the test's results has {metric} (it has "
                f"{', '.join(results[0].metrics)})"
            )
        for result in measured:
            try:
                text = check_metric(result, metric, minimum)
            except ValueError as exc:
                text = str(exc)
            if text is not None:
                failures.append(text)
    if not failures:
        return None
    head = f"{nodeid}: @pytest.mark.chunkeval({stated}) not met"
    return "\n\n".join([head, *failures])


def recorded_properties(
    evaluator: Evaluator,
) -> tuple[list[tuple[str, object]], str | None]:
    """What a test records (JUnit XML user properties) once it ran: each result's
    configuration, question count and metric means, or a per-question item's
    report (and its text, a report section); then the verdicts of its checks."""
    if evaluator.question is not None:
        from pytest_chunkeval.run.per_question import question_report

        properties, text = question_report(evaluator)
        return [*properties, *evaluator.comparisons.verdict_properties()], text
    out: list[tuple[str, object]] = []
    for result in evaluator.results:
        out.append(("chunkeval.config", result.describe()))
        out.append(("chunkeval.questions", str(len(result.queries))))
        for metric, stats in result.metrics.items():
            if stats.mean == stats.mean:  # NaN: undefined (precision_omega of score)
                out.append((f"chunkeval.{metric}", f"{stats.mean:.4f}"))
    return [*out, *evaluator.comparisons.verdict_properties()], None
