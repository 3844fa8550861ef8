"""``chunkeval inspect`` timings and the near-duplicate search against all pairs.

    .venv/bin/python benchmarks/bench_inspect.py
    .venv/bin/python benchmarks/bench_inspect.py --questions 10000

Measured in one run:
- the command ``chunkeval inspect --benchmark general`` as a fresh process, cold
  (an empty CHUNKEVAL_CACHE_DIR) then warm (the same cache), wall and CPU time
  (target: warm <= 2 s);
- ``near_duplicate_pairs`` (prefix filtering) on N synthetic questions (the
  bundled questions with words shuffled in and out, so that some are near
  duplicates), against a brute-force all-pairs comparison on the first 2,000 of
  them: both times, the ratio, and that the pairs found are the same.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

COMMAND = [
    sys.executable,
    "-m",
    "pytest_chunkeval.cli.main",
    "inspect",
    "--benchmark",
    "general",
]


def _run(env: dict[str, str]) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(COMMAND, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def _questions(n: int) -> list[str]:
    from pytest_chunkeval.data.benchmarks import load_benchmark

    _, queries = load_benchmark("general")
    base = [q.text for q in queries]
    rng = random.Random(0)
    vocab = sorted({w for t in base for w in t.split()})
    out = []
    while len(out) < n:
        words = rng.choice(base).split()
        for _ in range(rng.randint(0, 3)):  # a few edits: some stay near copies
            i = rng.randrange(len(words))
            words[i] = rng.choice(vocab)
        out.append(" ".join(words))
    return out


def _brute(texts: list[str]) -> set[tuple[int, int]]:
    from pytest_chunkeval.quality.duplicates import THRESHOLD, jaccard, shingles

    sets = [shingles(t) for t in texts]
    return {
        (i, j)
        for i, j in itertools.combinations(range(len(texts)), 2)
        if sets[i] and sets[j] and jaccard(sets[i], sets[j]) >= THRESHOLD - 1e-9
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CHUNKEVAL_CACHE_DIR": cache}
        cold = _run(env)
        warm = _run(env)
    print(
        f"chunkeval inspect --benchmark general: cold {cold[0]:.2f} s wall "
        f"({cold[1]:.2f} s CPU), warm {warm[0]:.2f} s wall ({warm[1]:.2f} s CPU)"
    )
    print(warm[2])

    from pytest_chunkeval.quality.duplicates import near_duplicate_pairs

    texts = _questions(args.questions)
    start = time.perf_counter()
    pairs = near_duplicate_pairs(texts)
    fast = time.perf_counter() - start
    sub = texts[:2000]
    start = time.perf_counter()
    reference = _brute(sub)
    brute = time.perf_counter() - start
    start = time.perf_counter()
    sub_pairs = {(a, b) for a, b, _ in near_duplicate_pairs(sub)}
    sub_fast = time.perf_counter() - start
    print(
        f"near duplicates on {len(texts)} questions: {fast:.2f} s, {len(pairs)} pairs"
    )
    print(
        f"on 2000: prefix filtering {sub_fast:.3f} s, all pairs {brute:.2f} s "
        f"(x{brute / sub_fast:.0f}); same pairs: {sub_pairs == reference} "
        f"({len(reference)})"
    )


if __name__ == "__main__":
    main()
