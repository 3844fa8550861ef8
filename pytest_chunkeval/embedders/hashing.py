"""A tiny deterministic embedder: hashed bag of words (``hashing`` / ``hashing:DIM``).

No model, no download, no torch: each lower-cased word adds ±1 to one of ``dim``
buckets chosen by a stable hash. It retrieves by shared vocabulary, which is enough
for fast tests of the whole pipeline and for smoke-testing a configuration.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

_WORD = re.compile(r"\w+")
DEFAULT_DIM = 256
UNICODE = unicodedata.unidata_version


class HashingEmbedder:
    """Hashed bag-of-words vectors, L2-normalized."""

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        if dim < 2:
            raise ValueError(f"dimension must be >= 2, got {dim}")
        self.dim = dim
        self.identity = f"hashing:{dim}@1"
        self._buckets: dict[str, tuple[int, float]] = {}

    @property
    def versions(self) -> str:
        """The code that computes its vectors (not in :attr:`identity`, which
        baselines record): this package's version, and the Unicode version of
        Python's ``re`` and ``str.lower`` (which characters make a word: U+0870
        is one on Python 3.11, none on 3.10)."""
        from pytest_chunkeval.util.versions import library_version

        return f"{library_version('pytest-chunkeval')}+unicode-{UNICODE}"

    def _bucket(self, word: str) -> tuple[int, float]:
        found = self._buckets.get(word)
        if found is None:
            digest = int.from_bytes(
                hashlib.blake2b(word.encode(), digest_size=8).digest(), "big"
            )
            found = (digest % self.dim, 1.0 if digest >> 63 else -1.0)
            self._buckets[word] = found
        return found

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                col, sign = self._bucket(word)
                out[row, col] += sign
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim})"


def hashing_from_spec(rest: str) -> HashingEmbedder:
    """A free-form factory for ``hashing`` / ``hashing:DIM`` (as a hook registers)."""
    return HashingEmbedder(int(rest) if rest else DEFAULT_DIM)
