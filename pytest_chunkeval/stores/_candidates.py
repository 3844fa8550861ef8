"""What every engine-backed store shares (docs/stores.md): the engine returns
candidates, the plugin re-ranks them with its own scorer and tie rule.

An engine (pgvector, FAISS, LanceDB, Qdrant) is asked for :func:`fetch_depth`
rows, a few more than ``k``; their cosines are computed again here in float64
(as the margins and reports read them), rounded once to float32, and the rows
ordered by the tie rule every store uses (``core/ranking.py`` ``best_first``:
equal scores by the chunks' content keys). A sum rounded once does not depend
on how a BLAS kernel splits it, so two chunks whose cosines are mathematically
equal (a hashing embedder's often are) tie here on every machine, where the
exact store's float32 matrix product may round them apart. Where the ``k``-th
score ties with the last candidate (a group of identical chunks longer than the
fetch), the engine is asked again, twice as deep, until the tie group ends or
every row came back. An exact configuration of any engine therefore returns the
exact store's rows; an approximate one returns its own candidates in the
plugin's order, so that its loss against exact search is the index's, never a
difference of float rounding or tie order.

Also here: the names of what a store creates in a server (per run and per
pytest-xdist worker, so nothing the plugin did not create is ever touched), the
message naming the extra to install, and the library versions in identities.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any

import numpy as np

from pytest_chunkeval.core.ranking import best_first
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.stores._base import (
    FloatArray,
    IdArray,
    ScoreArray,
    StoreError,
    as_vectors,
    check_search,
    empty_result,
)

EXTRA_ROWS = 8
"""Rows fetched past ``k``: room for float noise and small tie groups at ``k``."""
TIE_TOLERANCE = 1e-6
"""A ``k``-th score this close to the last candidate's may continue past it."""
_BLOCK = 256

Engine = Callable[[FloatArray, int], IdArray]
"""An engine's search: ``(queries, depth) -> (q, depth)`` rows, ``-1`` padded."""
Builder = Callable[[FloatArray, int], Engine]
"""Builds the engine's index again: ``(vectors in another order, seed) -> Engine``
whose rows are positions in that order."""


def fetch_depth(k: int, n: int) -> int:
    """Rows asked of the engine for a top-``k`` search over ``n`` vectors."""
    return min(n, k + EXTRA_ROWS)


def rerank(
    queries: FloatArray,
    vectors: FloatArray,
    candidates: IdArray,
    ties: IdArray | None = None,
) -> IdArray:
    """Each query's candidate rows (duplicates and ``-1`` dropped) ordered by
    cosine (float64, rounded to float32), best first, equal cosines by the tie
    rule (``core/ranking.py`` ``best_first``: the rows' content keys ``ties``,
    the row without); ``-1`` padded to the candidates' width."""
    return rerank_scored(queries, vectors, candidates, ties)[0]


def rerank_scored(
    queries: FloatArray,
    vectors: FloatArray,
    candidates: IdArray,
    ties: IdArray | None = None,
) -> tuple[IdArray, ScoreArray]:
    """:func:`rerank`'s rows and their float64 cosines (NaN where ``-1``)."""
    cand = np.asarray(candidates, dtype=np.int64)
    n_q, width = cand.shape
    out = empty_result(n_q, width)
    if width == 0 or n_q == 0:
        return out, np.full(out.shape, np.nan)
    rows = np.sort(cand, axis=1)
    dup = np.zeros_like(rows, dtype=bool)
    dup[:, 1:] = rows[:, 1:] == rows[:, :-1]
    rows[dup | (rows >= len(vectors))] = -1
    valid = rows >= 0
    safe = np.where(valid, rows, 0)
    scores = np.empty(rows.shape, dtype=np.float64)
    for lo in range(0, n_q, _BLOCK):
        q = np.asarray(queries[lo : lo + _BLOCK], dtype=np.float64)
        c = np.asarray(vectors[safe[lo : lo + _BLOCK]], dtype=np.float64)
        scores[lo : lo + _BLOCK] = np.einsum("qd,qmd->qm", q, c)
    rounded = scores.astype(np.float32)
    rounded[~valid] = np.nan
    scores[~valid] = np.nan
    order = best_first(rounded, rows, ties)
    out[:, :] = np.take_along_axis(rows, order, axis=1)
    return out, np.take_along_axis(scores, order, axis=1)


def _needs_more(
    queries: FloatArray, vectors: FloatArray, ranked: IdArray, k: int, depth: int
) -> np.ndarray:
    """Queries whose engine returned a full ``depth`` of rows and whose ``k``-th
    row scores within :data:`TIE_TOLERANCE` of the last one."""
    full = (ranked >= 0).sum(axis=1) >= depth
    if k == 0 or depth <= k or not full.any():
        return np.zeros(len(ranked), dtype=bool)
    kth, last = ranked[:, k - 1], ranked[:, depth - 1]
    idx = np.flatnonzero(full & (kth >= 0) & (last >= 0))
    need = np.zeros(len(ranked), dtype=bool)
    if idx.size:
        q = np.asarray(queries[idx], dtype=np.float64)
        a = np.einsum("qd,qd->q", q, np.asarray(vectors[kth[idx]], dtype=np.float64))
        b = np.einsum("qd,qd->q", q, np.asarray(vectors[last[idx]], dtype=np.float64))
        need[idx] = a - b <= TIE_TOLERANCE
    return need


class RerankedIndex:
    """An engine's index: searched for candidates, re-ranked by the plugin."""

    content_ties = True
    """:meth:`search` takes the chunks' tie keys (docs/baselines.md, "Ties")."""

    def __init__(
        self, vectors: FloatArray, engine: Engine, builder: Builder | None = None
    ) -> None:
        self.vectors = as_vectors(vectors, what="vectors")
        self.engine = engine
        self.builder = builder

    def rebuild(self, seed: int) -> RerankedIndex:
        """The same vectors indexed again, inserted in the order ``seed`` draws
        (and with ``seed`` where the engine takes one): an approximate index's
        graph or lists depend on both (docs/baselines.md, "Repeats")."""
        if self.builder is None:
            raise StoreError("this index cannot be built again")
        order = np.random.default_rng(seed).permutation(len(self)).astype(np.int64)
        engine = self.builder(np.ascontiguousarray(self.vectors[order]), seed)

        def in_rows(queries: FloatArray, depth: int) -> IdArray:
            found = np.asarray(engine(queries, depth), dtype=np.int64)
            return np.where(found >= 0, order[np.maximum(found, 0)], -1)

        return RerankedIndex(self.vectors, in_rows, self.builder)

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    def search(
        self, queries: FloatArray, k: int, *, ties: IdArray | None = None
    ) -> IdArray:
        """Top-``k`` rows by cosine among the engine's candidates, best first,
        equal cosines by the tie keys ``ties`` (the row without), ``-1`` padded
        (see the module docstring)."""
        return self.search_scored(queries, k, ties=ties)[0]

    def search_scored(
        self, queries: FloatArray, k: int, *, ties: IdArray | None = None
    ) -> tuple[IdArray, ScoreArray]:
        """:meth:`search`'s rows with the float64 cosines they were ranked by
        (NaN where ``-1``): the engine keeps them instead of computing them
        again (stores/_base.py ``ScoredIndex``)."""
        n = len(self)
        q = check_search(queries, k, self.vectors.shape[1] if n else None)
        out = empty_result(q.shape[0], k)
        scores = np.full(out.shape, np.nan)
        if n == 0 or k == 0 or q.shape[0] == 0:
            return out, scores
        pending = np.arange(q.shape[0])
        depth = fetch_depth(k, n)
        while pending.size:
            # the questions still searched (all of them first: no copy)
            asked = q if pending.size == q.shape[0] else q[pending]
            found = np.asarray(self.engine(asked, depth), dtype=np.int64)
            if found.shape != (pending.size, depth):
                raise StoreError(
                    f"the engine returned rows of shape {found.shape}, expected "
                    f"{(pending.size, depth)}"
                )
            ranked, cosines = rerank_scored(asked, self.vectors, found, ties)
            take = min(k, depth)
            out[pending, :take] = ranked[:, :take]
            scores[pending, :take] = cosines[:, :take]
            more = _needs_more(asked, self.vectors, ranked, k, depth)
            del asked
            if depth >= n:
                break
            pending = pending[more]
            depth = min(n, depth * 2)
        return out, scores


# -- names, extras, versions ----------------------------------------------------

_RUN = secrets.token_hex(4)


def run_tag() -> str:
    """This process's tag in the names of what it creates: a random run id and
    the pytest-xdist worker (``gw0``...), ``main`` outside xdist."""
    worker = re.sub(r"[^a-z0-9]", "", os.environ.get("PYTEST_XDIST_WORKER", "main"))
    return f"{_RUN}_{worker or 'main'}_{os.getpid()}"


def need(module: str, *, extra: str, store: str) -> ModuleType:
    """``module`` imported, or a StoreError naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise StoreError(
            f"the {store!r} store needs the Python package {module.split('.')[0]!r} "
            f"({exc}): pip install 'pytest-chunkeval[{extra}]'"
        ) from None


def package_version(name: str) -> str:
    """The installed version of distribution ``name`` (``"?"`` when unknown)."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def settings_text(settings: dict[str, object]) -> str:
    """Settings as ``key=value`` pairs in key order (an identity's body)."""
    return "&".join(f"{key}={settings[key]}" for key in sorted(settings))


def index_settings(
    index: str,
    given: dict[str, int | None],
    store: str,
    defaults: dict[str, dict[str, int]],
) -> dict[str, int]:
    """Every setting of ``index`` (defaults filled in); a setting of another
    index type, away from its default, is a ConfigError naming its type."""
    if index not in defaults:
        raise ConfigError(
            f"{store}: unknown index={index!r}; expected one of {', '.join(defaults)}"
        )
    out = dict(defaults[index])
    for key, value in given.items():
        if value is None:
            continue
        if key not in out:
            if any(d.get(key) == value for d in defaults.values()):
                continue  # another type's default, as the spec fills it in
            owner = [t for t, d in defaults.items() if key in d]
            raise ConfigError(
                f"{store}: {key}= applies to index={'/'.join(owner) or '?'}, "
                f"not index={index}"
            )
        out[key] = value
    return out


class RecentIndexes:
    """The last few indexes an engine store built, by key: indexing the same key
    and vectors again a moment later (the search cache's miss, then the
    evaluation) returns the index built, not a second table or graph. An index
    pushed out is handed to ``on_evict`` (a server store drops its table)."""

    KEEP = 4

    def __init__(self, on_evict: Callable[[Any], None] | None = None) -> None:
        self._held: OrderedDict[str, tuple[str, Any]] = OrderedDict()
        self._on_evict = on_evict

    @staticmethod
    def digest(vectors: FloatArray) -> str:
        """What tells one set of vectors from another under the same key."""
        return hashlib.sha256(vectors.tobytes()).hexdigest()

    def get(self, key: str, digest: str) -> Any:
        """The index held for ``key`` and these vectors, else None."""
        held = self._held.get(key)
        if held is None or held[0] != digest:
            return None
        self._held.move_to_end(key)
        return held[1]

    def put(self, key: str, digest: str, index: Any) -> None:
        self._held[key] = (digest, index)
        while len(self._held) > self.KEEP:
            _, (_, old) = self._held.popitem(last=False)
            if self._on_evict is not None:
                self._on_evict(old)

    def clear(self) -> None:
        self._held.clear()
