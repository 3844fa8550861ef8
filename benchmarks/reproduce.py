"""Reproduce the report's all-MiniLM-L6-v2 table on the bundled benchmark.

Run: .venv/bin/python benchmarks/reproduce.py [--out docs/reproduction-table.md]
     [--chunker SPEC ...] [--k 5 --k 10] [--unit char --unit token]

Every configuration is evaluated with the embedded defaults (Chroma in-process,
sentence-transformers all-MiniLM-L6-v2); embeddings are cached, so adding rows later
re-embeds nothing that was embedded before.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.embedders.cache import EmbeddingCache, default_cache_dir
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.reporting.table import mean_std, split_spec
from pytest_chunkeval.util.files import atomic_write_text

DEFAULT_CHUNKERS = [
    "recursive:250:125",
    "fixed:250:125",
    "recursive:250:0",
    "fixed:250:0",
    "recursive:200:0",
    "fixed:200:0",
]
COLUMNS = ("recall", "precision", "precision_omega", "iou")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunker", action="append")
    parser.add_argument("--k", action="append", type=int)
    parser.add_argument("--unit", action="append", choices=("char", "token"))
    parser.add_argument("--store", default="chroma")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    chunkers = args.chunker or DEFAULT_CHUNKERS
    ks = args.k or [5, 10]
    units = args.unit or ["char", "token"]

    corpus, queries = load_benchmark("general")
    cache = EmbeddingCache(default_cache_dir())
    lines = [
        "| Unit | Chunking | Size | Overlap | k | Recall | Precision | PrecisionΩ | IoU "
        "| Mean chunk |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    started = time.perf_counter()
    for unit in units:
        for chunker in chunkers:
            for k in ks:
                r = evaluate(
                    chunker,
                    corpus,
                    queries,
                    store=args.store,
                    k=k,
                    unit=unit,
                    cache=cache,
                )
                name, size, overlap = split_spec(chunker)
                cells = [
                    unit,
                    name,
                    size,
                    overlap,
                    str(k),
                    *(mean_std(r, m) for m in COLUMNS),
                    f"{r.chunks['mean_units']:.0f} {unit}s",
                ]
                lines.append("| " + " | ".join(cells) + " |")
                print(lines[-1], flush=True)
    elapsed = time.perf_counter() - started
    command = "python benchmarks/reproduce.py " + " ".join(sys.argv[1:])
    footer = [
        "",
        f"Command: `{command.strip()}`  ",
        f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, "
        f"Python {platform.python_version()}, CPU only; {elapsed:.0f} s "
        f"({cache.stats}).",
    ]
    text = "\n".join(lines + footer) + "\n"
    if args.out:
        atomic_write_text(args.out, text)
        print(f"wrote {args.out}")
    else:
        print(text)


if __name__ == "__main__":
    main()
