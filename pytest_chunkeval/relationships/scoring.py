"""Relationship matching and ``rel_recall`` / ``rel_precision``
(docs/relationships.md#the-method).

A retrieved relationship matches a gold one when their normalized subjects agree,
their normalized objects agree, and one evidence span of each overlap (same
document, a shared character). The predicate is not compared: extractors word the
same fact differently ("founded", "was founded by"), while the entities and the
evidence pin it down.

For one question with gold set ``G`` and retrieved list ``R``:

- ``rel_recall`` = gold relationships matched by some retrieved one / ``|G|``;
- ``rel_precision`` = retrieved relationships that match some gold one / ``|R|``
  (0 when nothing is retrieved).

Both are undefined (NaN: left out of means, never a zero) for a question without
gold relationships.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pytest_chunkeval.relationships.graph import Relationship, SpanTuple


def spans_overlap(a: Sequence[SpanTuple], b: Sequence[SpanTuple]) -> bool:
    """Whether some span of ``a`` and some span of ``b`` share a character."""
    return any(
        da == db and max(sa, sb) < min(ea, eb) for da, sa, ea in a for db, sb, eb in b
    )


def matches(retrieved: Relationship, gold: Relationship) -> bool:
    """Same normalized subject and object, overlapping evidence."""
    r, g = retrieved.key, gold.key
    return (
        r[0] == g[0]
        and r[2] == g[2]
        and spans_overlap(retrieved.evidence, gold.evidence)
    )


def match_matrix(
    retrieved: Sequence[Relationship], gold: Sequence[Relationship]
) -> tuple[list[bool], list[bool]]:
    """(retrieved item matches some gold, gold item matched by some retrieved)."""
    hit_r = [False] * len(retrieved)
    hit_g = [False] * len(gold)
    for i, r in enumerate(retrieved):
        for j, g in enumerate(gold):
            if matches(r, g):
                hit_r[i] = hit_g[j] = True
    return hit_r, hit_g


def relationship_scores(
    retrieved: Sequence[Relationship], gold: Sequence[Relationship]
) -> tuple[float, float]:
    """``(rel_recall, rel_precision)`` of one question (NaN, NaN without gold)."""
    if not gold:
        return math.nan, math.nan
    hit_r, hit_g = match_matrix(retrieved, gold)
    recall = sum(hit_g) / len(gold)
    precision = sum(hit_r) / len(retrieved) if retrieved else 0.0
    return recall, precision
