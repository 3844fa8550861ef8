"""Counting the tokens of many small pieces of one document, fast.

tiktoken's ``encode_ordinary_batch`` submits one thread-pool task per text, which
costs more than encoding a short piece. Instead the pieces are joined with a special
token between them and encoded in ONE call: tiktoken cuts the text at allowed
special tokens and runs its pre-tokenizer on each segment separately, so every
segment is encoded exactly as ``encode_ordinary(piece)`` would encode it, and the
count of a piece is the number of ids between two delimiter ids.

Callers that build the joined text themselves (without making a string per piece)
use :meth:`JoinedCounter.count_joined`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.tokenizers.base import TiktokenTokenizer, Tokenizer, detached

Counter = Callable[[Sequence[str]], list[int]]

# Below this many pieces, encoding each directly is cheaper than joining.
_MIN_JOINED = 4


class JoinedCounter:
    """Token counts of pieces of one document, joined by :attr:`delimiter`.

    The delimiter never occurs in the document, so splitting a joined text on it
    gives back the pieces.
    """

    def __init__(self, tokenizer: Tokenizer, text: str) -> None:
        self._tokenizer = tokenizer
        self._encoding: Any = None
        self._delimiter_id = -1
        self.delimiter = ""
        if isinstance(tokenizer, TiktokenTokenizer):
            encoding = tokenizer.encoding
            specials: dict[str, int] = getattr(encoding, "_special_tokens", {})
            for special, rank in sorted(specials.items(), key=lambda kv: kv[1]):
                # A "<" only at its start: a delimiter cannot begin inside a piece
                # and end in the delimiter that follows it.
                unique_start = special.startswith("<") and special.count("<") == 1
                if unique_start and special not in text:
                    self._encoding = encoding
                    self.delimiter, self._delimiter_id = special, rank
                    break
        if not self.delimiter:  # any one character absent from the text will do
            self.delimiter = _absent_character(text)

    def _count_each(self, pieces: Sequence[str]) -> list[int]:
        if isinstance(self._tokenizer, TiktokenTokenizer):
            return [self._tokenizer.count(p) for p in pieces]
        return list(self._tokenizer.count_batch(pieces))

    def _encoded_counts(self, joined: str, n_pieces: int) -> IntArray | None:
        """Counts from one tiktoken call, or None where that path does not apply."""
        if self._encoding is None or n_pieces == 0:
            return None
        try:
            ids = self._encoding.encode_to_numpy(
                detached(joined),  # (one piece joined is that piece itself)
                allowed_special=frozenset({self.delimiter}),
                disallowed_special=(),
            )
        except UnicodeEncodeError:  # lone surrogates: tiktoken's own path fixes them
            return None
        cuts = np.flatnonzero(ids == self._delimiter_id)
        if cuts.shape[0] != n_pieces - 1:  # a piece held the delimiter
            return None
        edges = np.concatenate(([-1], cuts, [ids.shape[0]]))
        return (np.diff(edges) - 1).astype(np.int64)

    def count_joined(self, joined: str, n_pieces: int) -> IntArray:
        """Counts of the ``n_pieces`` pieces of ``delimiter.join(pieces)``."""
        counts = self._encoded_counts(joined, n_pieces)
        if counts is None:
            pieces = joined.split(self.delimiter) if n_pieces else []
            counts = np.asarray(self._count_each(pieces), dtype=np.int64)
        return counts.reshape(-1)

    def __call__(self, pieces: Sequence[str]) -> list[int]:
        """Token count of each piece."""
        counts = None
        if len(pieces) >= _MIN_JOINED:
            counts = self._encoded_counts(self.delimiter.join(pieces), len(pieces))
        if counts is None:
            return self._count_each(pieces)
        result: list[int] = counts.tolist()
        return result


def _absent_character(text: str) -> str:
    """A private-use character that ``text`` does not contain."""
    private_use = itertools.chain(
        range(0xE000, 0xF900), range(0xF0000, 0xFFFFE), range(0x100000, 0x10FFFE)
    )
    for code in private_use:
        if chr(code) not in text:
            return chr(code)
    raise ValueError(
        "the text contains every private-use character"
    )  # pragma: no cover


def piece_counter(tokenizer: Tokenizer, text: str) -> Counter:
    """A function counting the tokens of pieces of ``text`` (substrings of it)."""
    return JoinedCounter(tokenizer, text)
