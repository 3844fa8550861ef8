"""FixedTokenChunker: LangChain TokenTextSplitter windows, as exact spans."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_chunkeval.chunkers import FixedTokenChunker
from pytest_chunkeval.chunkers.fixed import window_starts
from pytest_chunkeval.tokenizers.base import get_tokenizer

TOKENIZER = get_tokenizer()
ENCODING = TOKENIZER.encoding  # type: ignore[attr-defined]

ASCII_TEXT = (
    "Chunking splits documents into pieces. Retrieval then ranks the pieces.\n\n"
    "Token-level metrics count the tokens of the excerpts that were retrieved. "
) * 30


def langchain_windows(text: str, size: int, overlap: int) -> list[str]:
    base = pytest.importorskip("langchain_text_splitters.base")
    tokenizer = base.Tokenizer(
        chunk_overlap=overlap,
        tokens_per_chunk=size,
        decode=ENCODING.decode,
        encode=ENCODING.encode_ordinary,
    )
    windows: list[str] = base.split_text_on_tokens(text=text, tokenizer=tokenizer)
    return windows


@pytest.mark.parametrize(
    ("size", "overlap"), [(1, 0), (7, 3), (50, 0), (200, 0), (250, 125), (10_000, 0)]
)
def test_windows_match_langchain_and_decoded_tokens(size: int, overlap: int) -> None:
    spans = FixedTokenChunker(size, overlap).chunk_spans(ASCII_TEXT)
    texts = [ASCII_TEXT[s:e] for s, e in spans.tolist()]
    assert texts == langchain_windows(ASCII_TEXT, size, overlap)
    ids = ENCODING.encode_ordinary(ASCII_TEXT)
    starts = range(0, len(ids), size - overlap)
    for i, (start, chunk) in enumerate(zip(starts, texts, strict=False)):
        assert chunk == ENCODING.decode(ids[start : start + size]), f"window {i}"
    last_end = spans[-1, 1]
    assert last_end == len(ASCII_TEXT)


def test_window_starts_follow_langchain_loop() -> None:
    assert window_starts(0, 10, 0).tolist() == []
    assert window_starts(5, 10, 0).tolist() == [0]
    assert window_starts(10, 10, 0).tolist() == [0]
    assert window_starts(11, 10, 0).tolist() == [0, 10]
    # stride 5: the window starting at 5 already ends at token 15 = n, so it is last
    assert window_starts(15, 10, 5).tolist() == [0, 5]
    assert window_starts(16, 10, 5).tolist() == [0, 5, 10]


def _char_of_byte(text: str) -> list[int]:
    out: list[int] = []
    for i, ch in enumerate(text):
        out.extend([i] * len(ch.encode("utf-8")))
    return out


@pytest.mark.parametrize(("size", "overlap"), [(1, 0), (2, 0), (3, 1), (5, 2)])
def test_offsets_on_tokens_that_split_characters(size: int, overlap: int) -> None:
    # Rare CJK characters and emoji are several tokens each: windows cut inside them.
    text = "𠜎𠜱𠝹 a 👩‍👩‍👧‍👦 b 🦜🦚 c 鱻龘 " * 3
    ids = ENCODING.encode_ordinary(text)
    token_bytes = [ENCODING.decode_single_token_bytes(t) for t in ids]
    assert any(len(b.decode("utf-8", "ignore")) == 0 for b in token_bytes)
    byte_starts = np.cumsum([0] + [len(b) for b in token_bytes])
    char_of = _char_of_byte(text)
    spans = FixedTokenChunker(size, overlap).chunk_spans(text)
    starts = window_starts(len(ids), size, overlap).tolist()
    assert len(spans) == len(starts)
    for (s, e), first in zip(spans.tolist(), starts, strict=True):
        last = min(first + size, len(ids)) - 1
        # the window's bytes lie inside the span, and the span is the smallest such
        assert s == char_of[byte_starts[first]]
        assert e == char_of[byte_starts[last + 1] - 1] + 1
        window_bytes = b"".join(token_bytes[first : last + 1])
        assert window_bytes in text[s:e].encode("utf-8")


def test_special_token_text_is_ordinary_text() -> None:
    text = "a <|endoftext|> b " * 20
    spans = FixedTokenChunker(5, 0).chunk_spans(text)
    assert [text[s:e] for s, e in spans.tolist()] == langchain_windows(text, 5, 0)


def test_empty_text_has_no_chunks() -> None:
    assert FixedTokenChunker(10).chunk_spans("").shape == (0, 2)


def test_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="chunk_size must be > 0"):
        FixedTokenChunker(0)
    with pytest.raises(ValueError, match="chunk_overlap must be >= 0"):
        FixedTokenChunker(10, -1)
    with pytest.raises(ValueError, match=r"chunk_overlap \(10\) must be smaller"):
        FixedTokenChunker(10, 10)


def test_name_is_the_spec() -> None:
    assert FixedTokenChunker(200).name == "fixed:200:0"
    assert FixedTokenChunker(400, 200).name == "fixed:400:200"


class FourCharTokenizer:
    """A tokenizer that is not tiktoken: one token every four characters."""

    name = "four-chars"

    def token_bounds(self, text: str) -> np.ndarray:
        starts = np.arange(0, len(text), 4, dtype=np.int64)
        return np.stack([starts, np.minimum(starts + 4, len(text))], axis=1)

    def count(self, text: str) -> int:
        return -(-len(text) // 4)

    def count_batch(self, texts: list[str]) -> list[int]:
        return [self.count(t) for t in texts]


def test_any_tokenizer_works() -> None:
    chunker = FixedTokenChunker(3, 1, encoding=FourCharTokenizer())
    assert chunker.name == "fixed:3:1?tokenizer=four-chars"
    text = "abcdefghijklmnopqrstuvwxyz"  # 7 tokens: windows 0-2, 2-4, 4-6
    assert chunker.chunk_spans(text).tolist() == [[0, 12], [8, 20], [16, 26]]


def test_tiktoken_path_matches_token_bounds_on_unicode() -> None:
    text = "Ünïcödé façade 🚀 日本語のテキスト 𠜎𠜱 naïve " * 20
    tokens = TOKENIZER.token_bounds(text)
    for size, overlap in [(1, 0), (3, 1), (16, 0), (40, 20)]:
        starts = window_starts(tokens.shape[0], size, overlap)
        lasts = np.minimum(starts + size, tokens.shape[0]) - 1
        expected = np.stack([tokens[starts, 0], tokens[lasts, 1]], axis=1)
        spans = FixedTokenChunker(size, overlap).chunk_spans(text)
        assert np.array_equal(spans, expected), (size, overlap)
