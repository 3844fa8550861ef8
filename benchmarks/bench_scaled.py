"""Cold ``chunkeval eval`` on the benchmark copied 10x / 100x: time per phase and
peak RSS, and exact search's ties, old rule against new, side by side.

Run (after ``benchmarks/scale_benchmark.py`` wrote the data):

    .venv/bin/python benchmarks/bench_scaled.py --sets verbatim-100x distinct-100x
    .venv/bin/python benchmarks/bench_scaled.py --ties-only --sets verbatim-100x
    .venv/bin/python benchmarks/bench_scaled.py --sets verbatim-100x \\
        --before /tmp/chunkeval-before   # also run an older tree (git archive)

1. Ties (skipped with ``--no-ties``): the hashing vectors of the set's chunks and a
   sample of its questions, searched by ``top_rows`` as it is and by the former
   rule (a full stable sort of every row with a tie at the k-th place), in one
   process, alternating; identical results checked. Then the peak memory of
   ``ExactIndex.search`` for the sample above the vectors it holds (tracemalloc,
   which sees numpy's allocations).
2. Cold runs: ``chunkeval eval --embedder hashing --chunker recursive:200:0
   --store exact --k 5`` in a fresh process with an empty cache, per tree (this
   one, and ``--before``), one after the other; wall time, the phases the result
   records (``timings``: chunk, embed, index, search, score; the rest is loading,
   tokenizing for the unit map and printing) and the process's peak RSS
   (``wait4``). A run still going after ``--timeout`` seconds is stopped and
   reported as not finished.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent.parent
CLI = str(Path(sys.executable).with_name("chunkeval"))
ARGS = ["--embedder", "hashing", "--chunker", "recursive:200:0"]
ARGS += ["--store", "exact", "--k", "5"]


def former_top_rows(neg: np.ndarray, k: int) -> np.ndarray:
    """``top_rows`` before the tie fix: a full stable sort of each tied row."""
    part = np.argpartition(neg, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(neg, part, axis=1)
    order = np.lexsort((part, vals), axis=1)
    top = np.take_along_axis(part, order, axis=1).astype(np.int64, copy=False)
    kth = np.take_along_axis(vals, order[:, -1:], axis=1)
    for r in np.flatnonzero(np.count_nonzero(neg <= kth, axis=1) > k):
        top[r] = np.argsort(neg[r], kind="stable")[:k]
    return top


def ties(data: Path, sample: int) -> None:
    from pytest_chunkeval.chunkers import get_chunker
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.embedders.registry import get_embedder
    from pytest_chunkeval.engine.chunking import Chunking
    from pytest_chunkeval.stores.exact import DEFAULT_BLOCK_BYTES, ExactIndex, top_rows

    corpus = Corpus.from_paths([data / "corpora"])
    queries = QuerySet.load(data / "questions_df.csv", corpus)
    texts = Chunking(get_chunker("recursive:200:0"), corpus).texts()
    embedder = get_embedder("hashing")
    vectors = embedder.embed(texts)
    picked = np.random.default_rng(0).choice(len(queries), sample, replace=False)
    qv = embedder.embed([queries[int(i)].text for i in picked])
    rows = max(1, DEFAULT_BLOCK_BYTES // (4 * len(texts)))
    spent = {"former": 0.0, "new": 0.0}
    tied = 0
    for lo in range(0, sample, rows):
        neg = -(qv[lo : lo + rows] @ vectors.T)
        kth = np.partition(neg, 4, axis=1)[:, 4:5]
        tied += int(np.count_nonzero(np.count_nonzero(neg <= kth, axis=1) > 5))
        results = {}
        for name, fn in (("former", former_top_rows), ("new", top_rows)):
            t0 = time.perf_counter()
            results[name] = fn(neg, 5)
            spent[name] += time.perf_counter() - t0
        if not np.array_equal(results["former"], results["new"]):
            raise SystemExit("former and new top_rows disagree")
    print(
        f"{data.name}: {len(texts):,} chunks ({len(set(texts)):,} distinct texts), "
        f"{sample} of {len(queries):,} questions, {tied} tied at the 5th place; "
        f"top_rows per question: former {1e3 * spent['former'] / sample:.2f} ms, "
        f"new {1e3 * spent['new'] / sample:.2f} ms "
        f"({spent['former'] / spent['new']:.1f}x); identical results"
    )
    index = ExactIndex(vectors)
    tracemalloc.start()
    index.search(qv, 5)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"exact search of {sample} questions: peak {peak / 2**20:.1f} MiB above the "
        f"{vectors.nbytes / 2**20:.0f} MiB of vectors ({vectors.shape[1]} dimensions)"
    )


def cold_run(data: Path, tree: Path, tmp: Path, timeout: float) -> dict[str, Any]:
    out = tmp / f"{tree.name}-{data.name}.json"
    cmd = [CLI, "eval", "--corpus", str(data / "corpora")]
    cmd += ["--queries", str(data / "questions_df.csv"), *ARGS]
    cmd += ["--cache-dir", str(tmp / f"cache-{tree.name}-{data.name}")]
    cmd += ["--json", str(out)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    # Stopped after ``timeout`` seconds: a run that would take hours is reported
    # as not finished, with its peak RSS so far.
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    got: dict[str, Any] = {
        "wall": time.perf_counter() - t0,
        "rss_mib": usage.ru_maxrss / 1024,
        "finished": proc.returncode == 0,
    }
    if proc.returncode == -signal.SIGKILL:
        return got
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} exited with {proc.returncode}")
    [result] = json.loads(out.read_text(encoding="utf-8"))
    got["timings"] = result["timings"]
    got["recall"] = result["metrics"]["recall"]["mean"]
    return got


def cold(data: Path, trees: list[Path], tmp: Path, timeout: float) -> None:
    for tree in trees:
        got = cold_run(data, tree, tmp, timeout)
        if not got["finished"]:
            print(
                f"{data.name} cold, {tree}: not finished after {got['wall']:.0f} s "
                f"(stopped), peak RSS {got['rss_mib']:.0f} MiB"
            )
            continue
        timings: dict[str, float] = got["timings"]
        phases = ", ".join(f"{k} {v:.1f}" for k, v in timings.items())
        rest = got["wall"] - sum(timings.values())
        print(
            f"{data.name} cold, {tree}: {got['wall']:.1f} s wall ({phases}, "
            f"rest {rest:.1f}) s, peak RSS {got['rss_mib']:.0f} MiB; "
            f"recall {100 * got['recall']:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/tmp/chunkeval-scaled"))
    parser.add_argument("--sets", nargs="+", default=["verbatim-100x"])
    parser.add_argument("--before", type=Path, help="an older source tree")
    parser.add_argument("--sample", type=int, default=400, help="questions (ties)")
    parser.add_argument("--ties-only", action="store_true")
    parser.add_argument(
        "--timeout", type=float, default=2400.0, help="seconds per cold run"
    )
    parser.add_argument("--no-ties", action="store_true")
    args = parser.parse_args()
    trees = [HERE] + ([args.before.resolve()] if args.before else [])
    with tempfile.TemporaryDirectory(prefix="bench-scaled-") as tmp:
        for name in args.sets:
            data = args.data / name
            if not data.is_dir():
                raise SystemExit(f"{data}: run benchmarks/scale_benchmark.py first")
            if not args.no_ties:
                ties(data, args.sample)
            if not args.ties_only:
                cold(data, trees, Path(tmp), args.timeout)


if __name__ == "__main__":
    main()
