"""Update mode (``--chunkeval-update``): what writing a result as a test's
baseline does (created, updated, unchanged, moved from a former name or a
replaced parameter's file), the write itself, and the one-line error when the
folder refuses it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_chunkeval.gate.baseline import Baseline
from pytest_chunkeval.gate.messages import what_changed
from pytest_chunkeval.gate.outcomes import CheckOutcome
from pytest_chunkeval.gate.paths import BaselineLayout, NodeRef
from pytest_chunkeval.gate.tolerances import GateSettings
from pytest_chunkeval.util.files import atomic_write_text

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult

Write = Callable[[], None]


def plan_update(
    result: EvalResult,
    test: NodeRef,
    path: Path,
    found: tuple[Path | None, str],
    settings: GateSettings,
    *,
    layout: BaselineLayout,
    shown_of: Callable[[Path], str],
) -> tuple[CheckOutcome, Write]:
    """The outcome of writing ``result`` as the test's baseline at ``path``
    (moved from the ``found`` file, under its former name or the replaced
    parameter's, if it has one), and the write itself."""
    former, what = found
    shown = shown_of(path)
    text = Baseline.from_result(result, test.name).to_text()
    source = former if former is not None else path
    old_text: str | None = None

    def write() -> None:
        if former is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            os.replace(former, path)
            remove_empty(layout, former)
        if old_text != text:
            atomic_write_text(path, text)

    if not source.is_file():
        return CheckOutcome(test.nodeid, shown, "created", f"created {shown}"), write
    try:
        old_text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        old_text = None
    detail = (
        "" if old_text == text else what_changed(source, old_text, result, settings)
    )
    if former is not None:
        message = f"moved {shown_of(former)} to {shown} ({what})"
        return CheckOutcome(test.nodeid, shown, "updated", message + detail), write
    if old_text == text:
        return CheckOutcome(test.nodeid, shown, "unchanged"), write
    message = f"updated {shown}{detail}"
    return CheckOutcome(test.nodeid, shown, "updated", message), write


def remove_empty(layout: BaselineLayout, file: Path) -> None:
    """Remove the folders a baseline file left empty (its module folder,
    ``__chunkeval__``; never a configured baseline directory)."""
    for parent in layout.empty_candidates(file):
        if parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()


def unwritable_message(
    path: Path, exc: OSError, shown_of: Callable[[Path], str]
) -> str:
    """The one-line error of a baseline file the system refused to write."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the folder that refused to hold ours
    # the system's reason, not our wrapper's sentence around it
    cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
    reason = cause.strerror or str(cause)
    return (
        f"cannot write baseline {shown_of(path)}: {reason} (in "
        f"{shown_of(folder)}). --chunkeval-update writes baselines there: make "
        "that folder writable, or set chunkeval_baseline_dir / "
        "--chunkeval-baseline-dir to a writable folder"
    )
