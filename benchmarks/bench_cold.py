"""A cold ``chunkeval eval`` in CPU time, phase by phase, with its memory over
the data (docs/performance.md, "Search at the floor").

    .venv/bin/python benchmarks/bench_cold.py [--sets distinct-10x distinct-100x]
        [--rounds 2] [--data /tmp/chunkeval-scaled]

Each round runs ``chunkeval eval --embedder hashing --chunker recursive:200:0
--store exact --k 5`` on a set of ``benchmarks/scale_benchmark.py`` with an empty
cache directory, in a fresh process with one BLAS thread (``OPENBLAS_NUM_THREADS``
and friends set before numpy loads, and threadpoolctl). In that process the
result's phase timings (chunk, embed, index, search, score: ``engine/retrieve.py``
``timed``) read ``time.process_time`` instead of the wall clock, so they are CPU
seconds; the rest (loading, the unit map, the copies, printing) is the process's
CPU time less their sum. Memory: the peak RSS (``ru_maxrss``) less the RSS after
the imports (read from ``/proc/self/status`` just before the run), divided by
the data: the float32 vectors of the chunks and questions plus the corpus text
(UTF-8 bytes). The best round (least CPU time) is printed, and the round
with the least peak over the imports, with its parts.

``--count-encodes`` also counts tiktoken's encode calls and the characters they
encode (less the special tokens put between joined pieces), wrapping the
tokenizer's encoding in the child; ``--tree DIR`` runs another checkout's
package (a commit before a change); ``--before DIR`` runs that checkout and
this one (or ``--tree``'s) round by round, alternating, and prints both.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
ARGS = ["--embedder", "hashing", "--chunker", "recursive:200:0"]
ARGS += ["--store", "exact", "--k", "5"]
PHASES = ("chunk", "embed", "index", "search", "score")
ONE_THREAD = dict.fromkeys(
    ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"), "1"
)


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class _CountingEncoding:
    """A tiktoken encoding counting its encode calls and characters encoded."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.calls = self.chars = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _count(self, texts: list[str], allowed: Any = ()) -> None:
        specials = allowed if isinstance(allowed, (set, frozenset)) else ()
        self.calls += 1
        for text in texts:
            self.chars += len(text) - sum(len(s) * text.count(s) for s in specials)

    def encode_ordinary(self, text: str) -> Any:
        self._count([text])
        return self._inner.encode_ordinary(text)

    def encode_to_numpy(self, text: str, **kw: Any) -> Any:
        self._count([text], kw.get("allowed_special", ()))
        return self._inner.encode_to_numpy(text, **kw)

    def encode_ordinary_batch(self, texts: list[str], **kw: Any) -> Any:
        self._count(list(texts))
        return self._inner.encode_ordinary_batch(texts, **kw)


def child(argv: list[str], report: Path, count_encodes: bool = False) -> None:
    """Run the command in this process, phases timed in CPU seconds."""
    import resource
    import time
    import types

    from threadpoolctl import threadpool_limits

    import pytest_chunkeval.cli.main as cli
    import pytest_chunkeval.engine.evaluate  # noqa: F401  (the imports a run needs)
    from pytest_chunkeval.engine import retrieve

    retrieve.time = types.SimpleNamespace(perf_counter=time.process_time)  # type: ignore[assignment]
    counting = None
    if count_encodes:  # the run's one tokenizer (cl100k_base), loaded here
        from pytest_chunkeval.tokenizers.base import get_tokenizer

        tokenizer: Any = get_tokenizer()
        counting = tokenizer._loaded = _CountingEncoding(tokenizer.encoding)
    after_imports = _rss_mib()
    began = time.process_time()
    with threadpool_limits(1):
        code = cli.main(argv)
    spent = time.process_time() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    got = {"code": code, "cpu": spent, "imports": after_imports, "peak": peak}
    if counting is not None:
        got.update(encode_calls=counting.calls, encoded_chars=counting.chars)
    report.write_text(json.dumps(got))


def data_bytes(data: Path, result: dict[str, Any]) -> tuple[int, int]:
    """Float32 vectors of the chunks and questions, and the corpus text."""
    dim = int(str(result["config"]["embedder"]).rsplit(":", 1)[-1])
    questions = len(result["queries"])
    text = sum(
        len(p.read_text(encoding="utf-8").encode("utf-8"))
        for p in sorted((data / "corpora").rglob("*"))
        if p.is_file()
    )
    return 4 * dim * (int(result["chunks"]["count"]) + questions), text


def cold(
    data: Path, tmp: Path, round_: int, tree: Path = HERE, count: bool = False
) -> dict[str, Any]:
    out = tmp / f"{data.name}-{round_}.json"
    report = tmp / f"{data.name}-{round_}.report"
    argv = ["eval", "--corpus", str(data / "corpora")]
    argv += ["--queries", str(data / "questions_df.csv"), *ARGS]
    argv += ["--cache-dir", str(tmp / f"cache-{data.name}-{round_}")]
    argv += ["--json", str(out)]
    env = {**os.environ, **ONE_THREAD, "PYTHONPATH": str(tree)}
    code = [sys.executable, __file__, "--child", str(report)]
    code += ["--count-encodes"] * count + ["--", *argv]
    subprocess.run(code, env=env, stdout=subprocess.DEVNULL, check=True)
    got: dict[str, Any] = json.loads(report.read_text())
    if got["code"]:
        raise SystemExit(f"chunkeval {' '.join(argv)} exited with {got['code']}")
    [result] = json.loads(out.read_text(encoding="utf-8"))
    got["timings"] = {p: float(result["timings"].get(p, 0.0)) for p in PHASES}
    got["vectors"], got["text"] = data_bytes(data, result)
    got["data"] = got["vectors"] + got["text"]
    got["text_chars"] = sum(
        len(p.read_text(encoding="utf-8"))
        for p in sorted((data / "corpora").rglob("*"))
        if p.is_file()
    )
    got["recall"] = result["metrics"]["recall"]["mean"]
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/tmp/chunkeval-scaled"))
    parser.add_argument("--sets", nargs="+", default=["distinct-10x"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tree", type=Path, default=HERE)
    parser.add_argument("--before", type=Path, help="another tree, alternated")
    parser.add_argument("--count-encodes", action="store_true")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.child:
        child([a for a in rest if a != "--"], args.child, args.count_encodes)
        return
    trees = [args.tree.resolve()]
    if args.before is not None:  # alternated round by round, side by side
        trees.insert(0, args.before.resolve())
    for name in args.sets:
        data = args.data / name
        if not data.is_dir():
            raise SystemExit(f"{data}: run benchmarks/scale_benchmark.py first")
        runs: dict[Path, list[dict[str, Any]]] = {tree: [] for tree in trees}
        with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
            for i in range(args.rounds):
                for t, tree in enumerate(trees):
                    got = cold(data, Path(tmp), 2 * i + t, tree, args.count_encodes)
                    runs[tree].append(got)
        for tree, done in runs.items():
            if len(trees) > 1:
                print(f"{tree}:")
            report(name, args.rounds, done)


def report(name: str, rounds_asked: int, runs: list[dict[str, Any]]) -> None:
    """The best round's CPU time by phase, and the least peak over the imports
    with its parts (memory varies less than time, but it varies)."""
    best = min(runs, key=lambda r: r["cpu"])
    timings = best["timings"]
    phases = ", ".join(f"{p} {timings[p]:.1f}" for p in PHASES)
    rest = best["cpu"] - sum(timings.values())
    rounds = ", ".join(f"{r['cpu']:.1f}" for r in runs)
    print(
        f"{name} cold (best of {rounds_asked}, CPU s, one BLAS thread): total "
        f"{best['cpu']:.1f} ({phases}, rest {rest:.1f}); all rounds "
        f"{rounds}; recall {100 * best['recall']:.2f}"
    )
    least = min(runs, key=lambda r: r["peak"] - r["imports"])
    over = least["peak"] - least["imports"]
    overs = ", ".join(f"{r['peak'] - r['imports']:.0f}" for r in runs)
    print(
        f"  memory: peak RSS {least['peak']:.0f} MiB, {least['imports']:.0f} "
        f"after imports: {over:.0f} MiB over (all rounds {overs}), "
        f"{over * 2**20 / least['data']:.2f}x the data ({least['data'] / 2**20:.1f} "
        f"MiB: float32 vectors {least['vectors'] / 2**20:.1f}, corpus text "
        f"{least['text'] / 2**20:.1f})"
    )
    if "encode_calls" in best:
        print(
            f"  tiktoken: {best['encode_calls']:,} encode calls, "
            f"{best['encoded_chars']:,} characters encoded (corpus: "
            f"{best['text_chars']:,} characters)"
        )


if __name__ == "__main__":
    main()
