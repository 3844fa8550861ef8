"""The paired regression gate's figures (issue 5), measured side by side in one run.

Run: .venv/bin/python benchmarks/bench_gate.py [--pairs N] [--reps N] [--quick]
     .venv/bin/python benchmarks/bench_gate.py --noise [--runs a=300,b=20,c=20]
     .venv/bin/python benchmarks/bench_gate.py --epsilon

``--noise``: the default gate's noise table, ``--epsilon``: the float drift bound
of the decisive margins (both in benchmarks/gate_noise.py, docs/baselines.md). The
rows below measure the ``paired`` mode (the gate before mode ``changes``).

1. False alarms. Two runs of recursive:200:0, k=5 on the bundled benchmark (472
   queries) that differ only by noise: each run adds its own small Gaussian
   perturbation to every embedding (hashing embedder, exact cosine search), which
   reorders near-ties in retrieval. The baseline of one run is checked against the
   other with the default gate (paired bootstrap, 95%, zero tolerance on recall,
   precision, IoU). Side by side: a gate on the means alone (any drop fails), and the
   paired gate without the simultaneous (Bonferroni) adjustment.
2. Power. The current run also has a real drop: k lowered (5 -> 4, 5 -> 3), or the
   relevant chunks removed from the retrieved list of a random fraction of queries
   (scored with ``score``). Reported: the share of runs the gate fails, and the mean
   recall drop in points; the smallest drop it catches is the first row at >= 80%.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pytest_chunkeval.chunkers import get_chunker
from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.base import Embedder, l2_normalize
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.gate.baseline import Baseline
from pytest_chunkeval.gate.compare import bootstrap_intervals, compare
from pytest_chunkeval.gate.tolerances import GateSettings
from pytest_chunkeval.stores import get_store

CHUNKER = "recursive:200:0"
GATED = ("recall", "precision", "iou")
ZERO = "recall:0, precision:0, iou:0"
"""The rows below measure the paired mode with a zero tolerance, as they did
before mode ``changes`` became the default (docs/baselines.md)."""


class MemoChunker:
    """The spec's chunker, chunking each document once for the whole benchmark."""

    def __init__(self, spec: str) -> None:
        self.inner = get_chunker(spec)
        self.name = spec
        self._memo: dict[str, Any] = {}

    def chunk_spans(self, text: str) -> Any:
        if text not in self._memo:
            self._memo[text] = self.inner.chunk_spans(text)
        return self._memo[text]


class NoisyEmbedder:
    """Hashing vectors plus N(0, sigma^2) noise per component, seeded per run."""

    def __init__(self, base: dict[str, np.ndarray], sigma: float, seed: int) -> None:
        self.base, self.sigma, self.seed = base, sigma, seed
        self.identity = f"noisy-hashing:{sigma}:{seed}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.stack([self.base[t] for t in texts])
        rng = np.random.default_rng(self.seed)
        return vectors + self.sigma * rng.standard_normal(vectors.shape)


class NoCache(EmbeddingCache):
    """Every run's vectors are new: keep them out of the on-disk cache."""

    def embed(
        self, embedder: Embedder, texts: Sequence[str], *, progress: bool | None = None
    ) -> Any:
        return l2_normalize(embedder.embed(list(texts)))


class Runner:
    def __init__(self, tmp: Path) -> None:
        self.corpus, self.queries = load_benchmark("general")
        self.chunker = MemoChunker(CHUNKER)
        self.store = get_store("exact")  # an object: no on-disk search cache either
        self.cache = NoCache(tmp)
        chunk_texts = [
            doc.text[s:e]
            for doc in self.corpus
            for s, e in self.chunker.chunk_spans(doc.text).tolist()
        ]
        texts = list(dict.fromkeys(chunk_texts + [q.text for q in self.queries]))
        vectors = HashingEmbedder().embed(texts)
        self.base = dict(zip(texts, vectors, strict=True))

    def run(self, sigma: float, seed: int, k: int = 5) -> EvalResult:
        return evaluate(
            self.chunker,
            self.corpus,
            self.queries,
            embedder=NoisyEmbedder(self.base, sigma, seed),
            store=self.store,
            k=k,
            cache=self.cache,
            progress=False,
        )


def drop_relevant(
    result: EvalResult, corpus: Corpus, queries: QuerySet, fraction: float, seed: int
) -> EvalResult:
    """``result``'s retrieval with the excerpt-overlapping chunks removed for a
    random ``fraction`` of the queries that retrieved something relevant."""
    rng = np.random.default_rng(seed)
    hit = [i for i, q in enumerate(result.queries) if q.recall > 0]
    chosen = set(
        rng.choice(
            hit, size=round(fraction * len(result.queries)), replace=False
        ).tolist()
    )
    retrieved = {}
    for i, q in enumerate(result.queries):
        spans = list(q.retrieved)
        if i in chosen:
            spans = [s for s in spans if not any(_overlaps(s, e) for e in q.excerpts)]
        retrieved[q.id] = spans
    return score(retrieved, corpus, queries, label=CHUNKER)


def _overlaps(a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def _rate(hits: int, total: int) -> str:
    p = hits / total
    half = 1.96 * (p * (1 - p) / total) ** 0.5
    return f"{100 * p:5.1f}% (±{100 * half:.1f})"


def false_alarms(runner: Runner, sigma: float, pairs: int) -> None:
    settings = GateSettings.from_options(ZERO, "paired")
    level_unadjusted = settings.confidence
    gate_fail = mean_fail = unadjusted_fail = 0
    changed, recall_deltas = [], []
    t0 = time.perf_counter()
    for p in range(pairs):
        before = runner.run(sigma, seed=2 * p)
        after = runner.run(sigma, seed=2 * p + 1)
        baseline = Baseline.from_result(before, "bench")
        report = compare(baseline, after, settings)
        gate_fail += not report.passed
        means = GateSettings.from_options(ZERO, "mean")
        mean_fail += not compare(baseline, after, means).passed
        deltas = np.array(
            [
                [
                    round(a.metric(m), 4) - (baseline.queries[a.id][m] or 0.0)
                    for m in GATED
                ]
                for a in after.queries
            ]
        )
        _, high = bootstrap_intervals(deltas, level_unadjusted, seed=settings.seed)
        unadjusted_fail += bool((high < 0).any())
        changed.append(report.checks[0].changed)
        recall_deltas.append(report.checks[0].delta)
    spent = time.perf_counter() - t0
    print(
        f"noise sigma={sigma}: {pairs} pairs of runs ({spent:.0f} s); per pair "
        f"{np.mean(changed):.1f} of {len(before.queries)} queries change recall, "
        f"mean recall delta spread (std) {100 * np.std(recall_deltas):.2f} points"
    )
    print(
        f"  false alarms, paired gate (95% simultaneous, tolerance 0):"
        f"{_rate(gate_fail, pairs)}"
    )
    print(
        f"  false alarms, paired gate without the Bonferroni step:  "
        f"{_rate(unadjusted_fail, pairs)}"
    )
    print(
        f"  false alarms, gate on means (any drop fails):           "
        f"{_rate(mean_fail, pairs)}"
    )


def power(runner: Runner, sigma: float, reps: int, fractions: Sequence[float]) -> None:
    settings = GateSettings.from_options(ZERO, "paired")
    print(
        f"power (noise sigma={sigma} on both sides too; {reps} runs per row; "
        "'caught' = the paired gate fails):"
    )
    print(f"  {'real drop':<44} {'recall drop':>12} {'caught':>16}")
    rows: list[tuple[str, Any]] = [(f"k 5 -> {k}", k) for k in (4, 3)]
    rows += [
        (f"relevant chunks removed, {100 * f:g}% of queries", f) for f in fractions
    ]
    for label, what in rows:
        caught, drops = 0, []
        for r in range(reps):
            before = runner.run(sigma, seed=10_000 + 2 * r)
            if isinstance(what, int):
                after = runner.run(sigma, seed=10_001 + 2 * r, k=what)
            else:
                noisy = runner.run(sigma, seed=10_001 + 2 * r)
                after = drop_relevant(noisy, runner.corpus, runner.queries, what, r)
            report = compare(Baseline.from_result(before, "bench"), after, settings)
            caught += not report.passed
            drops.append(before.mean("recall") - after.mean("recall"))
        print(f"  {label:<44} {100 * np.mean(drops):9.2f} pt {_rate(caught, reps):>16}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="20 pairs, 10 reps")
    parser.add_argument(
        "--noise",
        action="store_true",
        help="the noise table of the default gate (benchmarks/gate_noise.py)",
    )
    parser.add_argument("--runs", type=str, default="a=300,b=20,c=20")
    parser.add_argument(
        "--epsilon", action="store_true", help="the float drift behind EPSILON"
    )
    args = parser.parse_args()
    if args.noise or args.epsilon:
        from gate_noise import float_drift, noise_table

        if args.epsilon:
            float_drift()
        if args.noise:
            runs = dict(part.split("=") for part in args.runs.split(","))
            noise_table({key: int(n) for key, n in runs.items()})
        return
    if args.quick:
        args.pairs, args.reps = 20, 10
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        runner = Runner(Path(tmp))
        first = runner.run(0.0, seed=0)
        print(
            f"bundled benchmark: {len(first.queries)} queries, {CHUNKER}, k=5, "
            f"hashing embedder + noise, exact search; recall "
            f"{100 * first.mean('recall'):.1f}% (setup {time.perf_counter() - t0:.1f} s)"
        )
        for sigma in (0.003, 0.01):
            false_alarms(runner, sigma, args.pairs)
        power(runner, 0.003, args.reps, (0.01, 0.02, 0.03, 0.05))


if __name__ == "__main__":
    main()
