"""ClusterSemanticChunker's segmentation: banded prefix-sum DP vs the sub-matrix DP.

    .venv/bin/python benchmarks/bench_cluster.py [--embedder EMBEDDER_SPEC|hashing]
        [--cache-dir DIR] [--tokens 2000000] [--skip-long]

Part 1, the bundled corpora (embeddings given): every document of the ``general``
benchmark is split into <= 50-token pieces (``RecursiveTokenChunker(50, 0)``), the
pieces are embedded once (all-MiniLM-L6-v2 by default, through an embedding cache
under /tmp, so only the first run pays for the model), then for each group limit
(cluster 200, 250, 400: at most 4, 5, 8 pieces) both implementations segment every
document, side by side: ``cluster_segments`` (band + prefix sums, O(n·m)) and the
straightforward DP of ``tests/test_chunkers_cluster.py`` (full n × n matrix, one
sub-matrix sum per candidate, like the reference). The segmentations must be
identical. The literal reference (dp starting at 0, plain ``>``) is also compared.

Part 2, a synthetic document of ``--tokens`` tokens (the corpora concatenated until
long enough) goes through ``ClusterSemanticChunker(400).chunk_spans`` with the same
embedder and cache; the segmentation step's peak memory is traced (tracemalloc) and
compared with the band and with the n × n matrix the reference would build.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_chunkers_cluster import straightforward_segmentation

from pytest_chunkeval.chunkers.cluster import ClusterSemanticChunker, cluster_segments
from pytest_chunkeval.chunkers.recursive import RecursiveTokenChunker
from pytest_chunkeval.config.defaults import DEFAULT_EMBEDDER
from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.embedders.registry import get_embedder
from pytest_chunkeval.tokenizers.base import get_tokenizer

LIMITS = {200: 4, 250: 5, 400: 8}


def literal_reference(matrix: np.ndarray, max_group: int) -> np.ndarray:
    """The reference's ``_optimal_segmentation`` as published (dp from 0, ``>``)."""
    n = matrix.shape[0]
    mean = np.mean(matrix[np.triu_indices(n, k=1)])
    centred = matrix - mean
    np.fill_diagonal(centred, 0)
    dp = np.zeros(n)
    start = np.zeros(n, dtype=int)
    for i in range(n):
        for size in range(1, max_group + 1):
            if i - size + 1 >= 0:
                reward = np.sum(centred[i - size + 1 : i + 1, i - size + 1 : i + 1])
                if i - size >= 0:
                    reward += dp[i - size]
                if reward > dp[i]:
                    dp[i] = reward
                    start[i] = i - size + 1
    groups = []
    i = n - 1
    while i >= 0:
        groups.append((start[i], i + 1))
        i = start[i] - 1
    return np.array(groups[::-1], dtype=np.int64)


def straightforward(vectors: np.ndarray, max_group: int) -> np.ndarray:
    """What the reference does with given embeddings: n x n matrix, then the DP."""
    v = np.asarray(vectors, dtype=np.float64)
    matrix = v @ v.T
    n = matrix.shape[0]
    mean = float(np.mean(matrix[np.triu_indices(n, k=1)]))
    return straightforward_segmentation(matrix, mean, max_group)


def best_of(fn: Any, repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        began = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - began)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    parser.add_argument("--cache-dir", default="/tmp/chunkeval-bench-cache")
    parser.add_argument("--tokens", type=int, default=2_000_000)
    parser.add_argument("--skip-long", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    embedder = (
        HashingEmbedder(384)
        if args.embedder == "hashing"
        else get_embedder(args.embedder)
    )
    cache = EmbeddingCache(args.cache_dir)
    corpus, _ = load_benchmark("general")
    splitter = RecursiveTokenChunker(50, 0)

    began = time.perf_counter()
    docs = []
    for doc in corpus:
        pieces = splitter.chunk_spans(doc.text)
        texts = [doc.text[s:e] for s, e in pieces.tolist()]
        docs.append((doc.id, cache.embed(embedder, texts)))
    n_total = sum(v.shape[0] for _, v in docs)
    print(
        f"embedder {embedder.identity}: {n_total} pieces in {len(docs)} documents "
        f"({time.perf_counter() - began:.1f} s incl. splitting; {cache.stats})"
    )
    print()
    print(
        f"{'limit':>10} {'pieces':>7} {'banded s':>9} {'straight s':>11} "
        f"{'speed-up':>9} {'identical':>9} {'literal ref':>11}"
    )
    for max_tokens, m in LIMITS.items():
        fast_total = slow_total = 0.0
        identical = literal_same = 0
        for _, vectors in docs:
            fast_s, fast = best_of(lambda v=vectors, m=m: cluster_segments(v, m), 3)
            slow_s, slow = best_of(lambda v=vectors, m=m: straightforward(v, m), 1)
            fast_total += fast_s
            slow_total += slow_s
            identical += int(np.array_equal(fast, slow))
            v64 = np.asarray(vectors, dtype=np.float64)
            literal_same += int(np.array_equal(fast, literal_reference(v64 @ v64.T, m)))
        print(
            f"{f'cluster:{max_tokens}':>10} {n_total:>7} {fast_total:>9.3f} "
            f"{slow_total:>11.3f} {slow_total / fast_total:>8.1f}x "
            f"{f'{identical}/{len(docs)}':>9} {f'{literal_same}/{len(docs)}':>11}"
        )

    if args.skip_long:
        return
    print()
    tokenizer = get_tokenizer()
    parts: list[str] = []
    tokens = 0
    while tokens < args.tokens:
        for doc in corpus:
            parts.append(doc.text)
            tokens += tokenizer.count(doc.text)
            if tokens >= args.tokens:
                break
    text = "\n\n".join(parts)
    tokens = tokenizer.count(text)
    chunker = ClusterSemanticChunker(400, embedder=embedder, cache=cache)
    began = time.perf_counter()
    pieces = chunker.pieces(text)
    split_s = time.perf_counter() - began
    began = time.perf_counter()
    vectors = cache.embed(embedder, [text[s:e] for s, e in pieces.tolist()])
    embed_s = time.perf_counter() - began
    n = pieces.shape[0]
    began = time.perf_counter()
    groups = cluster_segments(vectors, chunker.max_group)
    segment_s = time.perf_counter() - began
    tracemalloc.start()
    cluster_segments(vectors, chunker.max_group)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    began = time.perf_counter()
    spans = chunker.chunk_spans(text)
    whole_s = time.perf_counter() - began
    assert spans.shape[0] == groups.shape[0]
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"synthetic document: {len(text):,} chars, {tokens:,} tokens, {n:,} pieces, "
        f"{groups.shape[0]:,} chunks"
    )
    print(
        f"  splitting {split_s:.1f} s, embedding {embed_s:.1f} s ({cache.stats}), "
        f"segmentation {segment_s:.2f} s; whole chunk_spans {whole_s:.1f} s"
    )
    print(
        f"  segmentation peak (tracemalloc, vectors given): {peak / 2**20:.1f} MiB; "
        f"band n x (m-1) float64: {n * (chunker.max_group - 1) * 8 / 2**20:.1f} MiB; "
        f"vectors: {vectors.nbytes / 2**20:.1f} MiB; an n x n float64 matrix: "
        f"{n * n * 8 / 2**30:.1f} GiB"
    )
    print(f"  process peak RSS (ru_maxrss): {rss_mb:.0f} MiB")


if __name__ == "__main__":
    main()
