"""What an evaluation records per question for the gate to tell noise from a
real change (docs/baselines.md, "Noise is measured, not assumed"):

- ``found``: a hash of the texts the pipeline retrieved (the ranks scored):
  noise can only explain the change of a question whose retrieval changed;
- ``exact``: for an approximate store, a hash of the texts exact search on the
  same vectors retrieved (a change of the store's result while this stays the
  same is approximation noise);
- ``margin`` and ``order``: the decisive and the order margin of the question's
  ranking (:mod:`~pytest_chunkeval.engine.margins`), when it has scores that
  float drift can move;
- ``top``, ``k`` and ``eps``: where a margin is below the embedder's declared ε
  (``eps``), the text hashes and scores of the first ``k`` + 1 ranks whose gaps
  decide it (and of the ranks after them within ε of the ``k``-th score), so
  that a later run can check that a swap was within ε (gate/comparison/drift.py);
  ``ordered`` when every rank's order counts (a fused list).

:func:`reference_depth` is how deep an exact search looks for them.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.engine.margins import (
    EPSILON,
    EXTRA_RANKS,
    decisive_margins,
    relative_gap,
    text_ids,
)
from pytest_chunkeval.engine.retrieve import RetrievalInputs, retrieve
from pytest_chunkeval.engine.search_cache import SearchCache
from pytest_chunkeval.stores import measures_loss, reference_store
from pytest_chunkeval.stores._base import FusionStore, Retrieval, Store
from pytest_chunkeval.stores.rerank import Reranker

IntArray = npt.NDArray[np.int64]
Evidence = dict[str, Any]


def reference_depth(k_max: int) -> int:
    """The depth of an exact search that also finds each question's first lower
    chunk of another text: :data:`EXTRA_RANKS` past ``k_max``."""
    return k_max + EXTRA_RANKS if k_max else 0


def approximate(store: object) -> bool:
    """A vector store other than exact search (HNSW...): its loss is measurable
    (what the store declares: stores/_base.py ``measures_loss``)."""
    return measures_loss(store)


def search(
    store: object,
    inputs: RetrievalInputs,
    k_max: int,
    cache: SearchCache,
    timings: dict[str, float],
    reranker: Reranker | None = None,
) -> tuple[Retrieval, Retrieval | None]:
    """What the pipeline retrieves for each question (``k_max`` rows), and the
    exact search on the same vectors past that depth (:func:`reference_depth`;
    None without a vector store of its own, or with a reranker)."""
    if reranker is not None or not isinstance(store, Store):
        return retrieve(store, inputs, k_max, cache, timings, reranker=reranker), None  # type: ignore[arg-type]
    if approximate(store):
        found = retrieve(store, inputs, k_max, cache, timings)
        return found, retrieve(
            reference_store(), inputs, reference_depth(k_max), cache, timings
        )
    # exact search: searched once, past the scored depth; its first ``k_max``
    # ranks are what a search at that depth returns (one order, ties by content)
    deeper = retrieve(store, inputs, reference_depth(k_max), cache, timings)
    scores = None if deeper.scores is None else deeper.scores[:, :k_max]
    return Retrieval(deeper.ids[:, :k_max], scores=scores), deeper


def noise_evidence(
    store: object,
    inputs: RetrievalInputs,
    found: Retrieval,
    reference: Retrieval | None,
    fetch: IntArray,
    depth: IntArray,
    taken_rows: IntArray | None = None,
    epsilon: float = EPSILON,
) -> list[Evidence]:
    """Per question, its evidence (see the module docstring). ``found``: what the
    pipeline retrieved (with a reranker's or a fused store's stages);
    ``reference``: exact search on the same vectors, past the scored depth (None
    when the store searches no vectors alone); ``fetch``: ranks scored per
    question, ``depth`` the ``k`` of each; ``taken_rows``: under a budget, the
    question of each chunk it took (None without one); ``epsilon``: the
    embedder's declared float drift bound."""
    n = len(inputs.query_texts)
    taken = None if taken_rows is None else np.bincount(taken_rows, minlength=n)
    out: list[Evidence] = [{} for _ in range(n)]
    ranked = _ranked(store, inputs, found, reference)
    if ranked is not None:
        scores, rows, whole = ranked
        texts = text_ids(inputs.chunk_texts, rows)
        decides = np.asarray(depth, dtype=np.int64)
        if whole:  # a fused list: any swap among the candidates counts
            decides = np.full(n, rows.shape[1], dtype=np.int64)
            order = decisive_margins(scores, texts, decides)[1]
            margin = order
        else:
            margin, order = decisive_margins(scores, texts, depth)
            if taken is not None:
                # under a budget, the ranks up to the one after the last taken
                # decide which chunks fit
                decides = taken + 1
                margin = decisive_margins(scores, texts, decides)[1]
                order = np.minimum(order, margin)
        near = _TopRanks(inputs.chunk_texts, scores, rows, epsilon)
        for q, (m, o) in enumerate(zip(margin.tolist(), order.tolist(), strict=True)):
            out[q]["margin"] = _rounded(m)
            out[q]["order"] = _rounded(o)
            if min(m, o) < epsilon:
                out[q].update(near(q, int(decides[q]), whole))
    hashed = _TextsHash(inputs.chunk_texts)
    for q, rows_q in enumerate(_prefixes(found.ids, fetch)):
        out[q]["found"] = hashed(rows_q)
    if approximate(store) and reference is not None:
        for q, rows_q in enumerate(_prefixes(reference.ids, fetch)):
            out[q]["exact"] = hashed(rows_q)
    return out


def _prefixes(ids: IntArray, fetch: IntArray) -> list[list[int]]:
    """Each question's first ``fetch`` rows, as lists."""
    return [row[:f] for row, f in zip(ids.tolist(), fetch.tolist(), strict=True)]


def _ranked(
    store: object,
    inputs: RetrievalInputs,
    found: Retrieval,
    reference: Retrieval | None,
) -> tuple[npt.NDArray[np.float64], IntArray, bool] | None:
    """The scores and rows whose gaps decide the questions' rankings, and
    whether every one of those rows counts (a fused leg's candidates)."""
    if found.ranked is not None:  # a reranker: its own scores
        return found.ranked[1], found.ranked[0], False
    scores: npt.NDArray[np.float64] | None
    if isinstance(store, FusionStore) and "dense" in found.stages:
        rows, scores = found.stages["dense"], found.stage_scores.get("dense")
        whole = True
    elif isinstance(store, Store) and reference is not None:
        rows, scores, whole = reference.ids, reference.scores, False
    else:
        return None
    # the scores were cached with the rows: a warm run reads no chunk vector
    return None if scores is None else (scores, rows, whole)


def _rounded(value: float) -> float | None:
    """A margin as a baseline keeps it: 3 significant digits; None for none."""
    if not math.isfinite(value):
        return None
    return float(f"{max(value, 0.0):.3g}")


class _TopRanks:
    """A near tie's ranks as the drift check reads them (gate/comparison/drift.py): the
    text hash and score of each of the first ``k`` + 1 ranks, and of the ranks
    after them still within ε of the ``k``-th score."""

    def __init__(
        self,
        texts: Sequence[str],
        scores: npt.NDArray[np.float64],
        rows: IntArray,
        epsilon: float,
    ) -> None:
        self.texts, self.scores, self.rows, self.epsilon = texts, scores, rows, epsilon

    def __call__(self, q: int, k: int, whole: bool) -> Evidence:
        rows, scores = self.rows[q].tolist(), self.scores[q].tolist()
        top = []
        for rank, (row, score) in enumerate(zip(rows, scores, strict=True)):
            if row < 0 or not math.isfinite(score):
                break
            # past rank k + 1, the ranks still within eps of the k-th score:
            # a tie of several texts at rank k swaps among all of them
            if rank > k > 0 and relative_gap(scores[k - 1], score) >= self.epsilon:
                break
            text = self.texts[row].encode("utf-8", "replace")
            top.append([hashlib.sha256(text).hexdigest()[:12], round(score, 9)])
        out: Evidence = {"top": top, "k": k, "eps": self.epsilon}
        if whole:
            out["ordered"] = True
        return out


class _TextsHash:
    """The hash of the texts of some rows, in order (length-prefixed, the first
    12 hex digits of SHA-256); each row's text read and encoded as it is hashed,
    none kept (docs/performance.md, "Memory")."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = texts

    def __call__(self, rows: list[int]) -> str:
        h = hashlib.sha256()
        for row in rows:
            text = self.texts[row] if row >= 0 else ""
            h.update(len(text).to_bytes(8, "little"))
            h.update(text.encode("utf-8", "replace"))
        return h.hexdigest()[:12]
