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


def token_columns(
    char_offsets: IntArray, token_bounds: Iterable[IntArray]
) -> tuple[IntArray, IntArray, IntArray]:
    """Global token starts and ends (of :func:`axis_type`) and each document's
    token count, from each document's ``(n, 2)`` bounds."""
    dtype = axis_type(int(char_offsets[-1]))
    starts, ends, counts = [], [], []
    for offset, bounds in zip(char_offsets[:-1].tolist(), token_bounds, strict=True):
        starts.append((bounds[:, 0] + offset).astype(dtype, copy=False))
        ends.append((bounds[:, 1] + offset).astype(dtype, copy=False))
        counts.append(bounds.shape[0])
    if not starts:
        return np.zeros(0, dtype), np.zeros(0, dtype), np.zeros(0, np.int64)
    return (
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
        columns: tuple[IntArray, IntArray, IntArray] | None = None,
    ) -> None:
        """``token_bounds``: each document's ``(n, 2)`` token bounds, in order,
        when the caller has them (cached); ``columns``: the global starts, ends
        and per-document counts already laid out (:func:`token_columns`); else
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
            self._token_starts = self._token_ends = np.zeros(0, dtype=np.int64)
            return
        self.tokenizer = tokenizer
        if columns is None:
            if token_bounds is None:
                if tokenizer is None:
                    raise TypeError("the token unit needs a tokenizer or token_bounds")
                token_bounds = (tokenizer.token_bounds(t) for t in texts)
            columns = token_columns(self.char_offsets, token_bounds)
        self._token_starts, self._token_ends, counts = columns
        self.unit_offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])

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
        in the char unit)."""
        return self._token_starts, self._token_ends

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
        lo = _search(self._token_ends, g_start, "right")
        hi = _search(self._token_starts, g_end, "left")
        hi = np.where(g_end > g_start, np.maximum(hi, lo), lo)
        return lo.astype(np.int64), hi.astype(np.int64)
