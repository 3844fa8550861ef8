"""Where each excerpt's text occurs in the corpus (docs/concepts.md, "Identical
text"), for ``copies="any"``: identical excerpts of a question merged, and every
occurrence of each excerpt's text (overlapping ones included) as a candidate.

The occurrences depend only on the corpus and the query set, so they are found
once per (corpus hash, query-set hash): kept in memory for the process and in the
evaluation cache as small ``copies/*/*.occ`` files written atomically, a header
(magic, counts, SHA-256 of the key and the body) and int64 rows. An entry that
fails its check is reported with ``CacheWarning``, set aside as ``*.corrupt`` and
computed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pytest_chunkeval.config.scoring import DEFAULT_COPIES, SCORING_RULES, check_copies
from pytest_chunkeval.core.copies import ExcerptCopies
from pytest_chunkeval.core.query_spans import QuerySpans
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders._packs import CacheWarning
from pytest_chunkeval.util.files import atomic_writer
from pytest_chunkeval.util.unwritable import refused_write, uncached_message

SUFFIX = ".occ"
_MAGIC = b"CEVCOPY1"
_HEADER = struct.Struct("<8sII32s")  # magic, needles, occurrences, SHA-256
_MEMO: dict[tuple[str, str], list[np.ndarray]] = {}
_MEMO_KEPT = 8


_BASE = np.uint64(0x100000001B3)  # odd: invertible modulo 2**64
_BASE_INV = np.uint64(pow(int(_BASE), -1, 1 << 64))
_ANCHOR = 32  # characters hashed per needle: rare enough, short enough


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
    for d, text in enumerate(texts):
        codes = _codes(text)
        for m, by_hash in groups.items():
            if codes.size < m:
                continue
            windows = _window_hashes(codes, m)
            keys = np.fromiter(by_hash, dtype=np.uint64, count=len(by_hash))
            for start in np.flatnonzero(np.isin(windows, keys)).tolist():
                for i in by_hash[int(windows[start])]:
                    if text.startswith(needles[i], start):
                        found[i].append((d, start))
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
    stored: list[set[int]] = []  # per merged row: starts of its stored spans
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
                stored.append(set())
                needle_of.append(needles.setdefault(text, len(needles)))
            group.append(row)
            stored[row].add(doc * (1 << 40) + ex.start)
    found = _occurrences(corpus, queries, list(needles), cache_dir, read_only)
    return _build(merged, group, stored, needle_of, found)


def _build(
    merged: list[tuple[int, int, int, int]],
    group: list[int],
    stored: list[set[int]],
    needle_of: list[int],
    found: list[np.ndarray],
) -> ExcerptCopies:
    rows, docs, starts, ends, marks = [], [], [], [], []
    for row, (_, doc, start, end) in enumerate(merged):
        occ = found[needle_of[row]]
        if occ.shape[0] <= 1:  # one occurrence (or none found): the stored span
            occ = np.array([[doc, start]], dtype=np.int64)
        rows.append(np.full(occ.shape[0], row, dtype=np.int64))
        docs.append(occ[:, 0])
        starts.append(occ[:, 1])
        ends.append(occ[:, 1] + (end - start))
        keys = occ[:, 0] * (1 << 40) + occ[:, 1]
        marks.append(np.isin(keys, np.fromiter(stored[row], dtype=np.int64)))
    table = np.asarray(merged, dtype=np.int64).reshape(-1, 4)

    def cat(parts: list[np.ndarray], dtype: type = np.int64) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    return ExcerptCopies(
        merged=QuerySpans(table[:, 0], table[:, 1], table[:, 2], table[:, 3]),
        group=np.asarray(group, dtype=np.int64),
        row=cat(rows),
        doc=cat(docs),
        start=cat(starts),
        end=cat(ends),
        stored=cat(marks, bool).astype(bool),
    )


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


def scoring_config(copies: str) -> dict[str, Any]:
    """What a result's configuration records of its scoring rules: their version
    and, when not the default, ``copies`` (absent for ``any``, so that only the
    version tells results of the default apart)."""
    config: dict[str, Any] = {"scoring_rules": SCORING_RULES}
    if check_copies(copies) != DEFAULT_COPIES:
        config["copies"] = copies
    return config


def _key(corpus: Corpus, queries: QuerySet) -> str:
    blob = f"chunkeval-copies-1\0{corpus.content_hash}\0{queries.content_hash}"
    return hashlib.sha256(blob.encode()).hexdigest()


def _occurrences(
    corpus: Corpus,
    queries: QuerySet,
    needles: list[str],
    cache_dir: str | Path | None,
    read_only: bool,
) -> list[np.ndarray]:
    key = _key(corpus, queries)
    memo = (key, str(cache_dir))
    found = _MEMO.pop(memo, None)
    if found is None and cache_dir is not None:
        found = _read(Path(cache_dir), key, len(needles))
    if found is None:
        found = find_occurrences([d.text for d in corpus], needles)
        if cache_dir is not None and not read_only:
            try:
                _write(Path(cache_dir), key, found)
            except OSError as exc:
                if not refused_write(exc):
                    raise
                message = uncached_message("excerpt copies", cache_dir, exc)
                warnings.warn(message, CacheWarning, stacklevel=3)
    _MEMO[memo] = found  # most recent last
    while len(_MEMO) > _MEMO_KEPT:
        del _MEMO[next(iter(_MEMO))]
    return found


def _path(cache_dir: Path, key: str) -> Path:
    return cache_dir / "copies" / key[:2] / f"{key}{SUFFIX}"


def _digest(key: str, body: bytes) -> bytes:
    # The key is hashed in: a whole, valid entry copied under another name fails.
    return hashlib.sha256(key.encode() + b"\0" + body).digest()


def _write(cache_dir: Path, key: str, found: list[np.ndarray]) -> None:
    counts = np.array([f.shape[0] for f in found], dtype="<i8")
    rows = np.concatenate(found) if found else np.zeros((0, 2), np.int64)
    body = counts.tobytes() + np.ascontiguousarray(rows, dtype="<i8").tobytes()
    head = _HEADER.pack(_MAGIC, counts.size, rows.shape[0], _digest(key, body))
    with atomic_writer(_path(cache_dir, key), "wb") as fh:
        fh.write(head + body)


def _read(cache_dir: Path, key: str, n_needles: int) -> list[np.ndarray] | None:
    path = _path(cache_dir, key)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        problem: str | None = f"unreadable ({exc})"
    else:
        problem = _verify(data, key, n_needles)
    if problem is not None:
        warnings.warn(
            f"{path}: copies cache entry not used ({problem}); it is set aside as "
            f"{path.name}.corrupt and computed again",
            CacheWarning,
            stacklevel=3,
        )
        with contextlib.suppress(OSError):  # read-only, or moved by another
            os.replace(path, path.with_name(path.name + ".corrupt"))
        return None
    counts = np.frombuffer(data, dtype="<i8", count=n_needles, offset=_HEADER.size)
    rows = np.frombuffer(data, dtype="<i8", offset=_HEADER.size + 8 * n_needles)
    rows = rows.reshape(-1, 2).astype(np.int64)
    return np.split(rows, np.cumsum(counts)[:-1]) if n_needles else []


def _verify(data: bytes, key: str, n_needles: int) -> str | None:
    """Why ``data`` is not the entry of ``key`` for ``n_needles`` texts."""
    if len(data) < _HEADER.size or data[: len(_MAGIC)] != _MAGIC:
        return "not a chunkeval copies entry (bad or missing header)"
    _, needles, rows, digest = _HEADER.unpack_from(data)
    if needles != n_needles:
        return f"{needles} texts, expected {n_needles}"
    if len(data) != _HEADER.size + 8 * (needles + 2 * rows):
        return f"truncated or padded: {len(data)} bytes"
    if _digest(key, data[_HEADER.size :]) != digest:
        return "checksum mismatch"
    counts = np.frombuffer(data, dtype="<i8", count=needles, offset=_HEADER.size)
    if (counts < 0).any() or int(counts.sum()) != rows:
        return "counts do not add up"
    return None
