"""Update mode (``--chunkeval-update``): what writing a result as a test's
baseline does (created, updated, unchanged, moved from a former name or a
replaced parameter's file), the write itself, and the one-line error when the
folder refuses it."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_chunkeval.gate.comparison.anchor import anchored
from pytest_chunkeval.gate.comparison.changes import BaselineChanges, document_changes
from pytest_chunkeval.gate.comparison.repeats import as_the_baseline_measured
from pytest_chunkeval.gate.comparison.reworded import paired
from pytest_chunkeval.gate.files.baseline import Baseline, BaselineCorrupt
from pytest_chunkeval.gate.files.corpus_table import (
    item_text,
    load_baseline,
    table_text,
)
from pytest_chunkeval.gate.files.documents import valid_records
from pytest_chunkeval.gate.files.paths import BaselineLayout, NodeRef
from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome
from pytest_chunkeval.gate.outcome.update_notes import what_changed
from pytest_chunkeval.gate.tolerances import GateSettings
from pytest_chunkeval.util.files import atomic_write_text

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult

Write = Callable[[], None]


@dataclass
class TablePlan:
    """A per-question item's shared corpus table (gate/files/corpus_table.py):
    where it is, and the text this session writes there (the first item's;
    an item measured on another corpus keeps its own table inline)."""

    path: Path
    planned: dict[Path, str]
    """Table -> the text this session's items write (the store's)."""
    written: Callable[[str], None]
    """Told the summary line of a table a write changed."""


def plan_update(
    result: EvalResult,
    test: NodeRef,
    path: Path,
    found: tuple[Path | None, str],
    settings: GateSettings,
    *,
    layout: BaselineLayout,
    shown_of: Callable[[Path], str],
    table: TablePlan | None = None,
) -> tuple[CheckOutcome, Write, EvalResult]:
    """The outcome of writing ``result`` as the test's baseline at ``path``
    (moved from the ``found`` file, under its former name or the replaced
    parameter's, if it has one), the write itself, and the result written
    (with the repeats the old baseline asks for); with ``table``, a
    per-question item's file naming its shared corpus table (written first)."""
    former, what = found
    shown = shown_of(path)
    source = former if former is not None else path
    old = _old(source) if source.is_file() else None
    if old is not None and result.probe is not None and not result.noise:
        # a retriever the old baseline found noisy is recorded with repeats
        # (gate/comparison/repeats.py)
        result = as_the_baseline_measured(old, result)
    if (
        old is not None
    ):  # a reworded question keeps its anchor (gate/comparison/reworded.py)
        old = paired(old, result)
    baseline = anchored(Baseline.from_result(result, test.name), old, result, settings)
    text, write_table, shared = baseline.to_text(), _no_table, ""
    if table is not None:
        corpus = table_text(baseline)
        if table.planned.setdefault(table.path, corpus) == corpus:
            text = item_text(baseline, table.path)
            write_table = functools.partial(_write_table, table, corpus, shown_of)
            shared = shown_of(table.path)
    old_text: str | None = None

    def write() -> None:
        write_table()
        if former is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            os.replace(former, path)
            remove_empty(layout, former)
        if old_text != text:
            atomic_write_text(path, text)

    if not source.is_file():
        created = CheckOutcome(test.nodeid, shown, "created", f"created {shown}")
        return created, write, result
    try:
        old_text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        old_text = None
    detail = ""
    if old_text is not None and old_text != text:
        detail = what_changed(old, result, settings, shared, (old_text, text))
    if former is not None:
        message = f"moved {shown_of(former)} to {shown} ({what})"
        outcome = CheckOutcome(test.nodeid, shown, "updated", message + detail)
    elif old_text == text:
        outcome = CheckOutcome(test.nodeid, shown, "unchanged")
    else:
        message = f"updated {shown}{detail}"
        outcome = CheckOutcome(test.nodeid, shown, "updated", message)
    return outcome, write, result


def _no_table() -> None:
    return None


def _old(path: Path) -> Baseline | None:
    try:
        return load_baseline(path).baseline
    except BaselineCorrupt:
        return None


def _write_table(table: TablePlan, text: str, shown_of: Callable[[Path], str]) -> None:
    """Write a shared corpus table unless it holds ``text`` already; tell
    ``table.written`` what changed."""
    try:
        old: str | None = table.path.read_text(encoding="utf-8")
    except FileNotFoundError:
        old = None
    except (OSError, UnicodeDecodeError):
        old = ""
    if old == text:
        return
    atomic_write_text(table.path, text)
    shown = shown_of(table.path)
    if old is None:
        table.written(
            f"created {shown} (the corpus table its per-question items share)"
        )
    else:
        table.written(f"updated {shown}{table_change(old, text)}")


def table_change(old_text: str | None, new_text: str) -> str:
    """What rewriting a table changes, in words: `` (documents edited:
    finance.md (+1 sentence / +32 chars))``; "" when the old one is unreadable."""
    import json

    try:
        old = json.loads(old_text or "")
        before = valid_records(old.get("documents"))
        after = valid_records(json.loads(new_text).get("documents"))
    except (ValueError, AttributeError):
        return ""
    changes = BaselineChanges(
        corpus_changed=True, documents=document_changes(before, after)
    )
    lines = changes.lines()
    return f" ({'; '.join(lines)})" if lines else ""


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
