"""The vectorized metric core against a brute-force implementation with Python sets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.brute_force import ALPHABET, brute_force_metrics

from pytest_chunkeval.core.metrics import (
    ChunkIndex,
    QuerySpans,
    describe,
    score_queries,
    summarize,
)
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.tokenizers.base import get_tokenizer


def run_core(texts, unit, excerpts, retrieved, chunks):
    units = UnitMap(list(texts), list(texts.values()), unit, get_tokenizer())
    ex = QuerySpans.from_lists(excerpts, units)
    ret = QuerySpans.from_lists(retrieved, units)
    index = ChunkIndex(
        units,
        units.doc_indices([c[0] for c in chunks]),
        np.array([c[1] for c in chunks], dtype=np.int64),
        np.array([c[2] for c in chunks], dtype=np.int64),
    )
    return score_queries(units, ex, ret, len(excerpts), index)


@st.composite
def scenarios(draw):
    n_docs = draw(st.integers(1, 3))
    texts = {
        f"d{i}": draw(st.text(alphabet=ALPHABET, min_size=1, max_size=40))
        for i in range(n_docs)
    }

    def span(nonempty: bool = True):
        doc = draw(st.sampled_from(sorted(texts)))
        n = len(texts[doc])
        a = draw(st.integers(0, n - 1 if nonempty else n))
        b = draw(st.integers(a + 1 if nonempty else a, n))
        return (doc, a, b)

    if draw(st.booleans()):  # a sequential chunking, possibly overlapping windows
        chunks = []
        for doc, text in texts.items():
            size = draw(st.integers(1, 12))
            stride = draw(st.integers(1, size))
            chunks += [
                (doc, s, min(s + size, len(text))) for s in range(0, len(text), stride)
            ]
    else:  # arbitrary chunks: nested, disordered, overlapping
        chunks = [span() for _ in range(draw(st.integers(1, 8)))]
    n_queries = draw(st.integers(1, 4))
    excerpts = [
        [span() for _ in range(draw(st.integers(1, 3)))] for _ in range(n_queries)
    ]
    retrieved = [
        [
            draw(st.sampled_from(chunks)) if draw(st.booleans()) else span(False)
            for _ in range(draw(st.integers(0, 5)))
        ]
        for _ in range(n_queries)
    ]
    return texts, excerpts, retrieved, chunks


@pytest.mark.parametrize("unit", ["token", "char"])
@settings(max_examples=150, deadline=None)
@given(data=scenarios())
def test_core_matches_brute_force(unit, data):
    texts, excerpts, retrieved, chunks = data
    got = run_core(texts, unit, excerpts, retrieved, chunks)
    want = brute_force_metrics(texts, unit, excerpts, retrieved, chunks)
    for q, w in enumerate(want):
        for metric in ("recall", "precision", "iou", "f1", "precision_omega"):
            assert math.isclose(got.metric(metric)[q], w[metric], abs_tol=1e-12), (
                metric,
                q,
            )
        assert got.excerpt_units[q] == w["te"]
        assert got.retrieved_units[q] == w["tr"]
        assert got.true_positive_units[q] == w["tp"]
        assert got.first_relevant_rank[q] == w["first"]
        assert got.omega_chunks[q] == w["omega"]
    coverage = [c for w in want for c in w["coverage"]]
    np.testing.assert_allclose(got.excerpt_coverage, coverage)


TEXT = {"doc": "0123456789abcdefghij"}


def test_touching_chunk_does_not_overlap():
    got = run_core(
        TEXT,
        "char",
        [[("doc", 5, 10)]],
        [[("doc", 0, 5)]],
        [("doc", 0, 5), ("doc", 5, 10)],
    )
    assert got.metric("recall")[0] == 0.0
    assert got.metric("precision")[0] == 0.0
    assert got.omega_chunks[0] == 1
    assert got.metric("precision_omega")[0] == 1.0
    assert got.first_relevant_rank[0] == 0


def test_repeated_chunk_counts_twice_in_precision():
    got = run_core(
        TEXT,
        "char",
        [[("doc", 0, 5)]],
        [[("doc", 0, 5), ("doc", 0, 5)]],
        [("doc", 0, 5)],
    )
    assert got.metric("recall")[0] == 1.0
    assert got.metric("precision")[0] == 0.5
    assert got.metric("iou")[0] == 0.5
    assert got.retrieved_units[0] == 10


def test_excerpt_spanning_chunks_and_empty_retrieval():
    chunks = [("doc", 0, 4), ("doc", 4, 8), ("doc", 8, 12)]
    got = run_core(TEXT, "char", [[("doc", 2, 10)], [("doc", 0, 1)]], [[], []], chunks)
    assert got.metric("recall").tolist() == [0.0, 0.0]
    assert got.metric("precision").tolist() == [0.0, 0.0]
    assert got.omega_chunks.tolist() == [3, 1]
    assert got.metric("precision_omega")[0] == pytest.approx(8 / 12)
    assert got.n_retrieved.tolist() == [0, 0]


def test_token_unit_counts_tokens_not_characters():
    texts = {"doc": "hello world, hello moon"}
    bounds = get_tokenizer().token_bounds(texts["doc"])
    got = run_core(
        texts, "token", [[("doc", 0, 5)]], [[("doc", 0, 11)]], [("doc", 0, 23)]
    )
    # "hello" is one token, "hello world" two
    assert got.excerpt_units[0] == 1
    assert got.retrieved_units[0] == 2
    assert bounds.shape[0] >= 5
    assert got.metric("precision")[0] == 0.5


def test_describe_uses_population_std():
    stats = describe(np.array([0.0, 1.0]))
    assert stats.mean == 0.5
    assert stats.std == 0.5  # ddof=0
    assert describe(np.array([np.nan])).n == 0


def test_summarize_per_group():
    got = run_core(
        TEXT,
        "char",
        [[("doc", 0, 5)], [("doc", 5, 10)], [("doc", 10, 15)]],
        [[("doc", 0, 5)], [], [("doc", 10, 15)]],
        [("doc", 0, 20)],
    )
    overall, groups = summarize(got, ["a", "b", "a"])
    assert overall["recall"].mean == pytest.approx(2 / 3)
    assert groups["a"]["recall"].mean == 1.0
    assert groups["b"]["recall"].mean == 0.0
    assert groups["b"]["recall"].n == 1


def test_unknown_document_is_named():
    units = UnitMap(["a"], ["text"], "char")
    with pytest.raises(KeyError, match="'zzz' is not in the corpus"):
        QuerySpans.from_lists([[("zzz", 0, 1)]], units)


def test_the_token_axis_needs_a_tokenizer_or_its_bounds():
    """core/ resolves no tokenizer spec (it imports no stage above it): the
    caller gives the tokenizer, or each document's token bounds."""
    with pytest.raises(TypeError, match="needs a tokenizer or token_bounds"):
        UnitMap(["a"], ["some text"], "token")
    bounds = [np.array([[0, 4], [5, 9]], dtype=np.int64)]
    units = UnitMap(["a"], ["some text"], "token", token_bounds=bounds)
    assert units.total_units == 2
