"""Normalized text with a map back to the original characters (opt-in locating of
text a retriever lower-cased or cleaned; docs/concepts.md, "Placing a
retriever's text").

The normalized form of a text is, character by character: its Unicode
compatibility decomposition (NFKD, so NFKC-equal texts are equal: ``ﬁ`` is ``fi``,
full-width ``Ａ`` is ``A``, a composed ``é`` equals ``e`` + combining accent), case
folded (``Straße`` equals ``STRASSE``), keeping only letters, digits and combining
marks (Unicode categories L, N, M). Whitespace, punctuation, symbols and control
characters are dropped: ``"Hello,  World!"`` normalizes like ``"hello world"`` and
``"helloworld"``. Each normalized character remembers the original character it
came from, so a match maps back to exact original offsets.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

_CODEC = "utf-32-le"
_KEPT = frozenset("LNM")


@functools.lru_cache(maxsize=65536)
def fold_char(char: str) -> str:
    """The normalized form of one character (possibly empty or several)."""
    # casefold after NFKD can yield characters with decompositions of their own
    # (e.g. from ligatures); a second NFKD makes the form idempotent.
    out = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", char).casefold())
    return "".join(c for c in out if unicodedata.category(c)[0] in _KEPT)


def _codes(text: str) -> npt.NDArray[np.uint32]:
    return np.frombuffer(text.encode(_CODEC, "surrogatepass"), dtype=np.uint32)


@dataclass(frozen=True)
class FoldedText:
    """``text`` normalized, and for each normalized character the index of the
    original character it came from (``origin``, non-decreasing)."""

    text: str
    origin: npt.NDArray[np.int64]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original offsets of the normalized span ``[start, end)`` (non-empty): from
        the first original character to the end of the last one it involves."""
        return int(self.origin[start]), int(self.origin[end - 1]) + 1

    def find_all(self, needle: str) -> list[tuple[int, int]]:
        """Original spans of every occurrence (overlapping ones too) of the
        normalized ``needle`` (already folded) in this text that covers whole
        original characters."""
        return [(s, e) for s, e, _, _ in self.find_windows(needle)]

    def find_windows(self, needle: str) -> list[tuple[int, int, int, int | None]]:
        """:meth:`find_all`'s spans, each with its window ``(lo, hi)``: from the
        end of the previous kept character to the next kept one (``hi`` None: the
        end of the text). Any text that normalizes like ``needle`` and is found
        here lies inside one of these windows."""
        if not needle:
            return []
        found: list[tuple[int, int, int, int | None]] = []
        origin, n = self.origin, len(self.text)
        i = self.text.find(needle)
        while i >= 0:
            j = i + len(needle)
            # Not inside one character's expansion ("ss" within "ßß" = "ssss").
            if (i == 0 or origin[i - 1] != origin[i]) and (
                j == n or origin[j] != origin[j - 1]
            ):
                lo = int(origin[i - 1]) + 1 if i > 0 else 0
                hi = int(origin[j]) if j < n else None
                found.append((*self.span(i, j), lo, hi))
            i = self.text.find(needle, i + 1)
        return found


def fold(text: str) -> FoldedText:
    """Normalize ``text`` and build its offset map, in array operations: each
    distinct character is folded once (Python), the rest is counting and gathers
    over numpy arrays, linear in the length of the text."""
    codes = _codes(text)
    if codes.size == 0:
        return FoldedText("", np.zeros(0, dtype=np.int64))
    # Distinct characters by counting (linear, no sort): ``inverse`` numbers each
    # character by its distinct code point.
    distinct = np.flatnonzero(np.bincount(codes))
    index = np.zeros(int(distinct[-1]) + 1, dtype=np.int64)
    index[distinct] = np.arange(distinct.size, dtype=np.int64)
    inverse = index[codes]
    pieces = [fold_char(chr(c)) for c in distinct.tolist()]
    lengths = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=len(pieces))
    flat = _codes("".join(pieces))
    first = np.cumsum(lengths) - lengths  # where each distinct char's piece starts
    per_char = lengths[inverse]  # normalized characters per original character
    origin = np.repeat(np.arange(codes.size, dtype=np.int64), per_char)
    within = np.arange(origin.size, dtype=np.int64) - np.repeat(
        np.cumsum(per_char) - per_char, per_char
    )
    folded = flat[np.repeat(first[inverse], per_char) + within]
    return FoldedText(folded.tobytes().decode(_CODEC, "surrogatepass"), origin)


def fold_needle(text: str) -> str:
    """The normalized form of a short text (no offset map)."""
    return "".join(fold_char(c) for c in text)
