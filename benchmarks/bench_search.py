"""Exact search and BM25 against the machine's floor, side by side in one process.

    .venv/bin/python benchmarks/bench_search.py [--scale 10] [--rounds 3] [--bm25 PATH]

CPU time (``time.process_time``), one BLAS thread (threadpoolctl). The floor of an
exact search is its multiply-adds divided by the rate of a reference float32
matrix product (1024 x 4096 x 256) timed in this process; synthetic normalized
vectors of the benchmark's shapes (10x: 4,720 questions x 25,975 chunks x 256;
100x: 47,200 x 261,865, searched for a sample of ``--questions`` questions, the
floor scaled to match). Prints the search's CPU time, the floor and their ratio,
faiss's ``IndexFlatIP`` (one thread) when installed,
the previous implementation (whole rows of scores, ``argpartition``) on the same
inputs, and whether both return the same rows. With ``--bm25 SET_DIR``
(a set of ``benchmarks/scale_benchmark.py``: ``/tmp/chunkeval-scaled/distinct-10x``),
BM25 index + search of its chunks (recursive 200/0) and questions, this tree
against the previous index (bm25s.tokenize's strings) and selection (the whole
score matrix, ``argpartition``), with
peak RSS (``ru_maxrss``) after each: this tree's search runs first. With
``--copies SET_DIR``, finding every occurrence of the excerpts' texts
(``engine/copies.py``) with the bitmap prefilter and without it.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from pytest_chunkeval.stores.exact import ExactIndex, top_rows

SHAPES = {10: (4_720, 25_975), 100: (47_200, 261_865)}


def cpu(fn: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    """Best CPU time of ``rounds`` calls, and the last result."""
    best, out = float("inf"), None
    for _ in range(rounds):
        began = time.process_time()
        out = fn()
        best = min(best, time.process_time() - began)
    return best, out


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim), dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def reference(rng: np.random.Generator) -> Callable[[], Any]:
    """The reference product, 1024 x 4096 x 256, into a buffer of its own."""
    a, b = unit(rng, 1024, 256), unit(rng, 4096, 256)
    out = np.empty((1024, 4096), dtype=np.float32)
    return lambda: np.matmul(a, b.T, out=out)


def products(index: ExactIndex, queries: np.ndarray) -> None:
    """The search's tiles' products alone (no selection): what is left over the
    floor when the selection costs nothing."""
    vectors, width = index.vectors, index.tile_columns
    rows = max(1, index.block_bytes // (4 * width))
    scratch = np.empty(rows * width, dtype=np.float32)
    for lo in range(0, len(queries), rows):
        block = queries[lo : lo + rows]
        for first in range(0, len(vectors), width):
            part = vectors[first : first + width]
            tile = scratch[: len(block) * len(part)].reshape(len(block), len(part))
            np.matmul(block, part.T, out=tile)


def previous_search(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """The search before this turn: 16 MiB blocks of whole rows, argpartition."""
    n = len(vectors)
    rows = max(1, (16 << 20) // (4 * n))
    out = np.empty((len(queries), k), dtype=np.int64)
    for lo in range(0, len(queries), rows):
        neg = queries[lo : lo + rows] @ vectors.T
        np.negative(neg, out=neg)
        out[lo : lo + rows] = top_rows(neg, k)
    return out


def exact(scale: int, questions: int | None, rounds: int, k: int) -> None:
    """Rounds alternate the reference product (as many as one floor's worth,
    warm), this tree's search, its products alone and the previous search; each
    is the best of the rounds, so a busy moment costs them alike."""
    rng = np.random.default_rng(0)
    ref = reference(rng)
    n_q, n_c = SHAPES[scale]
    n_q = min(n_q, questions) if questions else n_q
    vectors, queries = unit(rng, n_c, 256), unit(rng, n_q, 256)
    repeat = max(1, round(n_q * n_c / (1024 * 4096)))
    index = ExactIndex(vectors)
    cpu(lambda: [ref() for _ in range(30)], 1)  # warm: clocks, pages, caches
    best: dict[str, float] = {}
    found: dict[str, np.ndarray] = {}
    runs: dict[str, Callable[[], Any]] = {
        "reference": lambda: [ref() for _ in range(repeat)],
        "ours": lambda: index.search(queries, k),
        "products": lambda: products(index, queries),
        "before": lambda: previous_search(vectors, queries, k),
    }
    try:  # faiss's exact index, one thread, when installed (the [faiss] extra)
        import faiss

        faiss.omp_set_num_threads(1)
        flat = faiss.IndexFlatIP(vectors.shape[1])
        flat.add(vectors)
        runs["faiss"] = lambda: flat.search(queries, k)[1]
    except ImportError:
        pass
    for _ in range(rounds):
        for name, run in runs.items():
            seconds, out = cpu(run, 1)
            best[name] = min(best.get(name, seconds), seconds)
            if isinstance(out, np.ndarray):
                found[name] = out
    rate = repeat * 1024 * 4096 * 256 / best["reference"]
    floor = n_q * n_c * 256 / rate
    ours, before, bare = best["ours"], best["before"], best["products"]
    same = bool((found["ours"] == found["before"]).all())
    print(
        f"exact {scale}x: {n_q} questions x {n_c} chunks x 256, k={k}; reference "
        f"rate {2 * rate / 1e9:.1f} GFLOP/s; floor {floor:.3f} s; this tree "
        f"{ours:.3f} s ({ours / floor:.2f} x floor; its products alone "
        f"{bare / floor:.2f}); before {before:.3f} s ({before / floor:.2f} x "
        f"floor); same rows: {same}"
        + (
            f"; faiss IndexFlatIP {best['faiss']:.3f} s ({best['faiss'] / floor:.2f} "
            "x floor)"
            if "faiss" in best
            else ""
        )
    )


def bm25(data: str, rounds: int, k: int) -> None:
    from pathlib import Path

    from pytest_chunkeval.chunkers import get_chunker
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.engine.chunking import Chunking
    from pytest_chunkeval.stores.bm25 import BM25Store

    corpus = Corpus.from_paths([Path(data) / "corpora"])
    queries = QuerySet.load(Path(data) / "questions_df.csv", corpus)
    texts = Chunking(get_chunker("recursive:200:0"), corpus).texts()
    questions = [q.text for q in queries]
    store = BM25Store()
    began = time.process_time()
    index = store.index_texts(texts)
    index_s = time.process_time() - began
    ours, got = cpu(lambda: index.search_texts(questions, k), rounds)
    peak_ours = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def previous() -> np.ndarray:
        scores = index.scores(questions)
        rows = top_rows(-scores, k)
        hit = np.take_along_axis(scores, rows, axis=1) > 0
        return np.where(hit, rows, -1)

    if len(texts) * len(questions) * 4 > 4 << 30:  # 46 GiB at 100x: not run
        print(
            f"bm25 {Path(data).name}: {len(questions)} questions x {len(texts)} "
            f"chunks, k={k}; index {index_s:.2f} s; search this tree {ours:.2f} s; "
            f"peak RSS {peak_ours:.0f} MiB (the previous search needs "
            f"{len(texts) * len(questions) * 4 / 2**30:.0f} GiB of scores: not run)"
        )
        return

    def previous_index() -> None:
        """The index before this turn: bm25s.tokenize's strings, turned into ids
        again by the index."""
        import bm25s

        model = bm25s.BM25(k1=store.k1, b=store.b, method=store.method)
        model.index(store.tokenize(texts), show_progress=False)

    index_before, _ = cpu(previous_index, 1)
    index_now, _ = cpu(lambda: store.index_texts(texts), 1)  # again, side by side
    index_s = min(index_s, index_now)
    before, old = cpu(previous, rounds)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    now, then = index_s + ours, index_before + before
    print(
        f"bm25 {Path(data).name}: {len(questions)} questions x {len(texts)} chunks, "
        f"k={k}; index this tree {index_s:.2f} s, before {index_before:.2f} s; "
        f"search this tree {ours:.2f} s, before {before:.2f} s (index + search "
        f"{now:.2f} s against {then:.2f} s, {now / then:.2f}); "
        f"same rows: {bool((got == old).all())}; peak RSS {peak_ours:.0f} MiB after "
        f"this tree's search, {peak:.0f} MiB after the previous one's"
    )


def copies(data: str, rounds: int) -> None:
    from pathlib import Path

    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.engine import copies as found

    corpus = Corpus.from_paths([Path(data) / "corpora"])
    queries = QuerySet.load(Path(data) / "questions_df.csv", corpus)
    texts = [d.text for d in corpus]
    needles = sorted({e.text for q in queries for e in q.excerpts})
    ours, got = cpu(lambda: found.find_occurrences(texts, needles), rounds)

    def previous() -> list[np.ndarray]:
        """The search before this turn: every window hashed per anchor length
        from scratch and looked up with ``np.isin``."""
        out: list[list[tuple[int, int]]] = [[] for _ in needles]
        groups: dict[int, dict[int, list[int]]] = {}
        for i, needle in enumerate(needles):
            if needle:
                m = min(len(needle), 32)
                key = int(found._window_hashes(found._codes(needle[:m]), m)[0])
                groups.setdefault(m, {}).setdefault(key, []).append(i)
        for d, text in enumerate(texts):
            codes = found._codes(text)
            for m, by_hash in groups.items():
                if codes.size < m:
                    continue
                windows = found._window_hashes(codes, m)
                keys = np.fromiter(by_hash, dtype=np.uint64, count=len(by_hash))
                for start in np.flatnonzero(np.isin(windows, keys)).tolist():
                    for i in by_hash[int(windows[start])]:
                        if text.startswith(needles[i], start):
                            out[i].append((d, start))
        return [np.asarray(f, dtype=np.int64).reshape(-1, 2) for f in out]

    before, old = cpu(previous, rounds)
    same = all(np.array_equal(a, b) for a, b in zip(got, old, strict=True))
    print(
        f"copies {Path(data).name}: {len(needles)} excerpt texts in {len(texts)} "
        f"documents; this tree {ours:.2f} s, before {before:.2f} s; same: {same}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, choices=sorted(SHAPES), default=10)
    parser.add_argument("--questions", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--k", type=int, default=13)  # k=5 plus the margins' 8
    parser.add_argument("--bm25", metavar="SET_DIR")
    parser.add_argument("--copies", metavar="SET_DIR")
    args = parser.parse_args()
    with threadpool_limits(1):
        if args.copies:
            copies(args.copies, args.rounds)
        elif args.bm25:
            bm25(args.bm25, args.rounds, args.k)
        else:
            exact(args.scale, args.questions, args.rounds, args.k)


if __name__ == "__main__":
    main()
