"""The pure functions that parse option values (ini keys, flags, marker keywords):
each raises :class:`~pytest_chunkeval.errors.ConfigError` with a message that
says what is allowed (the option table adapts it for argparse,
:func:`~pytest_chunkeval.config.option.argparse_type`). Names such as
``recursive:200:0`` are only checked for form here.

This module imports neither pytest nor numpy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pytest_chunkeval.config.defaults import K as K
from pytest_chunkeval.config.defaults import (
    check_budget,
    check_k,
    check_locate,
    check_unit,
)
from pytest_chunkeval.errors import ConfigError


def parse_k(value: str | int) -> K:
    """``5`` -> 5, ``"min"`` -> "min"; anything else is an error."""
    return check_k(value)


def parse_positive_int(value: str) -> int:
    """``3`` -> 3: a whole number >= 1 (a count of queries, attempts, results)."""
    return _whole_number(value, 1)


def parse_non_negative_int(value: str) -> int:
    """``0`` -> 0: a whole number >= 0 (a count, a seed, retries)."""
    return _whole_number(value, 0)


def _whole_number(text: str, minimum: int) -> int:
    try:
        number = int(text)
    except ValueError:
        number = minimum - 1
    if number < minimum:
        raise ConfigError(f"{text!r}: expected an integer >= {minimum}")
    return number


def parse_repeats(value: str) -> int:
    """``4`` -> 4: how many times a noisy component is measured (at least 2)."""
    try:
        return _whole_number(value, 2)
    except ConfigError:
        raise ConfigError(
            f"{value!r}: expected a whole number of repeats >= 2 (each question's "
            "value is the mean of that many measurements)"
        ) from None


def parse_budget(value: str | int) -> int:
    """``1000`` -> 1000: a positive whole number of units per query."""
    budget = check_budget(value)
    assert budget is not None
    return budget


def parse_unit(value: str) -> str:
    """``token`` or ``char``."""
    return check_unit(value)


def parse_locate(value: str) -> str:
    """``exact`` or ``normalized``."""
    return check_locate(value)


def parse_spec(value: str, kind: str = "component") -> str:
    """A spec string in the grammar of ``config/specs.py`` (whether its name exists
    is checked later, once the registries are loaded)."""
    from pytest_chunkeval.config.specs import spec_argument

    return spec_argument(kind)(value)


def parse_chunker_list(value: str | Sequence[str]) -> tuple[str, ...]:
    """Chunker specs separated by commas or whitespace, or given as a list.

    Duplicates are dropped (order kept): one test per distinct chunker."""
    items = [value] if isinstance(value, str) else list(value)
    specs: list[str] = []
    for item in items:
        for part in re.split(r"[,\s]+", item.strip()):
            if part:
                spec = parse_spec(part, "chunker")
                if spec not in specs:
                    specs.append(spec)
    return tuple(specs)


def parse_path(value: str) -> str:
    """A non-empty path (relative paths resolve against pytest's rootdir later)."""
    text = value.strip()
    if not text:
        raise ConfigError("expected a path, got an empty string")
    return text


def parse_name(value: str) -> str:
    """A bundled benchmark name such as ``general``."""
    text = value.strip()
    if not re.fullmatch(r"[\w.-]+", text):
        raise ConfigError(
            f"benchmark must be the name of a bundled benchmark such as 'general', "
            f"got {value!r}"
        )
    return text


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def parse_bool(value: str | bool) -> bool:
    """An ini switch: ``true``/``false`` (also ``1``/``0``, ``yes``/``no``)."""
    if isinstance(value, bool):
        return value
    text = value.strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ConfigError(f"expected true or false, got {value!r}")


# The gate's parsers live in config/tolerances.py (stdlib only); imported when a
# value is given, so that importing the plugin does not import them.


def parse_tolerance(value: str) -> str:
    """Per-metric tolerances such as ``recall:-1%, iou:-0.002`` (checked, kept as
    text: the gate parses it again where it is used)."""
    from pytest_chunkeval.config.tolerances import parse_tolerances

    parse_tolerances(value)
    return value.strip()


def parse_gate_mode(value: str) -> str:
    """``changes``, ``paired`` or ``mean``: see
    :func:`.config.tolerances.parse_gate_mode`."""
    from pytest_chunkeval.config.tolerances import parse_gate_mode as parse

    return parse(value)


def parse_max_left_out(value: str) -> float:
    """``10%`` or ``0.1``: see :func:`.config.tolerances.parse_share`."""
    from pytest_chunkeval.config.tolerances import parse_share

    return parse_share(value)


def parse_gate_by(value: str) -> str:
    """``set``, ``document``, ``tag`` or ``document, tag``: see
    :func:`.config.tolerances.parse_gate_by`."""
    from pytest_chunkeval.config.tolerances import parse_gate_by as parse

    return parse(value)


def parse_confidence(value: str) -> float:
    """``95%``, ``95`` or ``0.95`` -> 0.95."""
    from pytest_chunkeval.config.tolerances import parse_confidence as parse

    return parse(value)


def spec_parser(kind: str) -> Callable[[str], str]:
    """The option table's parser of a ``kind`` spec (named for its messages)."""

    def parse(value: str) -> str:
        return parse_spec(value, kind)

    parse.__name__ = f"parse_{kind}"
    parse.__doc__ = f"A {kind} spec string."
    return parse
