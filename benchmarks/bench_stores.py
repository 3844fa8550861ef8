"""Store costs side by side: chromadb import, client start, indexing, search.

    .venv/bin/python benchmarks/bench_stores.py [--n 10000] [--queries 500]

Run it as a fresh process: the chromadb import time is only meaningful once.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.agreement import Agreement, clustered_vectors

from pytest_chunkeval.stores import ChromaStore, ExactStore


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    vectors, queries = clustered_vectors(args.n, args.queries, dim=args.dim)
    key = "ab" * 32

    began = time.perf_counter()
    import chromadb  # noqa: F401

    import_s = time.perf_counter() - began
    store = ChromaStore()
    began = time.perf_counter()
    store.client  # noqa: B018 - connect now, to time it apart
    client_s = time.perf_counter() - began
    began = time.perf_counter()
    index = store.index(key, vectors)
    add_s = time.perf_counter() - began
    began = time.perf_counter()
    got = index.search(queries, args.k)
    chroma_search_s = time.perf_counter() - began
    began = time.perf_counter()
    store.index(key, vectors)
    reuse_s = time.perf_counter() - began

    exact = ExactStore().index(key, vectors)
    exact.search(queries[:10], args.k)  # warm up BLAS threads
    runs = []
    for _ in range(5):
        began = time.perf_counter()
        truth = exact.search(queries, args.k)
        runs.append(time.perf_counter() - began)
    exact_s = sorted(runs)[len(runs) // 2]

    n, q, d, k = args.n, args.queries, args.dim, args.k
    print(f"{n} vectors x {d} dims, {q} queries, k={k}")
    print(f"import chromadb                 {import_s * 1e3:8.1f} ms")
    print(f"ephemeral client                {client_s * 1e3:8.1f} ms")
    print(f"chroma index (add {n})       {add_s * 1e3:8.1f} ms")
    print(f"chroma reuse same key           {reuse_s * 1e3:8.1f} ms")
    print(f"chroma search                   {chroma_search_s * 1e3:8.1f} ms")
    print(f"exact search (median of 5)      {exact_s * 1e3:8.1f} ms")
    print(f"chroma vs exact: {Agreement.of(got, truth)}")


if __name__ == "__main__":
    main()
