"""The baseline summary of a parametrized test (per-question items above all) in
one block: items that passed against their baselines across the same changes say
so once for the test function, not three lines per item (a harmless document edit
under 29 per-question items printed 87 lines for a green run)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

__all__ = ["group_passed_items"]

_PASSED = ": passed against its baseline across changes"
_ITEM = re.compile(
    r"^  (?P<nodeid>(?P<function>[^\s\[]+)\[[^\n]*?\])" + re.escape(_PASSED)
)
_HOLE = "\0"


def group_passed_items(lines: Sequence[str]) -> list[str]:
    """``lines`` (the baseline summary, one entry per outcome) with the entries
    of a test function's items that passed across the same changes merged into
    one, at the place of the first; every other entry as it was."""
    out: list[str] = []
    groups: dict[tuple[str, str], list[int]] = {}  # -> [index in out, items]
    for line in lines:
        match = _ITEM.match(line)
        if match is None:
            out.append(line)
            continue
        key = (match["function"], line.replace(match["nodeid"], _HOLE))
        if key in groups:
            groups[key][1] += 1
            continue
        groups[key] = [len(out), 1]
        out.append(line)
    for (function, template), (index, count) in groups.items():
        if count > 1:
            out[index] = _merged(template, function, count)
    return out


def _merged(template: str, function: str, count: int) -> str:
    text = template.replace(
        _HOLE + _PASSED,
        f"{function} ({count} items): passed against their baselines across "
        "the same changes",
        1,
    )
    text = text.replace(
        "record the new baseline with:", "record the new baselines with:"
    )
    shown = shlex.quote(function)
    text = text.replace(f"'{_HOLE}'", shown).replace(_HOLE, function)
    return text
