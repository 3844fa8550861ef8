"""Identical text is interchangeable (docs/concepts.md, "Identical text"): the
metric core with ``copies`` against a brute-force reference, both units."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.brute_force import (
    Chars,
    Span,
    brute_force_ranking,
    char_set,
    shared_units,
    unit_set,
)

from pytest_chunkeval.core.metrics import ChunkIndex, QuerySpans, score_queries
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.data.corpus import Corpus, Document
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.engine.copies import excerpt_copies, find_occurrences
from pytest_chunkeval.tokenizers.base import get_tokenizer

SENTENCES = ["aa", "aaa", "Yes. ", "No. ", "Yes. No. ", "x\n"]


def occurrences(texts: dict[str, str], needle: str) -> list[Span]:
    out = []
    for doc, text in texts.items():
        i = text.find(needle)
        while i >= 0:
            out.append((doc, i, i + len(needle)))
            i = text.find(needle, i + 1)
    return out


def choose(texts, excerpts, scored) -> list[Span]:
    """Brute force: merge identical texts; each at the candidate sharing the most
    characters with the scored chunks; ties: earliest rank, stored, corpus order."""
    order = list(texts)
    reached: Chars = set().union(*(char_set(r) for r in scored))
    chosen, seen = [], set()
    for doc, a, b in excerpts:
        text = texts[doc][a:b]
        if text in seen:
            continue
        seen.add(text)
        stored = {(d, s, e) for d, s, e in excerpts if texts[d][s:e] == text}

        def key(c: Span, stored=stored) -> tuple[int, int, int, int, int]:
            rank = next(
                (i for i, r in enumerate(scored) if char_set(r) & char_set(c)),
                10**9,
            )
            return (
                -len(char_set(c) & reached),
                rank,
                c not in stored,
                order.index(c[0]),
                c[1],
            )

        chosen.append(min(occurrences(texts, text), key=key))
    return chosen


@st.composite
def scenarios(draw):
    texts = {
        f"d{i}": "".join(
            draw(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=6))
        )
        for i in range(draw(st.integers(1, 2)))
    }

    def span() -> Span:
        doc = draw(st.sampled_from(sorted(texts)))
        n = len(texts[doc])
        a = draw(st.integers(0, n - 1))
        return (doc, a, draw(st.integers(a + 1, min(n, a + 9))))

    chunks = []
    for doc, text in texts.items():
        size = draw(st.integers(1, 8))
        stride = draw(st.integers(1, size))
        chunks += [
            (doc, s, min(s + size, len(text))) for s in range(0, len(text), stride)
        ]
    n_queries = draw(st.integers(1, 3))
    excerpts = []
    for _ in range(n_queries):
        own = [span() for _ in range(draw(st.integers(1, 3)))]
        if draw(st.booleans()):  # the same text listed twice, maybe elsewhere
            doc, a, b = own[0]
            copies = occurrences(texts, texts[doc][a:b])
            own.append(draw(st.sampled_from(copies)))
        excerpts.append(own)
    retrieved = [
        draw(st.lists(st.sampled_from(chunks), max_size=6)) for _ in range(n_queries)
    ]
    k = draw(st.integers(1, 4))
    budget = draw(st.none() | st.integers(1, 20))
    return texts, excerpts, retrieved, chunks, k, budget


def run(texts, unit, excerpts, retrieved, chunks, k, budget):
    corpus = Corpus([Document(d, t) for d, t in texts.items()])
    queries = QuerySet(
        [
            Query(
                f"q{i}",
                "?",
                tuple(Excerpt(texts[d][a:b], d, a, b) for d, a, b in exs),
                exs[0][0],
            )
            for i, exs in enumerate(excerpts)
        ]
    )
    units = UnitMap(list(texts), list(texts.values()), unit, get_tokenizer())
    index = ChunkIndex(
        units,
        units.doc_indices([c[0] for c in chunks]),
        np.array([c[1] for c in chunks], dtype=np.int64),
        np.array([c[2] for c in chunks], dtype=np.int64),
    )
    n = len(excerpts)
    return score_queries(
        units,
        QuerySpans.from_lists(excerpts, units),
        QuerySpans.from_lists(retrieved, units),
        n,
        index,
        depth=np.full(n, min(k, len(chunks)), dtype=np.int64),
        budget=budget,
        copies=excerpt_copies(corpus, queries),
    )


@pytest.mark.parametrize("unit", ["token", "char"])
@settings(max_examples=120, deadline=None)
@given(data=scenarios())
def test_copies_match_brute_force(unit, data):
    texts, excerpts, retrieved, chunks, k, budget = data
    got = run(texts, unit, excerpts, retrieved, chunks, k, budget)
    d = min(k, len(chunks))
    for q, (exs, rets) in enumerate(zip(excerpts, retrieved, strict=True)):
        kept_prefix = []
        used = 0
        for r in rets:
            size = len(unit_set(r, texts, unit))
            if budget is not None and used + size > budget:
                break
            used += size
            kept_prefix.append(r)
        scored = [r for i, r in enumerate(rets) if i < d or i < len(kept_prefix)]
        chosen = choose(texts, exs, scored)
        want = brute_force_ranking(texts, unit, [chosen], [rets], chunks, k, budget)[0]
        columns = {**got.values, "depth_recall": got.depth_recall}
        for name in ("mrr", "ndcg", "ceiling", "complete", "recall", "depth_recall"):
            assert math.isclose(float(columns[name][q]), want[name], abs_tol=1e-9), (
                name,
                q,
                chosen,
            )
        te_chars: Chars = set().union(*(char_set(c) for c in chosen))
        tp = len(
            set().union(*(shared_units(r, te_chars, texts, unit) for r in kept_prefix))
        )
        tr = sum(len(unit_set(r, texts, unit)) for r in kept_prefix)
        assert got.metric("precision")[q] == pytest.approx(tp / tr if tr else 0.0)
        assert 0.0 <= got.metric("ndcg")[q] <= 1.0
        assert got.depth_recall[q] <= got.metric("ceiling")[q] + 1e-12
        assert got.metric("precision")[q] <= 1.0
        assert got.metric("iou")[q] <= 1.0
    # one chosen span per stored excerpt, each a copy of that excerpt's text
    for i, (doc, a, b) in enumerate(s for exs in excerpts for s in exs):
        c_doc = got.chosen.doc[i]
        c_start, c_end = int(got.chosen.start[i]), int(got.chosen.end[i])
        assert texts[list(texts)[c_doc]][c_start:c_end] == texts[doc][a:b]


def test_find_occurrences_includes_overlapping_ones():
    found = find_occurrences(["aaaa", "baaa"], ["aa", "", "zz"])
    assert found[0].tolist() == [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2]]
    assert found[1].shape == (0, 2)
    assert found[2].shape == (0, 2)


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="ab. é🎉\n", max_size=60), min_size=1, max_size=3),
    needles=st.lists(st.text(alphabet="ab. é🎉\n", max_size=40), max_size=6),
)
def test_find_occurrences_matches_str_find(texts, needles):
    got = find_occurrences(texts, needles)
    for needle, found in zip(needles, got, strict=True):
        want = [
            (d, i)
            for d, text in enumerate(texts)
            for i in range(len(text))
            if needle and text.startswith(needle, i)
        ]
        assert [tuple(x) for x in found.tolist()] == want


def test_find_occurrences_of_long_needles_sharing_an_anchor():
    head = "x" * 40
    texts = [head + "A" + head + "B", "zz" + head + "B"]
    found = find_occurrences(texts, [head + "A", head + "B", head])
    assert found[0].tolist() == [[0, 0]]
    assert found[1].tolist() == [[0, 41], [1, 2]]
    assert found[2].tolist() == [[0, 0], [0, 41], [1, 2]]
