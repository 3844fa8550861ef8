"""What ``--chunkeval-update`` says it changed in a baseline file
(docs/baselines.md, "Update mode"): ``updated FILE`` followed by what differs
from the file it replaced, never the bare name.

In order, the first that applies: the old file was unreadable; what changed
besides the metrics (configuration, documents, questions, an older schema
migrated); the gated metrics' means that moved (``recall 31.38 -> 33.10``);
else the rows of the file that moved: other metrics' means, the question
rows whose values changed (``2 question rows: q-bark recall 100.00 -> 0.00,
…``) and the other sections rewritten (``question records``: their margins,
repeats or hashes; ``noise``, ``anchor``...). A file left as it was is
``unchanged`` (gate/writing.py) and lists nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.core.metric_names import format_pair

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.files.baseline import Baseline
    from pytest_chunkeval.gate.tolerances import GateSettings

SHOWN_QUESTIONS = 3
"""Question rows named by id before ``…``."""
SECTIONS = {
    "questions": "question records",
    "groups": "document means",
    "chunks": "chunk sizes",
    "noise": "noise record",
    "anchor": "anchor",
    "documents": "documents",
    "config": "configuration",
    "test": "test name",
}
"""The words for a rewritten section of the file (others by their key)."""
_SAID = frozenset({"metrics", "queries", "chunkeval_baseline"})


def what_changed(
    old: Baseline | None,
    result: EvalResult,
    settings: GateSettings,
    table: str = "",
    texts: tuple[str, str] = ("", ""),
) -> str:
    """``: recall 31.38 -> 33.10, iou …`` for an updated file (see the
    module's docstring); ``old`` None: it was unreadable. ``table``: the
    shared corpus table the new file names (a per-question item's,
    gate/files/corpus_table.py); ``texts``: the old and the new file's text."""
    if old is None:
        return " (the old file was unreadable)"
    from pytest_chunkeval.gate.comparison.changes import HASHES_ABSENT, baseline_changes
    from pytest_chunkeval.gate.files.baseline import ITEM_SCHEMAS, migration_note
    from pytest_chunkeval.gate.files.recording import MEAN_DECIMALS

    notes = [
        line.splitlines()[0].rstrip(":")
        for line in baseline_changes(old, result).lines()
        if line != HASHES_ABSENT  # said by the migration note below
        # a shared table's documents: said once, by the table's own line
        and not (table and line.startswith(("documents ", "corpus: ")))
    ]
    migrated = migration_note(old.schema, item=bool(table))
    if migrated:
        notes.append(migrated)
    if table and old.schema not in ITEM_SCHEMAS:
        notes.append(f"its corpus table moved to the shared {table}")
    if notes:
        return f" ({'; '.join(notes)})"
    moved = []
    for metric, _ in settings.gated():
        if metric in old.metrics and metric in result.metrics:
            before = old.metrics[metric].mean
            after = round(result.metrics[metric].mean, MEAN_DECIMALS)
            if not (math.isnan(before) or math.isnan(after)) and before != after:
                shown = format_pair(before, after)
                moved.append(f"{metric} {shown[0]} -> {shown[1]}")
    if moved:
        return f": {', '.join(moved)}"
    rows = rows_changed(*texts, first=[m for m, _ in settings.gated()])
    return f": {rows}" if rows else ""


def rows_changed(
    old_text: str, new_text: str, first: Sequence[str] = ("recall",)
) -> str:
    """The rows of a baseline file that differ between two texts of it, in
    words ("" when they parse alike or either does not parse); a question
    row is shown by the first of ``first`` that moved (the gated metrics),
    else its first metric that did."""
    try:
        old, new = json.loads(old_text), json.loads(new_text)
    except ValueError:
        return ""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return ""
    parts = []
    means = _means_moved(old.get("metrics"), new.get("metrics"))
    if means:
        parts.append(", ".join(means))
    questions = _questions_moved(old.get("queries"), new.get("queries"), first)
    if questions:
        parts.append(questions)
    others = [
        SECTIONS.get(key, key) + _which(key, old.get(key), new.get(key))
        for key in sorted(old.keys() | new.keys())
        if key not in _SAID and old.get(key) != new.get(key)
    ]
    if others:
        parts.append(f"{', '.join(others)} rewritten")
    return "; ".join(parts)


def _which(key: str, old: Any, new: Any) -> str:
    """`` (anchor, var)``: the fields that differ in the question records;
    `` (a.md, b.md)``: the documents whose means differ; "" otherwise."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return ""
    names = sorted(n for n in old.keys() | new.keys() if old.get(n) != new.get(n))
    if key == "groups":
        return f" ({', '.join(names)})"
    if key != "questions":
        return ""
    fields: set[str] = set()
    for name in names:
        before, after = old.get(name, {}), new.get(name, {})
        if not isinstance(before, Mapping) or not isinstance(after, Mapping):
            return ""
        fields |= {
            f for f in before.keys() | after.keys() if before.get(f) != after.get(f)
        }
    return f" ({', '.join(sorted(fields))})"


def _means_moved(old: Any, new: Any) -> list[str]:
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return []
    out = []
    for metric in sorted(old.keys() & new.keys()):
        before, after = _mean(old[metric]), _mean(new[metric])
        if before is not None and after is not None and before != after:
            shown = format_pair(before, after)
            out.append(f"{metric} {shown[0]} -> {shown[1]}")
    return out


def _mean(stats: Any) -> float | None:
    value = stats.get("mean") if isinstance(stats, Mapping) else None
    return float(value) if isinstance(value, (int, float)) else None


def _questions_moved(old: Any, new: Any, first: Sequence[str]) -> str:
    """``2 question rows: q-bark recall 100.00 -> 0.00, q-tides …``."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return ""
    moved = [q for q in sorted(old.keys() & new.keys()) if old[q] != new[q]]
    if not moved:
        return ""
    shown = [_question_row(q, old[q], new[q], first) for q in moved[:SHOWN_QUESTIONS]]
    more = ", …" if len(moved) > SHOWN_QUESTIONS else ""
    rows = "1 question row" if len(moved) == 1 else f"{len(moved)} question rows"
    return f"{rows}: {', '.join(shown)}{more}"


def _question_row(qid: str, old: Any, new: Any, first: Sequence[str]) -> str:
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return qid
    names = sorted(old.keys() | new.keys())
    for metric in [*(m for m in first if m in names), *names]:
        before, after = old.get(metric), new.get(metric)
        if before == after:
            continue
        if isinstance(before, (int, float)) and isinstance(after, (int, float)):
            shown = format_pair(float(before), float(after))
            return f"{qid} {metric} {shown[0]} -> {shown[1]}"
        return f"{qid} {metric} {_null(before)} -> {_null(after)}"
    return qid


def _null(value: Any) -> str:
    return "null" if value is None else json.dumps(value)
