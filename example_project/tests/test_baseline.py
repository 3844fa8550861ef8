"""Retrieval compared with the last accepted run.

Thresholds say how good retrieval must be; a baseline says how good it *was*. Each
check compares this run, query by query, with the numbers committed under
``tests/__chunkeval__/test_baseline/`` and fails when recall, precision or IoU
dropped by more than noise (a paired bootstrap over the 36 questions). After an
intended change, re-record them and commit the JSON files with the change::

    pytest --chunkeval-update
"""

from __future__ import annotations

import pytest


def test_retriever_baseline(chunkeval, retriever):
    result = chunkeval.score(retriever, label="handbook_rag retriever")
    chunkeval.check_baseline(result)


# baseline=True: every result the test produced is checked after the test body.
@pytest.mark.chunkeval(baseline=True)
def test_chunker_baseline(chunkeval, chunkeval_chunker):
    chunkeval.evaluate()
