"""Lexical leakage: how much of a question its excerpts already spell out.

A question's leakage is the share of its distinct content words (lower-cased word
tokens, :data:`~pytest_chunkeval.quality.stopwords.STOP_WORDS` left out) that occur
as words in its excerpts. A generated question that copies its excerpt's wording
scores near 1 and is easy for any lexical or embedding search; real users, who do
not know the document's words, ask questions nearer 0. A question with no content
word (all stop words) or no excerpt has no leakage (NaN, counted apart). See
``docs/query-quality.md``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from pytest_chunkeval.core.absent import present
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.quality._stats import distribution, histogram, shares_at_least
from pytest_chunkeval.quality.stopwords import STOP_WORDS

_WORD = re.compile(r"\w+")
EDGES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
"""Bins of the leakage histogram (the last one holds 0.8 to 1 inclusive)."""
THRESHOLDS = (0.5, 0.8, 1.0)


def words(text: str) -> list[str]:
    """The lower-cased word tokens of ``text`` (runs of Unicode word characters)."""
    return _WORD.findall(text.lower())


def content_words(text: str) -> set[str]:
    """The distinct words of ``text`` that are not stop words."""
    return {w for w in words(text) if w not in STOP_WORDS}


def leaked_words(question: str, excerpts: Iterable[str]) -> tuple[set[str], set[str]]:
    """(content words of ``question``, those found as words of ``excerpts``)."""
    asked = content_words(question)
    found: set[str] = set()
    for text in excerpts:
        found.update(words(text))
    return asked, asked & found


def leakage(question: str, excerpts: Iterable[str]) -> float:
    """Share of the question's content words found in its excerpts (NaN when it has
    no content word)."""
    asked, leaked = leaked_words(question, excerpts)
    return len(leaked) / len(asked) if asked else math.nan


def leakage_report(queries: QuerySet, *, show: int = 10) -> dict[str, Any]:
    """Per-question leakage of a query set: its distribution, a histogram over
    :data:`EDGES`, the shares at or above :data:`THRESHOLDS`, and the ``show``
    leakiest questions (ties in query order) with the words they leak."""
    values: list[float] = []
    leaked_by_query: list[list[str]] = []
    for q in queries:
        if not q.excerpts:
            values.append(math.nan)
            leaked_by_query.append([])
            continue
        asked, leaked = leaked_words(q.text, (e.text for e in q.excerpts))
        values.append(len(leaked) / len(asked) if asked else math.nan)
        leaked_by_query.append(sorted(leaked))
    arr = np.asarray(values, dtype=np.float64)
    measured = np.flatnonzero(np.isfinite(arr))
    order = sorted(measured.tolist(), key=lambda i: (-arr[i], i))[:show]
    return {
        "distribution": distribution(arr),
        "histogram": {"edges": list(EDGES), "counts": histogram(arr, EDGES)},
        "at_least": shares_at_least(arr, THRESHOLDS),
        "not_measured": int(len(arr) - measured.size),
        "leakiest": [
            {
                "id": queries[i].id,
                "question": queries[i].text,
                "leakage": float(arr[i]),
                "leaked": leaked_by_query[i],
            }
            for i in order
        ],
        "values": {q.id: present(v) for q, v in zip(queries, values, strict=True)},
    }
