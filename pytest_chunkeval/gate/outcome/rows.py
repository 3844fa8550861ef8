"""A report row's verdict (:class:`RowVerdict`): the one source of what every
report (terminal summary, JSON, Markdown, HTML) says about a row: its tests'
outcome, its baseline verdict (``not compared (reason)`` when a comparison was
asked for and could not run), the test that failed named first, and the
questions counted once from the query set however many checks compared them.

A row is one evaluated configuration; several tests (and every item of a
per-question test) may share it. Statuses map to verdicts through
:data:`~pytest_chunkeval.gate.comparison.verdicts.STATUS_VERDICTS` only.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from pytest_chunkeval.gate.comparison.verdicts import (
    NOT_COMPARED,
    GatedMetric,
    NoiseNote,
    Verdict,
    fails,
    headline,
    severity,
    verdict_of,
    verdict_text,
    worst_verdict,
)

if TYPE_CHECKING:
    from pytest_chunkeval.gate.comparison.changes import BaselineChanges
    from pytest_chunkeval.gate.comparison.flips import Flips


def check_text(status: str, reason: str = "") -> str:
    """One check's verdict as the reports say it: ``regressed``, ``not
    compared (unreadable baseline)``."""
    return str(verdict_of(status, reason))


class Checked(Protocol):
    """What :func:`row_verdicts` reads of a check outcome (gate/outcome/outcomes.py)."""

    @property
    def nodeid(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def row(self) -> str: ...
    @property
    def gated(self) -> tuple[GatedMetric, ...]: ...
    @property
    def flips(self) -> Flips | None: ...
    @property
    def changes(self) -> BaselineChanges | None: ...
    @property
    def reason(self) -> str: ...
    @property
    def noise(self) -> tuple[NoiseNote, ...]: ...


@dataclass(frozen=True)
class RowVerdict:
    """What a report row shows of its tests and its baseline checks."""

    outcome: str = ""
    """``passed`` / ``failed`` / ``skipped`` (every test skipped); "" when
    unknown."""
    verdict: str = ""
    """The worst baseline verdict of the row ("" when none was checked)."""
    gated: tuple[GatedMetric, ...] = ()
    """The gated metrics of the check that gave ``verdict``."""
    flips: Flips | None = None
    changes: BaselineChanges | None = None
    """What else differs from the baseline (configuration, documents,
    questions); None when nothing does."""
    reason: str = ""
    """Why a ``not compared`` row was not (``unreadable baseline``...)."""
    failed: tuple[str, ...] = ()
    """The row's tests that failed or gave its failing verdict, worst first:
    the tests its label names."""
    skipped: tuple[str, ...] = ()
    """The row's tests pytest skipped (a per-question item whose question can
    no longer be placed)."""
    noise: tuple[NoiseNote, ...] = ()
    """The questions whose change float drift explains, over the row's checks."""
    others: tuple[str, ...] = ()
    """The other verdicts of the row's tests, each counted by test, where one
    of them was not compared or fails otherwise than the row's verdict says:
    ``1 test not compared (no baseline)``; the row's label counts those tests
    among the failed ones."""

    @property
    def fails(self) -> bool:
        """Whether the row's verdict fails the gate."""
        return fails(self.verdict, self.reason)

    @property
    def cell(self) -> str:
        """The Baseline cell: ``REGRESSED``, ``not compared (test failed
        first)``, ``passed``; "-" for none."""
        text = verdict_text(self.verdict)
        text = f"{text} ({self.reason})" if self.reason else text
        return f"{text}; also {', '.join(self.others)}" if self.others else text

    def outcome_cell(self, tests: int) -> str:
        """The Outcome cell: ``passed``, ``failed (1 skipped)``; "-" unknown."""
        if not self.outcome:
            return "-"
        some = len(self.skipped)
        return f"{self.outcome} ({some} skipped)" if 0 < some < tests else self.outcome


def row_verdicts(
    rows: Iterable[tuple[str, Sequence[str]]],
    outcomes: Sequence[Checked],
    passed: Collection[str] | None = None,
    skipped: Collection[str] = (),
    order: Mapping[str, int] | None = None,
) -> dict[str, RowVerdict]:
    """Row key -> its :class:`RowVerdict`, for ``(key, node ids)`` rows.

    A check belongs to the row its result was recorded under (``row``); a check
    without one (a result the session did not produce) to every row of its test.
    ``passed``: the node ids whose every phase passed (None: unknown);
    ``skipped``: those pytest skipped. The row's flips are those of all its
    checks, each question counted once. Of several checks with the row's
    verdict, the first in collection ``order`` (node id -> index) gives the
    numbers and is named first: the same in one process and under xdist."""
    from pytest_chunkeval.gate.comparison.flips import merged

    rank = order or {}
    ranked = sorted(outcomes, key=lambda o: rank.get(o.nodeid, len(rank)))
    out = {}
    for key, nodeids in rows:
        mine = [
            o for o in ranked if o.row == key or (not o.row and o.nodeid in nodeids)
        ]
        found = worst_verdict(_verdict(o) for o in mine)
        chosen = [o for o in mine if _verdict(o) == found]
        # the numbers of the check of the most questions (a whole-set test's,
        # per-question items decided together), the first in order of those
        detail = max(
            (o for o in chosen if o.gated),
            key=lambda o: max(g.n for g in o.gated),
            default=chosen[0] if chosen else None,
        )
        if detail is not None:  # the check whose numbers the row shows: named first
            chosen = [detail, *(o for o in chosen if o is not detail)]
        noise = {n.id: n for o in mine for n in o.noise}
        out[key] = RowVerdict(
            _outcome(nodeids, passed, skipped),
            "" if found is None else found.name,
            detail.gated if detail is not None else (),
            merged([o.flips for o in mine if o.flips is not None]),
            _changes(mine, detail),
            reason="" if found is None else found.reason,
            failed=_culprits(
                nodeids,
                chosen if found is not None and found.fails else [],
                passed,
                skipped,
            ),
            skipped=tuple(n for n in nodeids if n in skipped),
            noise=tuple(noise.values()),
            others=_others(nodeids, mine, found),
        )
    return out


def _others(
    nodeids: Sequence[str], mine: Sequence[Checked], found: Verdict | None
) -> tuple[str, ...]:
    """What :attr:`RowVerdict.others` lists: per test of the row, the worst
    verdict of its checks, where that is not the row's and is ``not compared``
    or fails; counted by verdict, worst first."""
    if found is None:
        return ()
    by_test: dict[str, list[Verdict]] = {}
    for o in mine:
        by_test.setdefault(o.nodeid, []).append(_verdict(o))
    counts: dict[Verdict, int] = {}
    for nodeid in [*nodeids, *(n for n in by_test if n not in nodeids)]:
        own = worst_verdict(by_test.get(nodeid, ()))
        if own is None or str(own) == str(found):
            continue
        if own.fails or own.name == NOT_COMPARED:
            counts[own] = counts.get(own, 0) + 1
    ranked = sorted(counts, key=lambda v: severity(str(v)))
    return tuple(f"{counts[v]} test{'' if counts[v] == 1 else 's'} {v}" for v in ranked)


def _verdict(check: Checked) -> Verdict:
    return verdict_of(check.status, check.reason)


def _changes(mine: Sequence[Checked], detail: Checked | None) -> BaselineChanges | None:
    """What changed since the baseline, for the row: the verdict's check's when
    it compared gated metrics (its numbers), else the check of the most
    questions (a whole-set test's, not a per-question item's); its counts are
    the row's, each question once (a row of per-question items only: every item
    it compared, not one)."""
    from pytest_chunkeval.gate.comparison.flips import merged

    found = [o for o in mine if o.changes is not None]
    if not found:
        return None
    best = (
        detail
        if detail is not None and detail.gated and detail.changes is not None
        else max(found, key=lambda o: o.changes.total if o.changes else 0)
    )
    changes = best.changes
    flips = merged([o.flips for o in mine if o.flips is not None])
    if changes is None or flips is None or flips.ids is None:
        return changes
    if flips.compared <= changes.compared:
        return changes
    return replace(
        changes,
        compared=flips.compared,
        total=max(changes.total, flips.compared + len(changes.unplaced)),
    )


def _outcome(
    nodeids: Sequence[str], passed: Collection[str] | None, skipped: Collection[str]
) -> str:
    if passed is None or not nodeids:
        return ""
    if any(n not in passed and n not in skipped for n in nodeids):
        return "failed"
    return "skipped" if all(n in skipped for n in nodeids) else "passed"


def _culprits(
    nodeids: Sequence[str],
    checks: Sequence[Checked],
    passed: Collection[str] | None,
    skipped: Collection[str],
) -> tuple[str, ...]:
    """The tests a row's label names first: those whose check gave its failing
    verdict, then the others that failed (not skipped), in the row's order."""
    first = [c.nodeid for c in checks if c.nodeid in nodeids]
    failed = (
        []
        if passed is None
        else [n for n in nodeids if n not in passed and n not in skipped]
    )
    return tuple(dict.fromkeys([*first, *failed]))


def ordered_tests(
    nodeids: Sequence[str], verdict: RowVerdict, order: Mapping[str, int]
) -> list[str]:
    """A row's tests as every report lists them: those that failed first
    (:attr:`RowVerdict.failed`), then the
    others in collection ``order`` (node id -> index), the same in one process
    and under xdist, whichever worker reported first."""
    failed = list(verdict.failed)
    rest = sorted(
        (n for n in nodeids if n not in failed),
        key=lambda n: (order.get(n, len(order)), nodeids.index(n)),
    )
    return [*failed, *rest]


def label_tests(
    nodeids: Sequence[str], failed: Collection[str] = (), *, listed: int = 3
) -> str:
    """A row's tests in one cell: the failed ones named first (up to
    ``listed``), ``(+N)`` for the others, and how many of those others failed
    too: ``t.py::test_whole (+7 more, 4 of them failed)``, ``(+24 more, all
    failed)``; ``-`` for none. ``nodeids`` as :func:`ordered_tests` gives them."""
    if not nodeids:
        return "-"
    named = [n for n in nodeids if n in failed][:listed] or [nodeids[0]]
    rest = len(nodeids) - len(named)
    more = sum(1 for n in nodeids if n in failed and n not in named)
    if not rest:
        suffix = ""
    elif not more:
        suffix = f" (+{rest})"
    else:  # "of them": the count is of the others, not of all the row's tests
        failed_too = "all failed" if more == rest else f"{more} of them failed"
        suffix = f" (+{rest} more, {failed_too})"
    return ", ".join(named) + suffix


def row_headline(verdicts: Iterable[RowVerdict]) -> str:
    """The session's verdict line, counting the rows of the reports' tables by
    their Baseline cell: ``1 regression, 1 noisy, 0 improvements, 3 ok``."""
    return headline({str(i): v.verdict for i, v in enumerate(verdicts) if v.verdict})
