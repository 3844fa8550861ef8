"""One baseline check's comparison, as what the store records and raises: the
gate's report turned into a :class:`CheckOutcome` (its status, message and what
the comparison found) and, when the test must fail, the error to raise
(:func:`outcome_of`; the steps before it are gate/check.py's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_chunkeval.gate.comparison.anchor import anchor_date, since_anchor
from pytest_chunkeval.gate.comparison.compare import (
    GateError,
    GateReport,
    compare,
    gated_metrics,
)
from pytest_chunkeval.gate.comparison.flips import flips
from pytest_chunkeval.gate.comparison.integrity import DamagedBaseline
from pytest_chunkeval.gate.comparison.verdicts import NOT_COMPARED, noise_notes
from pytest_chunkeval.gate.files.baseline import (
    BaselineCorrupt,
    BaselineError,
    BaselineMismatch,
)
from pytest_chunkeval.gate.outcome.messages import (
    format_failure,
    format_incomplete,
    format_pass,
)
from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.files.baseline import Baseline
    from pytest_chunkeval.gate.tolerances import GateSettings


class BaselineRegression(BaselineError):
    """The gate failed (regressed, or too incomplete to pass); ``report`` holds
    the verdicts."""

    def __init__(self, message: str, report: GateReport) -> None:
        super().__init__(message)
        self.report = report


def outcome_of(
    baseline: Baseline,
    result: EvalResult,
    nodeid: str,
    shown: str,
    settings: GateSettings,
    command: str,
    note: str = "",
) -> tuple[CheckOutcome, BaselineError | None]:
    """``result`` compared with ``baseline`` (the question sets already paired,
    the repeats made: gate/check.py), then with its anchor when it passed: the
    outcome and the error that fails the test (None: it passes). ``command``
    re-records the baseline; ``note`` is added to a passing message."""
    try:
        report = compare(baseline, result, settings)
    except DamagedBaseline as exc:
        message = (
            f"baseline {shown} is damaged: {exc}. A damaged baseline is refused, "
            f"never compared; re-record it:\n  {command}"
        )
        return CheckOutcome(nodeid, shown, "corrupt", message), BaselineCorrupt(message)
    except GateError as exc:
        message = (
            f"baseline {shown}: {exc}\nIf the change is intended, re-record "
            f"the baseline:\n  {command}"
        )
        outcome = CheckOutcome(nodeid, shown, "mismatch", message, reason=exc.reason)
        return outcome, BaselineMismatch(message)
    found = _found(report, baseline, result)
    if report.passed and not report.incomplete:
        drifted = _since_anchor(baseline, result, nodeid, shown, settings, command)
        if drifted is not None:
            return drifted
    if not report.passed:
        message = format_failure(report, test=nodeid, path=shown, command=command)
        outcome = CheckOutcome(nodeid, shown, "regressed", message, **found)
        return outcome, BaselineRegression(message, report)
    if report.incomplete:
        message = format_incomplete(report, test=nodeid, path=shown, command=command)
        outcome = CheckOutcome(
            nodeid, shown, "incomplete", message, reason=report.incomplete, **found
        )
        return outcome, BaselineRegression(message, report)
    status = "predates" if report.verdict == NOT_COMPARED else report.verdict
    message = format_pass(report, test=nodeid, command=command, note=note)
    return CheckOutcome(nodeid, shown, status, message, **found), None


def _since_anchor(
    baseline: Baseline,
    result: EvalResult,
    nodeid: str,
    shown: str,
    settings: GateSettings,
    command: str,
) -> tuple[CheckOutcome, BaselineError] | None:
    """The failure of a run within the gate of its baseline but regressed
    since the baseline's anchor (drops recorded one update at a time), else
    None (docs/baselines.md, "An update never ratchets")."""
    since = since_anchor(baseline, result, settings)
    if since is None or since.passed:
        return None
    reason = f"since the anchor recorded {anchor_date(baseline)}"
    message = (
        f"{nodeid}: regressed ({reason}): each update since stayed within the "
        "tolerance, together they do not\n"
        + format_failure(since, test=nodeid, path=shown, command=command)
    )
    found = _found(since, baseline, result)
    outcome = CheckOutcome(nodeid, shown, "regressed", message, reason=reason, **found)
    return outcome, BaselineRegression(message, since)


def _found(
    report: GateReport, baseline: Baseline, result: EvalResult
) -> dict[str, Any]:
    """What a comparison found, for the reports: the gated metrics, the
    questions that flipped, what else changed and which changes noise
    explains."""
    return {
        "gated": gated_metrics(report),
        "flips": flips(
            baseline, result, noise=report.noise, left_out=set(report.changes.edited)
        ),
        "changes": report.changes if report.changes.any else None,
        "noise": noise_notes(report.noise, result.queries),
    }
