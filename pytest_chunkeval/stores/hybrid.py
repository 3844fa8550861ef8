"""``hybrid``: dense + BM25 fused by reciprocal rank fusion (RRF).

Spec: ``hybrid[:DENSE_STORE][?n=50&rrf=60&weights=1,1&BM25_OPTIONS]``, and
``hybrid[?...]@DENSE_STORE?ITS_OPTIONS`` for a dense store with options of its own
(``hybrid@chroma?ef_search=50``: the grammar's ``@spec``, which the name uses
then, so that it parses back to the same store). Each leg (the
dense store, default ``exact``, and ``bm25`` with the given tokenization options)
returns ``n`` candidates per query; a chunk's fused score is
``sum(weight_leg / (rrf + rank_leg))`` over the legs that returned it (ranks 1-based),
and the best ``k`` are kept. Equal fused scores go by content (docs/baselines.md,
"Ties"): the tie keys the engine passes. ``weights`` lists the dense weight, then the
BM25 weight.

Each leg is searched (and cached) on its own: the dense leg reuses the vectors of the
evaluation, so a hybrid run adds no embedding pass to a dense one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from pytest_chunkeval.config.registry import parse_options, positive_float, positive_int
from pytest_chunkeval.config.specs import Spec, format_spec, parse
from pytest_chunkeval.core.ranking import best_first
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.stores._base import IdArray, Store, TextStore, portable_name
from pytest_chunkeval.stores.bm25 import BM25_OPTIONS, BM25Store

DEFAULT_CANDIDATES = 50
DEFAULT_RRF = 60.0
DEFAULT_DENSE = "exact"


def _weights(value: str) -> tuple[float, float]:
    parts = [p for p in value.split(",") if p.strip()]
    if len(parts) != 2:
        raise ValueError("expected two weights, dense then bm25 (e.g. 1,0.5)")
    dense, lexical = (float(p) for p in parts)
    if not (dense >= 0 and lexical >= 0 and dense + lexical > 0):
        raise ValueError("weights must be >= 0 and not both 0")
    return dense, lexical


def rrf_fuse(
    lists: Mapping[str, IdArray],
    k: int,
    *,
    constant: float = DEFAULT_RRF,
    weights: Mapping[str, float] | None = None,
    ties: IdArray | None = None,
) -> IdArray:
    """Reciprocal rank fusion of ``(q, n_leg)`` row lists (``-1`` = no row) into
    ``(q, k)``, best first, ``-1`` padded; equal fused scores by the rows' tie keys
    (``ties``; the lower row without)."""
    legs = list(lists)
    n_queries = {lists[leg].shape[0] for leg in legs}
    if len(n_queries) > 1:
        raise ValueError(f"legs disagree on the number of queries: {n_queries}")
    q = n_queries.pop() if n_queries else 0
    out = np.full((q, k), -1, dtype=np.int64)
    w = {leg: 1.0 if weights is None else float(weights[leg]) for leg in legs}
    rows_of = {leg: lists[leg].tolist() for leg in legs}
    for i in range(q):
        score: dict[int, float] = {}
        for leg in legs:
            for rank, row in enumerate(rows_of[leg][i], start=1):
                if row < 0:
                    continue
                score[row] = score.get(row, 0.0) + w[leg] / (constant + rank)
        rows = np.fromiter(score, dtype=np.int64, count=len(score))
        fused = np.fromiter(score.values(), dtype=np.float64, count=len(score))
        order = best_first(fused, rows, ties)[:k]
        out[i, : order.size] = rows[order]
    return out


class HybridStore:
    """A dense store and a BM25 store, each asked for ``candidates`` rows, fused by
    reciprocal rank fusion."""

    def __init__(
        self,
        dense: Store,
        bm25: BM25Store | None = None,
        *,
        candidates: int = DEFAULT_CANDIDATES,
        rrf: float = DEFAULT_RRF,
        weights: tuple[float, float] = (1.0, 1.0),
    ) -> None:
        if candidates < 1:
            raise ConfigError(f"n must be >= 1, got {candidates}")
        if not rrf > 0:
            raise ConfigError(f"rrf must be > 0, got {rrf}")
        self.dense = dense
        self.bm25 = bm25 if bm25 is not None else BM25Store()
        self.candidates = int(candidates)
        self.rrf = float(rrf)
        self.weights = (float(weights[0]), float(weights[1]))

    @property
    def legs(self) -> Mapping[str, Store | TextStore]:
        return {"dense": self.dense, "bm25": self.bm25}

    def _fusion_options(self) -> dict[str, str]:
        return {
            "n": str(self.candidates),
            "rrf": f"{self.rrf:g}",
            "weights": f"{self.weights[0]:g},{self.weights[1]:g}",
        }

    @property
    def name(self) -> str:
        """The canonical spec: non-default options only."""
        return self._spec(self.dense.name)

    @property
    def portable_name(self) -> str:
        """The name with its dense store's portable name (docs/stores.md)."""
        return self._spec(portable_name(self.dense))

    def _spec(self, dense_name: str) -> str:
        defaults = {"n": str(DEFAULT_CANDIDATES), "rrf": f"{DEFAULT_RRF:g}"}
        defaults["weights"] = "1,1"
        bm25_defaults = BM25Store().options()
        options = {
            **{k: v for k, v in self._fusion_options().items() if defaults[k] != v},
            **{k: v for k, v in self.bm25.options().items() if bm25_defaults[k] != v},
        }
        query = "&".join(f"{k}={v}" for k, v in sorted(options.items()))
        own = f"?{query}" if query else ""
        if dense_name == DEFAULT_DENSE:
            return f"hybrid{own}"
        if "?" in dense_name or "@" in dense_name:  # its options after the fusion's
            return f"hybrid{own}@{dense_name}"
        return f"hybrid:{dense_name}{own}"

    @property
    def identity(self) -> str:
        """The fusion settings; each leg is cached under its own identity."""
        return "rrf?" + "&".join(f"{k}={v}" for k, v in self._fusion_options().items())

    content_ties = True
    """:meth:`fuse` takes the chunks' tie keys (docs/baselines.md, "Ties")."""

    def fuse(
        self, lists: Mapping[str, IdArray], k: int, *, ties: IdArray | None = None
    ) -> IdArray:
        return rrf_fuse(
            lists,
            k,
            constant=self.rrf,
            weights={"dense": self.weights[0], "bm25": self.weights[1]},
            ties=ties,
        )

    def __repr__(self) -> str:
        return f"HybridStore({self.name!r})"


def hybrid_from_spec(rest: str, get_store: Callable[[str], object]) -> HybridStore:
    """Factory for the spec ``hybrid[:DENSE_STORE][?options]``, or
    ``hybrid[?options]@DENSE_STORE?ITS_OPTIONS`` for a dense store with options
    of its own (docs/retrieval.md); ``get_store`` resolves the dense leg's spec
    (the registry passes its own)."""
    allowed = {
        "n": positive_int,
        "rrf": positive_float,
        "weights": _weights,
        **BM25_OPTIONS,
    }
    parsed = parse(f"hybrid{'' if rest[:1] in ('', '?', '@') else ':'}{rest}")
    own = format_spec(Spec("hybrid", (), parsed.options))[len("hybrid") :]
    positional = ":".join(parsed.args)
    try:
        options = parse_options(own, allowed)[1]
    except ValueError as exc:
        if not positional or "unknown option" not in str(exc):
            raise
        raise ValueError(
            f"{exc}; a dense store's own options follow it after '@': "
            f"hybrid@{positional}?..."
        ) from None
    if positional and parsed.inner is not None:
        raise ValueError(
            "the dense store is named twice: hybrid:DENSE_STORE or, with its own "
            "options, hybrid@DENSE_STORE?OPTIONS"
        )
    dense_spec = positional or (parsed.inner and format_spec(parsed.inner))
    fusion = {k: options.pop(k) for k in ("n", "rrf", "weights") if k in options}
    dense = get_store(dense_spec or DEFAULT_DENSE)
    if not isinstance(dense, Store):
        raise ValueError(f"{dense_spec!r} is not a vector store")
    return HybridStore(
        dense,
        BM25Store(**options),
        candidates=fusion.get("n", DEFAULT_CANDIDATES),
        rrf=fusion.get("rrf", DEFAULT_RRF),
        weights=fusion.get("weights", (1.0, 1.0)),
    )
