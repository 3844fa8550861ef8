"""Vector stores: where chunk vectors are indexed and searched by cosine similarity.

Spec strings (``get_store``):

- ``exact``: numpy brute force, the ground truth;
- ``chroma``: in-process Chroma (HNSW), the default; every Chroma spec takes its
  HNSW settings as options (``chroma?ef_search=400&max_neighbors=32``);
- ``chroma:PATH``: Chroma persisted under ``PATH`` (warm re-runs reuse vectors);
- ``chroma+http://HOST:PORT`` (or ``https``): a Chroma server (``chroma run``);
- ``bm25[?lower=..&stopwords=..&stem=..&k1=..&b=..]``: lexical BM25 over the chunk
  texts (``bm25s``), no embedder;
- ``hybrid[:DENSE][?n=50&rrf=60&weights=1,1&...]``, or
  ``hybrid[?...]@DENSE?ITS_OPTIONS`` for a dense store with options of its own:
  dense + BM25 fused by reciprocal rank fusion;
- ``faiss[?index=flat|hnsw|ivf&...]``: FAISS in process (extra ``[faiss]``);
- ``pgvector[?index=none|hnsw|ivfflat&dsn_env=VAR&...]``: a PostgreSQL server
  with pgvector, its connection string in ``$VAR`` (extra ``[pgvector]``);
- ``lancedb[?index=none|ivf_flat|ivf_pq|ivf_hnsw_sq&...]``: LanceDB embedded
  (extra ``[lancedb]``);
- ``qdrant[?index=hnsw|none&...]``: the Qdrant engine embedded (Qdrant Edge), and
  ``qdrant+http://HOST:PORT[?...]`` a Qdrant server (extra ``[qdrant]``).

Engine-backed stores re-rank their engine's candidates with the plugin's scorer
and tie rule (``_candidates.py``, docs/stores.md).

Stage: after the embedders, before the engine. Central types: :class:`Store` /
:class:`TextStore` / :class:`FusionStore` (``_base.py``), ``STORES`` /
:func:`get_store` (here).

May import: ``config/``, ``util/`` and ``errors`` (see docs/architecture.md#layering).
"""

from __future__ import annotations

import re

from pytest_chunkeval.config.registry import Param, Registry, Signature
from pytest_chunkeval.config.values import parse_non_negative_int, parse_positive_int
from pytest_chunkeval.errors import ChunkevalError
from pytest_chunkeval.stores._base import (
    AnyStore,
    FloatArray,
    FusionStore,
    IdArray,
    Retrieval,
    ScoredIndex,
    Store,
    StoreError,
    TextIndex,
    TextStore,
    VectorIndex,
    measures_loss,
    portable_name,
    uses_vectors,
    xdist_problem,
)
from pytest_chunkeval.stores.bm25 import BM25Index, BM25Store, bm25_from_spec
from pytest_chunkeval.stores.chroma import (
    DEFAULT_HNSW,
    ChromaIndex,
    ChromaStore,
    collection_name,
)
from pytest_chunkeval.stores.chroma_specs import (
    chroma_from_spec,
    chroma_http_from_spec,
    chroma_https_from_spec,
)
from pytest_chunkeval.stores.exact import ExactIndex, ExactStore
from pytest_chunkeval.stores.faiss import DEFAULTS as FAISS_DEFAULTS
from pytest_chunkeval.stores.faiss import FaissStore, faiss_from_spec
from pytest_chunkeval.stores.hybrid import HybridStore, hybrid_from_spec, rrf_fuse
from pytest_chunkeval.stores.lancedb import DEFAULTS as LANCEDB_DEFAULTS
from pytest_chunkeval.stores.lancedb import (
    ZERO_ALLOWED,
    LanceDBStore,
    lancedb_from_spec,
)
from pytest_chunkeval.stores.pgvector import (
    DEFAULT_DSN_ENV,
    PgvectorStore,
    pgvector_from_spec,
)
from pytest_chunkeval.stores.pgvector import DEFAULTS as PGVECTOR_DEFAULTS
from pytest_chunkeval.stores.qdrant import (
    DEFAULT_API_KEY_ENV,
    QdrantStore,
    qdrant_from_spec,
    qdrant_http_from_spec,
    qdrant_https_from_spec,
)
from pytest_chunkeval.stores.qdrant import DEFAULTS as QDRANT_DEFAULTS

__all__ = [
    "STORES",
    "AnyStore",
    "BM25Index",
    "BM25Store",
    "ChromaIndex",
    "ChromaStore",
    "ExactIndex",
    "ExactStore",
    "FaissStore",
    "FloatArray",
    "FusionStore",
    "HybridStore",
    "IdArray",
    "LanceDBStore",
    "PgvectorStore",
    "QdrantStore",
    "Retrieval",
    "ScoredIndex",
    "Store",
    "StoreError",
    "TextIndex",
    "TextStore",
    "VectorIndex",
    "collection_name",
    "get_store",
    "measures_loss",
    "portable_name",
    "portable_spec",
    "reference_store",
    "rrf_fuse",
    "uses_vectors",
    "xdist_problem",
]

STORES: Registry[AnyStore] = Registry("store")
STORES.register("exact", ExactStore, signature=Signature())
# Chroma's HNSW settings (stores/chroma.py DEFAULT_HNSW), each at its default.
_HNSW = (
    Param("space", default=DEFAULT_HNSW["space"]),
    Param("ef_construction", parse_positive_int, DEFAULT_HNSW["ef_construction"]),
    Param("max_neighbors", parse_positive_int, DEFAULT_HNSW["max_neighbors"]),
    Param("ef_search", parse_positive_int, DEFAULT_HNSW["ef_search"]),
)
STORES.register(
    "chroma",
    chroma_from_spec,
    "chroma | chroma:PATH [?ef_search=N&max_neighbors=N&ef_construction=N&space=S]",
    signature=Signature((Param("path", default=None, rest=True),), options=_HNSW),
)
# The grammar keeps "//HOST:PORT" after "chroma+http:" as one argument.
_SERVER = Signature(
    (Param("location", rest=True, metavar="//HOST:PORT"),), options=_HNSW
)
STORES.register(
    "chroma+http", chroma_http_from_spec, "chroma+http://HOST:PORT", signature=_SERVER
)
STORES.register(
    "chroma+https",
    chroma_https_from_spec,
    "chroma+https://HOST:PORT",
    signature=_SERVER,
)
STORES.register(
    "bm25",
    bm25_from_spec,
    "bm25[?lower=BOOL&stopwords=en|none&stem=LANG|none&k1=X&b=X]",
)
STORES.register(
    "hybrid",
    lambda rest: hybrid_from_spec(rest, get_store),
    "hybrid[:DENSE_STORE][?n=50&rrf=60&weights=1,1&...] | "
    "hybrid[?...]@DENSE_STORE?ITS_OPTIONS",
)


def _counts(
    defaults: dict[str, dict[str, int]], zero: frozenset[str] = frozenset()
) -> tuple[Param, ...]:
    """Whole-number index settings (>= 1, >= 0 for ``zero``) at their defaults,
    so that a spec spelling a default out has the canonical form of one leaving
    it out."""
    first: dict[str, int] = {}
    for settings in defaults.values():
        for name, value in settings.items():
            first.setdefault(name, value)
    return tuple(
        Param(
            name,
            parse_non_negative_int if name in zero else parse_positive_int,
            default=value,
        )
        for name, value in first.items()
    )


STORES.register(
    "faiss",
    faiss_from_spec,
    "faiss[?index=flat|hnsw|ivf&M=32&efConstruction=40&efSearch=16&nlist=100&nprobe=1]",
    signature=Signature(
        options=(
            Param("index", default="hnsw"),
            *_counts(FAISS_DEFAULTS),
        )
    ),
)

STORES.register(
    "pgvector",
    pgvector_from_spec,
    "pgvector[?index=hnsw|none|ivfflat&dsn_env=VAR&m=16&ef_search=40&lists=100&...]",
    signature=Signature(
        options=(
            Param("index", default="hnsw"),
            Param("dsn_env", default=DEFAULT_DSN_ENV),
            *_counts(PGVECTOR_DEFAULTS),
        )
    ),
)

STORES.register(
    "lancedb",
    lancedb_from_spec,
    "lancedb[?index=none|ivf_flat|ivf_pq|ivf_hnsw_sq&num_partitions=8&nprobes=20&...]",
    signature=Signature(
        options=(
            Param("index", default="none"),
            *_counts(LANCEDB_DEFAULTS, ZERO_ALLOWED),
        )
    ),
)

_QDRANT_OPTIONS = (Param("index", default="hnsw"), *_counts(QDRANT_DEFAULTS))
STORES.register(
    "qdrant",
    qdrant_from_spec,
    "qdrant[?index=hnsw|none&m=16&ef_construct=100&hnsw_ef=100&...]",
    signature=Signature(options=_QDRANT_OPTIONS),
)
for _scheme, _factory in (
    ("http", qdrant_http_from_spec),
    ("https", qdrant_https_from_spec),
):
    STORES.register(
        f"qdrant+{_scheme}",
        _factory,
        f"qdrant+{_scheme}://HOST:PORT[?index=hnsw|none&api_key_env=VAR&...]",
        signature=Signature(
            (Param("location", rest=True, metavar="//HOST:PORT"),),
            options=(
                *_QDRANT_OPTIONS,
                Param("api_key_env", default=DEFAULT_API_KEY_ENV),
            ),
        ),
    )


def get_store(spec: str | AnyStore) -> AnyStore:
    """The store a spec string names, or ``spec`` itself if it already is one;
    what a baseline records of its name is remembered (:func:`portable_spec`)."""
    if isinstance(spec, str):
        return _remembered(STORES.create(spec))
    if isinstance(spec, (FusionStore, TextStore, Store)):
        return _remembered(spec)
    raise TypeError(
        f"expected a store spec string or an object with .name and .index() "
        f"(vectors) or .index_texts() (texts), got {type(spec).__name__}"
    )


def reference_store() -> Store:
    """The store other stores' loss is measured against: exact search
    (``reference = True``, docs/stores.md)."""
    return ExactStore()


# A server's URL in a spec (``NAME+http://HOST:PORT``) up to the options (``?``),
# the next spec (``@``) or the end: the spec grammar's location form.
_SERVER_LOCATION = re.compile(r"(?<![\w+-])([a-z][\w-]*)\+https?:[^?&@\s]*")
_PORTABLE: dict[str, str] = {}
"""A store's name or spec -> its portable name, for the stores built here."""
STORES.on_change(_PORTABLE.clear)


def _remembered(store: AnyStore) -> AnyStore:
    """``store``, its portable name remembered under its name: a store whose
    name is no spec (``team+http://10.1.2.3:7000``, a store of one's own) is
    recorded as it declares, not as its address."""
    name = getattr(store, "name", None)
    if isinstance(name, str) and name:
        _PORTABLE[name] = portable_name(store)
    return store


def portable_spec(spec: str) -> str:
    """What a baseline records of the store ``spec`` names: its
    :func:`portable_name` (``chroma:/home/ann/db`` is ``chroma``,
    ``qdrant+http://h:6333?m=8`` is ``qdrant?index=hnsw&m=8...``): the one the
    store of that name declared when :func:`get_store` gave it, else that of the
    store the spec builds, built once per spec (building a store connects to
    nothing). A spec that names no store here (an older baseline's, a store
    registered by a plugin not loaded) is kept as it is, less a server's
    address in the grammar's location form (``NAME+http://HOST:PORT``,
    docs/specs.md), as baselines were read before stores declared it."""
    if spec not in _PORTABLE:
        try:
            store = STORES.create(spec)
        except (ChunkevalError, ValueError, TypeError):
            return _SERVER_LOCATION.sub(r"\1", spec)
        _PORTABLE[spec] = portable_name(store)
    return _PORTABLE[spec]
