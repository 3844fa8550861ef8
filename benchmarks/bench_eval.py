"""Evaluation engine figures (issue 3), measured side by side in one run.

Run: .venv/bin/python benchmarks/bench_eval.py [--quick]

1. Cold evaluation of recursive:200:0, k=5, on the bundled benchmark (empty embedding
   cache, model already loaded) versus the raw ``SentenceTransformer.encode`` of the
   same chunk and query texts: the model is the floor, the ratio shows our overhead.
2. Warm re-run as a fresh process (``chunkeval eval ...``), end to end.
3. Editing one corpus file re-embeds only that document's chunks (cache hits/misses).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_chunkeval.chunkers import get_chunker
from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.registry import get_embedder
from pytest_chunkeval.engine.chunking import Chunking
from pytest_chunkeval.engine.evaluate import evaluate

CHUNKER = "recursive:200:0"
CLI = str(Path(sys.executable).with_name("chunkeval"))


def cold_vs_raw(tmp: Path, rounds: int) -> None:
    corpus, queries = load_benchmark("general")
    embedder = get_embedder("sentence-transformers:all-MiniLM-L6-v2")
    t0 = time.perf_counter()
    model = embedder.model  # type: ignore[attr-defined]
    print(f"model load: {time.perf_counter() - t0:.1f} s (excluded from both sides)")
    texts = Chunking(get_chunker(CHUNKER), corpus).texts() + [q.text for q in queries]
    print(
        f"{len(texts)} texts ({len(texts) - len(queries)} chunks + {len(queries)} questions)"
    )
    raw_times, eval_times = [], []
    for r in range(rounds):
        t0 = time.perf_counter()
        model.encode(texts, batch_size=64, convert_to_numpy=True)
        raw_times.append(time.perf_counter() - t0)
        cache_dir = tmp / f"cold-{r}"
        t0 = time.perf_counter()
        result = evaluate(
            CHUNKER,
            corpus,
            queries,
            embedder=embedder,
            store="chroma",
            k=5,
            cache=EmbeddingCache(cache_dir),
            progress=False,
        )
        eval_times.append(time.perf_counter() - t0)
        phases = ", ".join(f"{k} {v:.2f}s" for k, v in result.timings.items())
        print(
            f"round {r + 1}: raw encode {raw_times[-1]:.2f} s | cold evaluate "
            f"{eval_times[-1]:.2f} s ({phases}) | ratio {eval_times[-1] / raw_times[-1]:.3f}"
        )
    print(
        f"cold evaluate / raw encode, best vs best: {min(eval_times) / min(raw_times):.3f}x"
    )


def run_cli(args: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run([CLI, *args], capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, out.stdout


def warm_rerun(tmp: Path) -> None:
    cache = tmp / "warm"
    args = [
        "eval",
        "--benchmark",
        "general",
        "--chunker",
        CHUNKER,
        "--cache-dir",
        str(cache),
    ]
    first, _ = run_cli(args)
    times = [run_cli(args)[0] for _ in range(3)]
    print(
        f"fresh-process CLI: first (cold) {first:.1f} s; warm re-runs "
        f"{', '.join(f'{t:.2f}' for t in times)} s (best {min(times):.2f} s)"
    )


def edit_one_file(tmp: Path) -> None:
    corpus, queries = load_benchmark("general")
    work = tmp / "edit"
    (work / "corpora").mkdir(parents=True)
    for doc in corpus:
        (work / "corpora" / doc.id).write_text(doc.text, encoding="utf-8", newline="")
    queries.save(work / "queries.jsonl")
    args = [
        "eval",
        "--corpus",
        str(work / "corpora"),
        "--queries",
        str(work / "queries.jsonl"),
        "--chunker",
        CHUNKER,
        "--cache-dir",
        str(tmp / "edit-cache"),
    ]
    _, out = run_cli(args)
    print("before edit:", out.strip().splitlines()[-1])
    target = work / "corpora" / "chatlogs.md"
    target.write_text(
        target.read_text(encoding="utf-8") + "\n\nOne more line.\n",
        encoding="utf-8",
        newline="",
    )
    _, out = run_cli(args)
    print("after editing chatlogs.md:", out.strip().splitlines()[-1])
    chunking = Chunking(get_chunker(CHUNKER), corpus)
    chat = corpus.ids.index("chatlogs.md")
    print(
        f"(chatlogs.md has {int((chunking.doc == chat).sum())} of {len(chunking)} chunks)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--skip-cold", action="store_true")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="chunkeval-bench-"))
    try:
        if not args.skip_cold:
            cold_vs_raw(tmp, args.rounds)
        warm_rerun(tmp)
        edit_one_file(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
