"""Near-duplicate questions: word 3-gram Jaccard similarity at or above 0.8.

A question's shingles are the 3-grams of its lower-cased words (stop words kept:
"the cost of" and "a cost of" differ); a question of one or two words is one
shingle, its words. Two questions are near duplicates when the Jaccard similarity
of their shingle sets is at least the threshold.

All pairs are found without comparing every pair (prefix filtering, as in the
AllPairs algorithm): shingles are ordered rarest first; two sets with Jaccard >= t
share at least ``ceil(t * |x|)`` shingles, so the first ``|x| - ceil(t * |x|) + 1``
shingles of each already share one. Only pairs that do are compared exactly, and
only when their sizes allow the threshold (``|x| >= t * |y|``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.quality.leakage import words

THRESHOLD = 0.8
_EPS = 1e-9  # t * n computed in floats: 0.8 * 5 may be 4.000000000000001


def shingles(text: str, n: int = 3) -> frozenset[tuple[str, ...]]:
    """The word ``n``-grams of ``text`` (its whole word tuple when shorter)."""
    tokens = words(text)
    if not tokens:
        return frozenset()
    if len(tokens) < n:
        return frozenset([tuple(tokens)])
    return frozenset(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def jaccard(a: frozenset[Any], b: frozenset[Any]) -> float:
    """``|a ∩ b| / |a ∪ b|`` (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def near_duplicate_pairs(
    texts: Sequence[str], threshold: float = THRESHOLD
) -> list[tuple[int, int, float]]:
    """Every pair ``(i, j, similarity)``, ``i < j``, whose shingle sets have a
    Jaccard similarity >= ``threshold`` (in (0, 1]), most similar first."""
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    sets = [shingles(t) for t in texts]
    frequency: Counter[tuple[str, ...]] = Counter()
    for s in sets:
        frequency.update(s)
    ids = {
        g: i for i, g in enumerate(sorted(frequency, key=lambda g: (frequency[g], g)))
    }
    ordered = [sorted(ids[g] for g in s) for s in sets]
    by_size = sorted(
        (i for i in range(len(sets)) if sets[i]), key=lambda i: len(sets[i])
    )
    index: dict[int, list[int]] = {}
    pairs: list[tuple[int, int, float]] = []
    for y in by_size:
        size = len(ordered[y])
        prefix = ordered[y][: size - math.ceil(threshold * size - _EPS) + 1]
        candidates: set[int] = set()
        for token in prefix:
            for x in index.get(token, ()):
                if len(ordered[x]) >= threshold * size - _EPS:
                    candidates.add(x)
        for x in candidates:
            similarity = jaccard(sets[x], sets[y])
            if similarity >= threshold - _EPS:
                pairs.append((min(x, y), max(x, y), similarity))
        for token in prefix:
            index.setdefault(token, []).append(y)
    pairs.sort(key=lambda p: (-p[2], p[0], p[1]))
    return pairs


def duplicates_report(
    queries: QuerySet, *, threshold: float = THRESHOLD, show: int = 10
) -> dict[str, Any]:
    """The near-duplicate pairs of a query set: how many, how many questions are in
    one, and the ``show`` most similar."""
    pairs = near_duplicate_pairs([q.text for q in queries], threshold)
    involved = {i for a, b, _ in pairs for i in (a, b)}
    return {
        "threshold": threshold,
        "pairs": len(pairs),
        "questions": len(involved),
        "most_similar": [
            {
                "a": queries[a].id,
                "b": queries[b].id,
                "similarity": similarity,
                "question_a": queries[a].text,
                "question_b": queries[b].text,
            }
            for a, b, similarity in pairs[:show]
        ],
    }
