"""Defaults and value checks shared by the engine, the plugin and the CLI.

Standard library only: the plugin reads its settings at every pytest start-up and
must not import numpy for that.
"""

from __future__ import annotations

from typing import Literal

from pytest_chunkeval.core.unit_names import DEFAULT_UNIT as DEFAULT_UNIT
from pytest_chunkeval.core.unit_names import UNITS as UNITS
from pytest_chunkeval.core.unit_names import Unit as Unit
from pytest_chunkeval.core.unit_names import check_unit as check_unit
from pytest_chunkeval.errors import ConfigError

K = int | Literal["min"]

CACHE_DIR_ENV = "CHUNKEVAL_CACHE_DIR"
DEFAULT_EMBEDDER = "sentence-transformers:all-MiniLM-L6-v2"
DEFAULT_STORE = "chroma"
DEFAULT_K: K = 5


def check_k(value: object) -> K:
    """A positive number of chunks per query, or ``"min"``; else ``ValueError``."""
    text = str(value).strip()
    if text == "min":
        return "min"
    if not isinstance(value, bool) and text.isdigit() and int(text) > 0:
        if isinstance(value, float) and not value.is_integer():
            raise ConfigError(f"k must be a whole number, got {value!r}")
        return int(text)
    raise ConfigError(
        "k must be a positive integer (chunks retrieved per query) or 'min' (as many "
        f"as the chunks overlapping each query's excerpts), got {value!r}"
    )


def check_budget(value: object) -> int | None:
    """A token budget: a positive whole number of units, or ``None`` (no budget)."""
    if value is None:
        return None
    text = value.strip() if isinstance(value, str) else None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if text is not None and text.isdigit() and int(text) > 0:
        return int(text)
    raise ConfigError(
        "budget must be a positive whole number of units (tokens, or characters with "
        f"unit='char') of retrieved context per query, got {value!r}"
    )


LOCATE_MODES = ("exact", "normalized")
"""How retrieved text is placed in the corpus (engine/placing.py): ``exact``
(verbatim, else with whitespace ignored) or ``normalized`` (also ignoring case,
punctuation and Unicode compatibility forms)."""


def check_locate(value: object) -> str:
    """``"exact"`` or ``"normalized"``; else :class:`ConfigError`."""
    text = str(value).strip().lower() if isinstance(value, str) else ""
    if text in LOCATE_MODES:
        return text
    raise ConfigError(
        "locate must be 'exact' (verbatim, else with whitespace ignored: the "
        "default) or 'normalized' (also ignoring case, punctuation and Unicode "
        f"compatibility forms), got {value!r}"
    )
