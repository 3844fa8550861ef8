"""Rerankers: re-score the top ``n`` candidates of any store and keep ``k``.

Spec (``rerank=`` / ``--rerank``):
``cross-encoder:NAME_OR_PATH[?n=20&batch_size=32&device=DEV]``: a sentence-transformers
``CrossEncoder`` from a local folder or a Hugging Face id (through the same offline
resolution as embedders), scoring ``(question, chunk text)`` pairs. ``n`` (default 20)
candidates per query come from the store; the ``k`` with the highest scores are kept
(equal scores by content, docs/baselines.md "Ties").

Python objects: anything with ``identity``, ``candidates`` and
``score(pairs) -> scores`` (:class:`Reranker`).

The identity (``cross-encoder:LABEL@FINGERPRINT``) hashes the weights and configs, read
from files, so a cached rerank needs neither torch nor the model.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.config.registry import (
    Param,
    Registry,
    Signature,
    positive_int,
)
from pytest_chunkeval.core.ranking import best_first
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.stores._base import IdArray, StoreError
from pytest_chunkeval.util.model_files import LazyModel

DEFAULT_RERANK_CANDIDATES = 20
DEFAULT_RERANK_BATCH = 32


@runtime_checkable
class Reranker(Protocol):
    """Scores (question, chunk text) pairs; higher is more relevant."""

    @property
    def identity(self) -> str:
        """Names what decides the scores (model weights and settings): a cache
        key, unless the object also has a ``cache_identity`` (None: its scores
        are never cached; ``engine/keys/identities.py`` ``reranker_identity``)."""
        ...

    @property
    def candidates(self) -> int:
        """How many of the store's rows per query to re-score."""
        ...

    def score(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]:
        """One finite score per pair."""
        ...


def rerank_rows(
    candidates: IdArray,
    scores: npt.NDArray[np.float32],
    k: int,
    ties: IdArray | None = None,
) -> IdArray:
    """Per query, the ``k`` candidate rows with the highest scores, best first;
    equal scores by the rows' tie keys (``ties``; the lower row without); ``-1``
    candidates (and their scores) are ignored."""
    q, n = candidates.shape
    out = np.full((q, k), -1, dtype=np.int64)
    if n == 0 or k == 0:
        return out
    order = best_first(scores, candidates, ties)[:, :k]
    rows = np.take_along_axis(candidates, order, axis=1)
    out[:, : rows.shape[1]] = rows
    return out


class CrossEncoderReranker(LazyModel):
    """A sentence-transformers ``CrossEncoder``, loaded on the first :meth:`score`."""

    def __init__(
        self,
        name_or_path: str,
        *,
        candidates: int = DEFAULT_RERANK_CANDIDATES,
        batch_size: int = DEFAULT_RERANK_BATCH,
        device: str | None = None,
    ) -> None:
        if not name_or_path.strip():
            raise ConfigError("empty cross-encoder name")
        if candidates < 1 or batch_size < 1:
            raise ConfigError("n and batch_size must be >= 1")
        self.name = name_or_path
        self.candidates = int(candidates)
        self.batch_size = int(batch_size)
        self.device = device
        self._identity: str | None = None
        super().__init__()

    @functools.cached_property
    def model_path(self) -> str:
        from pytest_chunkeval.util.model_files import resolve_model_path

        return resolve_model_path(self.name)

    @property
    def identity(self) -> str:
        """``cross-encoder:LABEL@FINGERPRINT`` (``@main`` for a hub id not on
        disk), read from the files when asked until the model is loaded, then
        the loaded files' (what its scores come from), as an embedder's
        (``embedders/sentence_transformers.py``): model files replaced after a
        first read are never keyed by the old ones."""
        if self._identity is not None:
            return self._identity
        return self._files_identity()

    @property
    def cache_identity(self) -> str | None:
        """What the caches key the scores on: :attr:`identity` where it is of
        files on disk; None for a hub id not downloaded yet (``@main`` names no
        files: what the hub serves under it can change), so nothing is read or
        written under it (``embedders/sentence_transformers.py`` alike)."""
        local = Path(self.model_path).expanduser().is_dir()
        return self.identity if local else None

    @property
    def versions(self) -> str:
        """The libraries that compute the scores (not in :attr:`identity`, which
        baselines record); the rerank and result keys add them."""
        from pytest_chunkeval.util.versions import library_versions

        return library_versions("sentence-transformers", "transformers", "torch")

    def _files_identity(self) -> str:
        from pytest_chunkeval.util.model_files import model_fingerprint, model_label

        local = Path(self.model_path).expanduser()
        if not local.is_dir():
            return f"cross-encoder:{self.name}@main"
        h = hashlib.sha256(model_fingerprint(local).encode())
        # A cross-encoder's head (labels, activation) lives in the root config.json,
        # which the embedder fingerprint leaves out.
        config = local / "config.json"
        if config.is_file():
            h.update(config.read_bytes())
        return f"cross-encoder:{model_label(self.name)}@{h.hexdigest()[:16]}"

    def _load(self) -> Any:
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise StoreError(
                "the cross-encoder reranker needs sentence-transformers: "
                "pip install 'pytest-chunkeval[embed]'"
            ) from exc
        try:
            model = CrossEncoder(self.model_path, device=self.device)
        except (OSError, ValueError) as exc:  # ValueError: a folder of no model
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise StoreError(
                f"cannot load cross-encoder {self.name!r} (a local folder or a model "
                f"in the local Hugging Face cache): {first or type(exc).__name__}"
            ) from exc
        self.__dict__.pop("model_path", None)  # a hub model is on disk now
        self._identity = self._files_identity()  # of the files just loaded
        return model

    def score(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]:
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        raw = self.model.predict(
            [list(p) for p in pairs],
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        scores = np.asarray(raw, dtype=np.float32)
        if scores.ndim == 2 and scores.shape[1] == 1:
            scores = scores[:, 0]
        if scores.shape != (len(pairs),):
            raise StoreError(
                f"cross-encoder {self.name!r} returned scores of shape {scores.shape} "
                f"for {len(pairs)} pairs; a reranker needs one score per pair "
                "(a model with num_labels=1)"
            )
        return scores

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({self.name!r}, n={self.candidates})"


def _cross_encoder(
    name_or_path: str, *, n: int, batch_size: int, device: str | None
) -> Reranker:
    return CrossEncoderReranker(
        name_or_path, candidates=n, batch_size=batch_size, device=device
    )


RERANKERS: Registry[Reranker] = Registry("reranker")
RERANKERS.register(
    "cross-encoder",
    _cross_encoder,
    "cross-encoder:NAME_OR_PATH[?n=20&batch_size=32&device=cpu]",
    signature=Signature(
        (Param("name_or_path", rest=True),),
        (
            Param("batch_size", positive_int, default=DEFAULT_RERANK_BATCH),
            Param("device", default=None),
            Param("n", positive_int, default=DEFAULT_RERANK_CANDIDATES),
        ),
    ),
)


@functools.lru_cache(maxsize=8)
def _reranker_from_spec(spec: str) -> Reranker:
    return RERANKERS.create(spec)  # one instance per canonical spec: a model loads once


RERANKERS.on_change(_reranker_from_spec.cache_clear)


def get_reranker(spec: str | Reranker) -> Reranker:
    """The reranker a spec string names, or ``spec`` itself."""
    if isinstance(spec, str):
        return _reranker_from_spec(RERANKERS.label(spec))
    if isinstance(spec, Reranker):
        return spec
    raise TypeError(
        f"expected a reranker spec ({', '.join(RERANKERS.forms())}) or an object "
        f"with identity, candidates and score(pairs), got {type(spec).__name__}"
    )
