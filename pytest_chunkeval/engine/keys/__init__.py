"""Every cache key, built in this package and only here (docs/performance.md,
"What a cache keys on"): from the evaluation spec (``config/evaluation.py``),
the components' identities read when the key is built (never remembered from
construction; ``identities.py``), the texts' digests and the version of the code
that computes the cached value.

- The lower caches (``lower.py``: each document's token bounds and chunks, the
  copies of the excerpts' texts, a store's search rows) key on the package
  version and their own format number (``formats.py``, :class:`CacheFormat`).
  ``tests/test_cache_formats.py`` recomputes each algorithm's output on a small
  fixed input and compares its digest with the one stored beside the number:
  an algorithm whose output changes fails that test until its number is raised.
- The result cache (``result.py``) keys on the package's source
  (:func:`code_identity`), the result's schema and configuration, the corpus
  and questions, and what determines each result setting of the spec
  (:data:`RESULT_PARTS`; the key audit, ``tests/test_key_audit.py``, changes
  each alone).
- The session's memos (``memos.py``, for ``run/evaluations.py``) key on the
  spec and on :func:`memo_key`.

``tests/test_layout.py`` checks that no module outside this package builds a
key (``entry_key``, or a hash of anything but content).
"""

from __future__ import annotations

from pytest_chunkeval.engine.keys.formats import (
    CHUNKINGS,
    COPIES,
    FORMATS,
    RESULTS_FORMAT,
    SEARCH,
    TOKENS,
    CacheFormat,
    package_version,
)
from pytest_chunkeval.engine.keys.identities import (
    chunker_identity,
    code_identity,
    embedder_identity,
    store_identity,
    texts_digest,
)
from pytest_chunkeval.engine.keys.lower import (
    chunking_key,
    collection_key,
    copies_key,
    graph_key,
    rerank_key,
    text_search_key,
    token_key,
    vector_search_key,
)
from pytest_chunkeval.engine.keys.memos import (
    evaluation_memo,
    memo_key,
    relationships_memo,
    score_memo,
    setup_key,
)
from pytest_chunkeval.engine.keys.result import (
    RESULT_PARTS,
    Chunking,
    EvaluationSetup,
    result_key,
)

__all__ = [
    "CHUNKINGS",
    "COPIES",
    "FORMATS",
    "RESULTS_FORMAT",
    "RESULT_PARTS",
    "SEARCH",
    "TOKENS",
    "CacheFormat",
    "Chunking",
    "EvaluationSetup",
    "chunker_identity",
    "chunking_key",
    "code_identity",
    "collection_key",
    "copies_key",
    "embedder_identity",
    "evaluation_memo",
    "graph_key",
    "memo_key",
    "package_version",
    "relationships_memo",
    "rerank_key",
    "result_key",
    "score_memo",
    "setup_key",
    "store_identity",
    "text_search_key",
    "texts_digest",
    "token_key",
    "vector_search_key",
]
