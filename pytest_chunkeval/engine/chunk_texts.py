"""The chunks' texts as a sequence read from their documents: a chunk's text is
sliced when it is read, so a cold run does not hold a second copy of the
corpus in chunk strings (18 MiB at the benchmark copied 10 times;
docs/performance.md, "Memory")."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from pytest_chunkeval.core.spans import IntArray


class ChunkTexts(Sequence[str]):
    """Chunk ``i``'s text: ``documents[doc[i]][bounds[i, 0]:bounds[i, 1]]``."""

    def __init__(
        self, documents: Sequence[str], doc: IntArray, bounds: IntArray
    ) -> None:
        self._documents = list(documents)  # the corpus' own strings, not copies
        self._doc = doc
        self._bounds = bounds

    def __len__(self) -> int:
        return int(self._doc.size)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        start, end = self._bounds[index].tolist()
        return self._documents[int(self._doc[index])][start:end]

    def __iter__(self) -> Iterator[str]:
        documents = self._documents
        columns = zip(
            self._doc.tolist(),
            self._bounds[:, 0].tolist(),
            self._bounds[:, 1].tolist(),
            strict=True,
        )
        for d, start, end in columns:
            yield documents[d][start:end]
