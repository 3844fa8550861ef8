"""The unit vocabulary: what set sizes count (docs/concepts.md#units), beside the
metric names (``metric_names.py``). Standard library only: the option table checks
a unit at every pytest start-up."""

from __future__ import annotations

from typing import Literal

from pytest_chunkeval.errors import ConfigError

Unit = Literal["token", "char"]
DEFAULT_UNIT: Unit = "token"
UNITS: tuple[Unit, ...] = ("token", "char")


def check_unit(value: object) -> Unit:
    """``"token"`` or ``"char"``; else a :class:`ConfigError`."""
    text = str(value).strip()
    if text == "token":
        return "token"
    if text == "char":
        return "char"
    raise ConfigError(
        "unit must be 'token' (tokens of the tokenizer, the default) or 'char' "
        f"(characters, as the reference implementation), got {value!r}"
    )
