"""What one baseline check did (:class:`CheckOutcome`): its status, its message,
and what the comparison found, JSON-serializable for xdist workers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_chunkeval.gate.changes import BaselineChanges
from pytest_chunkeval.gate.flips import Flips
from pytest_chunkeval.gate.verdicts import GatedMetric

OUTCOMES = (
    "passed",
    "improved",
    "created",
    "updated",
    "unchanged",
    "missing",
    "corrupt",
    "mismatch",
    "regressed",
    "unwritable",
    "not recorded",
    "not compared",
)


@dataclass(frozen=True)
class CheckOutcome:
    """What one baseline check did, for the terminal summary and the reports
    (JSON-serializable): ``row`` names the session's summary row of the checked
    result, ``gated`` and ``flips`` what the comparison found (when it ran),
    ``changes`` what else differs from the baseline (None: nothing)."""

    nodeid: str
    path: str
    status: str  # one of OUTCOMES
    message: str = ""
    row: str = ""
    gated: tuple[GatedMetric, ...] = ()
    flips: Flips | None = None
    changes: BaselineChanges | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "nodeid": self.nodeid,
            "path": self.path,
            "status": self.status,
            "message": self.message,
        }
        if self.row:
            data["row"] = self.row
        if self.gated:
            data["gated"] = [g.to_json() for g in self.gated]
        if self.flips is not None:
            data["flips"] = self.flips.to_json()
        if self.changes is not None:
            data["changes"] = self.changes.to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckOutcome:
        flips, changes = data.get("flips"), data.get("changes")
        return cls(
            str(data["nodeid"]),
            str(data["path"]),
            str(data["status"]),
            str(data.get("message", "")),
            str(data.get("row", "")),
            tuple(GatedMetric.from_json(g) for g in data.get("gated", [])),
            None if flips is None else Flips.from_json(flips),
            None if changes is None else BaselineChanges.from_json(changes),
        )
