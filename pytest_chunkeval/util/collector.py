"""Python's cycle collector paused while ``chunkeval eval`` builds its objects.

A warm evaluation of 47,200 questions builds millions of small objects that live
until it returns (queries, excerpts, spans, records) and makes no reference cycles
of its own. Each full collection the allocations trigger scans every one of them:
18 of them took 30% of a warm 100x run's CPU time (3.2 of 10.8 s). They are
paused for the evaluation and resumed after (as they were: a caller that paused
them keeps them paused); whatever cycles it left are collected later as usual.
Only the command pauses them, in a process of its own: inside pytest, another
plugin's or pytester's objects are the process's too (a collection they count on
would come later).
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def collector_paused(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` run with the cycle collector paused (see the module doc)."""

    @functools.wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        was_on = gc.isenabled()
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            if was_on:
                gc.enable()

    return paused
