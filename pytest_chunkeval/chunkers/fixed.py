"""``FixedTokenChunker``: windows of a fixed number of tokens (LangChain parity).

Same windows as ``langchain_text_splitters.TokenTextSplitter``: ``chunk_size``
tokens, starting every ``chunk_size - chunk_overlap`` tokens, the last window ending
at the last token. The document is encoded once and each window's span runs from its
first token's first character to its last token's last character: nothing is decoded
and searched for. Where a token boundary falls inside a multi-byte character, both
neighbouring windows include that character (a decoded window would show a
replacement character there instead).
"""

from __future__ import annotations

import numpy as np

from pytest_chunkeval.chunkers.base import (
    check_size_overlap,
    chunker_identity,
    spec_name,
)
from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.tokenizers.base import (
    DEFAULT_ENCODING,
    TiktokenTokenizer,
    Tokenizer,
    get_tokenizer,
    token_byte_lengths,
)


def window_starts(n_tokens: int, size: int, overlap: int) -> IntArray:
    """First token index of each window (LangChain's ``split_text_on_tokens`` loop)."""
    if n_tokens <= 0:
        return np.zeros(0, dtype=np.int64)
    stride = size - overlap
    starts = np.arange(0, n_tokens, stride, dtype=np.int64)
    # LangChain stops after the first window that reaches the last token.
    last = int(np.argmax(starts + size >= n_tokens))
    return starts[: last + 1]


def _char_offsets(text: str, byte_starts: IntArray, byte_ends: IntArray) -> IntArray:
    """Character spans of byte ranges: from the character holding the first byte to
    the one holding the last (a range cut inside a character includes it)."""
    if text.isascii():
        return np.stack([byte_starts, byte_ends], axis=1)
    raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    continuation = np.flatnonzero((raw & 0xC0) == 0x80)

    def chars_before(offsets: IntArray) -> IntArray:
        # characters that start before each byte offset
        found: IntArray = offsets - np.searchsorted(continuation, offsets)
        return found

    return np.stack(
        [chars_before(byte_starts + 1) - 1, chars_before(byte_ends)], axis=1
    )


class FixedTokenChunker:
    """Windows of ``chunk_size`` tokens overlapping by ``chunk_overlap`` tokens."""

    def __init__(
        self,
        chunk_size: int,
        chunk_overlap: int = 0,
        encoding: str | Tokenizer = DEFAULT_ENCODING,
    ) -> None:
        self.chunk_size = int(chunk_size)
        self.chunk_overlap = int(chunk_overlap)
        self.tokenizer = get_tokenizer(encoding)
        self.check()

    def check(self) -> None:
        """``ConfigError`` unless the parameters, as they are now, are valid: they
        may be set after construction, and are checked again when used."""
        check_size_overlap(self.chunk_size, self.chunk_overlap, overlap_may_equal=False)

    @property
    def name(self) -> str:
        """The canonical spec of the parameters as they are now."""
        return spec_name(
            "fixed", f"{self.chunk_size}:{self.chunk_overlap}", self.tokenizer
        )

    def __repr__(self) -> str:
        return (
            f"FixedTokenChunker({self.chunk_size}, {self.chunk_overlap}, "
            f"encoding={self.tokenizer.name!r})"
        )

    @property
    def cache_identity(self) -> str | None:
        """What determines the chunks (the chunking cache's key)."""
        return chunker_identity(self, self.tokenizer)

    def _windows(self, n_tokens: int) -> tuple[IntArray, IntArray]:
        """First and last token index of each window."""
        starts = window_starts(n_tokens, self.chunk_size, self.chunk_overlap)
        return starts, np.minimum(starts + self.chunk_size, n_tokens) - 1

    def _tiktoken_spans(self, tokenizer: TiktokenTokenizer, text: str) -> IntArray:
        """Window spans from token byte lengths: only the windows' edges need
        character offsets."""
        ids = tokenizer.encode_array(text)
        lengths = token_byte_lengths(tokenizer.encoding)[ids]
        byte_ends = np.cumsum(lengths)
        starts, lasts = self._windows(ids.shape[0])
        first_bytes = byte_ends[starts] - lengths[starts]
        return _char_offsets(text, first_bytes, byte_ends[lasts])

    def chunk_spans(self, text: str) -> IntArray:
        """Character ``[start, end)`` of each token window."""
        self.check()
        if isinstance(self.tokenizer, TiktokenTokenizer):
            spans = self._tiktoken_spans(self.tokenizer, text)
            return spans[spans[:, 1] > spans[:, 0]]
        return self.spans_from_tokens(text, self.tokenizer.token_bounds(text))

    def spans_from_tokens(self, text: str, tokens: IntArray) -> IntArray:
        """The windows over ``tokens``, the ``(n, 2)`` token bounds of ``text``
        (the same spans as :meth:`chunk_spans`: an evaluation that has the
        bounds, cached, does not tokenize again)."""
        self.check()
        starts, lasts = self._windows(tokens.shape[0])
        spans = np.stack([tokens[starts, 0], tokens[lasts, 1]], axis=1)
        # Tokenizers that skip characters may report empty tokens; a window of only
        # those would be an empty chunk.
        return spans[spans[:, 1] > spans[:, 0]]
