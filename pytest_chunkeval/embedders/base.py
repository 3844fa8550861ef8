"""The :class:`Embedder` protocol (text -> unit-length float32 vectors, with an
identity for the cache), its errors and the vector checks every embedder shares.
Specs and identities: :mod:`pytest_chunkeval.embedders.registry`.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.errors import UnavailableError
from pytest_chunkeval.util.terminate import interruptible

FloatArray = npt.NDArray[np.float32]


class EmbedderUnavailable(UnavailableError):
    """An embedder cannot run: a package, a model or a credential is missing."""


class EmbeddingRequestError(UnavailableError):
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


def embedder_cache_identity(embedder: Embedder) -> str | None:
    """What the caches key an embedder's vectors on, read now: its
    ``cache_identity`` where it has one (None: computed every time, never
    cached; a user's function without ``identity=`` or ``cache_version``,
    docs/embedders.md), else its ``identity``; followed by its ``versions``
    where it declares them (the code that computes its vectors: the package's
    and the libraries' versions, docs/performance.md "What a cache keys on"),
    which the identity baselines record leaves out."""
    if hasattr(embedder, "cache_identity"):
        identity = embedder.cache_identity
        if not (isinstance(identity, str) and identity):
            return None
    else:
        identity = embedder.identity
    versions = getattr(embedder, "versions", None)
    return f"{identity} [{versions}]" if isinstance(versions, str) else identity


def identity_matches(cached: str, asked: str) -> bool:
    """Whether ``asked`` names the cache identity ``cached``: the whole of it,
    or the embedder's identity before its versions (every version's vectors:
    ``hashing:256@1`` names ``hashing:256@1 [VERSIONS]``)."""
    return asked in (cached, cached.split(" [", 1)[0])


@runtime_checkable
class PartialEmbedder(Protocol):
    """An embedder that hands its vectors over part by part as they are computed
    (a remote embedder with requests in flight), so that a caller keeps what was
    computed before an interruption (the embedding cache stores it)."""

    def embed_parts(
        self, texts: Sequence[str]
    ) -> Iterator[tuple[list[int], FloatArray]]:
        """``(positions in texts, their unit vectors)`` pairs, in any order, that
        together cover every text once. An error ends the iteration after the parts
        already computed were handed over."""
        ...


def embedding_parts(
    embedder: Embedder, texts: Sequence[str], batch_size: int
) -> Generator[tuple[list[int], FloatArray], None, None]:
    """``embedder``'s vectors of ``texts`` part by part: its own parts when it is a
    :class:`PartialEmbedder`, else one ``embed`` call per ``batch_size`` texts."""
    if isinstance(embedder, PartialEmbedder):
        yield from embedder.embed_parts(texts)
        return
    for start in range(0, len(texts), batch_size):
        stop = min(start + batch_size, len(texts))
        with interruptible():  # SIGTERM: stop, what came before is stored
            vectors = embedder.embed(texts[start:stop])
        yield list(range(start, stop)), vectors


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


def unit_vectors(vectors: Any, n: int, *, who: str) -> FloatArray:
    """An embedder's output checked (:func:`check_vectors`) and normalized, unless
    it already is unit length (the built-in embedders normalize once)."""
    arr = check_vectors(vectors, n, who=who)
    norms = np.sqrt(np.einsum("ij,ij->i", arr, arr, dtype=np.float64))
    if np.all((np.abs(norms - 1.0) < 1e-3) | (norms == 0.0)):
        return arr
    return l2_normalize(arr)
