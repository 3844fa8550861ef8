"""Name -> factory registries behind spec strings such as ``recursive:200:0``.

Built-in chunkers, embedders and stores register here; the pytest hooks
``pytest_chunkeval_register_*`` add more (see ``hookspecs.py``). The core never
needs pluggy: a registry is a plain mapping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

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
        name, _, rest = spec.strip().partition(":")
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
