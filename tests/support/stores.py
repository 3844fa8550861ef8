"""Shared checks of the engine-backed stores (docs/stores.md): the bundled
benchmark chunked and embedded once with the hashing embedder, and what an
exact configuration of an engine must return."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

from pytest_chunkeval.chunkers import get_chunker
from pytest_chunkeval.chunkers.base import chunk_texts
from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.data.corpus import Corpus, Document
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.stores import get_store
from pytest_chunkeval.stores._candidates import fetch_depth, rerank
from pytest_chunkeval.stores.exact import ExactIndex

K = 5


@functools.cache
def benchmark_vectors() -> tuple[np.ndarray, np.ndarray]:
    """Chunk vectors (``recursive:200:0``) and query vectors of the bundled
    benchmark, with every chunk present twice (rows ``i`` and ``n + i``): every
    chunk ties with its copy."""
    corpus, queries = load_benchmark()
    chunker = get_chunker("recursive:200:0")
    texts = [t for d in corpus for t in chunk_texts(chunker, d.text)]
    emb = HashingEmbedder()
    chunks = emb.embed(texts)
    return np.vstack([chunks, chunks]), emb.embed([q.text for q in queries])


def plugin_order(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Exact search's rows re-ranked by the plugin's scorer and tie rule: what
    any exact configuration of an engine must return."""
    deep = ExactIndex(vectors).search(queries, fetch_depth(k, len(vectors)) + 8)
    return rerank(queries, vectors, deep)[:, :k]


def check_exact_configuration(index: Any, questions: int | None = None) -> None:
    """``index`` (built on :func:`benchmark_vectors`) returns the plugin's exact
    order, which is the exact store's rows, equal cosines included (the first
    ``questions`` only, if given)."""
    vectors, queries = benchmark_vectors()
    queries = queries[:questions]
    got = index.search(queries, K)
    np.testing.assert_array_equal(got, plugin_order(vectors, queries, K))
    exact = get_store("exact").index("k", vectors).search(queries, K)  # type: ignore[union-attr]
    np.testing.assert_array_equal(got, exact)
    # a chunk's copy (row + n) ranks after it: ties by the lower row
    n = len(vectors) // 2
    assert (got[:, 1] == got[:, 0] + n).mean() > 0.9
    for row in got.tolist():
        assert all(row.index(r) < row.index(r + n) for r in row if r + n in row)


def copied_corpus() -> tuple[Corpus, Any]:
    """The bundled benchmark with every document present twice (ties)."""
    corpus, queries = load_benchmark()
    docs = [Document(d.id, d.text) for d in corpus]
    docs += [Document(f"copy-{d.id}", d.text) for d in corpus]
    return Corpus(docs), queries


def per_question(store: Any, cache: Path, *, copies: bool = False) -> list[Any]:
    """Each question's retrieved spans and metrics, k=5, hashing embedder."""
    corpus, queries = copied_corpus() if copies else load_benchmark()
    result = evaluate(
        "recursive:200:0",
        corpus,
        queries,
        embedder="hashing",
        store=store,
        k=K,
        cache=cache,
    )
    return [
        (
            r.id,
            r.retrieved,
            r.scores["recall"],
            r.scores["precision"],
            r.scores["iou"],
            r.scores["mrr"],
        )
        for r in result.queries
    ]


def check_rebuild(store: Any) -> None:
    """An approximate store's index built again under a seed (docs/baselines.md,
    "Repeats") answers in the same rows (ids mapped back from the new order),
    close to the first build; an exact configuration's rebuild is identical."""
    from pytest_chunkeval.stores._base import is_approximate, rebuilt

    vectors, queries = benchmark_vectors()
    vectors, queries = vectors[:600], queries[:60]
    index = store.index("k", vectors)
    first = index.search(queries, K)
    again = rebuilt(store, index, 7).search(queries, K)
    exact = ExactIndex(vectors).search(queries, K)
    if is_approximate(store):
        assert (again[:, 0] == exact[:, 0]).mean() > 0.5
    else:
        np.testing.assert_array_equal(again, first)


class ShuffledStore:
    """An "approximate" store: exact search without its best row."""

    name = "test-shuffled"

    def index(self, key: str, vectors: np.ndarray) -> ShuffledIndex:
        return ShuffledIndex(vectors)


class ShuffledIndex:
    def __init__(self, vectors: np.ndarray) -> None:
        self.exact = ExactIndex(vectors)

    def search(self, queries: np.ndarray, k: int) -> np.ndarray:
        hits = self.exact.search(queries, k + 1)
        return hits[:, 1:]
