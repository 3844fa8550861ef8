"""What the per-document caches (token bounds, chunkings, excerpt copies) save
once the result cache exists: their case is a run the result cache cannot
answer on the same chunks (another ``k``).

Run (after ``benchmarks/scale_benchmark.py`` wrote the copies)::

    .venv/bin/python benchmarks/bench_lower_caches.py --sets general distinct-10x \\
        --rounds 3

Per set, one cache directory (``--cache-root``/SET/cache, kept between
invocations) is filled by a run at ``--k 5``; then each round runs ``chunkeval
eval ... --k 6`` once per arm, in fresh processes, alternating:

- **all kept**: ``results/`` and ``search/`` removed first (the result and the
  search of another ``k`` are not stored), so the run reads the vectors, the
  token bounds, the chunkings and the copies, searches and scores;
- **no tokens**, **no chunkings**, **no copies**: one of ``tokens/``,
  ``chunkings/``, ``copies/`` removed as well (computed and stored again);
- **none kept**: all three removed.

The difference to "all kept" is what a cache saves on such a run. Per arm: the
best and the median wall time and the CPU time (user + system) of the best run,
with the load average before and after; the recall of every run must agree.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_warm import HERE, command, run

LOWER = ("tokens", "chunkings", "copies")
ABOVE = ("results", "search")


def with_k(cmd: list[str], k: int) -> list[str]:
    out = list(cmd)
    out[out.index("--k") + 1] = str(k)
    return out


def bench(name: str, args: argparse.Namespace) -> None:
    root = args.cache_root / name
    cache = root / "cache"  # kept between invocations: its vectors cost minutes
    root.mkdir(parents=True, exist_ok=True)
    out = root / "result.json"
    first = run(with_k(command(name, args.data), 5), HERE, cache, out)
    print(f"{name}: run at k=5 in {first['wall']:.1f} s", flush=True)
    cmd = with_k(command(name, args.data), 6)
    arms = {"all kept": ABOVE, "none kept": ABOVE + LOWER}
    arms.update({f"no {sub}": (*ABOVE, sub) for sub in LOWER})
    runs: dict[str, list[dict[str, float]]] = {arm: [] for arm in arms}
    load = os.getloadavg()
    for _ in range(args.rounds):
        for arm, removed in arms.items():
            for sub in removed:
                shutil.rmtree(cache / sub, ignore_errors=True)
            runs[arm].append(run(cmd, HERE, cache, out))
    after = os.getloadavg()
    print(
        f"{name}: k=6 on the k=5 cache, {args.rounds} rounds alternating, load "
        f"average {load[0]:.1f} before, {after[0]:.1f} after"
    )
    best = {}
    for arm, got in runs.items():
        top = min(got, key=lambda r: r["wall"])
        best[arm] = top["wall"]
        recall = sorted({round(r["recall"], 6) for r in got})
        print(
            f"  {arm}: best {top['wall']:.2f} s (CPU {top['cpu']:.2f} s), median "
            f"{statistics.median(r['wall'] for r in got):.2f} s, recall {recall}"
        )
    for arm in arms:
        if arm != "all kept":
            saved = best[arm] - best["all kept"]
            print(f"  {arm}: +{saved:.2f} s ({best[arm] / best['all kept']:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/tmp/chunkeval-scaled"))
    parser.add_argument("--sets", nargs="+", default=["general", "distinct-10x"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--cache-root", type=Path, default=Path("/tmp/chunkeval-bench-lower")
    )
    args = parser.parse_args()
    for name in args.sets:
        bench(name, args)


if __name__ == "__main__":
    main()
