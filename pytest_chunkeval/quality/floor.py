"""The BM25 floor: the share of questions that plain lexical search already answers.

Each question is searched with the ``bm25`` store over ``recursive:200:0`` chunks;
the floor is the share of questions (with excerpts) whose recall is above 0 at
``k = 1`` and at ``k = 5``, i.e. whose retrieved chunks share at least one
character with an excerpt (measured in the ``char`` unit, where that is exactly
recall > 0, and no tokenizer runs). A set on which BM25 finds nearly every question at
rank 1 cannot show what a better embedder or chunker buys. Without the ``bm25``
extra the floor is not measured and says how to get it.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet

CHUNKER = "recursive:200:0"
STORE = "bm25"
DEPTHS = (1, 5)
MISSING = "the BM25 floor needs bm25s: pip install 'pytest-chunkeval[bm25]'"


def bm25_available() -> bool:
    """Whether the ``bm25`` store can run here."""
    return importlib.util.find_spec("bm25s") is not None


def bm25_floor(
    corpus: Corpus, queries: QuerySet, *, cache: Any = None
) -> dict[str, Any]:
    """Per depth of :data:`DEPTHS`, the share of questions with excerpts whose
    recall is above 0 (``{"unavailable": reason}`` without ``bm25s``)."""
    if not bm25_available():
        return {"unavailable": MISSING}
    from pytest_chunkeval.chunkers import get_chunker
    from pytest_chunkeval.engine.chunking import Chunking
    from pytest_chunkeval.engine.evaluate import evaluate

    asked = QuerySet([q for q in queries if q.excerpts], queries.metadata)
    if not len(asked):
        return {"unavailable": "no question has excerpts"}
    chunking = Chunking(get_chunker(CHUNKER), corpus)
    shares: dict[str, float] = {}
    for k in DEPTHS:
        result = evaluate(
            CHUNKER,
            corpus,
            asked,
            store=STORE,
            k=k,
            unit="char",
            cache=cache,
            chunking=chunking,
        )
        recall = result.values("recall")
        shares[str(k)] = float(np.mean(recall > 0))
    return {
        "chunker": CHUNKER,
        "store": STORE,
        "questions": len(asked),
        "found": shares,
    }
