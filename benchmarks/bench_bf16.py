"""bf16 embedding: a cold evaluation in bf16 against a bare fp32 encode, side by side.

    .venv/bin/python benchmarks/bench_bf16.py             # about 2 cold embeddings
    .venv/bin/python benchmarks/bench_bf16.py --rounds 2  # alternate the order

Measured in one run, each as a fresh process:
- A: the cold command ``chunkeval eval --benchmark general --chunker recursive:200:0
  --k 5 --embedder sentence-transformers:all-MiniLM-L6-v2?dtype=bfloat16`` (empty
  CHUNKEVAL_CACHE_DIR: chunking, embedding, Chroma, scoring, all included);
- B: a process that only loads all-MiniLM-L6-v2 and encodes the same (unique) texts
  in fp32 with sentence-transformers, batch size 64.

Prints A / B in wall time and in CPU time (target <= 0.45), then the same evaluation on B's fp32 vectors and each
mean metric's difference in points (target: all within 0.3), the cosine between bf16
and fp32 vectors, and how many questions keep the same top-5 chunk set.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CHUNKER = "recursive:200:0"
MINILM = "sentence-transformers:all-MiniLM-L6-v2"
BF16 = f"{MINILM}?dtype=bfloat16"

FP32_ONLY = """
import json, sys
import numpy as np
from sentence_transformers import SentenceTransformer
from pytest_chunkeval.util.model_files import resolve_model_path
texts = json.load(open(sys.argv[1], encoding="utf-8"))
model = SentenceTransformer(resolve_model_path("all-MiniLM-L6-v2"), device="cpu")
np.save(sys.argv[2], model.encode(texts, batch_size=64, convert_to_numpy=True))
"""


def unique_texts() -> tuple[list[str], list[int], list[int]]:
    """Chunk texts then questions, each once, as the embedding cache embeds them;
    and the rows of the chunks and of the questions in that list."""
    from pytest_chunkeval.chunkers import get_chunker
    from pytest_chunkeval.data.benchmarks import load_benchmark
    from pytest_chunkeval.engine.chunking import Chunking

    corpus, queries = load_benchmark("general")
    chunks = Chunking(get_chunker(CHUNKER), corpus).texts()
    questions = [q.text for q in queries]
    texts = list(dict.fromkeys(chunks + questions))
    row = {t: i for i, t in enumerate(texts)}
    return texts, sorted({row[t] for t in chunks}), [row[q] for q in questions]


def wall(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of a child process. On a shared
    machine the CPU time is the steadier of the two: contention stretches wall time
    far more than it changes the work done."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--a-first", action="store_true", help="start with A (default: B first)"
    )
    parser.add_argument(
        "--analyze", type=Path, metavar="WORK", help="only re-read a finished run"
    )
    args = parser.parse_args()

    from pytest_chunkeval.embedders.precision import cpu_has_native_bf16

    print(f"native bf16 on this CPU: {cpu_has_native_bf16()}")
    chunkeval = str(Path(sys.executable).parent / "chunkeval")
    work = args.analyze or Path(tempfile.mkdtemp(prefix="bench-bf16-"))
    texts, chunk_rows, question_rows = unique_texts()
    (work / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    print(f"{len(texts)} unique texts; work folder {work}")
    times: dict[str, list[float]] = {"A": [], "B": [], "A_cpu": [], "B_cpu": []}
    if args.analyze:
        times = json.loads((work / "times.json").read_text(encoding="utf-8"))
    for r in range(0 if args.analyze else args.rounds):
        order = ("B", "A") if (r + args.a_first) % 2 == 0 else ("A", "B")
        for which in order:
            env = dict(os.environ)
            if which == "A":
                env["CHUNKEVAL_CACHE_DIR"] = str(work / f"cache-{r}")
                cmd = [
                    chunkeval, "eval", "--benchmark", "general", "--chunker", CHUNKER,
                    "--k", "5", "--embedder", BF16, "--json", str(work / "bf16.json"),
                ]  # fmt: skip
            else:
                cmd = [
                    sys.executable, "-c", FP32_ONLY,
                    str(work / "texts.json"), str(work / "fp32.npy"),
                ]  # fmt: skip
            elapsed, cpu = wall(cmd, env)
            times[which].append(elapsed)
            times[f"{which}_cpu"].append(cpu)
            print(
                f"  round {r + 1} {which}: {elapsed:.1f} s wall, {cpu:.1f} s CPU",
                flush=True,
            )
            (work / "times.json").write_text(json.dumps(times), encoding="utf-8")
    a, b = min(times["A"]), min(times["B"])
    print(f"A cold bf16 eval {a:.1f} s; B fp32 load+encode {b:.1f} s; A/B {a / b:.2f}")
    if times.get("A_cpu") and times.get("B_cpu"):
        a, b = min(times["A_cpu"]), min(times["B_cpu"])
        print(f"CPU time: A {a:.1f} s; B {b:.1f} s; A/B {a / b:.2f}")

    fp32 = np.load(work / "fp32.npy").astype(np.float32)
    fp32 /= np.linalg.norm(fp32, axis=1, keepdims=True)
    row = {t: i for i, t in enumerate(texts)}
    metrics_against_fp32(work, fp32, row)
    vectors_against_fp32(work, fp32, texts, chunk_rows, question_rows)


def metrics_against_fp32(work: Path, fp32: np.ndarray, row: dict[str, int]) -> None:
    """Mean metrics on fp32 vectors against bf16 ones: with the default store
    (Chroma; bf16 from run A) and with exact search (bf16 from A's cache)."""
    from pytest_chunkeval.data.benchmarks import load_benchmark
    from pytest_chunkeval.engine.evaluate import evaluate
    from pytest_chunkeval.engine.results import EvalResult

    corpus, queries = load_benchmark("general")
    for store in ("chroma", "exact"):
        if store == "chroma":
            bf16 = EvalResult.from_json(
                json.loads((work / "bf16.json").read_text(encoding="utf-8"))[0]
            )
        else:
            bf16 = evaluate(
                CHUNKER, corpus, queries, embedder=BF16, store=store, k=5,
                cache=work / "cache-0",
            )  # fmt: skip
        result = evaluate(
            CHUNKER,
            corpus,
            queries,
            embedder=lambda batch: fp32[[row[t] for t in batch]],
            store=store,
            k=5,
            cache=work / "fp32-cache",
        )
        worst = 0.0
        print(f"store {store}:")
        for metric, stats in result.metrics.items():
            delta = 100 * (bf16.metrics[metric].mean - stats.mean)
            worst = max(worst, abs(delta))
            print(
                f"  {metric:<16} fp32 {100 * stats.mean:6.2f}  "
                f"bf16 {100 * bf16.metrics[metric].mean:6.2f}  Δ {delta:+.2f} pt"
            )
        print(f"  largest mean-metric difference: {worst:.2f} pt (target <= 0.3)")


def vectors_against_fp32(
    work: Path,
    fp32: np.ndarray,
    texts: list[str],
    chunk_rows: list[int],
    question_rows: list[int],
) -> None:
    from pytest_chunkeval.embedders.cache import EmbeddingCache
    from pytest_chunkeval.embedders.registry import get_embedder

    cache = EmbeddingCache(work / "cache-0")
    bf16 = cache.embed(get_embedder(BF16), texts, progress=False)
    assert cache.stats.misses == 0, "bf16 vectors should all be cached by run A"
    cosine = (fp32 * bf16).sum(axis=1)
    print(f"cosine bf16 vs fp32: min {cosine.min():.5f}, mean {cosine.mean():.6f}")

    def top5(v: np.ndarray) -> list[set[int]]:
        scores = v[question_rows] @ v[chunk_rows].T
        return [set(r) for r in np.argsort(-scores, axis=1)[:, :5].tolist()]

    same = sum(x == y for x, y in zip(top5(fp32), top5(bf16), strict=True))
    print(f"questions with the same top-5 chunk set: {same} of {len(question_rows)}")


if __name__ == "__main__":
    main()
