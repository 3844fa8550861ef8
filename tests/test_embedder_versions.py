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
