"""Token unit: an excerpt and a chunk share the units of their shared characters
(docs/concepts.md, "Units"), not every token both touch."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_chunkeval.core.metrics import ChunkIndex, QuerySpans, score_queries
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.judging.relevance import context_relevance
from pytest_chunkeval.tokenizers.base import get_tokenizer

# cl100k: ['The', ' answer', ' is', ' here', ' .', ' More', ' text', ' follows', '.']
TEXT = "The answer is here . More text follows."
ANSWER = ("doc", 0, 19)  # "The answer is here " ends inside the token " ."


def _score(excerpts, retrieved, chunks, k=None):
    units = UnitMap(["doc"], [TEXT], "token", get_tokenizer())
    index = ChunkIndex(
        units,
        np.zeros(len(chunks), dtype=np.int64),
        np.array([c[1] for c in chunks], dtype=np.int64),
        np.array([c[2] for c in chunks], dtype=np.int64),
    )
    depth = None if k is None else np.full(len(excerpts), k, dtype=np.int64)
    return score_queries(
        units,
        QuerySpans.from_lists(excerpts, units),
        QuerySpans.from_lists(retrieved, units),
        len(excerpts),
        index,
        depth=depth,
    )


def test_the_boundary_token_is_joined_across_the_cut():
    bounds = get_tokenizer().token_bounds(TEXT).tolist()
    assert [TEXT[s:e] for s, e in bounds][4] == " ."
    assert bounds[4] == [18, 20]  # the excerpt ends at 19, inside it


def test_a_chunk_sharing_only_a_boundary_token_is_no_hit():
    after = ("doc", 19, len(TEXT))  # starts right after the excerpt
    got = _score([[ANSWER]], [[after]], [("doc", 0, 19), after])
    assert got.metric("recall")[0] == 0.0
    assert got.true_positive_units[0] == 0
    assert got.metric("mrr")[0] == 0.0
    assert got.first_relevant_rank[0] == 0
    assert got.omega_chunks[0] == 1  # only the chunk holding the excerpt
    assert got.metric("precision_omega")[0] == 1.0


def test_the_boundary_token_counts_where_the_excerpt_characters_are():
    before = ("doc", 0, 19)
    got = _score([[ANSWER]], [[before]], [before, ("doc", 19, len(TEXT))])
    assert got.metric("recall")[0] == 1.0
    assert got.metric("mrr")[0] == 1.0


def test_adjacent_chunks_split_inside_an_excerpt_token_give_ceiling_at_most_one():
    # " answer" is token [3, 10); the cut at 7 puts part of it in each chunk.
    chunks = [("doc", 0, 7), ("doc", 7, len(TEXT))]
    excerpt = [("doc", 4, 13)]  # "answer is"
    for k in (1, 2):
        got = _score([excerpt], [chunks[:k]], chunks, k=k)
        assert got.metric("ceiling")[0] <= 1.0
        assert got.depth_recall[0] <= got.metric("ceiling")[0]
        assert 0.0 <= got.metric("ndcg")[0] <= 1.0
    got = _score([excerpt], [chunks], chunks, k=2)
    assert got.metric("ceiling")[0] == 1.0
    assert got.metric("recall")[0] == 1.0
    # both chunks hold characters of " answer": each shares that token
    assert got.metric("mrr")[0] == 1.0


def test_judged_token_relevance_counts_shared_characters():
    units = UnitMap(["doc"], [TEXT], "token", get_tokenizer())
    judged = [("doc", 0, 19)]
    after = ("doc", 19, len(TEXT))
    got = context_relevance([after], judged, {"doc": TEXT}, units)
    assert got.context_relevance_tokens == 0.0
    got = context_relevance([("doc", 0, len(TEXT))], judged, {"doc": TEXT}, units)
    assert got.context_relevance_tokens == pytest.approx(5 / 9)
