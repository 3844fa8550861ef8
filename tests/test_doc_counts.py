"""Piece counts from a document's one tokenization equal counting each piece on
its own (chunkers/_doc_counts.py), and the recursive chunker's chunks from the
document's tokens equal its chunks counting every piece: on adversarial texts
(whitespace, line breaks, punctuation, digits, contractions, non-ASCII) and on
the bundled corpora."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_chunkeval.chunkers import RecursiveTokenChunker
from pytest_chunkeval.chunkers._doc_counts import DocumentCounter, cuts
from pytest_chunkeval.tokenizers.base import TiktokenTokenizer, get_tokenizer

TOKENIZER = get_tokenizer()

# cl100k_base as older tiktoken wrote its pattern (the same ranks).
_OLD_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


@functools.lru_cache(maxsize=1)
def _old_pattern_tokenizer() -> TiktokenTokenizer:
    import tiktoken

    base = TOKENIZER.encoding  # type: ignore[attr-defined]
    tokenizer = TiktokenTokenizer("cl100k_base")
    tokenizer._loaded = tiktoken.Encoding(
        name="cl100k_old_pattern",
        pat_str=_OLD_PATTERN,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens=base._special_tokens,
    )
    return tokenizer


# Pieces chosen to meet every alternative of the pattern at a piece's edge:
# whitespace runs ending in line breaks, lookahead (\s+(?!\S)), punctuation
# taking the line breaks after it, contractions, digit groups of three, letters
# and digits outside ASCII, combining marks, emoji, special-token text.
_SNIPPETS = [
    *" \n\r\t\x0b\x0c\u00a0\u3000\u2028\u200b",
    *".,;:!?'\"-_()[]/\\#@*",
    *"sStTlLvVeErRdDmMaz",
    *"0123456789",
    *"éßÅ中日😀\u0301٣²Ⅻªº",
    "  \n\n",
    "\r\n",
    "'s",
    "'ll",
    "'VE",
    "word",
    " the",
    "1234567",
    "...",
    ".\n\n",
    "<|endoftext|>",
]
_TEXTS = st.one_of(
    st.lists(st.sampled_from(_SNIPPETS), min_size=1, max_size=60).map("".join),
    st.text(min_size=1, max_size=40),
)


def _direct(tokenizer: Any, text: str, a: list[int], b: list[int]) -> list[int]:
    return [
        len(tokenizer.encoding.encode_ordinary(text[s:e]))
        for s, e in zip(a, b, strict=True)
    ]


@st.composite
def _text_and_pieces(draw: Any) -> tuple[str, list[int], list[int]]:
    text = draw(_TEXTS)
    n = len(text)
    edges = st.integers(min_value=0, max_value=n)
    pairs = draw(st.lists(st.tuples(edges, edges), min_size=1, max_size=12))
    pairs = [(min(p), max(p)) for p in pairs if p[0] != p[1]] or [(0, n)]
    return text, [p[0] for p in pairs], [p[1] for p in pairs]


@pytest.mark.parametrize("old", [False, True], ids=["cl100k", "cl100k-old-pattern"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_text_and_pieces())
def test_piece_counts_from_the_documents_tokens_equal_direct_counts(
    old: bool, case: tuple[str, list[int], list[int]]
) -> None:
    tokenizer = _old_pattern_tokenizer() if old else TOKENIZER
    text, a, b = case
    counter = DocumentCounter(tokenizer, text, tokenizer.token_bounds(text))
    got = counter.counts(np.asarray(a), np.asarray(b)).tolist()
    assert got == _direct(tokenizer, text, a, b)


def test_counting_the_documents_tokens_in_a_piece_would_be_wrong() -> None:
    # Why a piece is not simply the document's tokens inside it: the document
    # "one  two" is "one", " ", " two" (a space run stops before the space that
    # starts a word), the piece "one  " is "one", "  ".
    text = "one  two"
    tokens = TOKENIZER.token_bounds(text)
    inside = int(np.searchsorted(tokens[:, 0], 5))
    assert (inside, TOKENIZER.count(text[:5])) == (3, 2)
    counter = DocumentCounter(TOKENIZER, text, tokens)
    assert counter.derived
    assert counter.counts(np.array([0, 1, 3]), np.array([5, 5, 5])).tolist() == [
        2,
        2,
        1,
    ]


def test_cuts_are_ascii_letter_or_digit_then_another_ascii_class() -> None:
    assert cuts("ab1 c.d'e é f2") is not None
    assert cuts("ab1 c.d'e é f2").tolist() == [2, 3, 5, 7, 9, 13]  # type: ignore[union-attr]
    assert cuts("a\ud800b") is None  # lone surrogate: every piece is encoded


def test_texts_it_cannot_derive_are_counted_directly() -> None:
    text = "one \ud800 two.  \n\n three"  # a lone surrogate
    counter = DocumentCounter(TOKENIZER, text, TOKENIZER.token_bounds(text))
    assert not counter.derived
    a, b = [0, 3, 9], [9, len(text), len(text)]
    assert counter.counts(np.asarray(a), np.asarray(b)).tolist() == [
        TOKENIZER.count(text[s:e]) for s, e in zip(a, b, strict=True)
    ]
    assert not DocumentCounter(TOKENIZER, "abc", None).derived


_SEPARATORS = st.sampled_from(
    [None, ["\n\n", "\n", " ", ""], [".", " "], ["  \n\n", "'s", ""], ["1", "a"]]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=_TEXTS,
    size=st.integers(min_value=1, max_value=12),
    overlap=st.integers(min_value=0, max_value=12),
    separators=_SEPARATORS,
)
def test_recursive_chunks_from_tokens_equal_chunks_counting_each_piece(
    text: str, size: int, overlap: int, separators: list[str] | None
) -> None:
    chunker = RecursiveTokenChunker(size, min(overlap, size), separators=separators)
    direct = chunker.chunk_spans(text)
    derived = chunker.spans_from_tokens(text, TOKENIZER.token_bounds(text))
    assert derived.tolist() == direct.tolist()


class _CountingEncoding:
    """A tiktoken encoding that records the text it is asked to encode (less
    the special-token text JoinedCounter puts between pieces)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.texts: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _record(self, text: str, allowed: Any = ()) -> None:
        for special in allowed if isinstance(allowed, (set, frozenset)) else ():
            text = text.replace(special, "")
        self.texts.append(text)

    def encode_ordinary(self, text: str) -> Any:
        self._record(text)
        return self._inner.encode_ordinary(text)

    def encode_to_numpy(self, text: str, **kw: Any) -> Any:
        self._record(text, kw.get("allowed_special", ()))
        return self._inner.encode_to_numpy(text, **kw)

    def encode_ordinary_batch(self, texts: list[str], **kw: Any) -> Any:
        for text in texts:
            self._record(text)
        return self._inner.encode_ordinary_batch(texts, **kw)


def test_a_cold_chunking_and_unit_map_encode_each_document_once(
    tmp_path: Path,
) -> None:
    # The recursive chunker and the unit map share each document's one
    # tokenization (through the token cache); only short heads and tails of
    # pieces are encoded besides. Before, the chunker encoded its pieces (every
    # character at least once) and the unit map every document again.
    from support.tiny_corpus import DOCS

    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.engine.chunking import Chunking, unit_map

    docs = {name: (text + "\n\n") * 12 for name, text in DOCS.items()}
    corpus = Corpus.from_mapping(docs)
    tokenizer = TiktokenTokenizer("cl100k_base")
    counting = _CountingEncoding(TOKENIZER.encoding)  # type: ignore[attr-defined]
    tokenizer._loaded = counting
    chunking = Chunking(
        RecursiveTokenChunker(30, 0, encoding=tokenizer), corpus, tmp_path
    )
    units = unit_map(corpus, "token", tokenizer, tmp_path)
    whole = [t for t in counting.texts if t in docs.values()]
    assert sorted(whole) == sorted(docs.values())  # each document once, in whole
    encoded = sum(len(t) for t in counting.texts)
    assert encoded < 1.3 * sum(len(t) for t in docs.values())
    expected = RecursiveTokenChunker(30, 0)
    for i, text in enumerate(docs.values()):
        spans = chunking.bounds[chunking.doc == i].tolist()
        assert spans == expected.chunk_spans(text).tolist()
    assert units.total_units == sum(TOKENIZER.count(t) for t in docs.values())


@pytest.fixture(scope="module")
def embedding_cache(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from pytest_chunkeval.embedders.cache import EmbeddingCache

    return EmbeddingCache(tmp_path_factory.mktemp("embeddings"))


def _piece_chunkers(cache: Any) -> list[Any]:
    from pytest_chunkeval.chunkers.cluster import ClusterSemanticChunker
    from pytest_chunkeval.chunkers.semantic import KamradtModifiedChunker
    from pytest_chunkeval.embedders.hashing import HashingEmbedder

    embedder = HashingEmbedder(16)
    return [
        KamradtModifiedChunker(6, embedder=embedder, cache=cache),
        KamradtModifiedChunker(
            6, target="mean", piece_tokens=3, embedder=embedder, cache=cache
        ),
        ClusterSemanticChunker(8, 2, embedder=embedder, cache=cache),
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_TEXTS)
def test_semantic_and_cluster_chunks_from_tokens_equal_their_chunks(
    embedding_cache: Any, text: str
) -> None:
    # the Kamradt-modified (max: sentences over the size split; mean: pieces)
    # and cluster chunkers count their pieces from the document's tokens too
    tokens = TOKENIZER.token_bounds(text)
    for chunker in _piece_chunkers(embedding_cache):
        derived = chunker.spans_from_tokens(text, tokens)
        assert derived.tolist() == chunker.chunk_spans(text).tolist(), chunker.name
