"""JSON text for large results, written fast.

``json.dumps(..., indent=1)`` runs the pure-Python encoder (CPython's C encoder
does not indent): on a 47,200-question result that alone took seconds.
:func:`outline_json` indents only the outer levels (one key or list item per
line, as ``indent=1`` does) and writes each value below them on one line with
the C encoder: the same JSON value, one question per line.
"""

from __future__ import annotations

import json
from typing import Any


def outline_json(value: Any, *, depth: int = 3, ensure_ascii: bool = True) -> str:
    """``value`` as JSON text, containers indented by one space down to
    ``depth`` levels, every value below written on one line."""
    parts: list[str] = []
    _write(value, depth, 0, ensure_ascii, parts)
    return "".join(parts)


def _write(
    value: Any, depth: int, level: int, ensure_ascii: bool, parts: list[str]
) -> None:
    if level >= depth or not isinstance(value, (dict, list, tuple)) or not value:
        parts.append(json.dumps(value, ensure_ascii=ensure_ascii))
        return
    inner = "\n" + " " * (level + 1)
    if isinstance(value, dict):
        parts.append("{")
        for i, (key, item) in enumerate(value.items()):
            parts.append(("," if i else "") + inner)
            name = key if isinstance(key, str) else json.dumps(key)  # as json does
            parts.append(json.dumps(name, ensure_ascii=ensure_ascii) + ": ")
            _write(item, depth, level + 1, ensure_ascii, parts)
        parts.append("\n" + " " * level + "}")
        return
    parts.append("[")
    for i, item in enumerate(value):
        parts.append(("," if i else "") + inner)
        _write(item, depth, level + 1, ensure_ascii, parts)
    parts.append("\n" + " " * level + "]")
