"""Token bounds on disk: each document tokenized once per (tokenizer, text), ever.

The unit map (``core/units.py``) needs every token's character range of every
document; tokenizing the benchmark copied 10 times takes a second, 100 times ten.
Bounds are stored per (tokenizer identity, document hash) as ``tokens/*/*.tok``
entries of the verify-on-read helper (``util/verified.py``), so a changed document
is tokenized again alone and a warm run tokenizes nothing (and never loads the
tokenizer). A tokenizer without an identity (a user's object) is never cached.

An entry's payload is compact: tiktoken's tokens follow each other, each starting
where the previous one ended or one character before (a multi-byte character cut
between two tokens belongs to both), so a token is one byte of end delta and one
bit of overlap, 1.1 bytes a token instead of 16 (format 1); bounds that do not fit
that shape are stored as int64 pairs (format 2). The decoder checks the bounds lie
in the document.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.core.units import TokenAxis, axis_type
from pytest_chunkeval.core.units import token_columns as units_token_columns
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.engine.keys import token_key
from pytest_chunkeval.tokenizers.base import Tokenizer, tokenizer_identity
from pytest_chunkeval.util.cache_kinds import verified_store
from pytest_chunkeval.util.verified import EntryRefused, VerifiedStore

_COMPACT, _PAIRS = 1, 2


def document_hashes(corpus: Corpus) -> tuple[str, ...]:
    """SHA-256 of each document's text, in corpus order (``Corpus.document_hashes``,
    computed with the corpus hash in one pass)."""
    return corpus.document_hashes


def token_store(cache_dir: str | Path, read_only: bool = False) -> VerifiedStore:
    """The token bounds entries of a cache directory."""
    return verified_store(cache_dir, "tokens", read_only)


def encode_bounds(bounds: IntArray) -> bytes:
    """The payload of an entry (see the module doc)."""
    bounds = np.asarray(bounds, dtype=np.int64).reshape(-1, 2)
    n = bounds.shape[0]
    starts, ends = bounds[:, 0], bounds[:, 1]
    previous = np.concatenate(([0], ends[:-1]))
    step = ends - previous
    back = previous - starts
    compact = n == 0 or (
        step.min() >= 0 and step.max() <= 255 and back.min() >= 0 and back.max() <= 1
    )
    if not compact:
        head = np.array([_PAIRS, n], dtype="<i8").tobytes()
        return head + np.ascontiguousarray(bounds, dtype="<i8").tobytes()
    head = np.array([_COMPACT, n], dtype="<i8").tobytes()
    return head + step.astype(np.uint8).tobytes() + np.packbits(back != 0).tobytes()


def decode_bounds(payload: memoryview, length: int) -> IntArray:
    """The ``(n, 2)`` bounds of a payload, checked to lie in a text of ``length``
    characters; :class:`EntryRefused` otherwise."""
    if len(payload) < 16:
        raise EntryRefused("no header")
    form, n = (int(v) for v in np.frombuffer(payload[:16], dtype="<i8"))
    body = payload[16:]
    bounds = np.empty((max(n, 0), 2), dtype=np.int64)
    if form == _PAIRS and n >= 0 and len(body) == 16 * n:
        bounds[:] = np.frombuffer(body, dtype="<i8").reshape(n, 2)
    elif form == _COMPACT and n >= 0 and len(body) == n + (n + 7) // 8:
        ends = np.cumsum(np.frombuffer(body[:n], dtype=np.uint8), dtype=np.int64)
        back = np.unpackbits(np.frombuffer(body[n:], dtype=np.uint8), count=n)
        bounds[:, 1] = ends
        bounds[1:, 0] = ends[:-1]
        if n:
            bounds[0, 0] = 0
        bounds[:, 0] -= back
    else:
        raise EntryRefused(f"format {form}, {n} tokens, {len(body)} bytes")
    if n and (bounds.min() < 0 or int(bounds[:, 1].max()) > length):
        raise EntryRefused(f"token bounds outside a text of {length} characters")
    return bounds


class _Compact(NamedTuple):
    """A format-1 payload not yet expanded: each token's end step and overlap."""

    steps: npt.NDArray[np.uint8]
    back: npt.NDArray[np.uint8]
    end: int
    """The last token's end (the sum of the steps)."""


def _read_compact(payload: memoryview, length: int) -> _Compact | IntArray:
    """A format-1 payload as its steps and overlaps, checked as
    :func:`decode_bounds` checks the bounds (without expanding them): the last
    end within ``length``, no start before 0. Another format decoded."""
    if len(payload) < 16:
        raise EntryRefused("no header")
    form, n = (int(v) for v in np.frombuffer(payload[:16], dtype="<i8"))
    body = payload[16:]
    if form != _COMPACT or n < 0 or len(body) != n + (n + 7) // 8:
        return decode_bounds(payload, length)
    steps = np.frombuffer(body[:n], dtype=np.uint8)
    back = np.unpackbits(np.frombuffer(body[n:], dtype=np.uint8), count=n)
    end = int(steps.sum(dtype=np.int64))
    if end > length:
        raise EntryRefused(f"token bounds outside a text of {length} characters")
    # a start before 0: an overlap while every end so far is 0 (ends only grow,
    # so the first overlap decides)
    j = int(np.argmax(back)) if n else 0
    if n and back[j] and not steps[:j].any():
        raise EntryRefused("a token bound before the text")
    return _Compact(steps, back, end)


def token_columns(
    corpus: Corpus,
    tokenizer: Tokenizer,
    cache_dir: str | Path,
    *,
    read_only: bool = False,
) -> TokenAxis:
    """The corpus' token axis (``core/units.py`` :func:`~pytest_chunkeval.core.
    units.token_columns`, the same values: global token ends, starts and each
    document's token count), laid out from the cached entries in a few passes
    over the whole axis (a document not cached is tokenized and stored); a
    tokenizer without an identity tokenizes every document."""
    lengths = np.array([len(d.text) for d in corpus], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    identity = tokenizer_identity(tokenizer)
    if identity is None:
        return units_token_columns(offsets, token_bounds(corpus, tokenizer))
    store = token_store(cache_dir, read_only)
    parts: list[_Compact | IntArray] = []
    hashes = document_hashes(corpus)
    for i, (doc, digest) in enumerate(zip(corpus, hashes, strict=True)):
        key = token_key(str(identity), digest)
        got = store.get(key, partial(_read_compact, length=int(lengths[i])))
        if got is None:
            bounds = np.asarray(tokenizer.token_bounds(doc.text), dtype=np.int64)
            payload = encode_bounds(bounds)
            store.put(key, payload)
            # kept as a warm run reads it: 2 bytes a token, not 16 (docs/performance.md)
            del bounds
            got = _read_compact(memoryview(payload), int(lengths[i]))
        parts.append(got)
    return _lay_out(parts, offsets)


def _lay_out(parts: list[_Compact | IntArray], offsets: IntArray) -> TokenAxis:
    """The token axis: every document's end steps written in one array, each
    first step carrying the jump to its document's offset, and summed in place;
    each start is the previous end less its step back (0 or 1: the payloads'
    overlaps), laid out only where a start steps back further."""
    counts = np.array(
        [p.steps.size if isinstance(p, _Compact) else p.shape[0] for p in parts],
        dtype=np.int64,
    )
    dtype = axis_type(int(offsets[-1]))
    first = np.concatenate([[0], np.cumsum(counts)])
    ends = np.empty(int(first[-1]), dtype=dtype)
    back = np.zeros(ends.size, dtype=np.uint8)
    running = 0  # the global end of the last token laid out
    places = list(zip(parts, first[:-1].tolist(), offsets[:-1].tolist(), strict=True))
    for p, lo, offset in places:
        if isinstance(p, _Compact):
            n, last = p.steps.size, offset + p.end
            ends[lo : lo + n] = p.steps
            back[lo : lo + n] = p.back
        else:  # bounds of another shape: their ends as steps, starts below
            n = p.shape[0]
            last = int(p[-1, 1]) + offset if n else running
            ends[lo + 1 : lo + n] = np.diff(p[:, 1])
            if n:
                ends[lo] = p[0, 1]
        if n:
            ends[lo] += offset - running
            running = last
    np.cumsum(ends, out=ends)
    # each document's first start is its offset less its overlap, and the
    # starts of bounds of another shape are theirs: steps back from the ends
    stepped = _steps_back(parts, ends, back, first, offsets)
    if stepped is None:
        return TokenAxis(_starts(parts, ends, back, first, offsets), ends, counts)
    return TokenAxis.from_steps(ends, stepped, counts)


def _steps_back(
    parts: list[_Compact | IntArray],
    ends: IntArray,
    back: npt.NDArray[np.uint8],
    first: IntArray,
    offsets: IntArray,
) -> npt.NDArray[np.uint8] | None:
    """Each token's step back from the end before it (``back`` amended at the
    documents' first tokens and the bounds of another shape), or None where one
    is not 0 or 1."""
    for p, lo, offset in zip(
        parts, first[:-1].tolist(), offsets[:-1].tolist(), strict=True
    ):
        n = p.steps.size if isinstance(p, _Compact) else p.shape[0]
        if not n:
            continue
        previous = int(ends[lo - 1]) if lo else 0
        if isinstance(p, _Compact):
            step = previous - offset + int(p.back[0])
            if step not in (0, 1):
                return None
            back[lo] = step
            continue
        before = np.concatenate([[previous], ends[lo : lo + n - 1]])
        steps = before - (p[:, 0] + offset)
        if steps.min() < 0 or steps.max() > 1:
            return None
        back[lo : lo + n] = steps
    return back


def _starts(
    parts: list[_Compact | IntArray],
    ends: IntArray,
    back: npt.NDArray[np.uint8],
    first: IntArray,
    offsets: IntArray,
) -> IntArray:
    """Every start laid out: the previous ends less the overlaps, each
    document's first at its offset, and the bounds of another shape's own."""
    starts = np.empty(ends.size, dtype=ends.dtype)
    starts[1:] = ends[:-1]
    counts = np.diff(first)
    nonempty = counts > 0
    starts[first[:-1][nonempty]] = offsets[:-1][nonempty]
    for p, lo in zip(parts, first[:-1].tolist(), strict=True):
        if isinstance(p, _Compact):
            starts[lo : lo + p.steps.size] -= p.back
    for p, lo, offset in zip(
        parts, first[:-1].tolist(), offsets[:-1].tolist(), strict=True
    ):
        if not isinstance(p, _Compact):
            starts[lo : lo + p.shape[0]] = p[:, 0] + offset
    return starts


def token_bounds(
    corpus: Corpus,
    tokenizer: Tokenizer,
    cache_dir: str | Path | None = None,
    *,
    read_only: bool = False,
    only: Sequence[int] | None = None,
) -> Iterator[IntArray]:
    """Each document's ``(n_tokens, 2)`` token bounds, in corpus order (or the
    documents ``only`` lists): read from the cache under ``cache_dir`` when there,
    else tokenized and stored. Lazy, so a caller can drop each document's bounds
    once it has used them."""
    identity = tokenizer_identity(tokenizer)
    store = None
    if cache_dir is not None and identity is not None:
        store = token_store(cache_dir, read_only)
    docs = corpus.documents
    hashes = document_hashes(corpus) if store is not None else ()
    for i in range(len(docs)) if only is None else only:
        text = docs[i].text
        if store is None:
            yield tokenizer.token_bounds(text)
            continue
        key = token_key(str(identity), hashes[i])
        bounds = store.get(key, partial(decode_bounds, length=len(text)))
        if bounds is None:
            bounds = np.asarray(tokenizer.token_bounds(text), dtype=np.int64)
            store.put(key, encode_bounds(bounds))
        yield bounds
