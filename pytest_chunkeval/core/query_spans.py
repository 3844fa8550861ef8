"""Character spans grouped by query: the excerpts or the retrieved chunks of many
queries as columns of arrays."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.core.units import UnitMap


def ints(values: Any) -> IntArray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


@dataclass(frozen=True)
class QuerySpans:
    """Character spans grouped by query: row ``i`` is a span of query ``query[i]``.

    Rows of one query keep their order (the rank order for retrieved chunks).
    """

    query: IntArray
    doc: IntArray
    start: IntArray
    end: IntArray

    @classmethod
    def from_lists(
        cls, per_query: Sequence[Sequence[tuple[str, int, int]]], units: UnitMap
    ) -> QuerySpans:
        """From one list of ``(doc_id, start, end)`` per query."""
        sizes = [len(spans) for spans in per_query]
        flat = [span for spans in per_query for span in spans]
        query = np.repeat(np.arange(len(per_query), dtype=np.int64), sizes)
        doc = units.doc_indices([s[0] for s in flat])
        start = ints([s[1] for s in flat])
        end = ints([s[2] for s in flat])
        return cls(query, doc, start, end)

    def to_lists(
        self, doc_ids: Sequence[str], n_queries: int
    ) -> list[list[tuple[str, int, int]]]:
        """Per query, its spans as ``(doc_id, start, end)`` in their order: the
        inverse of :meth:`from_lists`."""
        out: list[list[tuple[str, int, int]]] = [[] for _ in range(n_queries)]
        for q, d, s, e in zip(
            self.query.tolist(),
            self.doc.tolist(),
            self.start.tolist(),
            self.end.tolist(),
            strict=True,
        ):
            out[q].append((doc_ids[d], s, e))
        return out

    def __len__(self) -> int:
        return int(self.query.size)

    def rank(self) -> IntArray:
        """0-based position of each row within its query."""
        if self.query.size == 0:
            return np.empty(0, dtype=np.int64)
        first = np.r_[True, self.query[1:] != self.query[:-1]]
        starts = np.flatnonzero(first)
        run = np.repeat(starts, np.diff(np.r_[starts, self.query.size]))
        return np.arange(self.query.size, dtype=np.int64) - run


def columns(spans: QuerySpans) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    return spans.query, spans.doc, spans.start, spans.end
