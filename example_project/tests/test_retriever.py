"""The whole retriever, as the app runs it: our chunking, MiniLM vectors in
Chroma, top 4 with duplicate boilerplate removed.

``chunkeval.score`` calls the retriever with every question and scores what comes
back; the ``Chunk`` objects carry ``doc_id``/``start``/``end``, so their spans are
used as they are (returning plain texts would work too: they are located in the
corpus).
"""

from __future__ import annotations

import pytest
from pytest_chunkeval import assert_recall_at_least
from pytest_chunkeval.assertions import assert_precision_at_least


@pytest.mark.chunkeval(min_recall=0.95, min_iou=0.08)
def test_retriever(chunkeval, retriever):
    result = chunkeval.score(retriever, label="handbook_rag retriever")
    assert_precision_at_least(result, 0.08)
    # The worst tenth of the questions must still get most of their excerpt.
    assert_recall_at_least(result, 0.90, statistic="p10")


def test_retriever_never_repeats_a_passage(retriever, chunkeval_queries):
    for query in chunkeval_queries:
        texts = [p.text for p in retriever.retrieve(query.text)]
        assert len(texts) == len(set(texts)), query.text
