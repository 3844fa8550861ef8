"""Metric core speed: 10,000 queries x 100,000 chunks, token unit, k=10 + precision Ω.

Run: .venv/bin/python benchmarks/bench_metrics.py
Compares the vectorized core with a straightforward pure-Python loop (sets of token
indices per query, a scan of all chunks of the document for Ω) on a subset of queries
that finishes, and reports the per-query ratio measured side by side in this run.
"""

from __future__ import annotations

import time

import numpy as np

from pytest_chunkeval.core.metrics import ChunkIndex, QuerySpans, score_queries
from pytest_chunkeval.core.units import UnitMap

N_DOCS, CHUNKS_PER_DOC, CHUNK_TOKENS, CHARS_PER_TOKEN = 100, 1000, 50, 4
N_QUERIES, K, PY_QUERIES = 10_000, 10, 40


class FixedWidthTokenizer:
    """Synthetic tokenizer: one token every CHARS_PER_TOKEN characters."""

    name = "synthetic"

    def token_bounds(self, text: str) -> np.ndarray:
        starts = np.arange(0, len(text), CHARS_PER_TOKEN, dtype=np.int64)
        return np.stack([starts, np.minimum(starts + CHARS_PER_TOKEN, len(text))], 1)

    def count(self, text: str) -> int:
        return -(-len(text) // CHARS_PER_TOKEN)

    def count_batch(self, texts):
        return [self.count(t) for t in texts]


def build():
    rng = np.random.default_rng(0)
    doc_chars = CHUNKS_PER_DOC * CHUNK_TOKENS * CHARS_PER_TOKEN
    texts = ["x" * doc_chars] * N_DOCS
    units = UnitMap(
        [f"d{i}" for i in range(N_DOCS)], texts, "token", FixedWidthTokenizer()
    )
    width = CHUNK_TOKENS * CHARS_PER_TOKEN
    chunk_doc = np.repeat(np.arange(N_DOCS), CHUNKS_PER_DOC)
    chunk_start = np.tile(np.arange(CHUNKS_PER_DOC) * width, N_DOCS)
    chunk_end = chunk_start + width
    n_ex = rng.integers(1, 4, N_QUERIES)
    ex_query = np.repeat(np.arange(N_QUERIES), n_ex)
    ex_doc = rng.integers(0, N_DOCS, N_QUERIES)[ex_query]
    ex_start = rng.integers(0, doc_chars - 2000, ex_query.size)
    ex_end = ex_start + rng.integers(80, 400, ex_query.size)
    ret_query = np.repeat(np.arange(N_QUERIES), K)
    ret_chunk = rng.integers(0, N_DOCS * CHUNKS_PER_DOC, ret_query.size)
    excerpts = QuerySpans(ex_query, ex_doc, ex_start, ex_end)
    retrieved = QuerySpans(
        ret_query, chunk_doc[ret_chunk], chunk_start[ret_chunk], chunk_end[ret_chunk]
    )
    return units, excerpts, retrieved, (chunk_doc, chunk_start, chunk_end)


def python_loop(units, excerpts, retrieved, chunks, n):
    """The straightforward implementation: Python sets, a scan of the doc's chunks."""
    chunk_doc, chunk_start, chunk_end = (c.tolist() for c in chunks)

    def toks(doc, a, b):
        lo, hi = units.to_units(np.array([doc]), np.array([a]), np.array([b]))
        return set(range(int(lo[0]), int(hi[0])))

    ex = list(
        zip(
            *(
                a.tolist()
                for a in (excerpts.query, excerpts.doc, excerpts.start, excerpts.end)
            ),
            strict=True,
        )
    )
    ret = list(
        zip(
            *(
                a.tolist()
                for a in (
                    retrieved.query,
                    retrieved.doc,
                    retrieved.start,
                    retrieved.end,
                )
            ),
            strict=True,
        )
    )
    ex_of: dict[int, list] = {}
    ret_of: dict[int, list] = {}
    for row in ex:
        ex_of.setdefault(row[0], []).append(row[1:])
    for row in ret:
        ret_of.setdefault(row[0], []).append(row[1:])
    out = []
    for q in range(n):
        te = set().union(*(toks(d, a, b) for d, a, b in ex_of[q]))
        rs = [toks(d, a, b) for d, a, b in ret_of.get(q, [])]
        tr_set = set().union(*rs)
        tr = sum(len(r) for r in rs)
        tp = len(te & tr_set)
        omega = set()
        for d, a, b in zip(chunk_doc, chunk_start, chunk_end, strict=True):
            if d in {dd for dd, _, _ in ex_of[q]}:
                c = toks(d, a, b)
                if c & te:
                    omega |= c
        out.append((tp / len(te), tp / tr, len(te & omega) / len(omega | te)))
    return out


def main() -> None:
    units, excerpts, retrieved, chunks = build()
    print(
        f"{units.total_units:,} tokens, {len(chunks[0]):,} chunks, "
        f"{N_QUERIES:,} queries, {len(excerpts):,} excerpts, k={K}"
    )
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        index = ChunkIndex(units, *chunks)
        scores = score_queries(units, excerpts, retrieved, N_QUERIES, index)
        best = min(best, time.perf_counter() - t0)
    print(f"vectorized core, all {N_QUERIES:,} queries: {best:.3f} s (best of 3)")

    sub_ex = QuerySpans(
        *(
            a[excerpts.query < PY_QUERIES]
            for a in (excerpts.query, excerpts.doc, excerpts.start, excerpts.end)
        )
    )
    sub_ret = QuerySpans(
        *(
            a[retrieved.query < PY_QUERIES]
            for a in (retrieved.query, retrieved.doc, retrieved.start, retrieved.end)
        )
    )
    t0 = time.perf_counter()
    ref = python_loop(units, sub_ex, sub_ret, chunks, PY_QUERIES)
    py_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    sub = score_queries(units, sub_ex, sub_ret, PY_QUERIES, ChunkIndex(units, *chunks))
    vec_sub = time.perf_counter() - t0
    np.testing.assert_allclose([r[0] for r in ref], sub.recall)
    np.testing.assert_allclose([r[1] for r in ref], sub.precision)
    np.testing.assert_allclose([r[2] for r in ref], sub.precision_omega)
    np.testing.assert_allclose(scores.recall[:PY_QUERIES], sub.recall)
    per_q_py = py_time / PY_QUERIES
    per_q_vec = best / N_QUERIES
    print(
        f"pure-Python loop, {PY_QUERIES} queries: {py_time:.2f} s "
        f"({per_q_py * 1e3:.2f} ms/query); vectorized on the same {PY_QUERIES}: {vec_sub:.3f} s"
    )
    print(
        f"per-query ratio (Python / vectorized at 10k queries): {per_q_py / per_q_vec:,.0f}x; "
        f"same-subset ratio: {py_time / vec_sub:,.0f}x"
    )


if __name__ == "__main__":
    main()
