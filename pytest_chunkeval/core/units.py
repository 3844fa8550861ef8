"""One global unit axis for a corpus: where each document's tokens (or characters) lie.

Every span of every document maps to a half-open interval of this axis. In the token
unit a character span covers the tokens whose character ranges intersect it
(docs/concepts.md, "Units"; what two spans share is decided on their shared
characters first, ``core/shared.py``); each document is tokenized once and its
token offsets serve every conversion.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.core.unit_names import Unit, check_unit


class Tokenizes(Protocol):
    """What the token axis needs of a tokenizer (``tokenizers/``, resolved by the
    caller: ``core/`` imports no stage above it)."""

    def token_bounds(self, text: str) -> IntArray:
        """Each token's ``(start, end)`` character offsets in ``text``."""
        ...


def _search(
    haystack: IntArray, needles: IntArray, side: Literal["left", "right"]
) -> IntArray:
    """``searchsorted`` with the needles sorted first: random probes of a long axis
    miss the cache; sorted ones walk it (several times faster on 100k spans). The
    needles take the haystack's type (an int32 axis is never widened: numpy would
    copy it on every call), clipped to one past its ends so that none overflows."""
    if needles.dtype != haystack.dtype:
        limit = int(haystack[-1]) + 1 if haystack.size else 0
        needles = np.clip(needles, -1, limit).astype(haystack.dtype)
    if needles.size < 1024:
        return np.searchsorted(haystack, needles, side=side).astype(np.int64)
    order = np.argsort(needles, kind="stable")
    out = np.empty(needles.size, dtype=np.int64)
    out[order] = np.searchsorted(haystack, needles[order], side=side)
    return out


def axis_type(total_chars: int) -> type[np.signedinteger[Any]]:
    """The integer type of a corpus' global character positions: int32 when they
    fit (half the memory of the token bounds at 33M tokens), else int64."""
    return np.int32 if total_chars < 2**31 - 2 else np.int64


class TokenAxis:
    """Every token's global character ``[start, end)`` on the unit axis, held as
    the ends and, where the starts allow it, one bit per token: a token starts
    where the one before it ended (0 for the first) or one character before (a
    multi-byte character that two of tiktoken's tokens share), so a start is
    ``previous end - bit``. 4 bytes and a bit a token instead of 8 at int32
    (docs/performance.md, "Memory"). Starts of another shape (a decreasing one, or
    a step back of more than one character) are kept as they are.

    :meth:`starts_below` is ``searchsorted(starts, g, "left")``; in the compact
    form it counts from the ends (``previous end < g``, and ``previous end == g``
    with the bit set), without laying the starts out."""

    def __init__(self, starts: IntArray, ends: IntArray, counts: IntArray) -> None:
        """From the global starts and ends (of :func:`axis_type`) and each
        document's token count."""
        self.ends = ends
        self.counts = counts
        self._starts: IntArray | None = starts
        self._bits: npt.NDArray[np.uint8] | None = None
        back = np.empty_like(ends)
        back[:1] = 0
        back[1:] = ends[:-1]
        back -= starts  # the step back from the previous end
        if back.size and (back.min() < 0 or back.max() > 1):
            return
        steps = back.astype(np.uint8)
        del back
        if _sorted_with(ends, steps):
            self._starts = None
            self._bits = np.packbits(steps) if steps.any() else None

    @classmethod
    def from_steps(
        cls, ends: IntArray, back: npt.NDArray[np.uint8], counts: IntArray
    ) -> TokenAxis:
        """From the ends and each token's step back from the end before it
        (``0`` or ``1``; ``engine/token_cache.py`` lays them out), without the
        starts; laid out when they decrease."""
        axis = cls.__new__(cls)
        axis.ends, axis.counts = ends, counts
        axis._starts, axis._bits = None, None
        if not _sorted_with(ends, back):
            axis._starts = axis._previous_ends(np.arange(ends.size)) - back
        elif back.any():
            axis._bits = np.packbits(back)
        return axis

    def _previous_ends(self, index: IntArray) -> IntArray:
        """The end of the token before each of ``index`` (0 before the first)."""
        before = np.asarray(index, dtype=np.int64) - 1
        out = self.ends[np.maximum(before, 0)]
        out[before < 0] = 0
        return out

    def _back(self, index: IntArray) -> IntArray:
        if self._bits is None:
            return np.zeros(len(index), dtype=self.ends.dtype)
        index = np.asarray(index, dtype=np.int64)
        bits = self._bits[index >> 3] >> (7 - (index & 7)).astype(np.uint8)
        back: IntArray = (bits & 1).astype(self.ends.dtype)
        return back

    def starts_at(self, index: IntArray) -> IntArray:
        """The starts of the tokens ``index``."""
        if self._starts is not None:
            return self._starts[index]
        return self._previous_ends(index) - self._back(index)

    def starts(self) -> IntArray:
        """Every token's start, laid out."""
        if self._starts is not None:
            return self._starts
        return self.starts_at(np.arange(self.ends.size))

    def starts_below(self, g: IntArray) -> IntArray:
        """Per position of ``g``, how many tokens start before it."""
        if self._starts is not None:
            return _search(self._starts, g, "left")
        if self.ends.size == 0:
            return np.zeros(len(g), dtype=np.int64)
        g = np.asarray(g, dtype=np.int64)
        inner = self.ends[:-1]  # the previous ends of tokens 1..n-1
        below = _search(inner, g, "left") + (g > 0)
        if self._bits is None:
            return below
        # tokens whose previous end is g start before it by their bit: a few
        # tokens a position at most (those sharing one character)
        upto = _search(inner, g, "right") + (g >= 0)
        extra = np.zeros_like(below)
        for step in range(int((upto - below).max(initial=0))):
            at = np.flatnonzero(below + step < upto)
            extra[at] += self._back(below[at] + step)
        return below + extra

    @property
    def nbytes(self) -> int:
        """The memory its arrays hold."""
        held = (self.ends, self.counts, self._starts, self._bits)
        return sum(a.nbytes for a in held if a is not None)


def _sorted_with(ends: IntArray, back: npt.NDArray[np.uint8]) -> bool:
    """Whether the starts ``previous end - back`` never decrease: between two
    tokens of one previous end, a step back of 1 after one of 0 would."""
    if ends.size and (ends[:1] < 0).any():
        return False
    block = 1 << 20  # ends never decrease (checked a block at a time)
    for lo in range(0, ends.size, block):
        part = ends[lo : lo + block + 1]
        if (part[1:] < part[:-1]).any():
            return False
    stepped = np.flatnonzero(back[1:]) + 1  # a token j >= 1 stepping back
    if stepped.size == 0:
        return True
    prev_end = ends[stepped - 1]
    before = np.where(stepped >= 2, ends[np.maximum(stepped - 2, 0)], 0)
    return not bool(((prev_end == before) & (back[stepped - 1] == 0)).any())


def token_columns(
    char_offsets: IntArray, token_bounds: Iterable[IntArray]
) -> TokenAxis:
    """The corpus' :class:`TokenAxis` (ends and starts of :func:`axis_type`) and
    each document's token count, from each document's ``(n, 2)`` bounds."""
    dtype = axis_type(int(char_offsets[-1]))
    starts, ends, counts = [], [], []
    for offset, bounds in zip(char_offsets[:-1].tolist(), token_bounds, strict=True):
        starts.append((bounds[:, 0] + offset).astype(dtype, copy=False))
        ends.append((bounds[:, 1] + offset).astype(dtype, copy=False))
        counts.append(bounds.shape[0])
    if not starts:
        empty = np.zeros(0, dtype)
        return TokenAxis(empty, empty, np.zeros(0, np.int64))
    return TokenAxis(
        np.concatenate(starts),
        np.concatenate(ends),
        np.asarray(counts, dtype=np.int64),
    )


class UnitMap:
    """Maps ``(doc, start, end)`` character spans to intervals of one global axis.

    Documents are laid end to end in order, so intervals of different documents never
    overlap and one sorted array serves all searches.
    """

    def __init__(
        self,
        doc_ids: Sequence[str],
        texts: Sequence[str],
        unit: str = "token",
        tokenizer: Tokenizes | None = None,
        token_bounds: Iterable[IntArray] | None = None,
        *,
        columns: TokenAxis | None = None,
    ) -> None:
        """``token_bounds``: each document's ``(n, 2)`` token bounds, in order,
        when the caller has them (cached); ``columns``: the global token axis
        already laid out (:func:`token_columns`); else
        ``tokenizer`` (a tokenizer object: ``tokenizers.get_tokenizer()``
        resolves a spec) tokenizes. The token unit needs one of the three."""
        self.unit: Unit = check_unit(unit)
        self.doc_ids = tuple(doc_ids)
        self.doc_index = {d: i for i, d in enumerate(self.doc_ids)}
        char_lengths = np.array([len(t) for t in texts], dtype=np.int64)
        self.char_offsets = np.concatenate([[0], np.cumsum(char_lengths)])
        if self.unit == "char":
            self.tokenizer: Tokenizes | None = None
            self.unit_offsets = self.char_offsets
            self.tokens = TokenAxis(*(np.zeros(0, dtype=np.int64),) * 3)
            return
        self.tokenizer = tokenizer
        if columns is None:
            if token_bounds is None:
                if tokenizer is None:
                    raise TypeError("the token unit needs a tokenizer or token_bounds")
                token_bounds = (tokenizer.token_bounds(t) for t in texts)
            columns = token_columns(self.char_offsets, token_bounds)
        self.tokens = columns
        """Every token's character range (empty in the char unit)."""
        self.unit_offsets = np.concatenate(
            [[0], np.cumsum(columns.counts, dtype=np.int64)]
        )

    @property
    def total_units(self) -> int:
        """Length of the axis: the corpus size in units."""
        return int(self.unit_offsets[-1])

    @property
    def total_chars(self) -> int:
        """The corpus size in characters (documents end to end)."""
        return int(self.char_offsets[-1])

    def token_char_bounds(self) -> tuple[IntArray, IntArray]:
        """Global character ``[start, end)`` of every token, by token index (empty
        in the char unit); the starts laid out (:attr:`tokens` holds them as
        bits)."""
        return self.tokens.starts(), self.tokens.ends

    def doc_indices(self, doc_ids: Sequence[str]) -> IntArray:
        """Positions of ``doc_ids`` in the corpus; ``KeyError`` names an unknown one."""
        try:
            return np.fromiter(
                (self.doc_index[d] for d in doc_ids), dtype=np.int64, count=len(doc_ids)
            )
        except KeyError as exc:
            raise KeyError(f"document {exc.args[0]!r} is not in the corpus") from None

    def to_units(
        self, doc: IntArray, start: IntArray, end: IntArray
    ) -> tuple[IntArray, IntArray]:
        """Global ``[lo, hi)`` unit intervals of character spans (vectorized).

        An empty character span maps to an empty interval.
        """
        g_start = self.char_offsets[doc] + start
        g_end = self.char_offsets[doc] + end
        if self.unit == "char":
            return g_start, g_end
        lo = _search(self.tokens.ends, g_start, "right")
        hi = self.tokens.starts_below(g_end)
        hi = np.where(g_end > g_start, np.maximum(hi, lo), lo)
        return lo.astype(np.int64), hi.astype(np.int64)
