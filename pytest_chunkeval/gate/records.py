"""What a session's baseline checks recorded (:class:`SessionRecords`): each
check's outcome, the files it used, the tests collected, passed, skipped and
selected in part, and the summary's notes; what an xdist worker sends the
controller and the controller merges (:meth:`SessionRecords.worker_payload`).
gate/store.py's :class:`~pytest_chunkeval.gate.store.BaselineStore` checks
and writes baselines on top of these records."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_chunkeval.gate.outcome.outcomes import FAILED, CheckOutcome


class SessionRecords:
    """What the session's checks recorded, merged from xdist workers on the
    controller."""

    def __init__(self) -> None:
        self.touched: set[Path] = set()
        """Baseline files (and corpus tables) the checks used."""
        self.outcomes: list[CheckOutcome] = []
        self.removed: list[Path] = []
        self.notes: list[str] = []
        """Summary lines of shared corpus tables written
        (gate/files/corpus_table.py)."""
        self.collected: dict[str, None] = {}
        """Collected node ids in collection order (deselected ones included)."""
        self.passed: set[str] = set()
        self.skipped: set[str] = set()
        """Tests pytest skipped (a per-question item left out): not failed."""
        self.partial: set[str] = set()

    def record(self, outcome: CheckOutcome, row: str = "") -> CheckOutcome:
        """Keep a check's outcome, in ``row`` (its result's report row) unless
        it names one already."""
        if row and not outcome.row:
            outcome = replace(outcome, row=row)
        self.outcomes.append(outcome)
        return outcome

    def regressed(
        self, outcome: CheckOutcome, message: str, status: str = "regressed"
    ) -> CheckOutcome:
        """Turn a recorded outcome into a regression (a per-question item's flip,
        which its comparison's tolerance does not judge), or into ``status``
        (``noisy``: a flip that float drift explains). Its gated metrics are
        dropped: the flip is the item's verdict, the whole set's test carries
        the numbers of the row."""
        failed = replace(outcome, status=status, message=message, gated=())
        index = next(i for i, o in enumerate(self.outcomes) if o is outcome)
        self.outcomes[index] = failed
        return failed

    def note_collected(self, nodeids: Iterable[str]) -> None:
        """Record collected tests (deselected ones included), in collection
        order, for the unused files (gate/store.py) and the order of the
        reports' tests."""
        self.collected.update(dict.fromkeys(nodeids))

    @property
    def order(self) -> dict[str, int]:
        """Node id -> its place in collection order (the same on every xdist
        worker: each collects every test)."""
        return {n: i for i, n in enumerate(self.collected)}

    def note_passed(self, nodeid: str) -> None:
        """Record a test that passed (its baselines are used: gate/store.py)."""
        self.passed.add(nodeid)

    def note_skipped(self, nodeid: str) -> None:
        """Record a test pytest skipped (its report row says so)."""
        self.skipped.add(nodeid)

    def note_partial(self, test_files: Iterable[str | os.PathLike[str]]) -> None:
        """Record test files the command line selected by node id
        (``pytest 't.py::test_x[a]'``): only some of their tests were collected, so
        the unused files (gate/store.py) leave their baselines alone."""
        self.partial.update(os.fspath(f) for f in test_files)

    def worker_payload(self) -> dict[str, Any]:
        """What an xdist worker sends the controller (JSON-serializable)."""
        return {
            "touched": sorted(str(p) for p in self.touched),
            "outcomes": [o.to_json() for o in self.outcomes],
            "collected": list(self.collected),
            "passed": sorted(self.passed),
            "skipped": sorted(self.skipped),
            "partial": sorted(self.partial),
            "notes": self.notes,
        }

    def merge_payload(self, payload: Mapping[str, Any]) -> None:
        """Add a worker's bookkeeping to this (controller) store."""
        self.touched.update(Path(p) for p in payload.get("touched", []))
        self.note_collected(payload.get("collected", []))
        self.passed.update(payload.get("passed", []))
        self.skipped.update(payload.get("skipped", []))
        self.partial.update(payload.get("partial", []))
        self.notes += payload.get("notes", [])
        self.outcomes += [
            CheckOutcome.from_json(o) for o in payload.get("outcomes", [])
        ]

    def failed(self) -> bool:
        """True when some check failed (regressed, missing, corrupt...)."""
        return any(o.status in FAILED for o in self.outcomes)
