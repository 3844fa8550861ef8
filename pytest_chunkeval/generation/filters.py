"""Quality filters for generated query sets (``chunkeval filter``).

As in Chroma's report, two filters run on embeddings:

- **poor excerpts**: a query is dropped when the cosine similarity between its
  question and ANY of its excerpts is below ``excerpt_threshold`` (an excerpt that
  has little to do with the question makes a bad ground truth);
- **near duplicates**: questions are compared pairwise; walking the set in file
  order, a query is dropped when its cosine with a query already kept is above
  ``duplicate_threshold`` (so the earlier of a pair stays, and a file grown by a
  resumed run keeps its old queries).

Poor excerpts are removed first, so a duplicate pair never loses its good member
to its bad twin. Thresholds depend on the embedding model: :func:`default_thresholds`
knows a few, and :func:`format_report` prints the distributions seen so they can be
tuned. See ``docs/generate.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.config.defaults import DEFAULT_EMBEDDER
from pytest_chunkeval.core.locate import preview
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Query
from pytest_chunkeval.embedders.base import Embedder
from pytest_chunkeval.embedders.registry import get_embedder

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Thresholds:
    """Cosine thresholds of the two filters (None: that filter is off)."""

    duplicate: float | None
    excerpt: float | None
    source: str  # where the values come from, for the report


# Calibrated per embedding model. text-embedding-3-large: the report's values (it used
# 0.67-0.73 for duplicates and 0.40-0.43 for excerpts, depending on the corpus).
# all-MiniLM-L6-v2: measured on the report's own (already filtered) general set,
# 472 queries: the highest question-to-question cosine is 0.892 (pairs at 0.85-0.89
# are distinct questions on one topic), and 0.6% of queries have an excerpt below
# 0.15 (2% below 0.22). See docs/generate.md.
KNOWN_THRESHOLDS: dict[str, tuple[float, float]] = {
    "text-embedding-3-large": (0.70, 0.40),
    "all-minilm-l6-v2": (0.90, 0.15),
}
FALLBACK_THRESHOLDS = KNOWN_THRESHOLDS["all-minilm-l6-v2"]


def default_thresholds(embedder_identity: str) -> Thresholds:
    """The thresholds known for an embedder (matched in its identity), else the
    all-MiniLM-L6-v2 ones with a source saying they are a guess."""
    ident = embedder_identity.lower()
    for name, (dup, exc) in KNOWN_THRESHOLDS.items():
        if name in ident:
            return Thresholds(dup, exc, f"defaults for {name}")
    dup, exc = FALLBACK_THRESHOLDS
    return Thresholds(
        dup,
        exc,
        "no calibrated defaults for this embedder; using all-MiniLM-L6-v2's, check "
        "the distributions below",
    )


@dataclass(frozen=True)
class Removed:
    """A query a filter dropped, its score, and (duplicates) the query it repeats."""

    query: Query
    score: float
    twin: Query | None = None


@dataclass(frozen=True)
class FilterResult:
    """What :func:`filter_queries` kept and removed, with the scores it saw.

    ``nearest[i]``: the highest cosine of query ``i``'s question with any other
    question of the input; ``excerpt_min[i]``: its lowest question-excerpt cosine.
    """

    kept: QuerySet
    poor_excerpts: tuple[Removed, ...]
    duplicates: tuple[Removed, ...]
    nearest: FloatArray
    excerpt_min: FloatArray
    thresholds: Thresholds
    embedder: str

    @property
    def n_input(self) -> int:
        return len(self.nearest)


def _unit(vectors: Any) -> FloatArray:
    arr = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    out: FloatArray = np.zeros_like(arr)
    np.divide(arr, norms, out=out, where=norms > 0)
    return out


def _thresholds(
    identity: str, duplicate: float | str | None, excerpt: float | str | None
) -> Thresholds:
    """The thresholds given, ``"default"`` ones taken from
    :func:`default_thresholds` of the embedder; each a cosine in [-1, 1] or None."""
    defaults = default_thresholds(identity)
    dup_t = defaults.duplicate if duplicate == "default" else duplicate
    exc_t = defaults.excerpt if excerpt == "default" else excerpt
    for name, value in (("duplicate", dup_t), ("excerpt", exc_t)):
        if value is not None and (
            not isinstance(value, (int, float)) or not -1 <= value <= 1
        ):
            raise ValueError(
                f"{name} threshold must be a cosine in [-1, 1], got {value!r}"
            )
    given = duplicate != "default" and excerpt != "default"
    return Thresholds(
        dup_t,  # type: ignore[arg-type]  # checked above
        exc_t,  # type: ignore[arg-type]
        "given" if given else defaults.source,
    )


def _similarities(q_vec: Any, e_vec: Any, owners: list[int]) -> tuple[Any, Any, Any]:
    """Per question, the lowest cosine with one of its excerpts; the question
    cosines (the diagonal at -inf); per question, the cosine of its nearest other."""
    excerpt_cos = np.einsum("ij,ij->i", e_vec, q_vec[owners])
    excerpt_min = np.full(len(q_vec), np.inf)
    np.minimum.at(excerpt_min, np.asarray(owners, dtype=np.int64), excerpt_cos)
    sims = q_vec @ q_vec.T
    if len(q_vec) > 1:
        np.fill_diagonal(sims, -np.inf)
        return excerpt_min, sims, sims.max(axis=1)
    return excerpt_min, sims, np.full(1, np.nan)


def filter_queries(
    queries: QuerySet,
    *,
    embedder: str | Embedder | Any = None,
    duplicate_threshold: float | str | None = "default",
    excerpt_threshold: float | str | None = "default",
    cache: Any = None,
    progress: bool | None = None,
) -> FilterResult:
    """Apply the poor-excerpt then the near-duplicate filter.

    ``embedder``: a spec or object for :func:`get_embedder` (default
    :data:`DEFAULT_EMBEDDER`). A threshold of ``"default"`` takes
    :func:`default_thresholds` of the embedder; None turns that filter off.
    ``cache``: an :class:`EmbeddingCache` (default: one at
    :func:`~pytest_chunkeval.embedders.cache.default_cache_dir`), or False for none.
    """
    from pytest_chunkeval.embedders.cache import EmbeddingCache, default_cache_dir

    emb = get_embedder(embedder if embedder is not None else DEFAULT_EMBEDDER)
    thresholds = _thresholds(emb.identity, duplicate_threshold, excerpt_threshold)
    dup_t, exc_t = thresholds.duplicate, thresholds.excerpt
    qs = list(queries)
    if not qs:
        empty = np.zeros(0)
        return FilterResult(queries, (), (), empty, empty, thresholds, emb.identity)

    texts = [q.text for q in qs]
    owners: list[int] = []
    for i, q in enumerate(qs):
        for e in q.excerpts:
            texts.append(e.text)
            owners.append(i)
    if cache is False:
        vectors = emb.embed(texts)
    else:
        store = cache if cache is not None else EmbeddingCache(default_cache_dir())
        vectors = store.embed(emb, texts, progress=progress)
    unit = _unit(vectors)
    q_vec, e_vec = unit[: len(qs)], unit[len(qs) :]

    excerpt_min, sims, nearest = _similarities(q_vec, e_vec, owners)

    poor: list[Removed] = []
    survivors: list[int] = []
    for i, q in enumerate(qs):
        if exc_t is not None and excerpt_min[i] < exc_t:
            poor.append(Removed(q, float(excerpt_min[i])))
        else:
            survivors.append(i)
    duplicates: list[Removed] = []
    kept: list[int] = []
    for i in survivors:
        if dup_t is not None and kept:
            row = sims[i, kept]
            j = int(np.argmax(row))
            if row[j] > dup_t:
                duplicates.append(Removed(qs[i], float(row[j]), qs[kept[j]]))
                continue
        kept.append(i)
    metadata = dict(queries.metadata)
    metadata["filters"] = {
        "embedder": emb.identity,
        "duplicate_threshold": dup_t,
        "excerpt_threshold": exc_t,
        "input_queries": len(qs),
        "removed_poor_excerpts": len(poor),
        "removed_duplicates": len(duplicates),
    }
    return FilterResult(
        QuerySet([qs[i] for i in kept], metadata, source=queries.source),
        tuple(poor),
        tuple(duplicates),
        nearest,
        excerpt_min,
        thresholds,
        emb.identity,
    )


def histogram(
    values: Sequence[float] | FloatArray,
    threshold: float | None,
    *,
    lo: float = -0.2,
    hi: float = 1.0,
    step: float = 0.05,
    width: int = 40,
    above: bool = True,
) -> list[str]:
    """Text histogram of ``values`` in ``step`` bins; ``<`` marks the bins holding
    values past ``threshold`` (above it if ``above``, else below it)."""
    arr = np.asarray(values, dtype=np.float64)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return ["  (no values)"]
    lo = min(lo, math.floor(float(arr.min()) / step) * step)
    # Rounded (and no -0.0) so a bin edge equal to a threshold compares as equal.
    edges = np.round(np.arange(lo, hi + step / 2, step), 6) + 0.0
    clipped = np.clip(arr, lo, hi)
    counts, _ = np.histogram(clipped, bins=edges)
    past = np.zeros_like(counts)
    if threshold is not None:
        beyond = arr > threshold if above else arr < threshold
        past, _ = np.histogram(clipped[beyond], bins=edges)
    top = max(int(counts.max()), 1)
    first = int(np.flatnonzero(counts)[0])
    last = int(np.flatnonzero(counts)[-1])
    lines = []
    for k in range(first, last + 1):
        a, b = float(edges[k]), float(edges[k + 1])
        bar = "#" * math.ceil(width * int(counts[k]) / top) if counts[k] else ""
        mark = " <" if past[k] else ""
        lines.append(f"  {a:5.2f}..{b:5.2f} {int(counts[k]):6d} {bar}{mark}".rstrip())
    return lines


def _percentiles(values: FloatArray) -> str:
    arr = values[np.isfinite(values)]
    if arr.size == 0:
        return "n/a"
    ps = (0, 5, 25, 50, 75, 95, 100)
    got = np.percentile(arr, ps)
    names = ["min" if p == 0 else "max" if p == 100 else f"p{p}" for p in ps]
    return ", ".join(f"{n} {v:.3f}" for n, v in zip(names, got, strict=True))


def format_report(result: FilterResult, *, show: int = 10) -> str:
    """The distributions, thresholds, removal counts and the first removed queries."""
    t = result.thresholds
    lines = [
        f"embedder {result.embedder}; thresholds: duplicate "
        f"{_fmt(t.duplicate)}, excerpt {_fmt(t.excerpt)} ({t.source})",
        "",
        "question vs nearest other question (cosine; above the duplicate threshold "
        "is removed; '<' marks bins with such values):",
        f"  {_percentiles(result.nearest)}",
        *histogram(result.nearest, t.duplicate, above=True),
        "",
        "question vs its least similar excerpt (cosine; below the excerpt threshold "
        "is removed; '<' marks bins with such values):",
        f"  {_percentiles(result.excerpt_min)}",
        *histogram(result.excerpt_min, t.excerpt, above=False),
        "",
        f"poor excerpts: removed {len(result.poor_excerpts)} of {result.n_input}",
    ]
    for r in result.poor_excerpts[:show]:
        lines.append(f"  {r.query.id} ({r.score:.3f}): {preview(r.query.text, 70)}")
    lines.append(
        f"near duplicates: removed {len(result.duplicates)} of "
        f"{result.n_input - len(result.poor_excerpts)}"
    )
    for r in result.duplicates[:show]:
        twin = r.twin.id if r.twin is not None else "?"
        lines.append(
            f"  {r.query.id} ({r.score:.3f} with {twin}): {preview(r.query.text, 70)}"
        )
    more = max(0, len(result.poor_excerpts) - show) + max(
        0, len(result.duplicates) - show
    )
    if more:
        lines.append(f"  ... and {more} more")
    lines.append(f"kept {len(result.kept)} of {result.n_input} queries")
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "off" if value is None else f"{value:g}"
