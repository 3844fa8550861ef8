"""The ``baselines:`` lines of the terminal summary's chunkeval section: the
checks counted by status, the files listed, the unused ones."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pytest_chunkeval.gate.outcome.outcomes import OUTCOMES, CheckOutcome
from pytest_chunkeval.gate.outcome.together import quiet

LISTED = frozenset(
    {"ok", "noisy", "improved", "predates", "updated", "created", "not recorded"}
    | {"not compared"}
)
"""Statuses whose messages the summary lists, one line each."""


def summary_lines(
    outcomes: Sequence[CheckOutcome],
    *,
    removed: Sequence[Path],
    unused: Sequence[Path],
    notes: Sequence[str] = (),
    shown_of: Callable[[Path], str],
    update_command: str,
) -> list[str]:
    """Counts, the listed outcomes' messages, ``notes`` (files written beside
    the checks' own), and the files removed or unused."""
    outcomes = [o for o in outcomes if not quiet(o)]
    if not outcomes and not unused and not removed and not notes:
        return []
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    parts = [f"{counts[s]} {s}" for s in OUTCOMES if counts.get(s)]
    lines = [f"baselines: {', '.join(parts) or 'none checked'}"]
    for o in outcomes:
        if o.status in LISTED and o.message:
            lines.append(f"  {o.message}")
    lines += [f"  {note}" for note in dict.fromkeys(notes)]
    if removed:
        lines.append(f"removed {len(removed)} unused baseline(s):")
        lines += [f"  {shown_of(p)}" for p in removed]
    elif unused:
        lines.append(
            f"{len(unused)} unused baseline(s) (no test used them; "
            f"`{update_command}` removes them):"
        )
        lines += [f"  {shown_of(p)}" for p in unused]
    return lines
