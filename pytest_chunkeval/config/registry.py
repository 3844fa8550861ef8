"""Name -> factory registries behind spec strings such as ``recursive:200:0``.

Built-in chunkers, embedders and stores register here; the pytest hooks
``pytest_chunkeval_register_*`` add more (see ``hookspecs.py``). The core never
needs pluggy: a registry is a plain mapping.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar
from urllib.parse import parse_qsl

T = TypeVar("T")

Factory = Callable[[str], T]
"""A factory receives everything after ``name:`` (``""`` for a bare name)."""


class UnknownSpec(ValueError):
    """A spec string names nothing registered, or its arguments are wrong."""


class Registry(Generic[T]):
    """Factories by name, each documented by the spec forms it accepts."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, Factory[T]] = {}
        self._forms: dict[str, str] = {}

    def register(self, name: str, factory: Factory[T], form: str | None = None) -> None:
        """Register ``factory`` for specs ``name`` or ``name:ARGS``.

        ``form`` documents the accepted spec (``"recursive:SIZE:OVERLAP"``) and is
        listed in error messages. A later registration of a name replaces it.
        """
        self._factories[name] = factory
        self._forms[name] = form or name

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def forms(self) -> list[str]:
        """The documented spec forms, sorted."""
        return sorted(self._forms.values())

    def create(self, spec: str) -> T:
        """Build the object a spec string names, with a helpful error if it can't."""
        spec = spec.strip()
        name, _, rest = spec.partition(":")
        if "?" in name:  # "bm25?stem=english": options straight after the name
            name, _, query = spec.partition("?")
            rest = "?" + query
        factory = self._factories.get(name)
        if factory is None:
            raise UnknownSpec(
                f"unknown {self.kind} {spec!r}; valid forms: {', '.join(self.forms())}"
            )
        try:
            return factory(rest)
        except UnknownSpec:
            raise
        except (TypeError, ValueError) as exc:
            raise UnknownSpec(
                f"bad {self.kind} spec {spec!r} ({exc}); expected {self._forms[name]}"
            ) from exc


def parse_options(
    rest: str, allowed: dict[str, Callable[[str], Any]]
) -> tuple[str, dict[str, Any]]:
    """Split a spec's ``NAME?key=value&...`` and convert each value with
    ``allowed[key]``; an unknown key or a bad value is a ``ValueError``."""
    name, sep, query = rest.partition("?")
    options: dict[str, Any] = {}
    if sep:
        for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=True):
            if key not in allowed:
                raise ValueError(
                    f"unknown option {key!r}; valid: {', '.join(sorted(allowed))}"
                )
            try:
                options[key] = allowed[key](value)
            except ValueError as exc:
                raise ValueError(f"option {key}={value!r}: {exc}") from exc
    return name.strip(), options


def positive_int(value: str) -> int:
    """An integer >= 1 (a spec argument)."""
    number = int(value)
    if number < 1:
        raise ValueError("must be >= 1")
    return number


def non_negative_int(value: str) -> int:
    """An integer >= 0 (a spec argument)."""
    number = int(value)
    if number < 0:
        raise ValueError("must be >= 0")
    return number


def positive_float(value: str) -> float:
    """A finite number > 0 (a spec argument)."""
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise ValueError("must be a positive number")
    return number
