"""A test's baseline comparisons (:class:`BaselineComparisons`, the
``chunkeval`` fixture's half that compares): which of the test's results were
compared, and how the comparisons end after the test (written in update mode,
kept when the test failed, recorded as not compared when the test failed before
the comparisons its marker asks for)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.errors import ConfigError

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.files.paths import NodeRef
    from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome
    from pytest_chunkeval.run.session import ChunkevalSession


class BaselineComparisons:
    """The baseline comparisons of one test (``nodeid``, its file ``path`` when
    known, else found from the node id under ``rootdir``) over ``results``, the
    list the test's evaluations append to. ``marker_baseline``: its marker asks
    for ``baseline=True``; ``gate``: its marker's gate settings (run/marker.py
    GATE_KEYWORDS), under each call's own."""

    def __init__(
        self,
        session: ChunkevalSession,
        nodeid: str,
        results: list[EvalResult],
        *,
        path: Path | None,
        rootdir: str,
        marker_baseline: bool,
        gate: Mapping[str, Any] | None = None,
    ) -> None:
        self.session = session
        self.nodeid = nodeid
        self.results = results
        self.path = path
        self.rootdir = rootdir
        self.marker_baseline = marker_baseline
        self.gate: Mapping[str, Any] = gate or {}
        """The marker's gate settings (``tolerance``, ``mode``, ``confidence``,
        ``gate_by``): each check's, under a call's own."""
        self.compared: list[EvalResult] = []
        """The results compared (or counted as compared), each once."""
        self._begun = False

    def test(self) -> NodeRef:
        """The test, as the baseline store names it."""
        from pytest_chunkeval.gate.files.paths import NodeRef

        if self.path is not None:
            return NodeRef(self.nodeid, self.path)
        return NodeRef.from_nodeid(self.nodeid, self.rootdir)

    def has_baseline(self) -> bool:
        """Whether this test has a baseline to compare against (and is not
        recording one): only then may an evaluation leave out queries whose
        excerpts an edited corpus no longer holds."""
        if self.session.settings.update:
            return False
        return self.session.baselines.has_baseline(self.test())

    def check_part(self, part: EvalResult, whole: EvalResult) -> CheckOutcome:
        """Compare ``part``, a per-question item's share of ``whole``
        (:meth:`EvalResult.only`), with the item's baseline, by the item
        tolerance (gate/outcome/together.py): recorded under ``whole``'s
        summary row, and ``whole`` counts as compared (its left-out questions
        are then the baseline comparison's, not an error)."""
        return self.check(part, whole=whole)

    def check(
        self,
        result: EvalResult,
        *,
        whole: EvalResult | None = None,
        name: str | None = None,
        tolerance: str | Mapping[str, Any] | None = None,
        mode: str | None = None,
        confidence: str | float | None = None,
        gate_by: str | None = None,
    ) -> CheckOutcome:
        """Compare ``result`` (``whole``'s share, if given) with its baseline
        through the session's store (``name``, ``tolerance``, ``mode``,
        ``confidence`` and ``gate_by``: as for ``chunkeval.check_baseline``)."""
        from pytest_chunkeval.engine.results import EvalResult

        if not isinstance(result, EvalResult):
            raise TypeError(
                f"check_baseline takes the EvalResult of chunkeval.evaluate() or "
                f"chunkeval.score(), got {type(result).__name__}"
            )
        store = self.session.baselines
        self._begin()  # numbering of unnamed baselines restarts
        test = self.test()
        produced = result if whole is None else whole
        self.compared.append(produced)
        return store.check(
            result,
            test,
            name=name,
            tolerance=self._tolerance(tolerance),
            mode=self.gate.get("mode") if mode is None else mode,
            confidence=self.gate.get("confidence")
            if confidence is None
            else confidence,
            gate_by=self.gate.get("gate_by") if gate_by is None else gate_by,
            row=self.session.row_of(produced),
            per_question=whole is not None,
        )

    def _tolerance(
        self, tolerance: str | Mapping[str, Any] | None
    ) -> str | Mapping[str, Any] | None:
        """The marker's tolerance replacing the session's (only the metrics it
        names are gated, as ``chunkeval_tolerance``), a call's over it metric
        by metric."""
        marked = self.gate.get("tolerance")
        if marked is None:
            return tolerance
        from pytest_chunkeval.config.tolerances import HIGHER_IS_BETTER
        from pytest_chunkeval.gate.tolerances import coerce_tolerances

        return {
            **dict.fromkeys(HIGHER_IS_BETTER),
            **coerce_tolerances(marked),
            **coerce_tolerances(tolerance),
        }

    def _begin(self) -> None:
        if not self._begun:
            self.session.baselines.begin(self.nodeid)
            self._begun = True

    def _not_compared_yet(self) -> list[EvalResult]:
        """The results not compared, each once, in the order produced."""
        pending: list[EvalResult] = []
        for result in self.results:
            if not any(result is r for r in [*self.compared, *pending]):
                pending.append(result)
        return pending

    def settle(self, failure: str | BaseException | None) -> str | None:
        """After the call phase and the marker's checks: under
        ``--chunkeval-update``, write the test's baselines if it passed
        (``failure`` None), else keep the old files and note why. The failure text
        (``failure`` itself, or a baseline that cannot be written), or None.

        A test body that raised (``failure`` an exception) before the
        comparisons ``baseline=True`` asks for: its results are recorded as not
        compared, so that no report reads them as compared."""
        text = failure if isinstance(failure, str) else None
        if failure is None:
            text = failure = self.unplaced_outside_baseline()
        if isinstance(failure, BaseException) and self.marker_baseline:
            self._not_compared(short_reason(self.nodeid, failure))
        if not self._begun:
            return text
        store = self.session.baselines
        if failure is None:
            return store.commit(self.nodeid)
        store.discard(self.nodeid, short_reason(self.nodeid, failure))
        return text

    def _not_compared(self, reason: str) -> None:
        """Each result ``baseline=True`` would have compared, as not compared."""
        results = self._not_compared_yet()
        if not results:
            return
        self._begin()
        for result in results:
            self.session.baselines.not_compared(
                self.test(), reason, self.session.row_of(result)
            )

    def verdict_properties(self) -> list[tuple[str, str]]:
        """The test's baseline checks as JUnit properties: one
        ``chunkeval.baseline`` per check, as the reports' Baseline cell shows
        it (``regressed``, ``not compared (test failed first)``)."""
        if not self._begun:
            return []
        from pytest_chunkeval.gate.outcome.rows import check_text

        return [
            ("chunkeval.baseline", f"{check_text(o.status, o.reason)}: {o.path}")
            for o in self.session.baselines.outcomes
            if o.nodeid == self.nodeid
        ]

    def unplaced_outside_baseline(self, *, every: bool = False) -> str | None:
        """A result that left out queries no longer placeable is only fit for
        its baseline comparison: used otherwise (a marker threshold, nothing),
        the test fails with the placement error, as without a baseline
        (docs/formats.md#loading-and-re-location). ``every``: whether or not the result
        was compared with its baseline."""
        unchecked = [
            r
            for r in self.results
            if r.unplaced and (every or not any(r is c for c in self.compared))
        ]
        if not unchecked:
            return None
        from pytest_chunkeval.gate.comparison.changes import format_unplaced

        return (
            f"{self.nodeid}: {format_unplaced(unchecked[0].unplaced)}\nOnly a "
            "baseline comparison (chunkeval.check_baseline, or "
            "@pytest.mark.chunkeval(baseline=True)) leaves them out; fix or remove "
            "them in the query set."
        )

    def check_marker_baselines(self) -> str | None:
        """``@pytest.mark.chunkeval(baseline=True)``: every result the test
        produced and did not check itself, compared after the test; the failures
        as one text (None: all passed)."""
        from pytest_chunkeval.gate.files.baseline import BaselineError

        if not self.results:
            return (
                f"{self.nodeid}: @pytest.mark.chunkeval(baseline=True) compares the "
                "test's results with their baselines, but the test produced no "
                "chunkeval result: request the chunkeval fixture and call "
                "chunkeval.evaluate(...) or chunkeval.score(...)"
            )
        failures = []
        for result in self._not_compared_yet():
            try:
                self.check(result)
            except (BaselineError, ConfigError) as exc:
                failures.append(str(exc))
        return "\n\n".join(failures) or None


def short_reason(nodeid: str, failure: str | BaseException) -> str:
    """The first line of a failure, without the node id: ``min_recall=0.8 not
    met``, ``AssertionError: assert 0.5 > 0.9``."""
    if isinstance(failure, BaseException):
        text = str(failure).strip()
        name = type(failure).__name__
        first = text.splitlines()[0] if text else ""
        line = f"{name}: {first}" if first else name
    else:
        line = failure.strip().splitlines()[0] if failure.strip() else "failed"
    line = line.removeprefix(f"{nodeid}: ").removeprefix("@pytest.mark.chunkeval")
    if line.startswith("(") and line.endswith(") not met"):
        line = line[1 : -len(") not met")] + " not met"
    return line if len(line) <= 100 else line[:99] + "…"
