"""Judge calibration on the bundled benchmark with the keyword judge of
docs/judged.md (a registered callable: no model, no cost).

    .venv/bin/python benchmarks/bench_calibration.py
    .venv/bin/python benchmarks/bench_calibration.py --embedder hashing --store exact

Prints ``format_calibration``: sentence precision, recall and Cohen's kappa of the
judge against the sentences that touch an excerpt, and the correlation of
``context_relevance`` with its ground-truth counterpart (recursive:200:0, k=5).
"""

from __future__ import annotations

import argparse
import time

import pytest_chunkeval as chunkeval
from pytest_chunkeval.quality.calibration import format_calibration


def keyword_judge(question: str, context: str) -> list[str]:
    """docs/judged.md's example judge, verbatim."""
    words = {w.lower().strip("?") for w in question.split() if len(w) > 3}
    return [s for s in context.split(". ") if words & set(s.lower().split())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", default="sentence-transformers:all-MiniLM-L6-v2")
    parser.add_argument("--store", default="exact")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--cache-dir", default=None)
    args = parser.parse_args()
    chunkeval.register_judge("keywords", keyword_judge, version="1")
    corpus, queries = chunkeval.load_benchmark("general")
    start = time.perf_counter()
    calibration = chunkeval.calibrate_judge(
        "keywords",
        corpus,
        queries,
        chunker="recursive:200:0",
        embedder=args.embedder,
        store=args.store,
        k=args.k,
        cache=args.cache_dir,
    )
    print(f"{args.embedder}, {args.store}, k={args.k}")
    print(format_calibration(calibration, show=5))
    print(f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
