"""An embedder's vectors are cached under the versions of the code that computes
them (``versions``: this package's and the libraries'), not only under the
identity baselines record (docs/performance.md, "What a cache keys on")."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from support.counting import CountingEmbedder

from pytest_chunkeval.chunkers.semantic import embedder_part
from pytest_chunkeval.embedders.base import FloatArray, identity_matches
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder


class Versioned(CountingEmbedder):
    """One model under one identity whose vectors change with a library's
    version (as torch's kernels change the last bits, docs/reproduction.md)."""

    def __init__(self) -> None:
        super().__init__("test:versioned")
        self.versions = "lib-1"

    def embed(self, texts: Sequence[str]) -> FloatArray:
        rows = super().embed(texts)
        return rows if self.versions == "lib-1" else -rows


def test_vectors_cached_by_other_library_versions_are_not_read(
    tmp_path: Path,
) -> None:
    embedder, texts = Versioned(), ["a chunk", "another chunk"]
    old = EmbeddingCache(tmp_path / "warm").embed(embedder, texts)
    embedder.versions = "lib-2"  # the library was upgraded
    warm = EmbeddingCache(tmp_path / "warm").embed(embedder, texts)
    cold = EmbeddingCache(tmp_path / "cold").embed(embedder, texts)
    assert np.array_equal(warm, cold)
    assert not np.array_equal(warm, old)
    # a semantic chunker's chunks come from the vectors: keyed on them too
    assert "lib-2" in str(embedder_part(embedder))


def test_an_identity_without_its_versions_names_every_versions_vectors(
    tmp_path: Path,
) -> None:
    cache = EmbeddingCache(tmp_path)
    embedder = Versioned()
    cache.embed(embedder, ["x"])
    embedder.versions = "lib-2"
    cache.embed(embedder, ["x"])
    assert sorted(cache.info()) == [
        "test:versioned [lib-1]",
        "test:versioned [lib-2]",
    ]
    assert identity_matches("test:versioned [lib-1]", "test:versioned")
    assert not identity_matches("test:versioned [lib-1]", "test:version")
    assert cache.clear("test:versioned") == 2
    assert cache.info() == {}


def test_the_hashing_embedders_words_depend_on_pythons_unicode_version() -> None:
    # U+0870 (Unicode 14) is a word character on Python 3.11 and none on 3.10:
    # the same text under hashing:256@1 gets another vector, so its packs key
    # on the Unicode version (and the package's, the code of the algorithm).
    vector = HashingEmbedder().embed(["\u0870\u0871"])[0]
    import unicodedata

    word = unicodedata.category("\u0870").startswith("L")
    assert bool(vector.any()) == word
    assert f"unicode-{unicodedata.unidata_version}" in HashingEmbedder().versions


HASHING_GOLDEN = (
    "hashing:64@1",
    "b1fa95ccb4f5c23d501d52fed817ded7a9e08f2f8e5beb40e6127ba3baa0c8ee",
)
"""The hashing embedder's identity and the digest of its vectors of
:data:`TEXTS` (the same on Python 3.10 and 3.11, numpy 2.2 and 2.4): the
algorithm's version is the ``@N`` of its identity, as a lower cache's format
number (tests/test_cache_formats.py). Change the output, raise the number (the
packs of the old one are then never read, and baselines name the change), store
the new digest."""

TEXTS = ["Alice founded Acme in 1999.", "É accents, tabs\tand CAPS caps", "", "a a b"]


def test_the_hashing_embedders_output_goes_with_its_number() -> None:
    import hashlib

    embedder = HashingEmbedder(64)
    vectors = np.ascontiguousarray(embedder.embed(TEXTS), dtype="<f4")
    digest = hashlib.sha256(vectors.tobytes()).hexdigest()
    assert (embedder.identity, digest) == HASHING_GOLDEN
