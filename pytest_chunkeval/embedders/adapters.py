"""Python objects as embedders: callables, Chroma embedding functions and
LangChain embeddings, with the identity derived from each."""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from pytest_chunkeval.embedders.base import PartialEmbedder, as_unit_vectors

if TYPE_CHECKING:
    from pytest_chunkeval.embedders.base import Embedder, FloatArray


class CallableEmbedder:
    """Adapts a function ``list[str] -> vectors`` (or a Chroma / LangChain object)."""

    def __init__(
        self, fn: Callable[[list[str]], Any], *, identity: str | None = None
    ) -> None:
        if not callable(fn):
            raise TypeError(f"not callable: {fn!r}")
        self.fn = fn
        self._identity = identity

    @property
    def identity(self) -> str:
        """The ``identity=`` given, else the function's name
        (:func:`callable_identity`) and its ``cache_version`` when it declares
        one, read when used: raising it sets the cached vectors aside."""
        if self._identity:
            return self._identity
        name = callable_identity(self.fn)
        version = getattr(self.fn, "cache_version", None)
        if isinstance(version, str) and version:
            return f"{name}?cache_version={version}"
        return name

    @property
    def cache_identity(self) -> str | None:
        """What its vectors are cached under: the identity when one was given or
        the function declares a ``cache_version``; else None, embedded every
        time (its name cannot see what changed inside it)."""
        if self._identity:
            return self._identity
        version = getattr(self.fn, "cache_version", None)
        return self.identity if isinstance(version, str) and version else None

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


class _RenamedPartialEmbedder(_RenamedEmbedder):
    """A renamed embedder that hands its vectors over part by part, as its inner
    one does (so the cache keeps them through an interruption)."""

    def embed_parts(
        self, texts: Sequence[str]
    ) -> Iterator[tuple[list[int], FloatArray]]:
        return cast("PartialEmbedder", self.inner).embed_parts(texts)


def renamed(embedder: Embedder, identity: str) -> Embedder:
    """``embedder`` under the cache identity ``identity``."""
    if isinstance(embedder, PartialEmbedder):
        return _RenamedPartialEmbedder(embedder, identity)
    return _RenamedEmbedder(embedder, identity)


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


def langchain_identity(obj: Any) -> str:
    cls = type(obj)
    model = getattr(obj, "model", None) or getattr(obj, "model_name", None)
    suffix = f":{model}" if isinstance(model, str) and model else ""
    return f"langchain:{cls.__module__}.{cls.__qualname__}{suffix}"
