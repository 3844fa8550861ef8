"""Every cache key, built here and only here (docs/performance.md, "What a cache
keys on"): from the evaluation spec (``config/evaluation.py``), the components'
identities read when the key is built (never remembered from construction), the
texts' digests and the version of the code that computes the cached value.

- The lower caches (each document's token bounds and chunks, the copies of the
  excerpts' texts, a store's search rows) key on the package version and their
  own format number (:class:`CacheFormat`). ``tests/test_cache_formats.py``
  recomputes each algorithm's output on a small fixed input and compares its
  digest with the one stored beside the number: an algorithm whose output
  changes fails that test until its number is raised.
- The result cache keys on the package's source (:func:`code_identity`), the
  result's schema and configuration, the corpus and questions, and what
  determines each result setting of the spec (:data:`RESULT_PARTS`; the key
  audit, ``tests/test_key_audit.py``, changes each alone).
- The session's memos (``run/evaluations.py``) key on the spec and on
  :func:`memo_key`.

``tests/test_layout.py`` checks that no other module of ``engine/`` builds a
key (``entry_key``, or a hash of anything but content).
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from pytest_chunkeval.chunkers.base import cache_identity
from pytest_chunkeval.config.evaluation import RESULT_SETTINGS, EvaluationSpec
from pytest_chunkeval.embedders.base import embedder_cache_identity
from pytest_chunkeval.engine.results import RESULT_SCHEMA
from pytest_chunkeval.stores._base import (
    FusionStore,
    Store,
    TextStore,
    vector_store_identity,
)
from pytest_chunkeval.stores.rerank import Reranker
from pytest_chunkeval.tokenizers.base import tokenizer_identity
from pytest_chunkeval.util.verified import entry_key


class EvaluationSetup(Protocol):
    """What the keys read of ``engine/setup.py``'s setup (which imports the
    caches, which import this module)."""

    @property
    def corpus(self) -> Any: ...
    @property
    def queries(self) -> Any: ...
    @property
    def unit(self) -> str: ...
    @property
    def tokenizer(self) -> Any: ...
    @property
    def chunker(self) -> Any: ...
    @property
    def embedder(self) -> Any: ...
    @property
    def store(self) -> Any: ...
    @property
    def copies(self) -> str: ...
    @property
    def cache(self) -> Any: ...
    @property
    def spec(self) -> EvaluationSpec: ...


class Chunking(Protocol):
    """A chunking given by the caller (``engine/chunking.py``)."""

    def digest(self) -> str: ...


@functools.cache
def package_version() -> str:
    """The installed package's version ("unknown" from a bare source tree)."""
    try:
        from importlib.metadata import version

        return version("pytest-chunkeval")
    except Exception:  # not installed
        return "unknown"


@dataclass(frozen=True)
class CacheFormat:
    """The version of the code that computes one cache's values: the package
    version and this cache's own number. ``golden`` is the digest of the
    algorithm's output on ``tests/test_cache_formats.py``'s fixed input, for the
    number it goes with: change the output, raise the number, store the new
    digest."""

    name: str
    number: int
    golden: str

    def version(self) -> str:
        """The first part of each key of this cache."""
        return f"chunkeval-{self.name}-{self.number}\0{package_version()}"


CHUNKINGS = CacheFormat(
    "chunkings", 2, "60097d87c4863c3f3b7da17a47f3314f7a046d1ace6c55d0906602f1ceea2d8c"
)
"""Each document's chunks (``chunking_cache.py``): the chunkers' algorithms."""
TOKENS = CacheFormat(
    "tokens", 2, "9a60be43596ae968e7114814185e3ac3680773ab321ae307203a34ad41a2e423"
)
"""Each document's token bounds (``token_cache.py``): the tokenizers' offsets."""
COPIES = CacheFormat(
    "copies", 4, "8d0633f53a2584545c23ad9be2daec669bdd4ed88807f96611348f8391e6ca46"
)
"""Every occurrence of each excerpt's text (``copies.py``)."""
SEARCH = CacheFormat(
    "search", 4, "82b46c7263f02540983367186df9c5785fb39b89643110b8531310ffe9e47988"
)
"""A store's rows per query (``search_cache.py``): the built-in stores' ranking
(3: ties by content, docs/baselines.md "Ties"; 4: exact search ranks its best
rows in float64, so mathematically equal cosines tie, docs/stores.md)."""
FORMATS = (CHUNKINGS, TOKENS, COPIES, SEARCH)

RESULTS_FORMAT = "chunkeval-results-2"
"""The result cache keys on the package's source (:func:`code_identity`)."""


# -- identities, read when a key is built --------------------------------------


def chunker_identity(chunker: Any) -> str | None:
    """The chunker's identity now (``chunkers/base.py`` ``cache_identity``), or
    None when it has none (never cached)."""
    return cache_identity(chunker)


def embedder_identity(embedder: Any) -> str | None:
    """An embedder's cache identity and, where it declares them, the versions of
    the libraries that compute its vectors (``versions``: not in the identity,
    which baselines record and compare); None for one computed every time (a
    user's function without ``cache_version``: never cached)."""
    identity = embedder_cache_identity(embedder)
    if identity is None:
        return None
    versions = getattr(embedder, "versions", None)
    return f"{identity}\0{versions}" if isinstance(versions, str) else identity


def store_identity(store: object) -> str | None:
    """What determines a store's results: a fused store's settings and legs, a
    text store's identity, a vector store's
    (:func:`~pytest_chunkeval.stores._base.vector_store_identity`); None for a
    store without one (never cached)."""
    if isinstance(store, FusionStore):
        legs = [(name, store_identity(leg)) for name, leg in store.legs.items()]
        if any(identity is None for _, identity in legs):
            return None
        parts = [f"{name}={identity}" for name, identity in legs]
        return "\0".join(
            ["fusion", store.name, store.identity, str(store.candidates), *parts]
        )
    identity = vector_store_identity(store)  # a user's store: its cache_version
    if isinstance(store, TextStore):
        return None if identity is None else f"text\0{identity}"
    if isinstance(store, Store) and identity is not None:
        return f"vector\0{identity}"
    return None


@functools.cache
def code_identity() -> str:
    """SHA-256 of the package's own source files (each relative path and its
    bytes, in path order), the Python version and numpy's: computed once per
    process (about 10 ms). Any edit of the package reads no older result."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(f"{sys.version}\0numpy {np.__version__}\0".encode())
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix().encode()
        data = path.read_bytes()
        for part in (name, data):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
    return h.hexdigest()


def texts_digest(texts: Sequence[str]) -> str:
    """SHA-256 of a list of texts (length-prefixed, so no two lists collide)."""
    h = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


# -- the lower caches -------------------------------------------------------------


def chunking_key(identity: str, document_hash: str) -> str:
    """One document's chunks by a chunker of ``identity``."""
    return entry_key(CHUNKINGS.version(), identity, document_hash)


def token_key(identity: str, document_hash: str) -> str:
    """One document's token bounds by a tokenizer of ``identity``."""
    return entry_key(TOKENS.version(), identity, document_hash)


def copies_key(corpus_hash: str, needles: Sequence[str]) -> str:
    """The occurrences of ``needles`` in a corpus (cheaper to hash the texts
    looked for than the query set, whose every field would be serialized)."""
    return entry_key(COPIES.version(), corpus_hash, texts_digest(needles))


def _vectors_of(embedder: Any, vectors: Callable[[], np.ndarray | None]) -> str:
    """An embedder's cache identity, else (computed every time) the digest of
    the vectors it gave: a persistent store reuses a collection by its key."""
    identity = embedder_cache_identity(embedder)
    if identity is not None:
        return identity
    given = vectors()
    if given is None:
        raise ValueError("an embedder without a cache identity gave no vectors")
    data = np.ascontiguousarray(given)
    return f"vectors:{hashlib.sha256(data.tobytes()).hexdigest()}"


def collection_key(
    chunking_digest: str, embedder: Any, vectors: Callable[[], np.ndarray | None]
) -> str:
    """A vector store's collection: the chunks and the embedder of their vectors
    (``vectors``, the chunks' vectors, read only for an embedder without a
    cache identity)."""
    return entry_key("collection", chunking_digest, _vectors_of(embedder, vectors))


def graph_key(
    relationship_texts: Sequence[str],
    embedder: Any,
    vectors: Callable[[], np.ndarray | None],
) -> str:
    """A relationship graph's collection: its texts in order and the embedder
    (as :func:`collection_key`)."""
    texts = texts_digest(relationship_texts)
    return entry_key("relationships", texts, _vectors_of(embedder, vectors))


def vector_search_key(
    store: object,
    collection: str,
    queries: np.ndarray,
    k: int,
    *,
    seed: int | None = None,
) -> str | None:
    """A vector store's top ``k`` for the query vectors (``seed``: an
    approximate store's index rebuilt with it, engine/rebuilds.py); None for a
    store without an identity (never cached)."""
    identity = store_identity(store)
    if identity is None:
        return None
    if seed is not None:
        identity = f"{identity}\0rebuild={seed}"
    vectors = np.ascontiguousarray(queries)
    h = hashlib.sha256(vectors.tobytes())
    return entry_key(
        SEARCH.version(),
        identity,
        collection,
        str(k),
        str(queries.shape),
        h.hexdigest(),
    )


def text_search_key(store: object, digests: tuple[str, str], k: int) -> str | None:
    """A text store's top ``k``: its identity (tokenization and scoring options)
    and the digests of the chunk texts and of the query texts; None for a
    user's store without a ``cache_version`` (searched every time)."""
    name = vector_store_identity(store)
    return entry_key(SEARCH.version(), "text", name, *digests, str(k)) if name else None


def rerank_key(
    reranker: Reranker, digests: tuple[str, str], candidates: np.ndarray
) -> str:
    """A reranker's order of the candidate rows of each query."""
    rows = np.ascontiguousarray(candidates, dtype=np.int64)
    h = hashlib.sha256(rows.tobytes())
    return entry_key(
        SEARCH.version(),
        "rerank",
        reranker.identity,
        str(candidates.shape),
        *digests,
        h.hexdigest(),
    )


# -- the result cache -------------------------------------------------------------


RESULT_PARTS: dict[str, Callable[[EvaluationSetup, Any], str | None]] = {
    # the data: the corpus' and the questions' texts are in every key
    "corpus": lambda setup, reranker: "",
    "queries": lambda setup, reranker: "",
    "benchmark": lambda setup, reranker: "",
    "beir": lambda setup, reranker: "",
    "beir_split": lambda setup, reranker: "",
    # the components: their identities now
    "embedder": lambda setup, reranker: (
        "" if setup.embedder is None else embedder_identity(setup.embedder)
    ),
    "store": lambda setup, reranker: (
        "" if setup.store is None else store_identity(setup.store)
    ),
    "rerank": lambda setup, reranker: (
        "" if reranker is None else f"{reranker.identity}\0{reranker.candidates}"
    ),
    "tokenizer": lambda setup, reranker: (
        "" if setup.tokenizer is None else tokenizer_identity(setup.tokenizer)
    ),
    # the plain settings: their values
    "k": lambda setup, reranker: json.dumps(setup.spec.k),
    "budget": lambda setup, reranker: json.dumps(setup.spec.budget),
    "unit": lambda setup, reranker: setup.unit,
    "locate": lambda setup, reranker: setup.spec.locate,
    "copies": lambda setup, reranker: setup.copies,
    "repeats": lambda setup, reranker: json.dumps(setup.spec.repeats),
    # a judged evaluation is never cached (docs/performance.md)
    "judge": lambda setup, reranker: None if setup.spec.judge is not None else "",
}
"""What determines each result setting of the spec in the result key (one entry
per :data:`~pytest_chunkeval.config.evaluation.RESULT_SETTINGS`); None: the
evaluation is not cached."""


def result_key(
    setup: EvaluationSetup,
    config: dict[str, Any],
    *,
    label: str | None,
    chunking: Chunking | None,
    reranker: Reranker | None,
) -> str | None:
    """The key of a chunker's evaluation: the code, the result's schema and
    configuration, its label, the corpus and questions, the chunker's identity
    (and the chunks' digest when the caller gave them) and each result setting's
    part (:data:`RESULT_PARTS`); None when some part has no identity (then
    never cached)."""
    chunker = chunker_identity(setup.chunker) if setup.chunker is not None else None
    parts = [RESULT_PARTS[name](setup, reranker) for name in RESULT_SETTINGS]
    if chunker is None or any(part is None for part in parts):
        return None
    return entry_key(
        RESULTS_FORMAT,
        code_identity(),
        str(RESULT_SCHEMA),
        json.dumps(config, sort_keys=True, default=repr),
        json.dumps(label),
        setup.corpus.content_hash,
        setup.queries.content_hash,
        chunker,
        "" if chunking is None else chunking.digest(),
        *(str(part) for part in parts),
    )


# -- the session's memos (in memory) ------------------------------------------------


def setup_key(
    spec: EvaluationSpec, queries_hash: str, *, retrieval: bool
) -> tuple[object, ...]:
    """The session's setup of ``spec`` on a query set (``retrieval=False``:
    without store and embedder)."""
    return (
        spec.dataset_key,
        queries_hash,
        (spec.embedder, spec.store) if retrieval else None,
        spec.unit,
        spec.tokenizer if spec.unit == "token" else None,
        spec.cache_dir,
        spec.copies,
    )


def memo_key(setup: EvaluationSetup) -> tuple[object, ...]:
    """What, besides the chunker, the retriever and the per-run settings (k,
    budget, judge), determines a result: equal keys, equal results."""
    tokenizer, store, embedder = setup.tokenizer, setup.store, setup.embedder
    return (
        setup.corpus.content_hash,
        setup.queries.content_hash,
        setup.unit,
        None
        if tokenizer is None
        else _or_object(tokenizer_identity(tokenizer), tokenizer),
        None if embedder is None else _or_object(embedder_identity(embedder), embedder),
        None if store is None else _or_object(store_identity(store), store),
        setup.copies,
        str(setup.cache.directory),
    )


def evaluation_memo(
    setup: EvaluationSetup, subject: tuple[object, ...], unplaced: tuple[str, ...]
) -> tuple[object, ...]:
    """A chunker's evaluation in a session: the setup, its spec's per-run
    settings, what identifies the chunker's chunks (``subject``) and the
    questions left out (a lenient run scores another query set)."""
    spec = setup.spec
    key: tuple[object, ...] = ("evaluate", memo_key(setup), spec.k, spec.budget)
    key = (*key, spec.rerank, spec.judge, spec.repeats, subject)
    return (*key, ("unplaced", unplaced)) if unplaced else key


def score_memo(setup: EvaluationSetup) -> tuple[object, ...]:
    """What, besides its answers, determines a whole retriever's result in a
    session (the caller adds the answers' digest)."""
    return ("score", memo_key(setup), setup.spec.judge, setup.spec.locate)


def relationships_memo(
    setup: EvaluationSetup,
    k: int,
    subject: tuple[object, ...],
    extractor: tuple[str, object],
) -> tuple[object, ...]:
    """A relationship evaluation in a session: the setup, ``k``, the chunker's
    chunks and the extractor's spec or identity."""
    return ("relationships", memo_key(setup), k, subject, extractor)


def _or_object(identity: str | None, component: object) -> object:
    """An identity, else the object itself (kept alive by the session's setup:
    its id is not reused meanwhile)."""
    return identity if identity is not None else ("object", id(component))
