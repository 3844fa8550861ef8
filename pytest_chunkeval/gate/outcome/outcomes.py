"""What one baseline check did (:class:`CheckOutcome`): its status, its message,
and what the comparison found, JSON-serializable for xdist workers. What each
status says in the reports (its verdict) is
:data:`~pytest_chunkeval.gate.comparison.verdicts.STATUS_VERDICTS`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_chunkeval.gate.comparison.changes import BaselineChanges
from pytest_chunkeval.gate.comparison.flips import Flips
from pytest_chunkeval.gate.comparison.verdicts import (
    STATUS_VERDICTS,
    GatedMetric,
    NoiseNote,
    Verdict,
    verdict_of,
)
from pytest_chunkeval.gate.tolerances import SetRule

OUTCOMES = (
    "ok",
    "noisy",
    "improved",
    "predates",
    "created",
    "updated",
    "unchanged",
    "missing",
    "corrupt",
    "mismatch",
    "incomplete",
    "regressed",
    "unwritable",
    "not recorded",
    "not compared",
)
"""What a check can do, in the order the summary counts them (each is a row of
:data:`~pytest_chunkeval.gate.comparison.verdicts.STATUS_VERDICTS`)."""
FAILED = frozenset(s for s in OUTCOMES if STATUS_VERDICTS[s].fails)
"""The statuses that fail the test."""


@dataclass(frozen=True)
class CheckOutcome:
    """What one baseline check did, for the terminal summary and the reports
    (JSON-serializable): ``row`` names the session's summary row of the checked
    result, ``gated`` and ``flips`` what the comparison found (when it ran),
    ``changes`` what else differs from the baseline (None: nothing), ``noise``
    the questions whose change float drift explains, ``reason`` why it was not
    compared (replacing the status table's). A per-question item's check names
    its ``question`` and keeps its own numbers in ``values`` (``gated`` may be
    dropped: a flip is the item's verdict), the whole set's ``rule`` it was
    checked under and its question's ``document`` and ``tags`` (the run's and
    the baseline's), for its test function's decision at the end of the
    session (gate/outcome/together.py)."""

    nodeid: str
    path: str
    status: str  # one of OUTCOMES
    message: str = ""
    row: str = ""
    gated: tuple[GatedMetric, ...] = ()
    flips: Flips | None = None
    changes: BaselineChanges | None = None
    reason: str = ""
    noise: tuple[NoiseNote, ...] = ()
    question: str = ""
    values: tuple[GatedMetric, ...] = ()
    rule: SetRule | None = None
    document: str = ""
    tags: tuple[str, ...] = ()

    @property
    def verdict(self) -> Verdict:
        """What the check says (docs/baselines.md, the table of verdicts)."""
        return verdict_of(self.status, self.reason)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "nodeid": self.nodeid,
            "path": self.path,
            "status": self.status,
            "verdict": str(self.verdict),
            "message": self.message,
        }
        if self.reason:
            data["reason"] = self.reason
        if self.noise:
            data["noise"] = [n.to_json() for n in self.noise]
        if self.row:
            data["row"] = self.row
        if self.gated:
            data["gated"] = [g.to_json() for g in self.gated]
        if self.flips is not None:
            data["flips"] = self.flips.to_json()
        if self.changes is not None:
            data["changes"] = self.changes.to_json()
        if self.question:
            data["question"] = self.question
        if self.values:
            data["values"] = [g.to_json() for g in self.values]
        if self.rule is not None:
            data["rule"] = self.rule.to_json()
        if self.document:
            data["document"] = self.document
        if self.tags:
            data["tags"] = list(self.tags)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckOutcome:
        flips, changes, rule = data.get("flips"), data.get("changes"), data.get("rule")
        return cls(
            str(data["nodeid"]),
            str(data["path"]),
            str(data["status"]),
            str(data.get("message", "")),
            str(data.get("row", "")),
            tuple(GatedMetric.from_json(g) for g in data.get("gated", [])),
            None if flips is None else Flips.from_json(flips),
            None if changes is None else BaselineChanges.from_json(changes),
            str(data.get("reason", "")),
            tuple(NoiseNote.from_json(n) for n in data.get("noise", [])),
            str(data.get("question", "")),
            tuple(GatedMetric.from_json(g) for g in data.get("values", [])),
            None if rule is None else SetRule.from_json(rule),
            str(data.get("document", "")),
            tuple(str(t) for t in data.get("tags", [])),
        )
