"""Which file each baseline check of a test uses (:class:`BaselineNames`):
``<test>.json`` for its first unnamed check, ``<test>.2.json``... for the next
ones, ``<test>.<name>.json`` for ``check_baseline(..., name=...)``. Names are
checked: an empty name is refused, and so is one whose file is already another
check's of the same test (``name="2"`` beside two unnamed checks), since the
second would overwrite the first's baseline."""

from __future__ import annotations

from pathlib import Path

from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.gate.files.paths import BaselineLayout, NodeRef


class BaselineNames:
    """One session's numbering and claims of baseline files, per test."""

    def __init__(self, layout: BaselineLayout) -> None:
        self.layout = layout
        self._counts: dict[str, int] = {}
        self._claims: dict[str, dict[Path, str]] = {}

    def begin(self, nodeid: str) -> None:
        """Start (or restart, e.g. on a rerun) a test's numbering and claims."""
        self._counts.pop(nodeid, None)
        self._claims.pop(nodeid, None)

    def suffix(self, test: NodeRef, name: object = None) -> str | None:
        """The file suffix of the test's next check (None: its unnamed first
        file), claimed for that check. A ``ConfigError`` for an empty or
        non-string ``name``, or one whose file another check of the test uses."""
        if name is None:
            count = self._counts[test.nodeid] = self._counts.get(test.nodeid, 0) + 1
            suffix = None if count == 1 else str(count)
            which = (
                "its first unnamed check_baseline()"
                if count == 1
                else f"its unnamed check_baseline() number {count}"
            )
        elif not isinstance(name, str) or not name.strip():
            raise ConfigError(
                f"{test.nodeid}: check_baseline(name={name!r}): a baseline name "
                "must be a non-empty string (leave name= out for the test's "
                "unnamed baselines: <test>.json, <test>.2.json...)"
            )
        else:
            suffix, which = name, f"check_baseline(name={name!r})"
        path = self.layout.path(test.path, test.name, suffix)
        claims = self._claims.setdefault(test.nodeid, {})
        other = claims.get(path)
        if other is not None:
            raise ConfigError(
                f"{test.nodeid}: {which} and {other} would both use the baseline "
                f"file {path.name}, one overwriting the other: give "
                f"{'it' if name is not None else 'the named one'} another name="
            )
        claims[path] = which
        return suffix
