"""The unit axis holds token starts as one bit each (core/units.py ``TokenAxis``,
docs/performance.md "Memory"): the same starts and the same searches as the laid
out starts, for every shape of bounds, and 4 bytes and a bit a token."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_chunkeval.core.units import TokenAxis, UnitMap, token_columns
from pytest_chunkeval.data.corpus import Corpus, Document
from pytest_chunkeval.engine.token_cache import token_columns as cached_columns
from pytest_chunkeval.tokenizers.base import get_tokenizer

# per token: the end's step, and how far the start steps back from the previous end
_TOKEN = st.tuples(st.integers(0, 3), st.sampled_from([0, 0, 0, 1, 1, 2, -1]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOKEN, max_size=40), st.booleans())
def test_the_axis_gives_the_laid_out_starts_and_their_searches(
    tokens: list[tuple[int, int]], int32: bool
) -> None:
    """Tiktoken's shape (steps back of 0 and 1), starts that decrease, steps back
    of 2 and forward gaps: ``starts_below`` is ``searchsorted(starts, g)`` on
    the laid out starts (sorted or not) and ``starts_at`` gives them back."""
    dtype = np.int32 if int32 else np.int64
    ends = np.cumsum([s for s, _ in tokens], dtype=np.int64).astype(dtype)
    previous = np.concatenate([[0], ends[:-1]]).astype(np.int64)
    starts = np.maximum(previous - [b for _, b in tokens], 0).astype(dtype)
    counts = np.array([len(tokens)], dtype=np.int64)
    axis = TokenAxis(starts.copy(), ends, counts)
    needles = np.arange(-1, int(ends.max(initial=0)) + 3, dtype=np.int64)
    want = np.searchsorted(starts, needles, side="left")
    if (np.diff(starts) >= 0).all():  # (a search of unsorted starts: the same
        # code as before, on the starts kept as they are)
        np.testing.assert_array_equal(axis.starts_below(needles), want)
    np.testing.assert_array_equal(axis.starts(), starts)
    index = np.arange(len(tokens))[::-1]
    np.testing.assert_array_equal(axis.starts_at(index), starts[index])
    back = previous - starts
    compact = back.size == 0 or (back.min() >= 0 and back.max() <= 1)
    held = axis.nbytes - counts.nbytes
    if compact and (np.diff(starts) >= 0).all():
        assert held <= ends.nbytes + (len(tokens) + 7) // 8
    else:
        assert held == starts.nbytes + ends.nbytes
    if compact:
        stepped = TokenAxis.from_steps(ends, back.astype(np.uint8), counts)
        np.testing.assert_array_equal(stepped.starts(), starts)
        if (np.diff(starts) >= 0).all():
            np.testing.assert_array_equal(stepped.starts_below(needles), want)


TEXTS = [
    "héllo wörld ✓ 😀😀 日本語, and more plain words " * 30,
    "",
    "plain ascii text, line after line\n" * 50,
    "🙂" * 40 + " ünïcödé " * 20,
]


@pytest.mark.parametrize("cached", [False, True])
def test_a_unit_map_holds_a_token_in_4_bytes_and_a_bit(
    cached: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The ends at int32 and one bit a token (8 bytes laid out before), and the
    same intervals as the laid out starts give."""
    tokenizer = get_tokenizer("cl100k_base")
    corpus = Corpus([Document(f"d{i}", t) for i, t in enumerate(TEXTS)])
    ids, texts = corpus.ids, [d.text for d in corpus]
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in texts])])
    axis = (
        cached_columns(corpus, tokenizer, tmp_path_factory.mktemp("tokens"))
        if cached
        else token_columns(offsets, (tokenizer.token_bounds(t) for t in texts))
    )
    units = UnitMap(ids, texts, "token", columns=axis)
    n = units.total_units
    assert axis.nbytes - axis.counts.nbytes <= 4 * n + n // 8 + 1
    starts, ends = units.token_char_bounds()
    assert (ends[:-1] - starts[1:]).max() == 1  # a character two tokens share
    doc = np.repeat(np.arange(len(texts)), [len(t) for t in texts])
    start = np.concatenate([np.arange(len(t)) for t in texts])
    for end in (start, start + 1, start + 7):
        end = np.minimum(end, np.concatenate([[len(t)] * len(t) for t in texts]))
        lo, hi = units.to_units(doc, start, end)
        g_start, g_end = offsets[doc] + start, offsets[doc] + end
        want_lo = np.searchsorted(ends, g_start, side="right")
        want_hi = np.searchsorted(starts, g_end, side="left")
        want_hi = np.where(g_end > g_start, np.maximum(want_hi, want_lo), want_lo)
        np.testing.assert_array_equal(lo, want_lo)
        np.testing.assert_array_equal(hi, want_hi)
