"""Embedders: text -> unit-length float32 vectors, with an identity for the cache.

Spec strings (``--chunkeval-embedder``, ``chunkeval eval --embedder``):

- ``sentence-transformers:NAME_OR_PATH[?device=DEV&batch_size=N&revision=REV]``, e.g.
  ``sentence-transformers:all-MiniLM-L6-v2?device=cuda&batch_size=128``. ``device`` is
  ``cpu``, ``cuda``, ``cuda:N``, ``mps`` or ``auto`` (default: sentence-transformers
  picks); ``batch_size`` defaults to 64. The model name goes through
  :func:`resolve_model_path` (local path, local HF cache,
  packaged all-MiniLM-L6-v2, then the hub) and loads on the first text that is not in
  the cache. Device and batch size are not part of the identity (same model, same
  vectors up to float rounding).
- ``openai:MODEL[?dimensions=N&batch_size=N&concurrency=N&max_retries=N&timeout=S]``,
  e.g. ``openai:text-embedding-3-large``, through the ``openai`` client:
  ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` (any OpenAI-compatible server: vLLM,
  TEI, Infinity...) are honoured. ``batch_size`` caps inputs per request (default
  and maximum 2048; requests also stay under 300k tokens); ``concurrency`` requests
  are in flight at once (default 4); ``max_retries`` (default 5) is the client's
  retry budget for 429 / 5xx / connection errors, with its exponential backoff and
  ``Retry-After``. None of them is part of the identity.

Python objects accepted by :func:`get_embedder`: an :class:`Embedder`; a Chroma
``EmbeddingFunction``; an object with LangChain's ``embed_documents``; any callable
``list[str] -> vectors``.

Identities (the cache key of every vector, see ``cache.py``):

- sentence-transformers: ``sentence-transformers:LABEL@FINGERPRINT:dDIM``; the
  fingerprint hashes every file that shapes the vectors (weights, configs,
  tokenizer files, modules: :func:`model_files`), read from files (each once per
  version, ``util/file_digests.py``), so computing it never imports torch. For a
  hub id not yet downloaded the fingerprint is unknowable offline and the identity
  is ``...:NAME@REVISION``.
- OpenAI: ``openai:MODEL:dDIM`` for OpenAI's API (``:dDIM`` when the dimension is
  known: given, or a known OpenAI model), ``openai:MODEL@SERVER:dDIM`` for any other
  base URL, SERVER without user info or keys (``util/secret.url_identity``): two
  servers serving one model name never share vectors. Never the key.
- Callables and Chroma / LangChain objects: the ``identity=`` you pass, else a name
  derived from the object (Chroma: ``chroma:NAME:CONFIG_HASH``; LangChain:
  ``langchain:CLASS:MODEL``; callables: ``callable:MODULE.QUALNAME``, plus
  ``@LINE`` for lambdas and local functions). A callable is cached only under an
  ``identity=`` or a ``cache_version`` of its own (part of the name, read when
  used; raise it when its vectors change); without either it is embedded every
  time (docs/embedders.md, "In Python"). A Chroma or LangChain object is cached
  under a derived identity only when that determines its vectors (``foreign.py``:
  a LangChain or Chroma class, its library version, a model, plain settings
  naming no local file), else embedded every time unless it declares one.

Every embedder returns vectors L2-normalized once, by :func:`l2_normalize`; zero vectors
stay zero (never NaN).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pytest_chunkeval.config.defaults import DEFAULT_EMBEDDER
from pytest_chunkeval.config.registry import (
    Param,
    Registry,
    Signature,
    integer,
    non_negative_int,
    positive_float,
    positive_int,
)
from pytest_chunkeval.embedders.adapters import (
    CallableEmbedder,
    is_chroma_embedding_function,
    renamed,
)
from pytest_chunkeval.embedders.base import Embedder
from pytest_chunkeval.embedders.foreign import ForeignEmbedder
from pytest_chunkeval.embedders.hashing import DEFAULT_DIM, HashingEmbedder
from pytest_chunkeval.embedders.openai import (
    OPENAI_DEFAULT_CONCURRENCY,
    OPENAI_DEFAULT_MAX_RETRIES,
    OPENAI_MAX_INPUTS,
    openai_from_spec,
)
from pytest_chunkeval.embedders.precision import parse_dtype
from pytest_chunkeval.embedders.sentence_transformers import (
    DEFAULT_ST_BATCH_SIZE,
    SentenceTransformerEmbedder,
)
from pytest_chunkeval.errors import ConfigError

EMBEDDERS: Registry[Embedder] = Registry("embedder")
EMBEDDERS.register(
    "sentence-transformers",
    SentenceTransformerEmbedder,
    "sentence-transformers:NAME_OR_PATH"
    "[?device=cpu|cuda&batch_size=N&revision=REV&dtype=float32|bfloat16]",
    signature=Signature(
        (
            Param(
                "name_or_path", default="all-MiniLM-L6-v2", show_default=True, rest=True
            ),
        ),
        (
            Param("batch_size", positive_int, default=DEFAULT_ST_BATCH_SIZE),
            Param("device", default=None),
            Param("revision", default=None),
            Param("dtype", parse_dtype, default="float32"),
        ),
    ),
)
EMBEDDERS.register(
    "openai",
    openai_from_spec,
    "openai:MODEL"
    "[?dimensions=N&batch_size=N&concurrency=N&max_retries=N&timeout=SECONDS]",
    signature=Signature(
        (
            Param(
                "model",
                default="text-embedding-3-small",
                show_default=True,
                rest=True,
            ),
        ),
        (
            Param("batch_size", positive_int, default=OPENAI_MAX_INPUTS),
            Param("concurrency", positive_int, default=OPENAI_DEFAULT_CONCURRENCY),
            Param("dimensions", positive_int, default=None),
            Param("max_retries", non_negative_int, default=OPENAI_DEFAULT_MAX_RETRIES),
            Param("timeout", positive_float, default=60.0),
        ),
    ),
)
# A model-free bag-of-words embedder for fast tests and smoke runs (hashing.py).
EMBEDDERS.register(
    "hashing",
    HashingEmbedder,
    signature=Signature(
        (Param("dim", integer, default=DEFAULT_DIM, show_default=True),)
    ),
)


@functools.lru_cache(maxsize=32)
def _embedder_from_spec(spec: str) -> Embedder:
    # One instance per canonical spec: a model named twice is loaded once.
    embedder = EMBEDDERS.create(spec)
    if not isinstance(embedder, Embedder):
        # a registration returning a bare function (docs/hooks.md wants the object)
        raise ConfigError(
            f"the embedder registered for {spec!r} gave {type(embedder).__name__} "
            f"{embedder!r}, not an embedder (an object with identity and embed()); "
            "wrap a function in get_embedder(fn, identity=...)"
        )
    return embedder


EMBEDDERS.on_change(_embedder_from_spec.cache_clear)


def get_embedder(
    spec: str | Embedder | Callable[[list[str]], Any] | Any | None = None,
    *,
    identity: str | None = None,
) -> Embedder:
    """Resolve an embedder: a spec string (see the module docstring; None means
    :data:`DEFAULT_EMBEDDER`), an :class:`Embedder`, a Chroma ``EmbeddingFunction``,
    a LangChain ``Embeddings``, or a callable ``list[str] -> vectors``.

    ``identity`` names the embedder in the cache; for callables it replaces the
    derived name (recommended: ``callable:module.qualname`` cannot see what changed
    inside the function).
    """
    embedder: Embedder
    if spec is None:
        spec = DEFAULT_EMBEDDER
    if isinstance(spec, str):
        embedder = _embedder_from_spec(EMBEDDERS.label(spec))
    elif isinstance(spec, Embedder):
        embedder = spec
    elif is_chroma_embedding_function(spec):
        return ForeignEmbedder(spec, spec, langchain=False, identity=identity)
    elif callable(embed_documents := getattr(spec, "embed_documents", None)):
        return ForeignEmbedder(spec, embed_documents, langchain=True, identity=identity)
    elif callable(spec):
        return CallableEmbedder(spec, identity=identity)
    else:
        raise TypeError(
            f"not an embedder: {spec!r}; give a spec string "
            f"({', '.join(EMBEDDERS.forms())}), an object with identity and embed(), "
            "a Chroma EmbeddingFunction, or a callable list[str] -> vectors"
        )
    if identity is not None and identity != embedder.identity:
        return renamed(embedder, identity)
    return embedder
