"""Token counts of pieces of a document from the document's one tokenization.

A cold evaluation tokenizes each document once (the token cache,
``engine/token_cache.py``, shares those bounds with the unit map); the
token-counting chunkers then count a piece's tokens from them instead of
encoding the piece again (docs/performance.md, "One tokenization per document").

Counting a piece is NOT counting the document's tokens inside it: tiktoken's
pre-tokenizer regex looks ahead (``\\s+(?!\\S)``, ``\\s++$``, a punctuation run
takes the line breaks after it), so a piece cut inside a run of whitespace or
punctuation is split differently from the whole document ("one  two" is "one",
" ", " two"; its piece "one  " is "one", "  "). The count here is exact all the
same, from one fact about the cl100k pattern, which has no lookbehind. Call
position ``t`` a *cut* when ``text[t - 1]`` is an ASCII letter or digit and
``text[t]`` an ASCII character of another class (letter, digit, other). A match
starting before ``t`` ends at ``t`` at the latest, and no alternative tried
there reads past the character at ``t`` (a letter run, a digit run, a
punctuation run with its line breaks, a whitespace run all stop at ``t - 1`` or
``t``; a contraction reads three characters), and the end of a text stops each
of them as that character does. So a text holding ``text[t - 1]`` is
pre-tokenized up to ``t`` the same whatever follows, then from ``t`` as if it
started there. Hence for a piece ``[a, b)`` whose first and last cuts are
``a <= r <= s <= b``::

    count(text[a:b]) = count(text[a:r])
                       + the document's tokens starting in [r, s)
                       + count(text[s:b])

and only the short head and tail are encoded. A piece without a cut is encoded
whole. ``tests/test_doc_counts.py`` checks this against a direct count on
adversarial texts (whitespace, line breaks, punctuation, digits, contractions,
non-ASCII).

Only for tiktoken encodings whose pattern is one of :data:`_CUT_PATTERNS` (the
other patterns were not checked), and texts without lone surrogates (tiktoken
replaces those, which changes the characters); otherwise every piece is encoded.
"""

from __future__ import annotations

import numpy as np

from pytest_chunkeval.chunkers._counting import JoinedCounter
from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.tokenizers.base import TiktokenTokenizer, Tokenizer

_CUT_PATTERNS = frozenset(
    {
        # cl100k_base, as tiktoken >= 0.5 writes it
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"
        r"| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
        # cl100k_base, as older tiktoken wrote it
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
        r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    }
)

# Class of each code point below 128: 1 letter, 2 digit, 0 other; 3 non-ASCII.
_ASCII_CLASS = np.array(
    [1 if chr(i).isalpha() else 2 if chr(i).isdigit() else 0 for i in range(128)],
    dtype=np.uint8,
)


def derives_counts(tokenizer: Tokenizer) -> bool:
    """Whether piece counts can be derived from document tokens for this
    tokenizer (a tiktoken encoding with a checked pattern)."""
    if not isinstance(tokenizer, TiktokenTokenizer):
        return False
    return getattr(tokenizer.encoding, "_pat_str", None) in _CUT_PATTERNS


def cuts(text: str) -> IntArray | None:
    """The cut positions of ``text`` (see the module doc), ascending; None for a
    text with lone surrogates."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) == len(text):
        codes = np.frombuffer(data, dtype=np.uint8)
    else:
        try:
            wide = text.encode("utf-32-le")
        except UnicodeEncodeError:  # lone surrogates
            return None
        codes = np.frombuffer(wide, dtype=np.uint32)
    classes = np.where(codes < 128, _ASCII_CLASS[np.minimum(codes, 127)], 3)
    before, after = classes[:-1], classes[1:]
    found = ((before == 1) | (before == 2)) & (after != 3) & (before != after)
    return np.flatnonzero(found).astype(np.int64) + 1


class DocumentCounter:
    """Exact token counts of pieces ``[a, b)`` of one document, from the
    document's token bounds (see the module doc)."""

    def __init__(
        self, tokenizer: Tokenizer, text: str, tokens: IntArray | None
    ) -> None:
        self.text = text
        self.joined = JoinedCounter(tokenizer, text)
        self._cuts: IntArray | None = None
        self._starts: IntArray | None = None
        if tokens is not None and derives_counts(tokenizer):
            self._cuts = cuts(text)
            self._starts = np.ascontiguousarray(tokens[:, 0], dtype=np.int64)

    @property
    def derived(self) -> bool:
        """Whether counts come from the document's tokens (else every piece is
        encoded)."""
        return self._cuts is not None

    def counts(self, starts: IntArray, ends: IntArray) -> IntArray:
        """Token count of each piece ``text[starts[i]:ends[i]]``."""
        a = np.asarray(starts, dtype=np.int64)
        b = np.asarray(ends, dtype=np.int64)
        text, delimiter = self.text, self.joined.delimiter
        if self._cuts is None or self._starts is None:
            pieces = [text[s:e] for s, e in zip(a.tolist(), b.tolist(), strict=True)]
            return self.joined.count_joined(delimiter.join(pieces), len(pieces))
        cut = self._cuts
        n_cuts = cut.shape[0]
        first = np.searchsorted(cut, a, "left")  # first cut >= a
        last = np.searchsorted(cut, b, "right") - 1  # last cut <= b
        r = cut[np.minimum(first, max(n_cuts - 1, 0))] if n_cuts else a
        s = cut[np.maximum(last, 0)] if n_cuts else b
        inside = (first < n_cuts) & (first <= last) if n_cuts else a < a
        r = np.where(inside, r, b)  # no cut: the head is the whole piece
        s = np.where(inside, s, b)
        middle = np.searchsorted(self._starts, s) - np.searchsorted(self._starts, r)
        # Encode each head text[a:r] and tail text[s:b] (empty ones cost nothing).
        heads = zip(a.tolist(), r.tolist(), s.tolist(), b.tolist(), strict=True)
        parts: list[str] = []
        for lo, head_end, tail_start, hi in heads:
            parts.append(text[lo:head_end])
            parts.append(text[tail_start:hi])
        encoded = self.joined.count_joined(delimiter.join(parts), len(parts))
        return encoded[0::2] + encoded[1::2] + np.where(inside, middle, 0)
