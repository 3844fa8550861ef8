"""Lexical and hybrid retrieval on the bundled general benchmark.

    .venv/bin/python benchmarks/bench_retrieval.py
    .venv/bin/python benchmarks/bench_retrieval.py --chunker recursive:200:0 \\
        --chunker recursive:400:0 --k 5 --k 10

Prints, measured side by side in one run:
- BM25 indexing + search of every chunk for the 472 questions (tokenization
  included, best of 3), beside exact dense search of the same chunks (vectors given);
- recall, IoU and precision of dense (``exact``, all-MiniLM-L6-v2), ``bm25`` and
  ``hybrid`` per chunker and k, and the gain of bm25 and hybrid over dense in points,
  with each hybrid leg's recall at k and at n.

Dense runs need the chunk vectors: the first run of a chunker embeds them (minutes on
CPU) into CHUNKEVAL_CACHE_DIR; later runs read them. Hybrid reuses them (no second
embedding pass: the script checks that the cache saw no miss).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

STORES = ("exact", "bm25", "hybrid")
EXTRA_STORES = ("bm25?stem=english", "hybrid?weights=1,2")


def bm25_timing(chunker: str) -> None:
    from pytest_chunkeval.chunkers import get_chunker
    from pytest_chunkeval.data.benchmarks import load_benchmark
    from pytest_chunkeval.engine.chunking import Chunking
    from pytest_chunkeval.stores import BM25Store, ExactStore

    corpus, queries = load_benchmark("general")
    texts = Chunking(get_chunker(chunker), corpus).texts()
    questions = [q.text for q in queries]
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((len(texts), 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    qvectors = rng.standard_normal((len(questions), 384)).astype(np.float32)
    qvectors /= np.linalg.norm(qvectors, axis=1, keepdims=True)

    def bm25() -> None:
        BM25Store().index_texts(texts).search_texts(questions, 5)

    def dense() -> None:
        ExactStore().index("k", vectors).search(qvectors, 5)

    bm25()  # imports bm25s
    best = {"bm25": np.inf, "exact": np.inf}
    for _ in range(3):
        for name, fn in (("bm25", bm25), ("exact", dense)):
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    print(
        f"{chunker}: {len(texts)} chunks, {len(questions)} questions, k=5 "
        f"(best of 3)\n"
        f"  bm25 tokenize + index + search     {best['bm25']:.3f} s\n"
        f"  exact dense index + search         {best['exact']:.3f} s "
        f"(vectors given)\n"
        f"  ratio bm25 / exact                 {best['bm25'] / best['exact']:.1f}x"
    )


def recall_table(chunkers: list[str], ks: list[int], stores: list[str]) -> None:
    from pytest_chunkeval.data.benchmarks import load_benchmark
    from pytest_chunkeval.embedders.cache import EmbeddingCache, default_cache_dir
    from pytest_chunkeval.engine.evaluate import evaluate

    corpus, queries = load_benchmark("general")
    cache = EmbeddingCache(default_cache_dir())
    print(
        "| chunker | k | store | recall | IoU | precision | "
        "Δ recall vs dense | legs: recall@k (recall@n) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for chunker in chunkers:
        for k in ks:
            dense = None
            for store in stores:
                misses_before = cache.stats.misses
                result = evaluate(
                    chunker, corpus, queries, store=store, k=k, cache=cache
                )
                if store.startswith("hybrid") and cache.stats.misses != misses_before:
                    raise SystemExit(f"{store}: embedded again ({cache.stats})")
                recall = 100 * result.mean("recall")
                if store == "exact":
                    dense = recall
                gain = (
                    ""
                    if dense is None or store == "exact"
                    else f"{recall - dense:+.1f}"
                )
                legs = "; ".join(
                    f"{n} {100 * s.recall_at_k.mean:.1f} ({100 * s.recall.mean:.1f}@{s.depth})"
                    for n, s in result.stages.items()
                )
                print(
                    f"| {chunker} | {k} | {store} | {recall:.1f} | "
                    f"{100 * result.mean('iou'):.1f} | "
                    f"{100 * result.mean('precision'):.1f} | {gain} | {legs} |"
                )
    print(cache.stats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunker", action="append")
    parser.add_argument("--k", action="append", type=int)
    parser.add_argument(
        "--extra", action="store_true", help=f"also {', '.join(EXTRA_STORES)}"
    )
    parser.add_argument("--timing-only", action="store_true")
    args = parser.parse_args()
    chunkers = args.chunker or ["recursive:200:0"]
    bm25_timing(chunkers[0])
    if not args.timing_only:
        stores = list(STORES) + (list(EXTRA_STORES) if args.extra else [])
        recall_table(chunkers, args.k or [5, 10], stores)


if __name__ == "__main__":
    main()
