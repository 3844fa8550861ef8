"""Spans: half-open character ranges ``text[start:end]`` of one document."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


class Span(NamedTuple):
    """A half-open character range ``[start, end)`` of document ``doc_id``."""

    doc_id: str
    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start


def as_bounds(pairs: Iterable[tuple[int, int]] | Sequence[Sequence[int]]) -> IntArray:
    """``(start, end)`` pairs as an ``(n, 2)`` int64 array (empty input allowed)."""
    arr = np.asarray(list(pairs) if not isinstance(pairs, np.ndarray) else pairs)
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    return arr.astype(np.int64, copy=False).reshape(-1, 2)
