"""The bundled benchmark at k = 5 and at a 1,000-token budget: presence, rank and
budget metrics and where recall is lost (docs/metrics-table.md).

Run: .venv/bin/python benchmarks/rank_table.py [--out docs/metrics-table.md]
     [--chunker SPEC ...] [--store exact]

Exact search (no approximation loss) over all-MiniLM-L6-v2 vectors, token unit;
embeddings are cached, so a re-run embeds nothing.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.embedders.cache import EmbeddingCache, default_cache_dir
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.reporting.table import split_spec
from pytest_chunkeval.util.files import atomic_write_text

DEFAULT_CHUNKERS = [
    "recursive:200:0",
    "recursive:400:0",
    "fixed:400:200",
    "cluster:200",
    "cluster:400",
]
SETTINGS = [{"k": 5}, {"k": 5, "budget": 1000}]
COLUMNS = ("recall", "complete", "mrr", "ndcg", "ceiling")


def pct(x: float) -> str:
    return f"{100 * x:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunker", action="append")
    parser.add_argument("--store", default="exact")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    corpus, queries = load_benchmark("general")
    cache = EmbeddingCache(default_cache_dir())
    lines = [
        "| Chunking | Size | Overlap | Retrieval | Recall | Complete | MRR | nDCG "
        "| Ceiling | Tokens sent | Chunking loss | Search loss |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    started = time.perf_counter()
    for chunker in args.chunker or DEFAULT_CHUNKERS:
        for setting in SETTINGS:
            r = evaluate(
                chunker, corpus, queries, store=args.store, cache=cache, **setting
            )
            name, size, overlap = split_spec(chunker)
            how = f"budget {setting['budget']}" if "budget" in setting else "k = 5"
            sent = sum(q.retrieved_units for q in r.queries) / len(r.queries)
            lines.append(
                f"| {name} | {size} | {overlap} | {how} | "
                + " | ".join(pct(r.mean(m)) for m in COLUMNS)
                + f" | {sent:.0f} | {pct(r.loss['chunking'].mean)}"
                f" | {pct(r.loss['search'].mean)} |"
            )
            print(lines[-1], flush=True)
    lines += [
        "",
        "Command: `python benchmarks/rank_table.py --out docs/metrics-table.md`  ",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, CPU "
        f"only; store {args.store}, all-MiniLM-L6-v2, token unit (cl100k_base); "
        f"{time.perf_counter() - started:.0f} s ({cache.stats}).",
    ]
    text = "\n".join(lines) + "\n"
    if args.out:
        atomic_write_text(args.out, text)
    print(text)


if __name__ == "__main__":
    main()
