"""``inspect_queries``: what a query set can tell, measured exactly and fast.

One call runs every measure of this folder on a corpus and its query set and
returns an :class:`Inspection` (JSON form: :meth:`Inspection.to_json`, schema
:data:`INSPECTION_SCHEMA`), which ``chunkeval inspect`` prints and the JSON and
HTML reports carry. See ``docs/query-quality.md``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet

INSPECTION_SCHEMA = 1
PARTS = (
    "detectable",
    "leakage",
    "bm25",
    "excerpts",
    "coverage",
    "duplicates",
    "separability",
)
"""The measures, in the order reports show them (absent ones are ``None``)."""


@dataclass(frozen=True)
class Inspection:
    """The measures of one query set (each a JSON object, see the modules of
    :mod:`pytest_chunkeval.quality`), with its size and where it came from."""

    corpus: str
    queries: str
    size: Mapping[str, int]
    parts: Mapping[str, Mapping[str, Any] | None] = field(default_factory=dict)
    seconds: float = 0.0

    def part(self, name: str) -> Mapping[str, Any] | None:
        """One measure's JSON object (None when it was not measured)."""
        if name not in PARTS:
            raise KeyError(f"no measure {name!r}; measures: {', '.join(PARTS)}")
        return self.parts.get(name)

    def to_json(self) -> dict[str, Any]:
        return {
            "chunkeval_inspection": INSPECTION_SCHEMA,
            "corpus": self.corpus,
            "queries": self.queries,
            "size": dict(self.size),
            **{p: self.parts.get(p) for p in PARTS},
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Inspection:
        if data.get("chunkeval_inspection") != INSPECTION_SCHEMA:
            raise ValueError(
                f"inspection schema {data.get('chunkeval_inspection')!r} is not "
                f"supported (expected {INSPECTION_SCHEMA})"
            )
        return cls(
            str(data["corpus"]),
            str(data["queries"]),
            dict(data["size"]),
            {p: data.get(p) for p in PARTS},
            float(data.get("seconds", 0.0)),
        )


def _one_configuration(chunker: Any) -> str:
    """Why one configuration is not compared; an unknown or malformed chunker
    spec raises the registry's one-line error instead."""
    from pytest_chunkeval.chunkers.specs import CHUNKERS

    if isinstance(chunker, str):
        CHUNKERS.bind(chunker)
    label = chunker if isinstance(chunker, str) else type(chunker).__name__
    return f"one configuration given ({label}); two or more are compared"


def _configurations(
    corpus: Corpus,
    queries: QuerySet,
    chunkers: Sequence[Any],
    *,
    confidence: float,
    **options: Any,
) -> tuple[Mapping[str, Any] | None, Any]:
    """The separability part (None without chunkers) and the first
    configuration's means (None unless two or more were compared)."""
    from pytest_chunkeval.quality.separability import separability

    if not chunkers:
        return None, None
    if len(chunkers) == 1:  # checked all the same: a typo is not "nothing to do"
        return {"unavailable": _one_configuration(chunkers[0])}, None
    if not any(q.excerpts for q in queries):  # compared on those with excerpts
        return {"unavailable": "no question has excerpts"}, None
    compared = separability(corpus, queries, chunkers, confidence=confidence, **options)
    return compared, compared["means"]


def inspect_queries(
    corpus: Corpus,
    queries: QuerySet,
    *,
    chunkers: Sequence[Any] = (),
    embedder: Any = None,
    store: Any = None,
    k: Any = None,
    unit: str = "token",
    tokenizer: Any = None,
    cache: Any = None,
    bm25: bool = True,
    confidence: float = 0.95,
    show: int = 10,
    progress: bool | None = None,
) -> Inspection:
    """Inspect ``queries`` on ``corpus`` (validated against each other).

    Always: size, lexical leakage, excerpts, coverage, near-duplicate questions;
    the BM25 floor when ``bm25`` (and the ``bm25`` extra is installed); with two
    or more ``chunkers``, each is evaluated (``embedder``, ``store``, ``k``: the
    evaluation defaults) and the pairs the set cannot tell apart are listed.
    ``show``: how many examples each list keeps. ``cache``: the evaluation cache
    (an :class:`~pytest_chunkeval.embedders.cache.EmbeddingCache` or a directory).
    """
    from pytest_chunkeval.quality.coverage import coverage_report
    from pytest_chunkeval.quality.duplicates import duplicates_report
    from pytest_chunkeval.quality.excerpts import excerpt_report
    from pytest_chunkeval.quality.floor import bm25_floor
    from pytest_chunkeval.quality.leakage import leakage_report
    from pytest_chunkeval.quality.separability import detectable
    from pytest_chunkeval.tokenizers.base import get_tokenizer

    started = time.perf_counter()
    queries = queries.validated(corpus)
    tok = get_tokenizer(tokenizer)
    size = {
        "questions": len(queries),
        "with_excerpts": sum(1 for q in queries if q.excerpts),
        "excerpts": queries.n_excerpts,
        "documents": len(corpus),
    }
    parts: dict[str, Mapping[str, Any] | None] = dict.fromkeys(PARTS)
    parts |= {
        "leakage": leakage_report(queries, show=show),
        "excerpts": excerpt_report(corpus, queries, tok, show=show),
        "coverage": coverage_report(corpus, queries, show=show),
        "duplicates": duplicates_report(queries, show=show),
        "bm25": bm25_floor(corpus, queries, cache=cache) if bm25 else None,
    }
    parts["separability"], means = _configurations(
        corpus,
        queries,
        chunkers,
        confidence=confidence,
        embedder=embedder,
        store=store,
        k=k,
        unit=unit,
        tokenizer=tokenizer,
        cache=cache,
        progress=progress,
    )
    parts["detectable"] = detectable(
        size["with_excerpts"], confidence=confidence, means=means
    )
    return Inspection(
        corpus.name,
        queries.source or "queries",
        size,
        parts,
        time.perf_counter() - started,
    )
