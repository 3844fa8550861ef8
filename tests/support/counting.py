"""An embedder that counts what it is asked to embed (deterministic vectors from
a hash of each text), and the vectors it gives."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from pytest_chunkeval.embedders.base import FloatArray


def fake_vector(text: str, dim: int) -> FloatArray:
    seed = int.from_bytes(
        hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "little"
    )
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)


class CountingEmbedder:
    """Deterministic vectors; records every text it is asked to embed."""

    def __init__(
        self, identity: str = "test:counting", dim: int = 8, normalize: bool = True
    ) -> None:
        self.identity = identity
        self.dim = dim
        self.normalize = normalize
        self.calls: list[list[str]] = []

    @property
    def embedded(self) -> list[str]:
        return [t for call in self.calls for t in call]

    def embed(self, texts: Sequence[str]) -> FloatArray:
        self.calls.append(list(texts))
        rows = np.stack([fake_vector(t, self.dim) for t in texts])
        if self.normalize:
            rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        return rows


def expected(texts: Sequence[str], dim: int = 8) -> FloatArray:
    rows = np.stack([fake_vector(t, dim) for t in texts])
    norms = np.linalg.norm(rows, axis=1, keepdims=True).astype(np.float32)
    out: FloatArray = rows / norms
    return out
