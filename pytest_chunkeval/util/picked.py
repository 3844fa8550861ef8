"""Some items of a sequence, read from it when asked (no list of them is made:
the embedding cache picks the distinct texts of chunks sliced from their
documents as they are read; docs/performance.md, "Memory")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class Picked(Sequence[T]):
    """``items[at[0]], items[at[1]], ...``"""

    def __init__(self, items: Sequence[T], at: Sequence[int]) -> None:
        self._items = items
        self._at = at

    def __len__(self) -> int:
        return len(self._at)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._items[i] for i in self._at[index]]
        return self._items[self._at[index]]
