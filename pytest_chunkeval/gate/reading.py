"""The baseline file a check compares with, read as the check needs it: the
outcome (and the error that fails the test) when it does not exist, cannot be
read, or records another test (docs/baselines.md, "Fail closed")."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from pytest_chunkeval.gate.files.baseline import (
    BaselineCorrupt,
    BaselineError,
    BaselineMismatch,
    BaselineMissing,
)
from pytest_chunkeval.gate.files.corpus_table import Loaded, load_baseline
from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome


@dataclass(frozen=True)
class Refused:
    """Why a check cannot compare: its outcome (for the summary) and the
    error that fails the test."""

    outcome: CheckOutcome
    error: BaselineError


def read_for_check(
    path: Path,
    *,
    nodeid: str,
    shown: str,
    command: str,
    accepted: Collection[str],
    found: str = "",
) -> Loaded | Refused:
    """The baseline at ``path`` (with the corpus table it shares, a
    per-question item's: gate/files/corpus_table.py) if it exists, reads, and
    records one of the
    ``accepted`` test names (the test's, a former one, or the replaced
    parameter's); else what refuses it. ``command`` re-records the test's
    baselines; ``found`` says why no unused baseline was taken over (a missing
    file's message)."""
    if not path.is_file():
        why = f"\n{found}\n" if found else " "  # unused ones not taken
        message = (
            f"no baseline for {nodeid}: {shown} does not exist.{why}Create it "
            f"with:\n  {command}"
        )
        return Refused(
            CheckOutcome(nodeid, shown, "missing", message),
            BaselineMissing(message, path),
        )
    try:
        loaded = load_baseline(path)
    except BaselineCorrupt as exc:
        message = f"{exc}\nIt is left untouched; regenerate it with:\n  {command}"
        return Refused(
            CheckOutcome(nodeid, shown, "corrupt", message),
            BaselineCorrupt(message, path),
        )
    baseline = loaded.baseline
    if baseline.test not in accepted:
        test = next(iter(accepted), "")
        message = (
            f"baseline {shown} belongs to test {baseline.test!r}, not {test!r}, "
            f"so it is not compared. Re-record it:\n  {command}"
        )
        why = "another test's baseline"
        return Refused(
            CheckOutcome(nodeid, shown, "mismatch", message, "", reason=why),
            BaselineMismatch(message, path),
        )
    return loaded
