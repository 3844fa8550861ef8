"""Ties broken by content (docs/baselines.md, "Ties"; scoring rules 3): exactly
equal scores are ordered by a hash of the chunk text, then its offsets, never by
the document's name or place, in every store and in fusion. Each ordering is
checked against a brute-force oracle of the rule."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.plugin_project import CONFTEST, DIST, MODES, run

from pytest_chunkeval.core.ranking import best_first, content_ties
from pytest_chunkeval.stores.exact import ExactIndex, top_rows
from pytest_chunkeval.stores.hybrid import rrf_fuse
from pytest_chunkeval.stores.rerank import rerank_rows

IntArray = npt.NDArray[np.int64]


def oracle_ties(texts: Sequence[str], starts: Sequence[int], ends: Sequence[int]):
    """The rule, written out: sort by (hash of the text, start, end, row)."""

    def key(row: int) -> tuple[bytes, int, int, int]:
        h = hashlib.blake2b(texts[row].encode(), digest_size=8).digest()
        return (h, starts[row], ends[row], row)

    order = sorted(range(len(texts)), key=key)
    keys = [0] * len(texts)
    for place, row in enumerate(order):
        keys[row] = place
    return keys


def oracle_order(scores: Sequence[float], rows: Sequence[int], ties: Sequence[int]):
    """Positions best first: higher score, then lower tie key; -1 rows last."""
    present = [i for i, r in enumerate(rows) if r >= 0 and scores[i] == scores[i]]
    absent = [i for i in range(len(rows)) if i not in present]
    return sorted(present, key=lambda i: (-scores[i], ties[rows[i]])) + absent


TEXTS = st.lists(st.sampled_from(["a", "b", "c", "same", "x y", ""]), max_size=30)


@settings(max_examples=200, deadline=None)
@given(texts=TEXTS, data=st.data())
def test_content_ties_follow_hash_then_offsets(texts: list[str], data) -> None:
    n = len(texts)
    starts = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    ends = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    got = content_ties(texts, np.array(starts, np.int64), np.array(ends, np.int64))
    assert got.tolist() == oracle_ties(texts, starts, ends)


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(st.text(max_size=6), min_size=1, max_size=20), data=st.data())
def test_reordering_the_corpus_reorders_nothing(texts: list[str], data) -> None:
    # Distinct (text, offsets): the order among them is the same in any corpus order.
    chunks = sorted({(t, i % 3, i % 3 + len(t)) for i, t in enumerate(texts)})
    perm = data.draw(st.permutations(range(len(chunks))))
    before = content_ties(*_columns(chunks))
    after = content_ties(*_columns([chunks[p] for p in perm]))
    assert np.argsort(after).tolist() == [perm.index(r) for r in np.argsort(before)]


def _columns(chunks):
    return (
        [c[0] for c in chunks],
        np.array([c[1] for c in chunks], np.int64),
        np.array([c[2] for c in chunks], np.int64),
    )


# Few distinct values: ties everywhere.
SCORE = st.sampled_from([0.0, 0.5, 1.0, -1.0, float("nan")])


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_best_first_equals_the_oracle(data) -> None:
    n_chunks = data.draw(st.integers(1, 12))
    ties = np.array(data.draw(st.permutations(range(n_chunks))), np.int64)
    q, m = data.draw(st.integers(1, 4)), data.draw(st.integers(0, 8))
    rows = np.array(
        data.draw(
            st.lists(st.integers(-1, n_chunks - 1), min_size=q * m, max_size=q * m)
        ),
        np.int64,
    ).reshape(q, m)
    scores = np.array(
        data.draw(st.lists(SCORE, min_size=q * m, max_size=q * m)), np.float64
    ).reshape(q, m)
    got = best_first(scores, rows, ties)
    for i in range(q):
        want = oracle_order(scores[i].tolist(), rows[i].tolist(), ties.tolist())
        ranked = [
            i_ for i_ in want if rows[i, i_] >= 0 and scores[i, i_] == scores[i, i_]
        ]
        assert got[i, : len(ranked)].tolist() == ranked


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_top_rows_with_tie_keys_equals_a_full_sort(data) -> None:
    q, n = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 40))
    values = st.sampled_from([-1.0, -0.5, 0.0, 0.5])
    neg = np.array(
        data.draw(st.lists(values, min_size=q * n, max_size=q * n)), np.float32
    ).reshape(q, n)
    ties = np.array(data.draw(st.permutations(range(n))), np.int64)
    k = data.draw(st.integers(1, n))
    want = [
        sorted(range(n), key=lambda c, r=r: (neg[r, c], ties[c]))[:k] for r in range(q)
    ]
    assert top_rows(neg, k, ties).tolist() == want


@settings(max_examples=100, deadline=None)
@given(
    distinct=st.integers(1, 10),
    copies=st.integers(1, 12),
    k=st.integers(1, 20),
    seed=st.integers(0, 2**32 - 1),
    block_bytes=st.sampled_from([1, 64, 1 << 12, 1 << 24]),
)
def test_exact_search_orders_ties_by_content(
    distinct: int, copies: int, k: int, seed: int, block_bytes: int
) -> None:
    rng = np.random.default_rng(seed)
    # Components in quarters: exact float32 dot products, so ties are exact.
    base = rng.integers(-2, 3, size=(distinct, 4)).astype(np.float32) / 4
    vectors = base[rng.integers(0, distinct, size=distinct * copies)]
    ties = rng.permutation(len(vectors)).astype(np.int64)
    queries = np.concatenate([base, rng.integers(-2, 3, (3, 4)) / 4]).astype(np.float32)
    got = ExactIndex(vectors, block_bytes=block_bytes).search(queries, k, ties=ties)
    scores = queries @ vectors.T
    take = min(k, len(vectors))
    for i in range(len(queries)):
        want = sorted(range(len(vectors)), key=lambda c: (-scores[i, c], ties[c]))
        assert got[i, :take].tolist() == want[:take]
    assert (got[:, take:] == -1).all()


def test_fusion_and_rerank_order_equal_scores_by_tie_key() -> None:
    ties = np.array([4, 3, 2, 1, 0], np.int64)  # row 4 first, row 0 last
    dense = np.array([[0, 1]])
    lexical = np.array([[1, 0]])  # rows 0 and 1: equal fused scores
    assert rrf_fuse({"d": dense, "b": lexical}, 2, ties=ties).tolist() == [[1, 0]]
    assert rrf_fuse({"d": dense, "b": lexical}, 2).tolist() == [[0, 1]]
    candidates = np.array([[0, 2, 4, -1]])
    scores = np.array([[0.5, 0.5, 0.5, 9.0]], np.float32)
    assert rerank_rows(candidates, scores, 3, ties).tolist() == [[4, 2, 0]]


def test_bm25_orders_equal_scores_by_tie_key() -> None:
    pytest.importorskip("bm25s")
    from pytest_chunkeval.stores.bm25 import BM25Store

    texts = ["red apple", "apple red", "green pear"]  # rows 0 and 1 score the same
    index = BM25Store().index_texts(texts)
    assert index.search_texts(["apple"], 2).tolist() == [[0, 1]]
    assert index.search_texts(["apple"], 2, ties=np.array([2, 1, 0])).tolist() == [
        [1, 0]
    ]
    assert index.search_texts(["apple"], 1, ties=np.array([2, 1, 0])).tolist() == [[1]]


def test_chroma_orders_rows_of_equal_distance_by_tie_key() -> None:
    pytest.importorskip("chromadb")
    from pytest_chunkeval.stores.chroma import ChromaStore

    vectors = np.zeros((6, 4), np.float32)
    vectors[:, 0] = 1.0  # six identical vectors: equal distances
    ties = np.array([5, 3, 1, 0, 2, 4], np.int64)
    with ChromaStore() as store:
        index = store.index("ties-test", vectors)
        got = index.search(vectors[:1], 6, ties=ties)
    assert got.tolist() == [np.argsort(ties).tolist()]


# ------------------------------------------------------------------- plugin

RELEVANT = "Alpha beta gamma delta."
# The same words in another order: the same hashed vector, an exact tie; a
# different text, whose hash comes after the relevant one's.
LOOKALIKE = "Gamma beta alpha delta."

TIE_INI = """\
[pytest]
chunkeval_corpus = docs
chunkeval_queries = queries.jsonl
chunkeval_embedder = hashing
chunkeval_store = exact
chunkeval_k = 1
chunkeval_unit = char
"""

TIE_TEST = """
def test_tie(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("recursive:200:0"))
"""


@MODES
def test_renaming_a_file_changes_no_ranking(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: bool
) -> None:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    docs = pytester.path / "docs"
    docs.mkdir()
    (docs / "b.md").write_text(RELEVANT + "\n")
    (docs / "c.md").write_text(LOOKALIKE + "\n")
    (docs / "d.md").write_text("Nothing like the others here.\n")
    record = {
        "id": "q1",
        "question": "alpha beta gamma delta",
        "doc_id": "b.md",
        "excerpts": [{"text": RELEVANT}],
    }
    head = json.dumps({"chunkeval_queries": 1})
    (pytester.path / "queries.jsonl").write_text(f"{head}\n{json.dumps(record)}\n")
    (pytester.path / "pytest.ini").write_text(TIE_INI)
    (pytester.path / "conftest.py").write_text(CONFTEST)
    pytester.makepyfile(test_tied=TIE_TEST)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    saved = json.loads(
        (pytester.path / "__chunkeval__" / "test_tied" / "test_tie.json").read_text()
    )
    assert saved["config"]["scoring_rules"] == 3
    # The look-alike's file renamed to sort first: under rules 2 its chunk took
    # the only rank (the lower row) and the gate failed REGRESSED.
    (docs / "c.md").rename(docs / "a.md")
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        result = pytester.runpytest_subprocess(*DIST)
    else:
        result = run(pytester)
    result.assert_outcomes(passed=1)
    assert "REGRESSED" not in result.stdout.str()
