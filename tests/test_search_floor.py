"""The tiled searches (docs/performance.md, "Search at the floor") give what the
plain ones gave: exact search with threshold selection over tiles, BM25 in
question blocks, the decisive margins' float64 scores rank by rank. Each is
checked against a reference implementation kept here, on random, tied and
duplicated inputs."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_chunkeval.engine.margins import row_scores
from pytest_chunkeval.stores.exact import ExactIndex

IntArray = npt.NDArray[np.int64]


def reference_search(
    queries: npt.NDArray[np.float32],
    vectors: npt.NDArray[np.float32],
    k: int,
    ties: IntArray | None,
) -> IntArray:
    """The rule, searched the plain way: every score, each row fully sorted by
    (score descending, tie key)."""
    scores = queries @ vectors.T
    key = np.arange(len(vectors)) if ties is None else ties
    out = np.full((len(queries), k), -1, dtype=np.int64)
    for i, row in enumerate(scores):
        order = sorted(range(len(vectors)), key=lambda c, r=row: (-r[c], key[c]))
        out[i, : min(k, len(vectors))] = order[:k]
    return out


def reference_row_scores(
    q: npt.NDArray[np.float32], c: npt.NDArray[np.float32], rows: IntArray
) -> npt.NDArray[np.float64]:
    """The scores as they were computed: a whole block widened at once."""
    safe = np.where(rows >= 0, rows, 0)
    out = np.einsum(
        "qd,qmd->qm", q.astype(np.float64), c[safe].astype(np.float64)
    ).astype(np.float64)
    out[rows < 0] = np.nan
    return out


KIND = st.sampled_from(["random", "tied", "duplicated"])


def _inputs(kind: str, n: int, nq: int, dim: int, seed: int):
    rng = np.random.default_rng(seed)
    # eighths: every dot product is exact in float32, whatever the tiling
    if kind == "random":
        vectors = rng.integers(-8, 9, size=(n, dim)) / 8
    elif kind == "tied":
        vectors = rng.integers(-1, 2, size=(n, dim)) / 2
    else:
        base = rng.integers(-8, 9, size=(max(1, n // 4), dim)) / 8
        vectors = base[rng.integers(0, len(base), size=n)]
    queries = rng.integers(-8, 9, size=(nq, dim)) / 8
    if kind == "duplicated" and nq > 1:
        queries[1::2] = queries[0]
    return vectors.astype(np.float32), queries.astype(np.float32)


@settings(max_examples=150, deadline=None)
@given(
    kind=KIND,
    n=st.integers(1, 200),
    nq=st.integers(1, 12),
    k=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
    tile=st.sampled_from([1, 5, 8, 17, 64, 100, 4096]),
    block=st.sampled_from([1, 100, 4096, 1 << 22]),
    keyed=st.booleans(),
)
def test_tiled_exact_search_equals_the_reference(
    kind: str,
    n: int,
    nq: int,
    k: int,
    seed: int,
    tile: int,
    block: int,
    keyed: bool,
) -> None:
    vectors, queries = _inputs(kind, n, nq, 6, seed)
    ties = np.random.default_rng(seed).permutation(n) if keyed else None
    index = ExactIndex(vectors, block_bytes=block, tile_columns=tile)
    got = index.search(queries, k, ties=ties)
    np.testing.assert_array_equal(got, reference_search(queries, vectors, k, ties))


@settings(max_examples=60, deadline=None)
@given(
    nq=st.integers(1, 40),
    m=st.integers(0, 15),
    block=st.sampled_from([1, 3, 4096]),
    seed=st.integers(0, 2**32 - 1),
)
def test_row_scores_rank_by_rank_equal_the_whole_block(
    nq: int, m: int, block: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((nq, 32)).astype(np.float32)
    c = rng.standard_normal((50, 32)).astype(np.float32)
    rows = rng.integers(-1, 50, size=(nq, m))
    got = row_scores(q, c, rows, block=block)
    want = reference_row_scores(q, c, rows)
    np.testing.assert_array_equal(got, want)  # bitwise, NaN where -1


WORDS = ["pump", "valve", "error", "code", "red", "oil", "zx"]  # no stop word


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(
        # no empty corpus: bm25s divides by a mean length of 0
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
        min_size=1,
        max_size=40,
    ),
    questions=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=0, max_size=3).map(" ".join),
        min_size=1,
        max_size=8,
    ),
    k=st.integers(1, 12),
    block=st.sampled_from([1, 64, 4 << 20]),
    keyed=st.booleans(),
)
def test_bm25_in_question_blocks_equals_the_dense_search(
    texts: list[str],
    questions: list[str],
    k: int,
    block: int,
    keyed: bool,
) -> None:
    pytest.importorskip("bm25s")
    from pytest_chunkeval.stores import bm25

    index = bm25.BM25Store().index_texts(texts)
    ties = np.random.default_rng(len(texts)).permutation(len(texts)) if keyed else None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bm25, "BLOCK_BYTES", block)
        got = index.search_texts(questions, k, ties=ties)
    # the reference: every question's dense scores, sorted whole; score 0 is out
    scores = index.scores(questions)
    key = np.arange(len(texts)) if ties is None else ties
    for i, row in enumerate(scores):
        order = sorted(range(len(texts)), key=lambda c, r=row: (-r[c], key[c]))
        want = [c for c in order[:k] if row[c] > 0]
        want += [-1] * (k - len(want))
        assert got[i].tolist() == want


def reference_occurrences(
    texts: list[str], needles: list[str]
) -> list[list[list[int]]]:
    """Every (doc, start) of each needle, overlapping ones included, by str.find."""
    out: list[list[list[int]]] = []
    for needle in needles:
        found = []
        for d, text in enumerate(texts):
            start = text.find(needle) if needle else -1
            while start >= 0:
                found.append([d, start])
                start = text.find(needle, start + 1)
        out.append(found)
    return out


@settings(max_examples=100, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="abé", max_size=120), min_size=1, max_size=5),
    needles=st.lists(st.text(alphabet="abé", max_size=40), min_size=1, max_size=8),
    segment=st.sampled_from([1, 3, 7, 40, 1 << 16]),
    data=st.data(),
)
def test_copies_search_with_a_prefilter_finds_every_occurrence(
    texts: list[str], needles: list[str], segment: int, data: st.DataObject
) -> None:
    from pytest_chunkeval.engine import copies

    def find_occurrences(texts: list[str], needles: list[str]) -> list[np.ndarray]:
        """Documents hashed ``segment`` window starts at a time."""
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(copies, "_SEGMENT", segment)
            return copies.find_occurrences(texts, needles)

    # needles cut from the texts too, so that most of them occur (long ones too)
    for text in texts:
        if text:
            lo = data.draw(st.integers(0, len(text) - 1))
            needles.append(text[lo : lo + data.draw(st.integers(1, 60))])
    got = [found.tolist() for found in find_occurrences(texts, needles)]
    assert got == reference_occurrences(texts, needles)


@settings(max_examples=80, deadline=None)
@given(
    texts=st.lists(
        # stop words, repeated and capitalised words, empty and stop-word-only texts
        st.lists(
            st.sampled_from([*WORDS, "the", "and", "Pump", "VALVE", "a", "x1"]),
            max_size=8,
        ).map(" ".join),
        min_size=1,
        max_size=30,
    ).filter(lambda texts: any(texts)),
    questions=st.lists(
        st.lists(st.sampled_from([*WORDS, "the", "Oil"]), max_size=3).map(" ".join),
        min_size=1,
        max_size=6,
    ),
    lower=st.booleans(),
    stopwords=st.sampled_from(["en", "none"]),
    stem=st.sampled_from(["none", "english"]),
    method=st.sampled_from(["lucene", "robertson", "atire", "bm25l", "bm25+"]),
)
def test_bm25_index_from_ids_scores_as_the_index_from_strings(
    texts: list[str],
    questions: list[str],
    lower: bool,
    stopwords: str,
    stem: str,
    method: str,
) -> None:
    """The index built from bm25s-style ids (stores/bm25.py tokenize_ids) scores
    every chunk bitwise as the one built from bm25s.tokenize's strings did."""
    bm25s = pytest.importorskip("bm25s")
    if stem != "none":
        pytest.importorskip("Stemmer")
    from pytest_chunkeval.stores import bm25

    store = bm25.BM25Store(lower=lower, stopwords=stopwords, stem=stem, method=method)
    tokens_before = store.tokenize(texts)
    if not any(tokens_before):  # bm25s cannot index a corpus without a term
        return
    before = bm25s.BM25(k1=store.k1, b=store.b, method=store.method)
    before.index(tokens_before, show_progress=False)
    now = store.index_texts(texts)
    if stem == "none":  # the same ids as bm25s.tokenize's, the same vocabulary
        made = bm25s.tokenize(
            texts,
            lower=lower,
            stopwords="en" if stopwords == "en" else None,
            show_progress=False,
        )
        got = store.tokenize_ids(texts)
        assert got.ids == made.ids
        assert got.vocab == made.vocab
    for tokens in store.tokenize(questions):
        if tokens:
            want = before.get_scores(tokens)
            np.testing.assert_array_equal(now._model.get_scores(tokens), want)


@settings(max_examples=40, deadline=None)
@given(
    texts=st.lists(
        # multi-byte characters cut between two tokens, emoji, spaces and newlines
        st.text(alphabet="ab é漢😀\n\t.", max_size=200),
        min_size=1,
        max_size=4,
    )
)
def test_token_columns_kept_compact_on_a_cold_run_equal_the_plain_ones(
    texts: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A cold run keeps each document's token bounds as a warm run reads them
    (engine/token_cache.py): the same columns as tokenizing without a cache, cold
    and then warm."""
    from pytest_chunkeval.core.units import token_columns as plain_columns
    from pytest_chunkeval.data.corpus import Corpus, Document
    from pytest_chunkeval.engine.token_cache import token_columns
    from pytest_chunkeval.tokenizers.base import get_tokenizer

    tokenizer = get_tokenizer("cl100k_base")
    corpus = Corpus([Document(f"d{i}", text) for i, text in enumerate(texts)])
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in texts])])
    want = plain_columns(offsets, (tokenizer.token_bounds(t) for t in texts))
    cache = tmp_path_factory.mktemp("tokens")
    for _ in ("cold", "warm"):
        got = token_columns(corpus, tokenizer, cache)
        for g, w in ((got.starts(), want.starts()), (got.ends, want.ends)):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(got.counts, want.counts)
