"""The reranker setting (``chunkeval_rerank``, ``--chunkeval-rerank``, the
marker's ``rerank=``, ``chunkeval eval --rerank``): a cross-encoder re-scores each
store's top ``n`` and keeps ``k`` (docs/retrieval.md, "Adding a reranker").
Standard library only."""

from __future__ import annotations

from pytest_chunkeval.config.option import MarkerValue, Option
from pytest_chunkeval.config.values import parse_spec


def parse_reranker(value: str) -> str:
    """A reranker spec string (its grammar checked; whether the model exists is
    checked when the session starts)."""
    return parse_spec(value, "reranker")


RERANK_OPTION = Option(
    "rerank",
    "Re-score each store's top n with a cross-encoder and keep k: "
    "'cross-encoder:NAME_OR_PATH?n=20'.",
    parse_reranker,
    metavar="SPEC",
    default_text="no reranking",
    marker=MarkerValue((str,), "a spec string naming the reranker"),
)
