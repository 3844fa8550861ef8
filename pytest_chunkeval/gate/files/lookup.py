"""Where a test's baseline is (:class:`BaselineLookup`): its own file, the same
file under a name the test had before (:mod:`~pytest_chunkeval.gate.files.legacy`), or
the baseline of the parameter it replaced.

A replaced chunker: ``chunkeval_chunkers = recursive:200:0`` became
``recursive:400:50``, so ``test_x[recursive:200:0]`` became
``test_x[recursive:400:50]``, a test id without a baseline beside a baseline no
collected test owns. When exactly one baseline of the test function, differing
from the test id in that chunker only, matches no collected test (deselected
ones included) and exactly one of its tests has no baseline, that test is
compared with it: the change is a configuration change (``chunker:
recursive:200:0 -> recursive:400:50``), judged like any other. Otherwise nothing
is guessed, and the missing baseline's message says which baselines are unused
and why none was matched. A parameter of the test's own ``parametrize`` is not
a chunker of the list (it may name another data set): its new id has no
baseline. Nor is anything looked up in a test file the command line selected
by node id: its other tests were not collected.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from pytest_chunkeval.gate.files.legacy import (
    SpecAliases,
    legacy_baseline_paths,
    legacy_test_names,
    recorded_test,
)
from pytest_chunkeval.gate.files.paths import (
    BaselineLayout,
    NodeRef,
    legacy_sanitize_name,
    nodeid_name,
    owns,
    real,
    sanitize_name,
)

_PARAMETRIZED = re.compile(r"^(?P<function>[^\[]+)\[(?P<params>.*)\]$")


def function_of(name: str) -> str | None:
    """The test function of a parametrized test name (``test_x`` of
    ``test_x[recursive:200:0]``, ``TestA::test_x`` of ``TestA::test_x[a]``);
    None for a test that is not parametrized."""
    match = _PARAMETRIZED.match(name)
    return match.group("function") if match else None


@dataclass(frozen=True)
class Replaced:
    """What :meth:`BaselineLookup.replaced` found for a test without a baseline."""

    test: str | None = None
    """The test name whose baseline the test takes over; None: none."""
    why: str = ""
    """Why no baseline was taken over although some are unused ("" when none
    is, or one was taken)."""


class BaselineLookup:
    """Finds the baseline of a test, under one session's ``layout``, spelling
    ``aliases`` (legacy.py) and ``collected`` node ids (deselected included;
    the store's, filled as collection ends)."""

    def __init__(
        self,
        layout: BaselineLayout,
        aliases: SpecAliases,
        collected: Collection[str],
        *,
        chunkers: Collection[str] = (),
        partial: Collection[str] = (),
    ) -> None:
        self.layout = layout
        self.aliases = aliases
        self.collected = collected
        self.chunkers = chunkers
        """The test ids of ``chunkeval_chunkers`` (canonical specs)."""
        self.partial = partial
        """Test files selected by node id (collected in part)."""

    def names(self, test: str) -> list[str]:
        """The test's id and the ids it had before (see legacy.py)."""
        return [test, *legacy_test_names(test, self.aliases)]

    def former(self, test: NodeRef, suffix: str | None) -> Path | None:
        """The test's baseline under a former test id or file name (legacy.py),
        if one exists and records this test: a former file name may be another
        test's file (two ids could share one before)."""
        names = self.names(test.name)
        for path in legacy_baseline_paths(
            test.name,
            lambda old: self.layout.path(test.path, old, suffix),
            self.aliases,
            lambda old: self.layout.legacy_path(test.path, old, suffix),
        ):
            if path.is_file() and recorded_test(path) in names:
                return path
        return None

    def own(self, test: NodeRef) -> bool:
        """Whether the test has a baseline file of its own (any of its files,
        under its name or a former one)."""
        path = self.layout.path(test.path, test.name, None)
        if path.is_file():
            return True
        names = self.names(test.name)
        if path.parent.is_dir() and any(
            owns(n, f.stem) for f in path.parent.glob("*.json") for n in names
        ):
            return True
        return self.former(test, None) is not None

    def has_baseline(self, test: NodeRef) -> bool:
        """Whether the test has a baseline to compare against: its own, or the
        one of the parameter it replaced."""
        return self.own(test) or self.replaced(test).test is not None

    def replaced(self, test: NodeRef) -> Replaced:
        """For a test without a baseline of its own: the test whose baseline it
        takes over (the parameter it replaced), or why none was taken."""
        function = function_of(test.name)
        if (
            function is None
            or test.nodeid not in self.collected
            or real(test.path) in {real(Path(f)) for f in self.partial}
        ):
            return Replaced()
        around = _around_chunker(test.name, self.chunkers)
        if around is None:
            return Replaced()
        module = test.nodeid.partition("::")[0]
        siblings = [
            NodeRef(n, test.path)
            for n in self.collected
            if n.partition("::")[0] == module
            and function_of(nodeid_name(n)) == function
        ]
        owned = {name for s in siblings for name in self.names(s.name)}
        orphans = sorted(
            t
            for t, _ in self._baselines_of(test.path, function)
            if t not in owned and _same_around(t, around)
        )
        if not orphans:
            return Replaced()
        new = [s.name for s in siblings if not self.own(s)]
        if len(orphans) == 1 and new == [test.name]:
            return Replaced(orphans[0])
        return Replaced(why=_why(function, test.name, orphans, new))

    def _baselines_of(self, test_file: Path, function: str) -> list[tuple[str, Path]]:
        """The first (unnamed) baseline file of each test of ``function`` in
        the test file's folder, with the test name it records."""
        folder = self.layout.module_dir(test_file)
        if not folder.is_dir():
            return []
        found = []
        for path in sorted(folder.glob("*.json")):
            test = recorded_test(path)
            if test is None or function_of(test) != function:
                continue
            if path.stem in (sanitize_name(test), legacy_sanitize_name(test)):
                found.append((test, path))
        return found


def _around_chunker(name: str, chunkers: Collection[str]) -> tuple[str, str] | None:
    """What surrounds the ``chunkeval_chunkers`` spec in a test name: ``(
    "test_x[", "]")`` for ``test_x[recursive:200:0]``, ``("test_y[q-bark-", "]")``
    for ``test_y[q-bark-recursive:200:0]``; None when no spec of the list is a
    whole ``-``-separated part of its parameters."""
    match = _PARAMETRIZED.match(name)
    if match is None:
        return None
    head, ids = f"{match.group('function')}[", match.group("params")
    for spec in sorted(chunkers, key=len, reverse=True):
        for found in re.finditer(re.escape(spec), ids):
            start, end = found.span()
            if (start == 0 or ids[start - 1] == "-") and (
                end == len(ids) or ids[end] == "-"
            ):
                return head + ids[:start], ids[end:] + "]"
    return None


def _same_around(name: str, around: tuple[str, str]) -> bool:
    """Whether ``name`` differs from the test only where its chunker is."""
    head, tail = around
    return (
        name.startswith(head)
        and name.endswith(tail)
        and len(name) > len(head) + len(tail)
    )


def _why(function: str, test: str, orphans: list[str], new: list[str]) -> str:
    unused = ", ".join(orphans)
    if len(orphans) == 1 and test not in new:
        return ""  # that baseline is another new test's
    counts = (
        f"{len(orphans)} baselines of {function} match no collected test"
        if len(orphans) > 1
        else f"1 baseline of {function} matches no collected test"
    )
    if len(new) > 1:
        counts += f" and {len(new)} of its tests have none"
    return (
        f"unused baseline(s) of {function}: {unused}; none was compared with "
        f"{test}: {counts}, so which parameter replaced which is not known (a "
        "test is compared with the baseline of the parameter it replaced only "
        "when exactly one baseline is unused and one test is new)"
    )
