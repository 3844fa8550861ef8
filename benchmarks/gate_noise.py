"""The gate's noise table (docs/baselines.md, "Noise, measured"), run by
``benchmarks/bench_gate.py --noise``; and the float drift bound behind
``EPSILON``, run by ``benchmarks/bench_gate.py --epsilon``.

Three sets: the bundled benchmark (472 questions, hashing embedder: MiniLM would
take minutes per pass on two shared cores), the example project (36 questions,
all-MiniLM-L6-v2, vectors from the evaluation cache) and 19 of its questions
(seeded). recursive:200:0 chunks; k=5 on the benchmark, 4 on the example project.
Each run is compared with a baseline of the same pipeline by the default gate
(mode ``changes``, tolerance -1pp on recall, precision and IoU):

(a) exact search, every vector multiplied by ``1 + 1e-6 * N(0, 1)`` per
    component (float drift between machines), against the unperturbed run;
(b) Chroma (the plugin's in-process store, its default index) rebuilt with the
    chunks inserted in another seeded order, against the first order;
(c) the old model, N(0, 0.003^2) added to every component (what bench_gate.py's
    false-alarm rows assumed noise looks like), against the unperturbed run.

Per noise: runs where some question's ranked list changed (0 would mean the row
tested nothing), questions the gate classified lost (summed over the runs), and
runs whose verdict was ``regressed``. Then each set's minimum detectable effect.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.base import Embedder, l2_normalize
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.gate.comparison.compare import compare
from pytest_chunkeval.gate.comparison.report import GateReport
from pytest_chunkeval.gate.comparison.sampling import (
    detectable_points,
    detectable_questions,
)
from pytest_chunkeval.gate.files.baseline import Baseline
from pytest_chunkeval.stores.chroma import ChromaStore
from pytest_chunkeval.stores.exact import ExactStore

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "example_project"
CHUNKER = "recursive:200:0"
MINILM = "sentence-transformers:all-MiniLM-L6-v2"
GATED = 3  # recall, precision, IoU


@dataclass
class NoiseSet:
    """A corpus, its questions, and the base vectors of every text."""

    name: str
    corpus: Corpus
    queries: QuerySet
    embedder: str
    k: int
    base: dict[str, np.ndarray]


class FixedEmbedder:
    """The set's base vectors, each component perturbed (seeded per run):
    ``relative``: multiplied by ``1 + relative * N(0, 1)``; ``sigma``:
    ``N(0, sigma^2)`` added."""

    def __init__(
        self,
        base: dict[str, np.ndarray],
        *,
        seed: int,
        relative: float = 0.0,
        sigma: float = 0.0,
    ) -> None:
        self.base, self.seed = base, seed
        self.relative, self.sigma = relative, sigma
        self.identity = f"fixed:{relative}:{sigma}:{seed}"
        self.name = "fixed"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.stack([self.base[t] for t in texts]).astype(np.float64)
        if self.relative or self.sigma:
            rng = np.random.default_rng(self.seed)
            noise = rng.standard_normal(vectors.shape)
            vectors = vectors * (1 + self.relative * noise) + self.sigma * noise
        return vectors


class NoCache(EmbeddingCache):
    """Every run's vectors are its own: keep them out of the on-disk cache."""

    def embed(
        self, embedder: Embedder, texts: Sequence[str], *, progress: bool | None = None
    ) -> Any:
        return l2_normalize(embedder.embed(list(texts)))


class Permuted:
    """An index whose rows were inserted in ``order``: hits mapped back to the
    original rows (and rebuilt the same way)."""

    def __init__(self, inner: Any, order: np.ndarray) -> None:
        self.inner, self.order = inner, order

    def __len__(self) -> int:
        return len(self.inner)

    def search(self, queries: np.ndarray, k: int) -> np.ndarray:
        hits = np.asarray(self.inner.search(queries, k))
        return np.where(hits >= 0, self.order[np.maximum(hits, 0)], -1)

    def rebuild(self, seed: int) -> Permuted:
        return Permuted(self.inner.rebuild(seed), self.order)


class ShuffledChroma:
    """The in-process Chroma store, the chunks inserted in a seeded order; named
    ``chroma`` whatever the order, as the configuration it is. Approximate, as
    Chroma is: built ``r`` times through its rebuild hook (docs/baselines.md,
    "Repeats")."""

    approximate = True

    def __init__(self, chroma: ChromaStore, seed: int) -> None:
        self.chroma, self.seed = chroma, seed
        self.name = "chroma"

    def index(self, key: str, vectors: np.ndarray) -> Permuted:
        order = np.random.default_rng(self.seed).permutation(len(vectors))
        name = hashlib.sha256(f"{key}:{self.seed}".encode()).hexdigest()
        return Permuted(self.chroma.index(name, vectors[order]), order)


class MemoChunker:
    """recursive:200:0, chunking each document once for all the runs."""

    def __init__(self) -> None:
        from pytest_chunkeval.chunkers import get_chunker

        self.inner = get_chunker(CHUNKER)
        self.name = CHUNKER
        self._memo: dict[str, Any] = {}

    def chunk_spans(self, text: str) -> Any:
        if text not in self._memo:
            self._memo[text] = self.inner.chunk_spans(text)
        return self._memo[text]


CHUNKS = MemoChunker()


def _texts(corpus: Corpus, queries: QuerySet) -> list[str]:
    chunker = CHUNKS
    chunks = [
        doc.text[s:e]
        for doc in corpus
        for s, e in chunker.chunk_spans(doc.text).tolist()
    ]
    return list(dict.fromkeys(chunks + [q.text for q in queries]))


def load_sets(cache_dir: Path | None) -> list[NoiseSet]:
    """The three sets, their base vectors computed once (MiniLM's through the
    evaluation cache ``cache_dir``, default: the example project's)."""
    from pytest_chunkeval.embedders.registry import get_embedder

    corpus, queries = load_benchmark("general")
    texts = _texts(corpus, queries)
    hashed = dict(zip(texts, HashingEmbedder().embed(texts), strict=True))
    out = [NoiseSet("bundled benchmark", corpus, queries, "hashing", 5, hashed)]
    out.append(NoiseSet("19 of its", corpus, subset(queries), "hashing", 5, hashed))
    handbook = Corpus.from_paths([EXAMPLE / "handbook"])
    example = QuerySet.load(EXAMPLE / "tests" / "queries.jsonl", handbook)
    texts = _texts(handbook, example)
    cache = EmbeddingCache(cache_dir or EXAMPLE / ".chunkeval" / "cache")
    vectors = cache.embed(get_embedder(MINILM), texts, progress=False)
    minilm = dict(zip(texts, np.asarray(vectors), strict=True))
    out.append(NoiseSet("example project", handbook, example, "MiniLM", 4, minilm))
    out.append(NoiseSet("19 of its", handbook, subset(example), "MiniLM", 4, minilm))
    return out


def subset(queries: QuerySet) -> QuerySet:
    """19 of ``queries``, drawn with seed 19, in their order."""
    rng = np.random.default_rng(19)
    keep = sorted(rng.choice(len(queries), size=19, replace=False).tolist())
    return QuerySet([queries[i] for i in keep])


def run(s: NoiseSet, tmp: Path, embedder: FixedEmbedder, store: Any) -> EvalResult:
    """One evaluation, its searches cached in ``tmp`` only (give each run of
    a store that ignores the vectors' identity a directory of its own)."""
    return evaluate(
        CHUNKS,
        s.corpus,
        s.queries,
        embedder=embedder,
        store=store,
        k=s.k,
        cache=NoCache(tmp),
        progress=False,
    )


@dataclass
class Row:
    """One noise on one set, summed over its runs."""

    runs: int = 0
    changed_runs: int = 0
    changed_questions: int = 0
    lost: int = 0
    regressed: int = 0
    noisy: int = 0
    seconds: float = 0.0

    def add(self, before: EvalResult, after: EvalResult, report: GateReport) -> None:
        lists = {q.id: q.retrieved for q in before.queries}
        moved = sum(lists[q.id] != q.retrieved for q in after.queries)
        self.runs += 1
        self.changed_runs += moved > 0
        self.changed_questions += moved
        self.lost += len(report.lost)
        self.regressed += report.verdict == "regressed"
        self.noisy += report.verdict == "noisy"


def noise_rows(
    s: NoiseSet, tmp: Path, runs: dict[str, int], chroma: ChromaStore
) -> dict[str, Row]:
    """The three noises on one set (``runs``: how many of each)."""
    exact = ExactStore()
    rows = {key: Row() for key in runs}
    still = run(s, tmp, FixedEmbedder(s.base, seed=0), exact)
    baseline = Baseline.from_result(still, "bench")
    for key, n in runs.items():
        t0 = time.perf_counter()
        if key == "b":
            store = ShuffledChroma(chroma, 0)
            first = run(s, tmp / "b0", FixedEmbedder(s.base, seed=0), store)
            base_b = Baseline.from_result(first, "bench")
        for r in range(1, n + 1):
            if key == "a":
                after = run(s, tmp, FixedEmbedder(s.base, seed=r, relative=1e-6), exact)
                rows[key].add(still, after, compare(baseline, after))
            elif key == "b":
                store = ShuffledChroma(chroma, r)
                after = run(s, tmp / f"b{r}", FixedEmbedder(s.base, seed=0), store)
                rows[key].add(first, after, compare(base_b, after))
            else:
                after = run(s, tmp, FixedEmbedder(s.base, seed=r, sigma=0.003), exact)
                rows[key].add(still, after, compare(baseline, after))
        rows[key].seconds = time.perf_counter() - t0
    return rows


NOISES = {
    "a": "exact, vectors x (1 + 1e-6 N)",
    "b": "Chroma, insertion order",
    "c": "old model: + N(0, 0.003^2)",
}


def noise_table(runs: dict[str, int], cache_dir: Path | None = None) -> None:
    """Print the noise table and each set's minimum detectable effect."""
    import tempfile

    t0 = time.perf_counter()
    sets = load_sets(cache_dir)
    print(f"sets loaded in {time.perf_counter() - t0:.0f} s; {CHUNKER}")
    head = (
        "| set | noise | runs | runs with a ranking changed | lists changed "
        "| questions lost | `regressed` runs | `noisy` runs |"
    )
    print(head)
    print("|" + "---|" * 8)
    with tempfile.TemporaryDirectory() as tmp, ChromaStore() as chroma:
        for s in sets:
            rows = noise_rows(s, Path(tmp), runs, chroma)
            for key, row in rows.items():
                print(
                    f"| {s.name} ({len(s.queries)} questions, {s.embedder}) "
                    f"| ({key}) {NOISES[key]} | {row.runs} | {row.changed_runs} "
                    f"| {row.changed_questions} | {row.lost} | {row.regressed} "
                    f"| {row.noisy} |"
                )
            print(
                f"<!-- {s.name}: "
                + ", ".join(f"({k}) {r.seconds:.0f} s" for k, r in rows.items())
                + " -->"
            )
    print()
    print(
        "| set | questions | minimum detectable effect | in points (recall, at "
        "the set's mean / at 1) | smallest decisive margin / order margin |"
    )
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for s in sets:
            n = len(s.queries)
            still = run(s, Path(tmp), FixedEmbedder(s.base, seed=0), ExactStore())
            m = detectable_questions(n, GATED, 0.95)
            mean = still.mean("recall")
            at_mean = detectable_points(m, n, mean) or 0.0
            at_one = detectable_points(m, n, 1.0) or 0.0
            margins = _smallest(still, "margin"), _smallest(still, "order")
            print(
                f"| {s.name} ({s.embedder}) | {n} | {m} questions "
                f"| {100 * at_mean:.1f} (mean recall {100 * mean:.1f}) / "
                f"{100 * at_one:.1f} | {margins[0]:.2g} / {margins[1]:.2g} |"
            )


def _smallest(result: EvalResult, key: str) -> float:
    values = [
        q.evidence[key] for q in result.queries if q.evidence.get(key) is not None
    ]
    return float(min(values, default=float("nan")))


def float_drift(limit: int = 600) -> None:
    """How far float behaviour alone moves scores: the example project's chunks
    and questions (and ``limit`` of the benchmark's chunk texts, with its first
    100 questions) embedded by all-MiniLM-L6-v2 in one torch thread and in two,
    every question scored against every chunk; the largest change of a score
    and of a relative gap between two of a question's scores."""
    import torch

    from pytest_chunkeval.embedders.registry import get_embedder
    from pytest_chunkeval.engine.margins import EPSILON

    handbook = Corpus.from_paths([EXAMPLE / "handbook"])
    example = QuerySet.load(EXAMPLE / "tests" / "queries.jsonl", handbook)
    corpus, queries = load_benchmark("general")
    bench = [t for t in _texts(corpus, queries) if t not in {q.text for q in queries}]
    questions = [q.text for q in example] + [q.text for q in queries][:100]
    chunks = [t for t in _texts(handbook, example) if t not in set(questions)]
    chunks += bench[:limit]
    vectors = {}
    for threads in (1, 2):
        torch.set_num_threads(threads)
        embedder = get_embedder(MINILM)
        t0 = time.perf_counter()
        q = l2_normalize(np.asarray(embedder.embed(questions), np.float64))
        c = l2_normalize(np.asarray(embedder.embed(chunks), np.float64))
        vectors[threads] = (q @ c.T, time.perf_counter() - t0)
    (one, t1), (two, t2) = vectors[1], vectors[2]
    moved = np.abs(one - two)
    # the change of the gap between each question's best score and each other
    gaps_one = one.max(axis=1, keepdims=True) - one
    gaps_two = two.max(axis=1, keepdims=True) - two
    gap_moved = np.abs(gaps_one - gaps_two)
    print(
        f"float drift, all-MiniLM-L6-v2 in 1 vs 2 torch threads: {len(questions)} "
        f"questions x {len(chunks)} chunks ({t1:.0f} s and {t2:.0f} s); "
        f"vectors identical: {bool((moved == 0).all())}"
    )
    print(
        f"  largest change of a cosine {moved.max():.2e}, of a gap to the best "
        f"{gap_moved.max():.2e}; EPSILON = {EPSILON:g} "
        f"({EPSILON / max(gap_moved.max(), 1e-300):.0f}x the largest gap change)"
    )
