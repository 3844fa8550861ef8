"""JSON text for large results, written fast.

``json.dumps(..., indent=1)`` runs the pure-Python encoder (CPython's C encoder
does not indent): on a 47,200-question result that alone took seconds.
:func:`outline_json` indents only the outer levels (one key or list item per
line, as ``indent=1`` does) and writes each value below them on one line with
the C encoder: the same JSON value, one question per line.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from functools import partial
from typing import Any


def outline_json(value: Any, *, depth: int = 3, ensure_ascii: bool = True) -> str:
    """``value`` as JSON text, containers indented by one space down to
    ``depth`` levels, every value below written on one line."""
    parts: list[str] = []
    _write(value, depth, 0, _one_line(ensure_ascii), parts)
    return "".join(parts)


def _one_line(ensure_ascii: bool) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=...)``, with one C encoder made once
    (``json.dumps`` makes one per call: 200,000 chunk spans at 100x), or
    ``json.dumps`` itself where there is no C encoder."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return partial(json.dumps, ensure_ascii=ensure_ascii)
    text = (
        json.encoder.encode_basestring_ascii
        if ensure_ascii
        else json.encoder.encode_basestring
    )
    default = json.JSONEncoder().default
    encode = make({}, default, text, None, ": ", ", ", False, False, True)

    def one_line(value: Any) -> str:
        return "".join(encode(value, 0))

    return one_line


def _write(
    value: Any, depth: int, level: int, dumps: Callable[[Any], str], parts: list[str]
) -> None:
    if level >= depth or not isinstance(value, (dict, list, tuple)) or not value:
        parts.append(dumps(value))
        return
    inner = "\n" + " " * (level + 1)
    if isinstance(value, dict):
        parts.append("{")
        for i, (key, item) in enumerate(value.items()):
            parts.append(("," if i else "") + inner)
            name = key if isinstance(key, str) else json.dumps(key)  # as json does
            parts.append(dumps(name) + ": ")
            _write(item, depth, level + 1, dumps, parts)
        parts.append("\n" + " " * level + "}")
        return
    parts.append("[")
    for i, item in enumerate(value):
        parts.append(("," if i else "") + inner)
        _write(item, depth, level + 1, dumps, parts)
    parts.append("\n" + " " * level + "]")
