"""One baseline check, top to bottom: the gate's flow in one function
(:func:`check_baseline`), each step a call into the folder that owns it
(docs/baselines.md, "What a verdict means").

1. locate the test's baseline: its own file, the same file under a name the
   test had before, or the file of the parameter it replaced (``files/``);
2. in update mode, write the result there instead, and stop
   (``files/writing.py``);
3. read it: a missing, unreadable or another test's file is refused
   (``files/reading.py``);
4. :func:`decide`: repeat what the baseline found noisy, pair reworded
   questions, compare, check the anchor, confirm a regression by asking again
   (``comparison/``, ``outcome/checking.py``);
5. record the outcome and, when the gate repeated the result, that result as
   its row's (the reports show what was decided); a per-question item's
   outcome with its question and numbers,
   for its test function's decision at the session's end:
   ``outcome/together.py``); raise the error that fails the test.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pytest_chunkeval.gate.comparison.repeats import (
    as_the_baseline_measured,
    confirmed,
)
from pytest_chunkeval.gate.comparison.reworded import paired
from pytest_chunkeval.gate.files.paths import absolute
from pytest_chunkeval.gate.outcome.checking import BaselineRegression, outcome_of
from pytest_chunkeval.gate.outcome.together import item_settings
from pytest_chunkeval.gate.reading import Refused, read_for_check

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.files.baseline import Baseline, BaselineError
    from pytest_chunkeval.gate.files.paths import NodeRef
    from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome
    from pytest_chunkeval.gate.tolerances import GateSettings


@dataclass(frozen=True)
class Located:
    """Where a check's baseline is."""

    path: Path
    """The test's own file: where an update writes."""
    read: Path
    """The file a comparison reads: ``path``, or the one found elsewhere."""
    shown: str
    """``read`` as the messages show it (relative to the rootdir)."""
    former: Path | None
    """The file found elsewhere (a former name's, a replaced parameter's)."""
    why: str
    """What ``former`` is; without one, why no unused baseline was taken."""
    accepted: tuple[str, ...]
    """The test names the file may record (the test's, its former ones, the
    replaced parameter's)."""
    note: str = ""
    """Added to a passing message: the file is read from elsewhere."""


class Session(Protocol):
    """What one check needs of the session's baselines (gate/store.py)."""

    update: bool
    touched: set[Path]

    def locate(self, test: NodeRef, name: str | None) -> Located: ...

    def command(self, nodeid: str) -> str: ...

    def write(
        self,
        result: EvalResult,
        test: NodeRef,
        where: Located,
        settings: GateSettings,
        *,
        row: str,
        per_question: bool,
    ) -> CheckOutcome: ...

    def record(self, outcome: CheckOutcome, row: str = "") -> CheckOutcome: ...

    def repeated(self, row: str, result: EvalResult) -> None: ...


def check_baseline(
    session: Session,
    result: EvalResult,
    test: NodeRef,
    *,
    name: str | None,
    settings: GateSettings,
    row: str = "",
    per_question: bool = False,
) -> CheckOutcome:
    """Compare ``result`` with ``test``'s baseline (check ``name``), or write it
    in update mode; record the outcome in ``session`` under ``row`` (the
    result's report row). Raises a :class:`BaselineError` subclass when the
    test must fail; returns the outcome otherwise. A per-question item's
    share (``per_question``) is judged by the item tolerance, and keeps the
    whole set's rule of ``settings`` for its test function's decision
    together (outcome/together.py)."""
    where = session.locate(test, name)
    rule = settings.rule() if per_question else None
    if per_question:
        settings = item_settings(settings)
    if session.update:
        return session.write(
            result, test, where, settings, row=row, per_question=per_question
        )
    command = session.command(test.nodeid)
    question = result.queries[0].id if per_question and result.queries else ""
    read = read_for_check(
        where.read,
        nodeid=test.nodeid,
        shown=where.shown,
        command=command,
        accepted=where.accepted,
        found=where.why,
    )
    if isinstance(read, Refused):
        session.record(replace(read.outcome, question=question), row)
        raise read.error
    if read.table is not None:
        session.touched.add(absolute(read.table))
    outcome, failure, used = decide(
        read.baseline, result, test.nodeid, where.shown, settings, command, where.note
    )
    if used is not result and row and not per_question:
        session.repeated(row, used)  # the row shows the repeated result
    if question:
        record = result.queries[0]
        recorded = read.baseline.questions.get(question, {}).get("tags", ())
        outcome = replace(
            outcome,
            question=question,
            values=outcome.gated,
            rule=rule,
            document=record.doc_id,
            tags=tuple(sorted({*record.tags, *recorded})),
        )
    outcome = session.record(outcome, row)
    if failure is not None:
        failure.path = where.read
        raise failure
    return outcome


def decide(
    baseline: Baseline,
    result: EvalResult,
    nodeid: str,
    shown: str,
    settings: GateSettings,
    command: str,
    note: str = "",
) -> tuple[CheckOutcome, BaselineError | None, EvalResult]:
    """The outcome of comparing ``result`` with ``baseline`` (file ``shown``,
    test ``nodeid``), the error that fails the test (None: it passes) and the
    result decided on: ``result``, or ``result`` with the repeats the gate asked
    for.
    ``command`` re-records the baseline; ``note`` is added to a passing message
    (a baseline found under a former name).

    A retriever the baseline found noisy is repeated first; one that looked
    deterministic is asked again before it is reported regressed
    (docs/baselines.md, "Repeats")."""
    result = as_the_baseline_measured(baseline, result)
    baseline = paired(baseline, result)  # reworded questions under their new ids
    outcome, failure = outcome_of(
        baseline, result, nodeid, shown, settings, command, note
    )
    if isinstance(failure, BaselineRegression) and outcome.status == "regressed":
        metrics = [c.metric for c in failure.report.checks]
        again = confirmed(baseline, result, metrics)
        if again is not None:
            outcome, failure = outcome_of(
                baseline, again, nodeid, shown, settings, command, note
            )
            return outcome, failure, again
    return outcome, failure, result
