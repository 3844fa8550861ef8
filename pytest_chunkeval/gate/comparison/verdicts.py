"""The gate's vocabulary: :data:`VERDICTS`, :class:`Verdict` and the one table
from what a check did to what it says (:data:`STATUS_VERDICTS`, worst first by
:func:`worst_verdict`), the numbers behind a verdict (:class:`GatedMetric`: per
gated metric the baseline, the change, its noise, the sampling view;
:class:`NoiseNote`: a change float drift explains), and the one-line verdict
of a session (``1 regression, 1 noisy, 0 improvements, 14 ok``) that the
reports open with. A
report row's verdict is :mod:`pytest_chunkeval.gate.outcome.rows`'."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pytest_chunkeval.core.absent import present

REGRESSED = "regressed"
NOISY = "noisy"
IMPROVED = "improved"
OK = "ok"
NOT_COMPARED = "not compared"
VERDICTS = (REGRESSED, NOISY, IMPROVED, OK, NOT_COMPARED)
"""What a baseline check, a gated metric or a report row can say (docs/baselines.md,
"What a verdict means"): ``regressed`` (a drop beyond the tolerance and the
measured noise: fails), ``noisy`` (a drop beyond the tolerance but within the
noise repeats measured: passes, named with its SE and repeats), ``improved``,
``ok``, and ``not compared (reason)``."""


@dataclass(frozen=True)
class Verdict:
    """One verdict: its name (one of :data:`VERDICTS`), why it was not compared,
    and whether it fails the check."""

    name: str
    reason: str = ""
    fails: bool = False

    def __str__(self) -> str:
        return f"{self.name} ({self.reason})" if self.reason else self.name


STATUS_VERDICTS: dict[str, Verdict] = {
    # a comparison ran
    "regressed": Verdict(REGRESSED, fails=True),
    "noisy": Verdict(NOISY),
    "improved": Verdict(IMPROVED),
    "ok": Verdict(OK),
    "predates": Verdict(NOT_COMPARED, "recorded before it existed"),
    "incomplete": Verdict(NOT_COMPARED, "too many questions left out", fails=True),
    # --chunkeval-update
    "created": Verdict(NOT_COMPARED, "recorded now"),
    "updated": Verdict(NOT_COMPARED, "recorded now"),
    "unchanged": Verdict(OK),
    # the test failed otherwise: nothing recorded, nothing compared
    "not recorded": Verdict(NOT_COMPARED, "test failed", fails=True),
    "not compared": Verdict(NOT_COMPARED, "test failed first", fails=True),
    # no comparison possible
    "missing": Verdict(NOT_COMPARED, "no baseline", fails=True),
    "corrupt": Verdict(NOT_COMPARED, "unreadable baseline", fails=True),
    "mismatch": Verdict(NOT_COMPARED, "cannot be compared", fails=True),
    "unwritable": Verdict(NOT_COMPARED, "baseline not writable", fails=True),
    # written by older versions (a JSON report read back)
    "passed": Verdict(OK),
}
"""The one table from what a check did (``CheckOutcome.status``) to its verdict;
an outcome's own ``reason`` replaces the reason given here."""


PASSING_REASONS = frozenset(
    v.reason for v in STATUS_VERDICTS.values() if v.reason and not v.fails
) | {"recorded before it existed", "not measured in the baseline"}
"""Reasons a result or a metric may be ``not compared`` and still pass."""


def fails(verdict: str, reason: str = "") -> bool:
    """Whether a shown verdict (name and reason) fails the gate: ``regressed``,
    and ``not compared`` for any reason but :data:`PASSING_REASONS`."""
    if verdict == REGRESSED:
        return True
    return verdict == NOT_COMPARED and reason not in PASSING_REASONS


def verdict_of(status: str, reason: str = "") -> Verdict:
    """The verdict of a check outcome's ``status`` (an unknown status is a
    failing "not compared")."""
    known = STATUS_VERDICTS.get(status, Verdict(NOT_COMPARED, status, fails=True))
    # regressed (since the anchor recorded DATE): docs/baselines.md
    named = known.reason or known.name == REGRESSED
    return replace(known, reason=reason) if reason and named else known


_RANK = (REGRESSED, "failing", NOISY, NOT_COMPARED, IMPROVED, OK)


def _rank(verdict: Verdict) -> int:
    if verdict.name == NOT_COMPARED and verdict.fails:
        return 1
    return _RANK.index(verdict.name)


def worst_verdict(verdicts: Iterable[Verdict]) -> Verdict | None:
    """The worst of ``verdicts``: regressed, a failing "not compared" (no
    baseline, damaged...), noisy, a passing "not compared", improved, ok."""
    return min(verdicts, key=_rank, default=None)


def worst(verdicts: Iterable[str]) -> str:
    """The worst of shown verdicts (``str(Verdict)``), "" when none."""
    shown = list(verdicts)
    return min(shown, key=severity, default="")


_NOUNS = {
    REGRESSED: ("regression", "regressions"),
    NOISY: ("noisy", "noisy"),
    IMPROVED: ("improvement", "improvements"),
    OK: ("ok", "ok"),
    NOT_COMPARED: ("not compared", "not compared"),
}


def headline(verdicts: Mapping[str, str]) -> str:
    """``2 regressions, 1 noisy, 1 improvement, 14 ok, 1 not compared`` (noisy and
    not compared only when there are any); "" when no test checked a baseline."""
    counts: dict[str, int] = {}
    for verdict in verdicts.values():
        name = verdict.partition(" (")[0]
        counts[name] = counts.get(name, 0) + 1
    parts = []
    for name, (one, many) in _NOUNS.items():
        n = counts.get(name, 0)
        if n or name in (REGRESSED, IMPROVED, OK):
            parts.append(f"{n} {one if n == 1 else many}")
    return ", ".join(parts) if verdicts else ""


def verdict_text(verdict: str) -> str:
    """A verdict or metric status as a report cell shows it: a regression in
    capitals (``REGRESSED``), "-" for none."""
    return "REGRESSED" if verdict == REGRESSED else verdict or "-"


def severity(verdict: str, outcome: str = "") -> int:
    """Sort key of a report row (a shown verdict), worst first: regressed, not
    compared, noisy, then a failed test, then everything else (improved, ok)."""
    name = verdict.partition(" (")[0]
    if name == REGRESSED:
        return 0
    if name == NOT_COMPARED:
        return 1
    if name == NOISY:
        return 2
    return 3 if outcome == "failed" else 4


GROUP_KINDS: tuple[str, ...] = ("document", "tag")
"""What a group of questions is (gate/comparison/groups.py): the JSON key of its
name, and what ``chunkeval_gate_by`` names to fail on it."""


@dataclass(frozen=True)
class GroupDrop:
    """A document or tag (``kind``) whose mean change of a metric is beyond its
    own tolerance (gate/comparison/groups.py): its ``n`` questions' mean change
    ``delta`` (``now - baseline``), that tolerance ``allowed`` in the metric's
    units (the larger of the set's and the group's minimum detectable effect)
    and the ``se`` of its noise."""

    group: str
    n: int
    delta: float
    allowed: float
    se: float = 0.0
    kind: str = "document"

    def to_json(self) -> dict[str, Any]:
        return {
            self.kind: self.group,
            "n": self.n,
            "delta": self.delta,
            "allowed": self.allowed,
            "se": self.se,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GroupDrop:
        kind = next((k for k in GROUP_KINDS if k in data), "document")
        return cls(
            str(data[kind]),
            int(data.get("n", 0)),
            float(data["delta"]),
            float(data.get("allowed", 0.0)),
            float(data.get("se", 0.0)),
            kind,
        )


def groups_line(metric: str, groups: Iterable[GroupDrop]) -> str:
    """``recall of documents beyond their own tolerance: finance.md -18.00
    points over 30 questions (its own tolerance -16.67)``, then the tags the
    same way after ``; `` ("" for none)."""
    groups = list(groups)
    lines = []
    for kind in GROUP_KINDS:
        parts = ", ".join(
            f"{g.group} {100 * g.delta:+.2f} points over {g.n} question"
            f"{'' if g.n == 1 else 's'} (its own tolerance {-100 * g.allowed:.2f})"
            for g in groups
            if g.kind == kind
        )
        if parts:
            lines.append(f"{metric} of {kind}s beyond their own tolerance: {parts}")
    return "; ".join(lines)


@dataclass(frozen=True)
class GatedMetric:
    """One gated metric of a baseline comparison, as the reports show it.

    Values are fractions (0-1). ``delta`` is ``now - baseline``: the mean of the
    per-question changes (``changes`` and ``paired`` modes; in ``changes`` mode
    the changes float drift explains are not counted) or of the means (``mean``
    mode). ``se`` (``changes`` mode, else None): the standard error of ``delta``
    repeats measured (0 without noise); ``hides``: the largest drop that noise
    could hide (the tolerance plus ``z * se``); ``repeats``: what measured it.
    ``status`` is ``regressed``, ``noisy``, ``improved``, ``ok`` or ``not
    compared`` (``reason`` says why). The sampling view, information only
    outside ``paired`` mode: ``low``/``high`` the paired bootstrap interval of
    ``delta`` (None in ``mean`` mode) at the joint level ``confidence``, and
    ``mde`` the minimum detectable effect in the metric's units
    (``mde_questions`` questions lost in one direction). ``changed``: questions
    whose value moved; ``drift``: those float drift explains. ``groups``: the
    documents and tags whose change is beyond their own tolerance (named in every
    report; a failure with ``chunkeval_gate_by = "document"``)."""

    metric: str
    before: float | None
    after: float | None
    delta: float | None
    low: float | None
    high: float | None
    status: str
    confidence: float
    se: float | None = None
    hides: float | None = None
    repeats: str = ""
    reason: str = ""
    tolerance: str = ""
    allowed: float = 0.0
    changed: int = 0
    drift: int = 0
    n: int = 0
    mde: float | None = None
    mde_questions: int | None = None
    groups: tuple[GroupDrop, ...] = ()
    decided_by: str = ""
    """``tag billing``: the documents or tags whose drop made ``status``
    regressed where the whole set's change did not (``chunkeval_gate_by``);
    the reports say so beside the verdict."""

    @property
    def verdict(self) -> str:
        """The verdict as the tables show it: ``REGRESSED (tag billing)``."""
        text = verdict_text(self.status)
        return f"{text} ({self.decided_by})" if self.decided_by else text

    @property
    def unchanged(self) -> bool:
        """No question moved: a paired change whose interval is exactly [0, 0].
        (Equal means in mean mode do not say so: questions may have moved both
        ways.)"""
        return self.delta == 0 and self.low == 0 and self.high == 0

    @property
    def shown(self) -> str:
        """The status with its reason: ``not compared (recorded before it
        existed)``."""
        return f"{self.status} ({self.reason})" if self.reason else self.status

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "metric": self.metric,
            "baseline": self.before,
            "now": self.after,
            "delta": self.delta,
            "se": self.se,
            "hides": self.hides,
            "repeats": self.repeats,
            "low": self.low,
            "high": self.high,
            "status": self.status,
            "reason": self.reason,
            "confidence": self.confidence,
            "tolerance": self.tolerance,
            "allowed": self.allowed,
            "changed": self.changed,
            "drift": self.drift,
            "n": self.n,
            "mde": self.mde,
            "mde_questions": self.mde_questions,
        }
        for kind in GROUP_KINDS:  # documents and tags beyond their own tolerance
            if found := [g.to_json() for g in self.groups if g.kind == kind]:
                data[f"{kind}s"] = found
        if self.decided_by:
            data["decided_by"] = self.decided_by
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GatedMetric:
        questions = data.get("mde_questions")
        return cls(
            str(data["metric"]),
            present(data.get("baseline")),
            present(data.get("now")),
            present(data.get("delta")),
            present(data.get("low")),
            present(data.get("high")),
            str(data.get("status", OK)),
            float(data.get("confidence", 0.95)),
            se=present(data.get("se")),
            hides=present(data.get("hides")),
            repeats=str(data.get("repeats", "")),
            reason=str(data.get("reason", "")),
            tolerance=str(data.get("tolerance", "")),
            allowed=float(data.get("allowed", 0.0)),
            changed=int(data.get("changed", 0)),
            drift=int(data.get("drift", 0)),
            n=int(data.get("n", 0)),
            mde=present(data.get("mde")),
            mde_questions=None if questions is None else int(questions),
            groups=tuple(
                GroupDrop.from_json(g)
                for kind in GROUP_KINDS
                for g in data.get(f"{kind}s", [])
            ),
            decided_by=str(data.get("decided_by", "")),
        )


@dataclass(frozen=True)
class NoiseNote:
    """A question whose change float drift explains (gate/comparison/drift.py), and how
    (``drift``)."""

    id: str
    doc_id: str
    question: str
    why: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "doc_id": self.doc_id,
            "question": self.question,
            "why": self.why,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NoiseNote:
        return cls(
            str(data["id"]),
            str(data.get("doc_id", "")),
            str(data.get("question", "")),
            str(data.get("why", "")),
        )


def noise_notes(
    noise: Mapping[str, str], records: Iterable[Any]
) -> tuple[NoiseNote, ...]:
    """A :class:`NoiseNote` per question of ``noise`` (id -> kind), from the
    query records (``id``, ``doc_id``, ``question``) that name them."""
    by_id = {r.id: r for r in records}
    return tuple(
        NoiseNote(i, by_id[i].doc_id, by_id[i].question, why)
        for i, why in noise.items()
    )
