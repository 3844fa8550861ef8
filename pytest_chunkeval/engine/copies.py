"""Where each excerpt's text occurs in the corpus (docs/concepts.md, "Identical
text"), for ``copies="any"``: identical excerpts of a question merged, and every
occurrence of each excerpt's text (overlapping ones included) as a candidate.

The occurrences depend only on the corpus and the excerpts' texts, so they are
found once per (corpus hash, hash of those texts): kept in memory for the
process and in the evaluation cache as small ``copies/*/*.occ`` entries of the
verify-on-read helper (``util/verified.py``: written atomically, checksummed
with their key): the counts and the int64 rows. An entry that fails its check,
or whose counts do not add up, is reported with ``CacheWarning``, set aside as
``*.corrupt`` and computed again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pytest_chunkeval.config.scoring import check_copies
from pytest_chunkeval.core.copies import ExcerptCopies
from pytest_chunkeval.core.query_spans import QuerySpans
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.engine.keys import copies_key
from pytest_chunkeval.util.cache_kinds import verified_store
from pytest_chunkeval.util.memory import release_free_memory
from pytest_chunkeval.util.verified import EntryRefused, VerifiedStore

_MEMO: dict[tuple[str, str], list[np.ndarray]] = {}
_MEMO_KEPT = 8


_BASE = np.uint64(0x100000001B3)  # odd: invertible modulo 2**64
_BASE_INV = np.uint64(pow(int(_BASE), -1, 1 << 64))
_ANCHOR = 32  # characters hashed per needle: rare enough, short enough
_SEGMENT = 1 << 16
"""Window starts hashed at a time: about 4 MiB of arrays (docs/performance.md)."""


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(
        np.uint64
    )


def _powers(base: np.uint64, n: int) -> np.ndarray:
    out = np.full(n, base, dtype=np.uint64)
    out[0] = 1
    return np.cumprod(out, dtype=np.uint64)  # wraps modulo 2**64, as intended


def _window_hashes(codes: np.ndarray, m: int) -> np.ndarray:
    """``sum(codes[i + t] * B**t for t < m)`` modulo 2**64 for every start ``i``."""
    n = codes.size
    prefix = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(codes * _powers(_BASE, n), dtype=np.uint64, out=prefix[1:])
    hashes: np.ndarray = (prefix[m:] - prefix[:-m]) * _powers(_BASE_INV, n - m + 1)
    return hashes


class _Prefilter:
    """The windows whose hash is one of the keys of their anchor length: a
    bitmap of the hashes' top ``_BITS`` bits passes few windows but the matching
    ones, and only those are looked up among the keys, by binary search
    (``np.isin`` on every window sorted the whole document's hashes; the same
    positions, docs/performance.md). One table serves every anchor length, a
    bit each (4 MiB for up to 8 lengths, where a table per length took 4 MiB
    each)."""

    _BITS = 22

    def __init__(self, groups: dict[int, dict[int, list[int]]]) -> None:
        lengths = sorted(groups)
        dtype = next(
            t
            for t in (np.uint8, np.uint16, np.uint32, np.uint64)
            if len(lengths) <= 8 * np.dtype(t).itemsize
        )
        self.table = np.zeros(1 << self._BITS if lengths else 0, dtype=dtype)
        self.keys: dict[int, np.ndarray] = {}
        self.flags: dict[int, np.integer] = {}
        for bit, m in enumerate(lengths):
            keys = np.unique(np.fromiter(groups[m], dtype=np.uint64))
            self.keys[m], self.flags[m] = keys, dtype(1 << bit)
            self.table[keys >> np.uint64(64 - self._BITS)] |= self.flags[m]

    def matches(self, windows: np.ndarray, m: int) -> np.ndarray:
        """Positions of ``windows`` (of anchor length ``m``) holding one of its
        keys, ascending."""
        top = self.table[windows >> np.uint64(64 - self._BITS)]
        maybe = np.flatnonzero(top & self.flags[m])
        # the keys are sorted already: a binary search (np.isin sorts them again)
        keys = self.keys[m]
        found = windows[maybe]
        at = np.minimum(np.searchsorted(keys, found), keys.size - 1)
        hit: np.ndarray = maybe[keys[at] == found]
        return hit


def find_occurrences(texts: Sequence[str], needles: Sequence[str]) -> list[np.ndarray]:
    """Per needle, every ``(doc, start)`` where it occurs, overlapping occurrences
    included, in corpus order (an empty needle occurs nowhere).

    One pass over each document per anchor length: the first ``min(len, 32)``
    characters of each needle are hashed, every window of the document with a
    rolling hash (numpy), and only the windows whose hash matches a needle's are
    compared as text. Linear in the corpus, whatever the number of needles."""
    found: list[list[tuple[int, int]]] = [[] for _ in needles]
    groups: dict[int, dict[int, list[int]]] = {}  # anchor length -> hash -> needles
    for i, needle in enumerate(needles):
        if needle:
            m = min(len(needle), _ANCHOR)
            key = int(_window_hashes(_codes(needle[:m]), m)[0])
            groups.setdefault(m, {}).setdefault(key, []).append(i)
    prefilter = _Prefilter(groups)
    for d, text in enumerate(texts):
        if not groups:
            break
        # the windows starting in a segment, hashed from the segment and the
        # anchor's length past it: a window's hash does not depend on where the
        # hashing began, and memory stays at one segment's arrays
        for lo in range(0, len(text), _SEGMENT):
            codes = _codes(text[lo : lo + _SEGMENT + _ANCHOR - 1])
            n = codes.size
            # the prefix sums and inverse powers serve every anchor length
            prefix = np.zeros(n + 1, dtype=np.uint64)
            np.cumsum(codes * _powers(_BASE, n), dtype=np.uint64, out=prefix[1:])
            inverse = _powers(_BASE_INV, n)
            for m, by_hash in groups.items():
                starts = min(n - m + 1, _SEGMENT)
                if starts <= 0:
                    continue
                windows = (prefix[m : m + starts] - prefix[:starts]) * inverse[:starts]
                for start in prefilter.matches(windows, m).tolist():
                    for i in by_hash[int(windows[start])]:
                        if text.startswith(needles[i], lo + start):
                            found[i].append((d, lo + start))
    return [np.asarray(f, dtype=np.int64).reshape(-1, 2) for f in found]


def excerpt_copies(
    corpus: Corpus,
    queries: QuerySet,
    cache_dir: str | Path | None = None,
    *,
    read_only: bool = False,
) -> ExcerptCopies:
    """The query set's excerpts merged by text per question, with their texts'
    occurrences (cached under ``cache_dir`` when given)."""
    texts = [d.text for d in corpus]
    doc_index = {d: i for i, d in enumerate(corpus.ids)}
    merged: list[tuple[int, int, int, int]] = []  # query, doc, start, end
    group: list[int] = []
    stored: tuple[list[int], list[int]] = ([], [])  # (merged row, doc * 2**40 + start)
    needle_of: list[int] = []  # per merged row
    needles: dict[str, int] = {}
    for q, query in enumerate(queries):
        rows: dict[str, int] = {}
        for ex in query.excerpts:
            doc = doc_index[ex.doc_id]
            text = texts[doc][ex.start : ex.end]
            row = rows.get(text)
            if row is None:
                row = rows[text] = len(merged)
                merged.append((q, doc, ex.start, ex.end))
                needle_of.append(needles.setdefault(text, len(needles)))
            group.append(row)
            stored[0].append(row)
            stored[1].append(doc * (1 << 40) + ex.start)
    found = _occurrences(corpus, list(needles), cache_dir, read_only)
    return _build(merged, group, stored, needle_of, found)


def _build(
    merged: list[tuple[int, int, int, int]],
    group: list[int],
    stored: tuple[list[int], list[int]],
    needle_of: list[int],
    found: list[np.ndarray],
) -> ExcerptCopies:
    """The candidates of every merged row, with array operations only (a loop
    over rows costs seconds at 100,000 excerpts)."""
    table = np.asarray(merged, dtype=np.int64).reshape(-1, 4)
    counts = np.fromiter(
        (found[n].shape[0] for n in needle_of), dtype=np.int64, count=len(needle_of)
    )
    # A text found once (or not at all): the stored span is its only candidate.
    single = counts <= 1
    row = np.repeat(
        np.arange(table.shape[0], dtype=np.int64), np.where(single, 1, counts)
    )
    occ = np.empty((row.size, 2), dtype=np.int64)
    from_stored = single[row]
    occ[from_stored] = table[single][:, 1:3]
    many = np.flatnonzero(~single).tolist()
    if many:
        occ[~from_stored] = np.concatenate([found[needle_of[r]] for r in many])
    length = (table[:, 3] - table[:, 2])[row]
    keys = occ[:, 0] * (1 << 40) + occ[:, 1]
    return ExcerptCopies(
        merged=QuerySpans(table[:, 0], table[:, 1], table[:, 2], table[:, 3]),
        group=np.asarray(group, dtype=np.int64),
        row=row,
        doc=occ[:, 0].copy(),
        start=occ[:, 1].copy(),
        end=occ[:, 1] + length,
        stored=_pairs_in(row, keys, *(np.asarray(a, np.int64) for a in stored)),
    )


def _pairs_in(
    row: np.ndarray, key: np.ndarray, in_row: np.ndarray, in_key: np.ndarray
) -> np.ndarray:
    """Whether each ``(row, key)`` pair is one of the ``(in_row, in_key)`` pairs:
    one sort of both, the listed pairs first among equals."""
    rows = np.concatenate((in_row, row))
    keys = np.concatenate((in_key, key))
    listed = np.concatenate(
        (np.zeros(in_row.size, np.int8), np.ones(row.size, np.int8))
    )
    order = np.lexsort((listed, keys, rows))
    r, k = rows[order], keys[order]
    first = np.ones(order.size, dtype=bool)
    first[1:] = (r[1:] != r[:-1]) | (k[1:] != k[:-1])
    group_listed = listed[order][first] == 0
    found = np.empty(order.size, dtype=bool)
    found[order] = group_listed[np.cumsum(first) - 1]
    return found[in_row.size :]


def copies_for(
    copies: str,
    corpus: Corpus,
    queries: QuerySet,
    cache_dir: str | Path | None = None,
    *,
    read_only: bool = False,
) -> ExcerptCopies | None:
    """:func:`excerpt_copies` for ``copies="any"``; None for ``"strict"`` (the
    stored spans are scored)."""
    if check_copies(copies) == "strict":
        return None
    return excerpt_copies(corpus, queries, cache_dir, read_only=read_only)


def candidates_by_query(
    copies: ExcerptCopies, corpus: Corpus, n_queries: int
) -> list[list[tuple[str, int, int]]]:
    """Per query, every candidate span of its excerpts (for placing a retrieved
    text that occurs more than once, :mod:`~pytest_chunkeval.engine.placing`)."""
    out: list[list[tuple[str, int, int]]] = [[] for _ in range(n_queries)]
    ids = corpus.ids
    queries = copies.merged.query[copies.row].tolist()
    for q, d, s, e in zip(
        queries,
        copies.doc.tolist(),
        copies.start.tolist(),
        copies.end.tolist(),
        strict=True,
    ):
        out[q].append((ids[d], s, e))
    return out


def _occurrences(
    corpus: Corpus,
    needles: list[str],
    cache_dir: str | Path | None,
    read_only: bool,
) -> list[np.ndarray]:
    key = copies_key(corpus.content_hash, needles)
    memo = (key, str(cache_dir))
    found = _MEMO.pop(memo, None)
    if found is None and cache_dir is not None:
        found = _read(Path(cache_dir), key, len(needles), read_only)
    if found is None:
        found = find_occurrences([d.text for d in corpus], needles)
        release_free_memory()  # its tables and windows, freed (util/memory.py)
        if cache_dir is not None and not read_only:
            _write(Path(cache_dir), key, found)
    _MEMO[memo] = found  # most recent last
    while len(_MEMO) > _MEMO_KEPT:
        del _MEMO[next(iter(_MEMO))]
    return found


def _store(cache_dir: Path, read_only: bool = False) -> VerifiedStore:
    return verified_store(cache_dir, "copies", read_only)


def _write(cache_dir: Path, key: str, found: list[np.ndarray]) -> None:
    counts = np.array([f.shape[0] for f in found], dtype="<i8")
    rows = np.concatenate(found) if found else np.zeros((0, 2), np.int64)
    head = np.array([counts.size, rows.shape[0]], dtype="<i8")
    body = head.tobytes() + counts.tobytes()
    _store(cache_dir).put(key, body + np.ascontiguousarray(rows, "<i8").tobytes())


def _read(
    cache_dir: Path, key: str, n_needles: int, read_only: bool
) -> list[np.ndarray] | None:
    def decode(payload: memoryview) -> list[np.ndarray]:
        values = np.frombuffer(payload, dtype="<i8")
        if values.size < 2 or int(values[0]) != n_needles:
            raise EntryRefused(f"not the occurrences of {n_needles} texts")
        n_rows = int(values[1])
        counts = values[2 : 2 + n_needles]
        rows = values[2 + n_needles :]
        if rows.size != 2 * n_rows or (counts < 0).any() or counts.sum() != n_rows:
            raise EntryRefused("counts do not add up")
        pairs = rows.reshape(-1, 2).astype(np.int64)
        return np.split(pairs, np.cumsum(counts)[:-1]) if n_needles else []

    return _store(cache_dir, read_only).get(key, decode)
