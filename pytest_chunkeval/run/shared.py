"""Results shared by the items of a per-question test (run/per_question.py):
the first item that makes a ``chunkeval`` call evaluates it, the others replay it."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult

Signature = tuple[object, ...]


class SharedCalls:
    """One session's evaluations shared by the items of per-question tests:
    (test, call number) -> (the call's arguments, its result, its summary row)."""

    def __init__(self) -> None:
        self._results: dict[
            tuple[object, ...], tuple[Signature, EvalResult, str | None]
        ] = {}

    def get(
        self, group: tuple[object, ...], call: int, signature: Signature
    ) -> tuple[EvalResult, str | None] | None:
        """The result and summary row of the test's ``call``-th chunkeval call, if
        an earlier item made it with these arguments."""
        key = (*group, call)
        known = self._results.get(key)
        if known is None or known[0] != signature:
            return None  # the first item, or a body whose calls differ by item
        return known[1], known[2]

    def put(
        self,
        group: tuple[object, ...],
        call: int,
        signature: Signature,
        result: EvalResult,
        row: str | None,
    ) -> None:
        key = (*group, call)
        self._results[key] = (signature, result, row)


def component_signature(value: object) -> object:
    """What names one argument of a ``chunkeval`` call across the items of a
    test (docs/ci.md, "One test case per question"). Plain values (numbers,
    booleans, None, strings, tuples of them) are kept as they are: they decide
    the result (``k=5`` is not ``k=10``). A component with a cache identity (a
    built-in chunker, an extractor or chunker with a ``cache_version``) is named
    by it: what its caches key its output on. A function is named by its code (a
    lambda in the test body is a new object in every item, but the same code;
    two lambdas are two codes) and the plain values it closes over or defaults
    to, a ``functools.partial`` by its function and plain arguments, any other
    object by its class: other values a function closes over and what an object
    holds are not compared."""
    if _plain(value):
        return ("value", type(value).__name__, value)
    identity = getattr(value, "cache_identity", None)
    if isinstance(identity, str) and identity:
        return ("identity", type(value).__qualname__, identity)
    if isinstance(value, functools.partial):
        keywords = tuple(sorted(value.keywords.items()))
        if _plain(value.args) and _plain(tuple(v for _, v in keywords)):
            return ("partial", component_signature(value.func), value.args, keywords)
    code = getattr(value, "__code__", None)
    if code is not None:  # and the plain values it closes over or defaults to
        cells = [_contents(c) for c in getattr(value, "__closure__", None) or ()]
        held = (*cells, *(getattr(value, "__defaults__", None) or ()))
        plain = tuple(v if _plain(v) else type(v).__qualname__ for v in held)
        return ("function", getattr(value, "__module__", None), code, plain)
    name = getattr(value, "__qualname__", None) or type(value).__qualname__
    return ("object", getattr(value, "__module__", None), str(name))


def _contents(cell: object) -> object:
    try:
        return cell.cell_contents  # type: ignore[attr-defined]
    except ValueError:  # a name the function's scope has not bound yet
        return _EMPTY


_EMPTY = object()


def _plain(value: object) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    return isinstance(value, tuple) and all(_plain(v) for v in value)
