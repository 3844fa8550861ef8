"""The store protocols and the checks every store shares."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.errors import DataError, UnavailableError

FloatArray = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]
ScoreArray = npt.NDArray[np.float64]


class StoreError(UnavailableError):
    """A store cannot do its job (server unreachable, backend failure)."""


@runtime_checkable
class VectorIndex(Protocol):
    """Vectors indexed by a store, searchable by cosine similarity."""

    def search(self, queries: FloatArray, k: int) -> IdArray:
        """Return ``(q, k)`` row indices into the indexed vectors, best first.

        Rows are padded with ``-1`` when the index holds fewer than ``k`` vectors.
        """
        ...


@runtime_checkable
class RebuildableIndex(Protocol):
    """An approximate store's index that can be built again in another insertion
    order or seed (docs/baselines.md, "Repeats")."""

    def rebuild(self, seed: int) -> VectorIndex:
        """The same vectors indexed again under ``seed`` (another insertion
        order, another random seed), searchable as this index is."""
        ...


@runtime_checkable
class ScoredIndex(Protocol):
    """An index whose search gives, with each row, the cosine it ranked it by."""

    def search_scored(
        self, queries: FloatArray, k: int, *, ties: IdArray | None = None
    ) -> tuple[IdArray, ScoreArray]:
        """``(q, k)`` rows as :meth:`VectorIndex.search` returns them (equal
        cosines by the tie keys ``ties``), and ``(q, k)`` float64 cosines of the
        query with each row, NaN where the row is ``-1``."""
        ...


@runtime_checkable
class Store(Protocol):
    """Builds a :class:`VectorIndex` from L2-normalized float32 vectors.

    Optional: ``approximate = True`` declares that its search is approximate
    (HNSW, IVF...): its index is then built ``r`` times and each question's
    value is the mean over the builds, so the index it returns must have a
    ``rebuild(seed)`` (:class:`RebuildableIndex`). A store that does not declare
    it is deterministic: the gate counts every change of its results.

    A built-in store also has an ``identity``: everything that determines its
    results (type, every setting, the library's version; for a server, the
    server's), which the search and result caches key on. A store of your own
    is searched on every run unless it declares a ``cache_version``, which then
    is part of its identity (docs/retrieval.md).

    What the rest of the plugin knows of a store, it reads from these
    declarations, never from its type (docs/stores.md, "What a store declares"):

    - ``portable_name``: its name without where it lives (a folder, a server's
      address), what a baseline records: the same on every machine
      (:func:`portable_name`; default: ``name``);
    - ``xdist_safe = False``: pytest-xdist workers cannot share it (they would
      write one database at once), with ``xdist_reason`` saying what to use
      instead (:func:`xdist_problem`; default: safe);
    - ``reference = True``: its search is exact search itself, the one other
      stores' loss is measured against (:func:`measures_loss`);
    - an index with ``search_scored``: its rows come with their cosines
      (:class:`ScoredIndex`), which the engine keeps instead of computing them
      again."""

    @property
    def name(self) -> str:
        """The spec string that names this store (``"exact"``, ``"chroma:PATH"``,
        ``"chroma?ef_search=1"``...)."""
        ...

    def index(self, key: str, vectors: FloatArray) -> VectorIndex:
        """Index ``vectors`` (``(n, d)``, L2-normalized) under ``key``.

        ``key`` is a hex digest of (corpus, chunking, embedder): a persistent store
        may reuse what it holds under that key instead of adding the vectors again.
        """
        ...


@runtime_checkable
class TextIndex(Protocol):
    """Chunk texts indexed by a store, searchable by query text."""

    def search_texts(self, queries: Sequence[str], k: int) -> IdArray:
        """Return ``(q, k)`` row indices into the indexed texts, best first, padded
        with ``-1`` (fewer texts than ``k``, or fewer that match the query)."""
        ...


@runtime_checkable
class TextStore(Protocol):
    """A store that indexes chunk texts, not vectors (BM25): no embedder runs."""

    @property
    def name(self) -> str:
        """The spec string that names this store (``"bm25?stem=english"``)."""
        ...

    @property
    def identity(self) -> str:
        """Everything that determines its results (every tokenization and scoring
        option, defaults included): the search cache is keyed on it and the texts."""
        ...

    def index_texts(self, texts: Sequence[str]) -> TextIndex:
        """Index the chunk texts (in chunk order)."""
        ...


@runtime_checkable
class FusionStore(Protocol):
    """Several stores ("legs") searched for ``candidates`` rows each, then fused."""

    @property
    def name(self) -> str:
        """The spec string that names this store."""
        ...

    @property
    def identity(self) -> str:
        """The fusion settings (not the legs: each leg is cached on its own)."""
        ...

    @property
    def candidates(self) -> int:
        """Rows each leg returns before fusion."""
        ...

    @property
    def legs(self) -> Mapping[str, Store | TextStore]:
        """The stores to search, by leg name (``"dense"``, ``"bm25"``)."""
        ...

    def fuse(self, lists: Mapping[str, IdArray], k: int) -> IdArray:
        """Fuse each leg's ``(q, candidates)`` rows into ``(q, k)``, best first."""
        ...


AnyStore = Store | TextStore | FusionStore


def is_approximate(store: object) -> bool:
    """Whether a store declares approximate search (``approximate = True``), or
    a fused store has such a leg."""
    if isinstance(store, FusionStore):
        return any(is_approximate(leg) for leg in store.legs.values())
    return getattr(store, "approximate", False) is True


def portable_name(store: object) -> str:
    """What a baseline records of a store: its declared ``portable_name`` (its
    name without a folder or a server's address: ``chroma:/home/ann/db`` and
    ``chroma`` search alike), else its name, else its type's name."""
    for attribute in ("portable_name", "name"):
        value = getattr(store, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(store).__name__


def xdist_problem(store: object) -> str | None:
    """Why pytest-xdist workers cannot share ``store`` (it, or a fused store's
    leg, declares ``xdist_safe = False``), None when they can."""
    if isinstance(store, FusionStore):
        found = (xdist_problem(leg) for leg in store.legs.values())
        return next((problem for problem in found if problem), None)
    if getattr(store, "xdist_safe", True) is not False:
        return None
    reason = getattr(store, "xdist_reason", None)
    if isinstance(reason, str) and reason:
        return reason
    return (
        f"the store {portable_name(store)!r} declares xdist_safe = False: "
        "pytest-xdist workers cannot share it; run without -n"
    )


def measures_loss(store: object) -> bool:
    """Whether a store's loss against exact search is measured: a vector store
    that is not itself the reference (``reference = True``, docs/stores.md)."""
    return (
        isinstance(store, Store)
        and not isinstance(store, (TextStore, FusionStore))
        and getattr(store, "reference", False) is not True
    )


def rebuilt(store: object, index: VectorIndex, seed: int) -> VectorIndex:
    """``index`` built again under ``seed`` (its ``rebuild``); a store that
    declares ``approximate`` without one is an error naming it."""
    if not isinstance(index, RebuildableIndex):
        name = getattr(store, "name", type(store).__name__)
        raise StoreError(
            f"store {name!r} declares approximate = True but its index "
            f"({type(index).__name__}) has no rebuild(seed): add one that indexes "
            "the same vectors again in another order, or leave approximate unset"
        )
    return index.rebuild(seed)


def vector_store_identity(store: object) -> str | None:
    """What the caches key a vector store's results on: a built-in store's
    ``identity``; a store of your own is keyed only when it declares a
    ``cache_version`` (its class, name and that version, with its own
    ``identity`` if it has one); None (searched every time) otherwise."""
    kind = type(store)
    identity = getattr(store, "identity", None)
    identity = identity if isinstance(identity, str) and identity else None
    if kind.__module__.startswith("pytest_chunkeval."):
        name = getattr(store, "name", None)
        return identity or (name if isinstance(name, str) else None)
    version = getattr(store, "cache_version", None)
    if not isinstance(version, str) or not version:
        return None
    parts = [f"{kind.__module__}.{kind.__qualname__}", str(getattr(store, "name", ""))]
    return "|".join([*parts, *([identity] if identity else []), f"version={version}"])


def uses_vectors(store: object) -> bool:
    """Whether a store needs chunk and query vectors (so an embedder must run)."""
    if isinstance(store, FusionStore):
        return any(uses_vectors(leg) for leg in store.legs.values())
    return not isinstance(store, TextStore)


@dataclass(frozen=True)
class Retrieval:
    """What a retrieval pipeline returned: the final rows per query, and the rows of
    each earlier stage (a hybrid store's legs, a reranker's candidates), by name."""

    ids: IdArray
    """``(q, k)`` final rows, best first, ``-1`` padded."""

    stages: dict[str, IdArray] = field(default_factory=dict)
    """Stage name -> ``(q, depth)`` rows, in pipeline order."""
    ranked: tuple[IdArray, npt.NDArray[np.float64]] | None = None
    """A reranker's whole ordering of its candidates, ``(q, n)`` rows best first
    and their scores (NaN past the end): past ``ids``, what its decisive margins
    are measured on. None for other pipelines."""
    scores: npt.NDArray[np.float64] | None = None
    """A vector search's cosine of each of ``ids`` (NaN past the end), kept with
    the rows in the search cache: the decisive margins read them. None for
    other pipelines."""
    stage_scores: dict[str, npt.NDArray[np.float64]] = field(default_factory=dict)
    """Stage name -> the cosines of its rows, for the stages that searched
    vectors (a hybrid store's ``"dense"`` leg)."""


def as_vectors(vectors: object, *, what: str) -> FloatArray:
    """``vectors`` as a C-contiguous ``(n, d)`` float32 array of finite values."""
    arr = np.ascontiguousarray(vectors, dtype=np.float32)
    if arr.ndim != 2:
        raise DataError(f"{what} must be a 2-D (n, d) array, got shape {arr.shape}")
    if arr.shape[1] == 0 and arr.shape[0] > 0:
        raise DataError(f"{what} have dimension 0")
    # a block of rows at a time: no mask of the whole matrix (docs/performance.md,
    # "Memory")
    rows = max(1, (1 << 20) // max(1, arr.shape[1] if arr.ndim == 2 else 1))
    for lo in range(0, arr.shape[0], rows):
        block = arr[lo : lo + rows]
        if not np.isfinite(block).all():
            row = lo + int(np.flatnonzero(~np.isfinite(block).all(axis=1))[0])
            raise DataError(f"{what}: row {row} holds NaN or infinite values")
    return arr


def check_search(queries: object, k: int, dim: int | None) -> FloatArray:
    """Validate a search request against an index of dimension ``dim``.

    ``dim`` is ``None`` for an empty index, whose dimension is unknown.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an int, got {k!r}")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    arr = as_vectors(queries, what="query vectors")
    if dim is not None and arr.shape[0] and arr.shape[1] != dim:
        raise DataError(
            f"query vectors have dimension {arr.shape[1]} but the index holds "
            f"vectors of dimension {dim}"
        )
    return arr


def empty_result(n_queries: int, k: int) -> IdArray:
    """A ``(n_queries, k)`` result with no hits."""
    return np.full((n_queries, k), -1, dtype=np.int64)
