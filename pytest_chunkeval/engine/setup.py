"""One evaluation's setup: the resolved components, the data, and the configuration
a result records (the baseline's identity).

:func:`~pytest_chunkeval.engine.evaluate.evaluate` (a chunker in the retrieval
protocol), :func:`~pytest_chunkeval.engine.score.score` (a whole retriever) and
:func:`~pytest_chunkeval.relationships.evaluate.evaluate_relationships` are
variants of it: each resolves its components here, scores on the same unit axis,
excerpt spans and copies of identical text, and records its configuration with
the one builder, :meth:`EvaluationSetup.config`, so that the same components are
recorded alike whichever entry point ran them.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pytest_chunkeval.chunkers import Chunker, get_chunker
from pytest_chunkeval.config.defaults import DEFAULT_EMBEDDER, DEFAULT_STORE
from pytest_chunkeval.config.evaluation import EvaluationSpec
from pytest_chunkeval.config.scoring import DEFAULT_COPIES, check_copies
from pytest_chunkeval.config.specs import SpecError
from pytest_chunkeval.core.copies import ExcerptCopies
from pytest_chunkeval.core.metrics import QuerySpans
from pytest_chunkeval.core.unit_names import Unit, check_unit
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.base import Embedder
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.registry import EMBEDDERS, get_embedder
from pytest_chunkeval.engine.cache_dir import CacheDir, cache_at
from pytest_chunkeval.engine.chunking import Chunking, excerpt_spans, unit_map
from pytest_chunkeval.engine.copies import copies_for
from pytest_chunkeval.engine.recorded import portable_store_fields
from pytest_chunkeval.engine.records import judging_for
from pytest_chunkeval.errors import DataError
from pytest_chunkeval.stores import AnyStore, get_store, uses_vectors
from pytest_chunkeval.tokenizers.base import Tokenizer, get_tokenizer
from pytest_chunkeval.util.judge_advice import judge_advice


class EvaluationError(DataError):
    """The inputs of an evaluation do not fit together; the message says where."""


def resolve_cache(cache: CacheDir | EmbeddingCache | str | Path | None) -> CacheDir:
    """The evaluation cache: the one given, the process's one at a directory,
    else the default (``engine/cache_dir.py``)."""
    return cache_at(cache)


def check_queries(queries: QuerySet) -> None:
    """Zero questions would give empty means and a baseline that always passes."""
    if len(queries) == 0:
        source = queries.source or "the query set"
        raise EvaluationError(
            f"{source} holds no query: an evaluation needs at least one question "
            "(a query file with only its header line loads none)"
        )


def check_ground_truth(queries: QuerySet, judge: Any, k: Any) -> None:
    """Questions without excerpts need a judge, and cannot size ``k="min"``."""
    bare = [q for q in queries if not q.excerpts]
    if not bare:
        return
    where = f"{queries.source or 'the query set'}"
    if k == "min":
        raise EvaluationError(
            f"k='min' needs excerpts, but {len(bare)} question(s) of {where} have "
            f"none (first: {bare[0].id!r}); give a number for k"
        )
    if judge is None and len(bare) == len(queries):
        raise EvaluationError(
            f"no question of {where} has excerpts: {judge_advice(where)}"
        )


def embedder_label(value: object, identity: str) -> str:
    """The embedder's canonical spec (``hashing`` -> ``hashing:256``), else its
    identity (objects)."""
    if not isinstance(value, str):
        return identity
    try:
        return EMBEDDERS.label(value)
    except SpecError:  # resolved already: only a hook-registered oddity gets here
        return value.strip()


def store_label(value: object, store: object) -> str:
    """The store's name, else the spec it was given, else its type."""
    fallback = value if isinstance(value, str) else type(store).__name__
    name = getattr(store, "name", fallback)
    return name if isinstance(name, str) else fallback


@dataclass
class EvaluationSetup:
    """What one evaluation runs on and with, resolved once.

    ``chunker``, ``store`` and ``embedder`` are None where the variant has none
    (a whole retriever has neither store nor embedder; a text store no embedder).
    """

    corpus: Corpus
    queries: QuerySet
    unit: Unit
    tokenizer: Tokenizer | None
    cache: CacheDir
    copies: str
    chunker: Chunker | None = None
    store: AnyStore | None = None
    store_label: str | None = None
    embedder: Embedder | None = None
    embedder_label: str | None = None
    spec: EvaluationSpec = field(default_factory=EvaluationSpec)
    """The settings it was resolved from, with a call's own (``k``, ``budget``,
    ``rerank``, ``judge``: :meth:`with_run`); every key reads it
    (``engine/keys/``)."""
    remembered: dict[object, Any] = field(default_factory=dict)
    """What a component computed every time (never cached: a function without a
    ``cache_version``) answered during this setup's life (a plugin session, or one
    call), so that it is not asked twice; its copies share it."""

    @classmethod
    def resolve(
        cls,
        corpus: Corpus,
        queries: QuerySet,
        *,
        chunker: str | Chunker | Callable[[str], Any] | None = None,
        embedder: str | Embedder | Callable[[list[str]], Any] = DEFAULT_EMBEDDER,
        store: str | AnyStore | None = DEFAULT_STORE,
        unit: str = "token",
        tokenizer: str | Tokenizer | None = None,
        cache: CacheDir | EmbeddingCache | str | Path | None = None,
        copies: str = DEFAULT_COPIES,
    ) -> EvaluationSetup:
        """Check the data and the settings, and resolve the components: a spec
        string through its registry, an object as it is. ``store=None``: no
        retrieval here (a whole retriever's results are scored); then no
        embedder either. A chunker that embeds adopts this evaluation's cache."""
        check_queries(queries)
        checked_unit = check_unit(unit)
        resolved_cache = resolve_cache(cache)
        spec = EvaluationSpec(
            cache_dir=str(resolved_cache.directory),
            embedder=embedder,
            store=store,
            unit=checked_unit,
            tokenizer=tokenizer,
            copies=check_copies(copies),
        )
        setup = cls(
            corpus,
            queries,
            checked_unit,
            get_tokenizer(tokenizer) if checked_unit == "token" else None,
            resolved_cache,
            spec.copies,
            spec=spec,
        )
        if chunker is not None:
            setup = setup.with_chunker(chunker)
        if store is not None:
            setup.store = get_store(store)
            setup.store_label = store_label(store, setup.store)
            if uses_vectors(setup.store):
                setup.embedder = get_embedder(embedder)
                setup.embedder_label = embedder_label(embedder, setup.embedder.identity)
        return setup

    @classmethod
    def given_or_resolved(
        cls,
        setup: EvaluationSetup | None,
        chunker: str | Chunker | Callable[[str], Any],
        corpus: Corpus,
        queries: QuerySet,
        embedder: str | Embedder | Callable[[list[str]], Any],
        store: str | AnyStore,
        unit: str,
        tokenizer: str | Tokenizer | None,
        cache: CacheDir | EmbeddingCache | str | Path | None,
        copies: str,
    ) -> EvaluationSetup:
        """The setup of a chunker's evaluation (``evaluate``,
        ``evaluate_relationships``): ``setup`` when given (its settings then
        stand), else the settings resolved on ``corpus`` and ``queries``; with
        ``chunker``. The settings come in the order of those functions' keyword
        arguments, so that they are listed in one place."""
        if setup is None:
            setup = cls.resolve(
                corpus,
                queries,
                embedder=embedder,
                store=store,
                unit=unit,
                tokenizer=tokenizer,
                cache=cache,
                copies=copies,
            )
        return setup.with_chunker(chunker)

    def with_chunker(
        self, chunker: str | Chunker | Callable[[str], Any]
    ) -> EvaluationSetup:
        """This setup with ``chunker`` (resolved; a chunker that embeds adopts the
        cache), sharing what is computed already (unit axis, excerpt copies)."""
        setup = copy.copy(self)
        setup.chunker = get_chunker(chunker)
        adopt_cache = getattr(setup.chunker, "adopt_cache", None)
        if callable(adopt_cache):
            adopt_cache(setup.cache.embeddings)
        return setup

    def with_spec(self, spec: EvaluationSpec) -> EvaluationSetup:
        """This setup under ``spec`` (a plugin test's, whose components and data
        it was resolved from), sharing what is computed already: the keys read
        that spec's settings."""
        setup = copy.copy(self)
        setup.spec = dataclasses.replace(
            spec, unit=self.unit, copies=self.copies, cache_dir=self.spec.cache_dir
        )
        return setup

    def with_run(self, **changes: Any) -> EvaluationSetup:
        """This setup with a call's own result settings (``k=``, ``budget=``,
        ``rerank=``, ``judge=``) in its spec, sharing what is computed already."""
        setup = copy.copy(self)
        setup.spec = self.spec.with_run(**changes)
        return setup

    def config(self, name: str, **fields: Any) -> dict[str, Any]:
        """The configuration a result records (its baseline's), named ``name`` (a
        chunker's name, a retriever's label): the components by their labels,
        the data, then the spec's settings (``EvaluationSpec.recorded``: scoring
        rules, ``k``, budget...; a whole retriever's ``k`` is what it is scored
        on), then ``fields``, what no setting says (a reranker's or an
        extractor's identity)."""
        config: dict[str, Any] = {
            "chunker": name,
            "embedder": self.embedder_label,
            "store": self.store_label,
            "unit": self.spec.unit,
            "tokenizer": self.tokenizer.name if self.tokenizer is not None else None,
            "corpus": self.corpus.name,
            "queries": self.queries.source or "queries",
        }
        if self.store is not None:
            config["embedder_identity"] = (
                self.embedder.identity if self.embedder is not None else None
            )
        config.update(portable_store_fields(self.store, self.store_label))
        config.update(self.spec.recorded(whole_retriever=self.store is None))
        config.update(fields)
        return config

    @functools.cached_property
    def units(self) -> UnitMap:
        """The corpus' unit axis."""
        return unit_map(self.corpus, self.unit, self.tokenizer, self.cache)

    @functools.cached_property
    def excerpts(self) -> QuerySpans:
        """Every query's stored excerpt spans, on the unit axis."""
        return excerpt_spans(self.queries, self.units)

    @functools.cached_property
    def excerpt_copies(self) -> ExcerptCopies | None:
        """Every occurrence of each excerpt's text (None with ``copies="strict"``),
        cached beside the embeddings."""
        return copies_for(
            self.copies,
            self.corpus,
            self.queries,
            self.cache.directory,
            read_only=self.cache.read_only,
        )

    def chunking(self, given: Chunking | None = None) -> Chunking:
        """The chunker's chunks of the corpus (``given`` when the caller has them),
        never empty."""
        if self.chunker is None:
            raise TypeError("this setup has no chunker")
        if given is None:
            given = Chunking(self.chunker, self.corpus, self.cache)
        elif given.corpus.content_hash != self.corpus.content_hash:
            raise EvaluationError("the chunking given is of another corpus")
        if len(given) == 0:
            raise EvaluationError(f"chunker {self.chunker.name!r} produced no chunks")
        return given

    def chunk_stats(self, chunking: Chunking) -> dict[str, float]:
        """Count and mean size (units, characters) of a chunking's chunks."""
        index = chunking.index(self.units)
        stats = {
            "count": len(chunking),
            "mean_units": float((index.unit_hi - index.unit_lo).mean()),
            "mean_chars": float(np.diff(chunking.bounds, axis=1).mean()),
        }
        if chunking.fallback_share is not None:
            stats["fallback_share"] = chunking.fallback_share
        return stats

    def judging(self, judge: Any) -> Any:
        """A judge spec or object as a ``Judging`` caching its answers beside the
        embeddings (None: not judged)."""
        return judging_for(judge, self.cache.directory, self.cache.read_only)
