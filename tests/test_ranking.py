"""SPEC §9 metrics (mrr, ndcg, complete, ceiling, budget) against Python sets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.brute_force import ALPHABET, Span, brute_force_ranking

from pytest_chunkeval.core.intervals import IntervalUnion
from pytest_chunkeval.core.metrics import ChunkIndex, QuerySpans, score_queries
from pytest_chunkeval.core.ranking import budget_prefix, max_coverage
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.tokenizers.base import get_tokenizer


@st.composite
def scenarios(draw):
    n_docs = draw(st.integers(1, 2))
    texts = {
        f"d{i}": draw(st.text(alphabet=ALPHABET, min_size=1, max_size=30))
        for i in range(n_docs)
    }

    def span() -> Span:
        doc = draw(st.sampled_from(sorted(texts)))
        n = len(texts[doc])
        a = draw(st.integers(0, n - 1))
        return (doc, a, draw(st.integers(a + 1, n)))

    kind = draw(st.sampled_from(["disjoint", "windows", "arbitrary"]))
    if kind == "arbitrary":  # nested, disordered, overlapping, repeated chunks
        chunks = [span() for _ in range(draw(st.integers(1, 7)))]
        chunks += draw(st.lists(st.sampled_from(chunks), max_size=2))
    else:
        chunks = []
        for doc, text in texts.items():
            size = draw(st.integers(1, 10))
            stride = size if kind == "disjoint" else draw(st.integers(1, size))
            chunks += [
                (doc, s, min(s + size, len(text))) for s in range(0, len(text), stride)
            ]
    n_queries = draw(st.integers(1, 4))
    excerpts = [
        [span() for _ in range(draw(st.integers(1, 3)))] for _ in range(n_queries)
    ]
    retrieved = [
        draw(st.lists(st.sampled_from(chunks), max_size=7)) for _ in range(n_queries)
    ]
    k = draw(st.integers(1, 5))
    budget = draw(st.none() | st.integers(1, 30))
    return texts, excerpts, retrieved, chunks, k, budget


def run_core(texts, unit, excerpts, retrieved, chunks, k, budget):
    units = UnitMap(list(texts), list(texts.values()), unit, get_tokenizer())
    index = ChunkIndex(
        units,
        units.doc_indices([c[0] for c in chunks]),
        np.array([c[1] for c in chunks], dtype=np.int64),
        np.array([c[2] for c in chunks], dtype=np.int64),
    )
    n = len(excerpts)
    depth = np.full(n, min(k, len(chunks)), dtype=np.int64)
    return score_queries(
        units,
        QuerySpans.from_lists(excerpts, units),
        QuerySpans.from_lists(retrieved, units),
        n,
        index,
        depth=depth,
        budget=budget,
    )


@pytest.mark.parametrize("unit", ["token", "char"])
@settings(max_examples=200, deadline=None)
@given(data=scenarios())
def test_rank_metrics_match_brute_force(unit, data):
    got = run_core(*data[:1], unit, *data[1:])
    want = brute_force_ranking(*data[:1], unit, *data[1:])
    for q, w in enumerate(want):
        columns = {**got.values, "depth_recall": got.depth_recall}
        for name in ("mrr", "ndcg", "ceiling", "complete", "recall", "depth_recall"):
            assert math.isclose(float(columns[name][q]), w[name], abs_tol=1e-9), (
                name,
                q,
                columns[name][q],
                w[name],
            )
        assert got.retrieved_units[q] == w["retrieved_units"]
        assert bool(got.over_budget[q]) == w["over_budget"]
        # The invariants of §9, for every list and every chunking.
        assert 0.0 <= got.metric("ndcg")[q] <= 1.0
        assert got.depth_recall[q] <= got.metric("ceiling")[q]
        assert (got.metric("mrr")[q] > 0) == w["overlaps"]
        assert got.metric("complete")[q] == float(
            got.true_positive_units[q] == got.excerpt_units[q]
        )


def test_overlapping_chunks_need_the_exact_cover_not_a_greedy_pick():
    # Excerpt = units [0, 10). Greedy takes the largest chunk [2,8) (6 units) and
    # then reaches 8 with two chunks; [0,5) + [5,10) cover all 10.
    te = IntervalUnion(np.array([0]), np.array([0]), np.array([10]), 100)
    q = np.zeros(3, dtype=np.int64)
    cover = max_coverage(te, q, np.array([0, 5, 2]), np.array([5, 10, 8]), 1, 3)
    assert cover.tolist() == [[0, 6, 10, 10]]


def test_budget_keeps_whole_chunks_and_stops_at_the_first_misfit():
    query = np.array([0, 0, 0, 0, 1, 1, 2])
    length = np.array([3, 5, 1, 1, 9, 1, 2])
    kept = budget_prefix(query, length, 8)
    # Query 0: 3 + 5 = 8 fits; the next chunk would pass 8, so the list ends there
    # (the last one is not taken either). Query 1: its first chunk alone exceeds 8.
    assert kept.tolist() == [True, True, False, False, False, False, True]


def test_whole_retriever_has_mrr_and_complete_but_no_ndcg_or_ceiling():
    units = UnitMap(["d"], ["0123456789"], "char")
    ex = QuerySpans.from_lists([[("d", 2, 5)]], units)
    ret = QuerySpans.from_lists([[("d", 6, 8), ("d", 0, 9)]], units)
    got = score_queries(units, ex, ret, 1)
    assert got.metric("mrr")[0] == 0.5
    assert got.metric("complete")[0] == 1.0
    assert math.isnan(got.metric("ndcg")[0])
    assert math.isnan(got.metric("ceiling")[0])
