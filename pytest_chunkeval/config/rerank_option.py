"""The reranker setting (``chunkeval_rerank``, ``--chunkeval-rerank``, the
marker's ``rerank=``, ``chunkeval eval --rerank``): a cross-encoder re-scores each
store's top ``n`` and keeps ``k`` (docs/retrieval.md, "Adding a reranker").
Standard library only."""

from __future__ import annotations

from pytest_chunkeval.config.option import Option
from pytest_chunkeval.config.specs import spec_argument

RERANK_OPTION = Option(
    "rerank",
    "Re-score each store's top n with a cross-encoder and keep k: "
    "'cross-encoder:NAME_OR_PATH?n=20'.",
    spec_argument("reranker"),
    metavar="SPEC",
    default_text="no reranking",
)
