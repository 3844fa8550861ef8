"""Retrieval as stages: a store (vector, text or fused) and an optional reranker.

Every stage's rows are cached on disk, keyed on what determines them:

- a vector store: its identity, the collection key (chunking + embedder) and the
  query vectors;
- a text store (BM25): its identity (every tokenization and scoring option), the chunk
  texts and the query texts; no embedder runs;
- a fused store: each leg as above; fusion is cheap and recomputed;
- a reranker: its identity, the texts and the candidate rows.

An unchanged re-run therefore imports neither the store nor the model.

Every stage orders rows of exactly equal scores by content (docs/baselines.md,
"Ties"): the chunks' tie keys (``core/ranking.py`` ``content_ties``) go to each
store, fusion and reranker that declares ``content_ties``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.core.ranking import best_first, content_ties
from pytest_chunkeval.engine.keys import (
    rerank_key,
    text_search_key,
    texts_digest,
    vector_search_key,
)
from pytest_chunkeval.engine.margins import row_scores
from pytest_chunkeval.engine.search_cache import SearchCache
from pytest_chunkeval.stores._base import (
    AnyStore,
    FloatArray,
    FusionStore,
    IdArray,
    Retrieval,
    ScoredIndex,
    Store,
    StoreError,
    TextStore,
    VectorIndex,
    is_approximate,
    rebuilt,
)
from pytest_chunkeval.stores.rerank import Reranker, rerank_rows
from pytest_chunkeval.util.memory import release_free_memory
from pytest_chunkeval.util.progress import progress_phase


@contextmanager
def timed(
    timings: dict[str, float], phase: str, shown: str | None = None
) -> Iterator[None]:
    """Time ``phase`` into ``timings``; ``shown``: what its progress lines name
    (util/progress.py ``progress_phase``)."""
    start = time.perf_counter()
    try:
        with progress_phase(shown) if shown else nullcontext():
            yield
    finally:
        timings[phase] = timings.get(phase, 0.0) + time.perf_counter() - start


@dataclass
class RetrievalInputs:
    """What the stages may read: texts always, vectors when a store needs them."""

    chunk_texts: Sequence[str]
    """Each chunk's text (``engine/chunk_texts.py``: sliced from its document
    when read)."""
    query_texts: list[str]
    collection_key: str | None = None
    chunk_vectors: FloatArray | None = None
    query_vectors: FloatArray | None = None
    chunk_vector_loader: Callable[[], FloatArray] | None = None
    """Computes ``chunk_vectors`` when a search needs them: a search served from
    the search cache (its key needs only the query vectors) never does, so a
    warm run reads no chunk vector."""
    chunk_bounds: IdArray | None = None
    """``(n, 2)`` each chunk's ``(start, end)`` in its document: with the texts,
    what ties are broken by (None: texts alone)."""

    def __post_init__(self) -> None:
        self._digests: tuple[str, str] | None = None
        self._ties: IdArray | None = None

    @property
    def ties(self) -> IdArray:
        """Each chunk's tie key (``core/ranking.py`` ``content_ties``), computed at
        the first search that needs it."""
        if self._ties is None:
            bounds = self.chunk_bounds
            self._ties = content_ties(
                self.chunk_texts,
                None if bounds is None else bounds[:, 0],
                None if bounds is None else bounds[:, 1],
            )
        return self._ties

    def vectors_of_chunks(self) -> FloatArray | None:
        """``chunk_vectors``, loaded at the first call that needs them."""
        if self.chunk_vectors is None and self.chunk_vector_loader is not None:
            self.chunk_vectors = self.chunk_vector_loader()
        return self.chunk_vectors

    @property
    def digests(self) -> tuple[str, str]:
        if self._digests is None:
            self._digests = (
                texts_digest(self.chunk_texts),
                texts_digest(self.query_texts),
            )
        return self._digests


def _vector_search(
    store: Store,
    inputs: RetrievalInputs,
    k: int,
    cache: SearchCache,
    timings: dict[str, float],
    seed: int | None = None,
) -> Retrieval:
    """The top ``k`` rows and their cosines, cached together (a warm run reads
    both and loads no chunk vector). ``seed``: an approximate store's index
    built again in another order (``rebuild(seed)``, docs/baselines.md,
    "Repeats"), cached under that seed."""
    if inputs.query_vectors is None or (
        inputs.chunk_vectors is None and inputs.chunk_vector_loader is None
    ):
        raise ValueError(f"store {store.name!r} searches vectors; none were computed")
    if inputs.collection_key is None:
        raise ValueError("a vector search needs the collection key")
    if seed is not None and not is_approximate(store):
        seed = None  # a deterministic store: every build is the same
    key = vector_search_key(
        store, inputs.collection_key, inputs.query_vectors, k, seed=seed
    )
    n = len(inputs.query_texts)
    if key is not None:
        cached = cache.get_scored(key, n, k)
        if cached is not None and cached[1] is not None:
            return Retrieval(cached[0], scores=cached[1])
    vectors = inputs.vectors_of_chunks()
    assert vectors is not None  # checked above
    with timed(timings, "index"):
        index = store.index(inputs.collection_key, vectors)
    if seed is not None:
        with timed(timings, "rebuild"):
            index = rebuilt(store, index, seed)
    with timed(timings, "search"):
        hits, scores = _scored(store, index, inputs, vectors, k)
    release_free_memory()  # the search's tiles, freed (util/memory.py)
    if key is not None:
        cache.put(key, hits, scores)
    return Retrieval(hits, scores=scores)


def _scored(
    store: Store,
    index: VectorIndex,
    inputs: RetrievalInputs,
    vectors: FloatArray,
    k: int,
) -> tuple[IdArray, npt.NDArray[np.float64]]:
    """``index``'s top ``k`` rows and their cosines: those the index gives with
    its rows when it declares them (stores/_base.py ``ScoredIndex``), else
    computed here."""
    assert inputs.query_vectors is not None  # checked by the caller
    ties = getattr(index, "content_ties", False)
    if isinstance(index, ScoredIndex):
        found, given = (
            index.search_scored(inputs.query_vectors, k, ties=inputs.ties)
            if ties
            else index.search_scored(inputs.query_vectors, k)
        )
        hits = np.asarray(found, dtype=np.int64)
        scores = np.asarray(given, dtype=np.float64)
        if scores.shape != hits.shape:
            raise StoreError(
                f"store {store.name!r} returned scores of shape {scores.shape} "
                f"for rows of shape {hits.shape}"
            )
        return hits, scores
    found = (
        index.search(inputs.query_vectors, k, ties=inputs.ties)  # type: ignore[call-arg]
        if ties
        else index.search(inputs.query_vectors, k)
    )
    hits = np.asarray(found, dtype=np.int64)
    return hits, row_scores(inputs.query_vectors, vectors, hits)


def _text_search(
    store: TextStore,
    inputs: RetrievalInputs,
    k: int,
    cache: SearchCache,
    timings: dict[str, float],
) -> IdArray:
    key = text_search_key(store, inputs.digests, k)
    n = len(inputs.query_texts)
    if key is not None and (cached := cache.get(key, n, k)) is not None:
        return cached
    with timed(timings, "index"):
        index = store.index_texts(list(inputs.chunk_texts))
    with timed(timings, "search"):
        found = (
            index.search_texts(inputs.query_texts, k, ties=inputs.ties)  # type: ignore[call-arg]
            if getattr(index, "content_ties", False)
            else index.search_texts(inputs.query_texts, k)
        )
        hits = np.asarray(found, dtype=np.int64)
    if key is not None:
        cache.put(key, hits)
    return hits


def _store_search(
    store: AnyStore,
    inputs: RetrievalInputs,
    k: int,
    cache: SearchCache,
    timings: dict[str, float],
    seed: int | None = None,
) -> Retrieval:
    if isinstance(store, FusionStore):
        legs = {
            leg: _store_search(s, inputs, store.candidates, cache, timings, seed)
            for leg, s in store.legs.items()
        }
        lists = {leg: found.ids for leg, found in legs.items()}
        with timed(timings, "search"):
            fused = (
                store.fuse(lists, k, ties=inputs.ties)  # type: ignore[call-arg]
                if getattr(store, "content_ties", False)
                else store.fuse(lists, k)
            )
        scored = {leg: f.scores for leg, f in legs.items() if f.scores is not None}
        return Retrieval(np.asarray(fused, dtype=np.int64), lists, stage_scores=scored)
    if isinstance(store, TextStore):
        return Retrieval(_text_search(store, inputs, k, cache, timings))
    return _vector_search(store, inputs, k, cache, timings, seed)


def _rerank(
    reranker: Reranker,
    candidates: IdArray,
    inputs: RetrievalInputs,
    cache: SearchCache,
    timings: dict[str, float],
) -> tuple[IdArray, npt.NDArray[np.float64]]:
    """Every candidate row per query reordered by the reranker's scores, best
    first, and those scores (NaN past the end); cached, scores included."""
    key = rerank_key(reranker, inputs.digests, candidates)
    n, width = candidates.shape
    cached = None if key is None else cache.get_scored(key, n, width)
    if cached is not None and cached[1] is not None:
        return cached[0], cached[1]
    with timed(timings, "rerank"):
        # Row-major order, the same as the boolean-mask assignment below.
        qs, cols = np.nonzero(candidates >= 0)
        pairs = [
            (inputs.query_texts[q], inputs.chunk_texts[r])
            for q, r in zip(qs.tolist(), candidates[qs, cols].tolist(), strict=True)
        ]
        flat = np.asarray(reranker.score(pairs), dtype=np.float32).reshape(-1)
        if flat.shape != (len(pairs),) or not np.isfinite(flat).all():
            raise ValueError(
                f"reranker {reranker.identity!r} must return one finite score per "
                f"pair ({len(pairs)} pairs), got shape {flat.shape}"
            )
        scores = np.zeros(candidates.shape, dtype=np.float32)
        scores[candidates >= 0] = flat
        ids = rerank_rows(candidates, scores, width, inputs.ties)
        order = best_first(scores, candidates, inputs.ties)
        ranked = np.take_along_axis(scores, order, axis=1).astype(np.float64)
        ranked[ids < 0] = np.nan
    if key is not None:
        cache.put(key, ids, ranked)
    return ids, ranked


def retrieve(
    store: AnyStore,
    inputs: RetrievalInputs,
    k: int,
    cache: SearchCache,
    timings: dict[str, float],
    *,
    reranker: Reranker | None = None,
    seed: int | None = None,
) -> Retrieval:
    """The top ``k`` chunk rows per query, with each earlier stage's rows (a fused
    store's legs; ``candidates`` when a reranker re-scores the store's top rows).
    ``seed``: an approximate store's index rebuilt with it (:func:`rebuilt`)."""
    n = len(inputs.query_texts)
    if k == 0:
        return Retrieval(np.zeros((n, 0), np.int64))
    if reranker is None:
        return _store_search(store, inputs, k, cache, timings, seed)
    depth = max(int(reranker.candidates), k)
    first = _store_search(store, inputs, depth, cache, timings, seed)
    rows, scores = _rerank(reranker, first.ids, inputs, cache, timings)
    final = _pad(rows[:, :k], k)
    return Retrieval(
        final,
        {**first.stages, "candidates": first.ids},
        ranked=(rows, scores),
        stage_scores=first.stage_scores,
    )


def _pad(rows: IdArray, k: int) -> IdArray:
    """``rows`` with ``-1`` columns up to ``k``."""
    if rows.shape[1] >= k:
        return rows
    out = np.full((rows.shape[0], k), -1, dtype=np.int64)
    out[:, : rows.shape[1]] = rows
    return out
