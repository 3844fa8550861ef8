"""Warm ``chunkeval eval`` (nothing changed since the last run): this tree against
an older one, side by side, on the bundled benchmark and its 10x / 100x copies.

Run (after ``benchmarks/scale_benchmark.py`` wrote the copies, and with an older
tree unpacked, e.g. ``git archive 0e82593 | tar -x -C /tmp/chunkeval-before``)::

    .venv/bin/python benchmarks/bench_warm.py --before /tmp/chunkeval-before \\
        --sets general distinct-10x verbatim-10x distinct-100x --rounds 5

Every run is ``chunkeval eval ... --chunker recursive:200:0 --store exact --k 5``
(the bundled benchmark with its default embedder, all-MiniLM-L6-v2; the copies
with ``--embedder hashing``) in a fresh process. Per set and tree, one cache
directory (``--cache-root``/SET/cache-TREE, kept between invocations: a set's
first, cold run can take minutes; one per tree, as the search-cache entries of
one version are not another's) is filled by a run of each tree first; then the
trees alternate for ``--rounds`` rounds. Reported per tree: the best and the median wall time, the
CPU time (user + system) of the best run, and the largest peak RSS (``wait4``),
with the load average before and after. Bytecode is cached (in a directory of
its own per tree, ``PYTHONPYCACHEPREFIX``), as in an installed package: a checkout
run with ``PYTHONDONTWRITEBYTECODE=1`` would compile every module on every run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
CLI = str(Path(sys.executable).with_name("chunkeval"))
ARGS = ["--chunker", "recursive:200:0", "--store", "exact", "--k", "5"]


def command(name: str, data: Path) -> list[str]:
    if name == "general":
        return [CLI, "eval", "--benchmark", "general", *ARGS]
    where = data / name
    if not where.is_dir():
        raise SystemExit(f"{where}: run benchmarks/scale_benchmark.py first")
    return [
        CLI,
        "eval",
        "--corpus",
        str(where / "corpora"),
        "--queries",
        str(where / "questions_df.csv"),
        "--embedder",
        "hashing",
        *ARGS,
    ]


def run(cmd: list[str], tree: Path, cache: Path, out: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    env["PYTHONPYCACHEPREFIX"] = str(cache.parent / f"pycache-{tree.name}")
    env["HF_HUB_OFFLINE"] = "1"
    full = [*cmd, "--cache-dir", str(cache), "--json", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(full, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(full)} failed ({tree})")
    [result] = json.loads(out.read_text(encoding="utf-8"))
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss / 1024,
        "recall": result["metrics"]["recall"]["mean"],
    }


def bench(name: str, args: argparse.Namespace, trees: list[Path]) -> None:
    cmd = command(name, args.data)
    root = args.cache_root / name
    root.mkdir(parents=True, exist_ok=True)
    out = root / "result.json"
    caches = {tree.name: root / f"cache-{tree.name}" for tree in trees}
    for tree in trees:  # fill the cache with what each tree stores
        first = run(cmd, tree, caches[tree.name], out)
        print(f"{name}: first run, {tree.name}: {first['wall']:.1f} s", flush=True)
    load = os.getloadavg()
    runs: dict[str, list[dict[str, Any]]] = {t.name: [] for t in trees}
    for _ in range(args.rounds):
        for tree in trees:
            runs[tree.name].append(run(cmd, tree, caches[tree.name], out))
    after = os.getloadavg()
    print(
        f"{name}: warm, {args.rounds} rounds alternating, load average "
        f"{load[0]:.1f} before, {after[0]:.1f} after"
    )
    best: dict[str, float] = {}
    for tree in trees:
        got = runs[tree.name]
        top = min(got, key=lambda r: r["wall"])
        best[tree.name] = top["wall"]
        recall = {round(r["recall"], 6) for r in got}
        print(
            f"  {tree.name}: best {top['wall']:.2f} s (CPU {top['cpu']:.2f} s), "
            f"median {statistics.median(r['wall'] for r in got):.2f} s, peak RSS "
            f"{max(r['rss'] for r in got):.0f} MiB, recall {sorted(recall)}"
        )
    if len(trees) == 2:
        new, old = (t.name for t in trees)
        print(f"  ratio {new} / {old}: {best[new] / best[old]:.2f} (best walls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/tmp/chunkeval-scaled"))
    parser.add_argument("--sets", nargs="+", default=["general", "distinct-10x"])
    parser.add_argument("--before", type=Path, help="an older source tree")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--cache-root", type=Path, default=Path("/tmp/chunkeval-bench-warm")
    )
    args = parser.parse_args()
    trees = [HERE] + ([args.before.resolve()] if args.before else [])
    for name in args.sets:
        bench(name, args, trees)


if __name__ == "__main__":
    main()
