"""The gate's figures under docs/baselines.md's rule ("What a verdict means"):
noise widens the margin a drop must clear, it never removes a question's change.

Run: .venv/bin/python benchmarks/bench_gate.py [--runs 20] [--sets ...] [--rows ...]
     .venv/bin/python benchmarks/bench_gate.py --noise     (gate_noise.py's table)
     .venv/bin/python benchmarks/bench_gate.py --epsilon   (float drift bound)

Three sets: the bundled benchmark (472 questions, hashing embedder: MiniLM would
take minutes per pass on two shared cores), the example project (36 questions,
all-MiniLM-L6-v2) and 19 of its questions (seeded); recursive:200:0 chunks, k=5 on
the benchmark, 4 on the example project. Every run is decided by the default gate
(mode ``changes``, -1pp on recall, precision and IoU, 95%), the way the plugin
decides it (:func:`decide`: repeats the baseline's noisy components, confirms a
retriever before failing it).

Table 1, noise only (each run against a baseline of the same pipeline):
  (a) exact search, every vector multiplied by ``1 + 1e-6 N(0, 1)`` (float drift);
  (b) Chroma, the chunks inserted in another seeded order per run (rebuilt r times
      in other orders within a run, as an approximate store is);
  (c) a score() retriever right half the time (else a random paragraph), against
      a baseline of the same retriever, both with repeats;
  (d) a retriever whose answers depend on its process (a factory: each instance
      draws its own seed), against a baseline of the same.
  Reported: runs where some ranking changed (0 = the row tested nothing) and runs
  called ``regressed`` (target: at most 1 in 20; 0 for float drift).

Table 2, real drops (against a deterministic baseline unless said):
  (e) the retriever right half the time; (f) a random retriever; (g) a store that
  returns the worst match first; (h) Chroma with ``ef_search=1`` (and a poor
  graph: ``POOR_HNSW``) against Chroma's defaults; (i) an embedder collapsing to constant vectors; (j) a deterministic
  drop of 1.5x the tolerance spread over every question. Target: >= 19 of 20
  ``regressed``.

Table 3: for a noisy retriever (right with probability p, the baseline at p=0.5),
the smallest even drop caught in 19 of 20 runs; and the cost of repeats on the
benchmark (Chroma rebuilds, a score() retriever's asks) as a ratio of the run.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.gate.files.baseline import Baseline
from pytest_chunkeval.stores.chroma import ChromaStore
from pytest_chunkeval.stores.exact import ExactStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gate_noise import CHUNKS, Permuted, subset

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "example_project"
CHUNKER = "recursive:200:0"
MINILM = "sentence-transformers:all-MiniLM-L6-v2"


# -- the sets ---------------------------------------------------------------------


@dataclass
class GateSet:
    """A corpus, its questions, the base vector of every text, and ``k``."""

    name: str
    corpus: Corpus
    queries: QuerySet
    embedder: str
    k: int
    base: dict[str, np.ndarray]
    paragraphs: list[tuple[str, int, int]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.name} ({len(self.queries)}, {self.embedder})"


def _chunk_spans(corpus: Corpus) -> list[tuple[str, int, int]]:
    return [
        (doc.id, int(s), int(e))
        for doc in corpus
        for s, e in CHUNKS.chunk_spans(doc.text).tolist()
    ]


def _texts(corpus: Corpus, queries: QuerySet) -> list[str]:
    chunks = [corpus[d].text[s:e] for d, s, e in _chunk_spans(corpus)]
    return list(dict.fromkeys(chunks + [q.text for q in queries]))


def load_sets(names: Sequence[str]) -> list[GateSet]:
    from pytest_chunkeval.embedders.hashing import HashingEmbedder
    from pytest_chunkeval.embedders.registry import get_embedder

    out: list[GateSet] = []
    if "benchmark" in names:
        corpus, queries = load_benchmark("general")
        texts = _texts(corpus, queries)
        hashed = dict(zip(texts, HashingEmbedder().embed(texts), strict=True))
        out.append(GateSet("benchmark", corpus, queries, "hashing", 5, hashed))
    if "example" in names or "example19" in names:
        handbook = Corpus.from_paths([EXAMPLE / "handbook"])
        example = QuerySet.load(EXAMPLE / "tests" / "queries.jsonl", handbook)
        texts = _texts(handbook, example)
        vectors = np.asarray(get_embedder(MINILM).embed(texts))
        minilm = dict(zip(texts, vectors, strict=True))
        if "example" in names:
            out.append(GateSet("example", handbook, example, "MiniLM", 4, minilm))
        if "example19" in names:
            sub = subset(example)
            out.append(GateSet("example, 19", handbook, sub, "MiniLM", 4, minilm))
    for s in out:
        s.paragraphs = _chunk_spans(s.corpus)
    return out


# -- components -------------------------------------------------------------------


class FixedEmbedder:
    """The set's base vectors, optionally perturbed per run (seeded):
    ``relative``: each component times ``1 + relative * N(0, 1)``;
    ``constant``: every text the same vector (a broken embedder)."""

    def __init__(
        self, base: dict[str, np.ndarray], *, seed: int = 0, relative: float = 0.0
    ) -> None:
        self.base, self.seed, self.relative = base, seed, relative
        self.constant = False
        self.name = "fixed"

    @property
    def identity(self) -> str:
        # One identity whatever the perturbation: the gate must see a run of
        # "the same embedder", as a user's broken one would be.
        return "bench-fixed"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.stack([self.base[t] for t in texts]).astype(np.float64)
        if self.constant:
            return np.ones_like(vectors)
        if self.relative:
            rng = np.random.default_rng(self.seed)
            vectors = vectors * (1 + self.relative * rng.standard_normal(vectors.shape))
        return vectors


class WorstFirst:
    """A store bug: exact search's ranking reversed (the worst match first)."""

    name = "worst-first"
    identity = "worst-first"

    def index(self, key: str, vectors: np.ndarray) -> Any:
        exact = ExactStore().index(key, vectors)
        n = len(vectors)

        class Reversed:
            def __len__(self) -> int:
                return n

            def search(self, queries: np.ndarray, k: int) -> np.ndarray:
                hits = np.asarray(exact.search(queries, n))
                return hits[:, ::-1][:, :k].copy()

        return Reversed()


# -- retrievers (score()) ---------------------------------------------------------


def exact_answers(s: GateSet) -> dict[str, list[tuple[str, int, int]]]:
    """Each question's deterministic answer: exact search's top k."""
    result = evaluate(
        CHUNKS,
        s.corpus,
        s.queries,
        embedder=FixedEmbedder(s.base),
        store=ExactStore(),
        k=s.k,
        cache=tempfile.mkdtemp(),
        progress=False,
    )
    return {q.question: [tuple(r) for r in q.retrieved] for q in result.queries}


class HalfRight:
    """Right (exact search's answer) with probability ``p`` per ask, else ``k``
    random paragraphs; ``seed`` fixes the draws of one run."""

    def __init__(self, s: GateSet, answers: dict[str, Any], p: float, seed: int):
        self.s, self.answers, self.p = s, answers, p
        self.rng = np.random.default_rng(seed)

    def __call__(self, question: str) -> list[tuple[str, int, int]]:
        if self.rng.random() < self.p:
            return list(self.answers[question])
        picks = self.rng.choice(len(self.s.paragraphs), size=self.s.k, replace=False)
        return [self.s.paragraphs[i] for i in picks]


def process_bound(s: GateSet, answers: dict[str, Any], run: int) -> Callable[[], Any]:
    """A factory: each instance (a process, in real life) draws its own seed and
    answers every question the same way for its lifetime, right for 90% of the
    questions: noise that asking again in one process cannot see."""
    count = [0]

    def build() -> Callable[[str], Any]:
        count[0] += 1
        seed = int.from_bytes(
            hashlib.sha256(f"{run}:{count[0]}".encode()).digest()[:4], "big"
        )

        def retriever(question: str) -> list[tuple[str, int, int]]:
            h = hashlib.sha256(f"{seed}:{question}".encode()).digest()
            if h[0] < 230:
                return list(answers[question])
            i = int.from_bytes(h[1:5], "big") % len(s.paragraphs)
            return [s.paragraphs[i]]

        return retriever

    return build


# -- one evaluation and the verdict ------------------------------------------------


def run_store(
    s: GateSet, store: Any, embedder: FixedEmbedder | None = None
) -> EvalResult:
    """One evaluation on an empty cache of its own: every run embeds and searches
    (a cache would serve the first run's vectors to a broken embedder of the same
    identity, as it should)."""
    with tempfile.TemporaryDirectory() as cache:
        return evaluate(
            CHUNKS,
            s.corpus,
            s.queries,
            embedder=embedder or FixedEmbedder(s.base),
            store=store,
            k=s.k,
            cache=cache,
            progress=False,
        )


def run_retriever(s: GateSet, retriever: Any, **options: Any) -> EvalResult:
    return score(retriever, s.corpus, s.queries, k=s.k, label="bench", **options)


def decide(baseline: EvalResult, current: EvalResult) -> str:
    """The default gate's verdict of ``current`` against ``baseline``, as the
    plugin reaches it (the gate's one top-level check)."""
    from pytest_chunkeval.gate.check import decide as gate_decide
    from pytest_chunkeval.gate.tolerances import GateSettings

    recorded = Baseline.from_result(baseline, "bench")
    outcome, _, _ = gate_decide(
        recorded, current, "bench", "bench.json", GateSettings(), ""
    )
    return outcome.verdict.name


def _changed(before: EvalResult, after: EvalResult) -> bool:
    lists = {q.id: q.retrieved for q in before.queries}
    return any(lists.get(q.id) != q.retrieved for q in after.queries)


@dataclass
class Row:
    runs: int = 0
    changed: int = 0
    regressed: int = 0
    noisy: int = 0
    seconds: float = 0.0

    def add(self, base: EvalResult, now: EvalResult) -> None:
        verdict = decide(base, now)
        self.runs += 1
        self.changed += _changed(base, now)
        self.regressed += verdict == "regressed"
        self.noisy += verdict == "noisy"

    def cells(self) -> str:
        return f"{self.runs} | {self.changed} | {self.regressed} | {self.noisy}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--sets", default="benchmark,example,example19", help="comma-separated"
    )
    parser.add_argument(
        "--rows", default="abcdefghijmr", help="rows (a-j), m: smallest drops, r: cost"
    )
    parser.add_argument("--epsilon", action="store_true", help="float drift bound")
    parser.add_argument(
        "--noise", action="store_true", help="gate_noise.py's table (300 runs of a)"
    )
    args = parser.parse_args(argv)
    if args.epsilon:
        from gate_noise import float_drift

        float_drift()
        return
    if args.noise:
        from gate_noise import noise_table

        noise_table({"a": 300, "b": 20, "c": 20})
        return
    sets = load_sets(args.sets.split(","))
    tables(sets, args.runs, args.rows)


NOISE = {
    "a": "float drift: exact, vectors x (1 + 1e-6 N)",
    "b": "Chroma, other insertion orders",
    "c": "retriever right half the time, baseline the same",
    "d": "retriever bound to its process (factory)",
}
POOR_HNSW = {"ef_search": 1, "max_neighbors": 2, "ef_construction": 2}
"""Row (h)'s index. The plugin asks Chroma for k + 8 rows and re-ranks them
(docs/stores.md), so ef_search=1 alone searches k + 8 deep: on 19 questions of
the example project it regressed in 13 of 20 runs; the poor graph keeps it a
real drop."""

DROPS = {
    "e": "retriever right half the time, deterministic baseline",
    "f": "random retriever",
    "g": "store returning the worst match first",
    "h": "Chroma ef_search=1, poor graph (baseline: defaults)",
    "i": "constant vectors",
    "j": "deterministic drop of 1.5x the tolerance, spread",
}


class ShuffledChroma:
    """The in-process Chroma store, its chunks inserted in an order drawn from
    ``seed`` (another run's order), rebuilt in other orders within the run as
    an approximate store is; named ``chroma`` whatever the order."""

    approximate = True

    def __init__(self, chroma: ChromaStore, seed: int) -> None:
        self.chroma, self.seed = chroma, seed
        self.name = "chroma"
        self.identity = "bench-chroma"

    def index(self, key: str, vectors: np.ndarray) -> Any:
        return _Rebuildable(self, key, vectors, 0)

    def build(self, key: str, vectors: np.ndarray, seed: int) -> Any:
        rng = np.random.default_rng([self.seed, seed])
        order = rng.permutation(len(vectors))
        name = hashlib.sha256(f"{key}:{self.seed}:{seed}".encode()).hexdigest()
        return Permuted(self.chroma.index(name, vectors[order]), order)


class _Rebuildable:
    """A shuffled Chroma index with the protocol's ``rebuild(seed)``."""

    def __init__(self, store: ShuffledChroma, key: str, vectors: np.ndarray, seed: int):
        self.store, self.key, self.vectors = store, key, vectors
        self.inner = store.build(key, vectors, seed)

    def __len__(self) -> int:
        return len(self.vectors)

    def search(self, queries: np.ndarray, k: int) -> np.ndarray:
        return self.inner.search(queries, k)

    def rebuild(self, seed: int) -> _Rebuildable:
        return _Rebuildable(self.store, self.key, self.vectors, seed)


def _spread_drop(result: EvalResult, points: float) -> EvalResult:
    """``result`` with every question's recall, precision and IoU scaled down so
    that each metric's mean drops by exactly ``points`` (a question at 0 stays
    there: the drop is spread over the questions in proportion to their value)."""
    import dataclasses

    factors = {}
    for m in ("recall", "precision", "iou"):
        mean = float(np.nanmean(result.values(m)))
        factors[m] = max(0.0, 1 - points / 100 / mean) if mean > 0 else 1.0
    records = [
        dataclasses.replace(
            q,
            **{
                m: getattr(q, m) * f
                for m, f in factors.items()
                if getattr(q, m) is not None
            },
        )
        for q in result.queries
    ]
    return dataclasses.replace(result, queries=records)


def tables(sets: Sequence[GateSet], runs: int, rows: str) -> None:
    print(f"{CHUNKER}, {runs} runs per row; default gate (changes, -1pp, 95%)")
    print()
    print("| set | noise | runs | a ranking changed | `regressed` | `noisy` |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(), ChromaStore() as chroma:
        for s in sets:
            answers = exact_answers(s)
            for key in "abcd":
                if key not in rows:
                    continue
                row, t0 = Row(), time.perf_counter()
                if key == "a":
                    base = run_store(s, ExactStore())
                    for r in range(1, runs + 1):
                        emb = FixedEmbedder(s.base, seed=r, relative=1e-6)
                        row.add(base, run_store(s, ExactStore(), emb))
                elif key == "b":
                    base = run_store(s, ShuffledChroma(chroma, 0))
                    for r in range(1, runs + 1):
                        row.add(base, run_store(s, ShuffledChroma(chroma, r)))
                elif key == "c":
                    for r in range(1, runs + 1):
                        base = run_retriever(s, HalfRight(s, answers, 0.5, 1000 + r))
                        now = run_retriever(s, HalfRight(s, answers, 0.5, r))
                        row.add(base, now)
                else:
                    for r in range(1, runs + 1):
                        build = process_bound(s, answers, 1000 + r)
                        base = run_retriever(s, build, factory=True)
                        now = run_retriever(
                            s, process_bound(s, answers, r), factory=True
                        )
                        row.add(base, now)
                row.seconds = time.perf_counter() - t0
                print(f"| {s.label} | ({key}) {NOISE[key]} | {row.cells()} |")
    print()
    print("| set | drop | runs | a ranking changed | `regressed` | `noisy` |")
    print("|---|---|---|---|---|---|")
    with ChromaStore() as chroma:
        for s in sets:
            answers = exact_answers(s)
            det = run_retriever(s, lambda q, a=answers: list(a[q]))
            exact = run_store(s, ExactStore())
            for key in "efghij":
                if key not in rows:
                    continue
                row = Row()
                for r in range(1, runs + 1):
                    if key == "e":
                        row.add(det, run_retriever(s, HalfRight(s, answers, 0.5, r)))
                    elif key == "f":
                        row.add(det, run_retriever(s, HalfRight(s, answers, 0.0, r)))
                    elif key == "g":
                        row.add(exact, run_store(s, WorstFirst()))
                    elif key == "h":
                        base = run_store(s, ShuffledChroma(chroma, 0))
                        low = ChromaStore(hnsw=POOR_HNSW)
                        with low:
                            row.add(base, run_store(s, low))
                    elif key == "i":
                        broken = FixedEmbedder(s.base)
                        broken.constant = True
                        row.add(exact, run_store(s, ExactStore(), broken))
                    else:
                        row.add(exact, _spread_drop(exact, 1.5))
                print(f"| {s.label} | ({key}) {DROPS[key]} | {row.cells()} |")
    if "m" in rows:
        smallest_drops(sets, runs)
    if "r" in rows:
        repeat_cost(sets[0])


def smallest_drops(sets: Sequence[GateSet], runs: int) -> None:
    """For a retriever right with probability 0.5 in the baseline and ``0.5 -
    delta`` now, the smallest recall drop (in points) caught in >= 19 of 20."""
    print()
    print("| set | p now | mean recall drop (points) | `regressed` of runs |")
    print("|---|---|---|---|")
    for s in sets:
        answers = exact_answers(s)
        for p in (0.45, 0.4, 0.35, 0.3, 0.25, 0.2, 0.1):
            caught, drops = 0, []
            for r in range(1, runs + 1):
                base = run_retriever(s, HalfRight(s, answers, 0.5, 1000 + r))
                now = run_retriever(s, HalfRight(s, answers, p, r))
                drops.append(100 * (base.mean("recall") - now.mean("recall")))
                caught += decide(base, now) == "regressed"
            print(f"| {s.label} | {p} | {np.mean(drops):.1f} | {caught} of {runs} |")
            if caught >= runs - runs // 20:
                break


def repeat_cost(s: GateSet) -> None:
    """The repeats' cost on ``s`` as a ratio of the run without them."""
    answers = exact_answers(s)
    print()
    with ChromaStore() as chroma:
        t0 = time.process_time()
        run_store(s, ShuffledChroma(chroma, 0))
        with_repeats = time.process_time() - t0
        plain = ShuffledChroma(chroma, 0)
        plain.approximate = False  # type: ignore[misc]
        t0 = time.process_time()
        run_store(s, plain)
        without = time.process_time() - t0
    print(
        f"Chroma rebuilt: CPU {with_repeats:.2f} s against {without:.2f} s once "
        f"({with_repeats / without:.2f}x)"
    )
    t0 = time.process_time()
    noisy = run_retriever(s, HalfRight(s, answers, 0.5, 1))
    asked = time.process_time() - t0
    t0 = time.process_time()
    run_retriever(s, lambda q: list(answers[q]))
    once = time.process_time() - t0
    print(
        f"score() retriever found noisy: CPU {asked:.2f} s against {once:.2f} s for "
        f"a deterministic one ({asked / once:.2f}x; {noisy.noise.get('requests')} "
        "requests)"
    )


if __name__ == "__main__":
    main()
