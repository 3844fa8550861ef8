"""The cache directory object (engine/cache_dir.py): every cache under one
directory, each named verified store on the one verify-on-read helper; a damaged
entry of any kind is set aside and computed again, a read-only directory is read
and never written (docs/embedders.md, "The embedding cache")."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.cache_dir import CacheDir, cache_at, forget_open
from pytest_chunkeval.util.cache_kinds import VERIFIED_KINDS, kind_of
from pytest_chunkeval.util.verified import SET_ASIDE, CacheWarning

KEY = hashlib.sha256(b"an entry").hexdigest()
TEXTS = ["the first passage", "a second one", "and a third"]


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def filled(root: Path) -> CacheDir:
    """A cache directory with an entry of every verified kind, a search result
    and vectors."""
    cache = CacheDir(root)
    for name in VERIFIED_KINDS:
        if name != "search":
            cache.store(name).put(KEY, f"{name} payload".encode())
    cache.search.put("b" * 64, np.array([[2, 0, 1]], np.int64), np.ones((1, 3)))
    cache.embeddings.embed(HashingEmbedder(16), TEXTS)
    return cache


def test_every_named_store_lives_where_its_kind_says(tmp_path: Path) -> None:
    cache = filled(tmp_path)
    for name in VERIFIED_KINDS:
        (path,) = cache.store(name).entries()
        kind = kind_of(path.relative_to(tmp_path))
        assert kind is not None
        assert kind.name == name
    assert cache.store("search").entries() == cache.search.entries()
    with pytest.raises(ValueError, match="no verified cache kind"):
        cache.store("embeddings")


@pytest.mark.parametrize("name", [k for k in VERIFIED_KINDS if k != "search"])
def test_a_damaged_entry_of_each_kind_is_set_aside(tmp_path: Path, name: str) -> None:
    filled(tmp_path)
    cache = CacheDir(tmp_path)
    store = cache.store(name)
    path = store.path(KEY)
    data = bytearray(path.read_bytes())
    data[-1] ^= 1  # one flipped bit, same size
    path.write_bytes(bytes(data))
    with pytest.warns(CacheWarning, match="checksum mismatch"):
        assert store.get(KEY, bytes) is None
    assert not path.exists()
    assert path.with_name(path.name + SET_ASIDE).exists()
    assert store.get(KEY, bytes) is None  # gone: computed again, no second warning


def test_a_damaged_search_result_is_set_aside(tmp_path: Path) -> None:
    filled(tmp_path)
    search = CacheDir(tmp_path).search
    (path,) = search.entries()
    path.write_bytes(path.read_bytes()[:-8])
    with pytest.warns(CacheWarning, match="truncated"):
        assert search.get_scored("b" * 64, 1, 3) is None
    assert path.with_name(path.name + SET_ASIDE).exists()


def test_a_read_only_directory_is_read_and_never_written(tmp_path: Path) -> None:
    filled(tmp_path)
    damaged = CacheDir(tmp_path).store("tokens").path(KEY)
    damaged.write_bytes(damaged.read_bytes()[:-1])
    before = snapshot(tmp_path)

    cache = CacheDir(tmp_path, read_only=True)
    assert cache.read_only
    for name in VERIFIED_KINDS:
        if name == "tokens":
            with pytest.warns(CacheWarning, match="truncated"):
                assert cache.store(name).get(KEY, bytes) is None
        elif name != "search":
            assert cache.store(name).get(KEY, bytes) == f"{name} payload".encode()
        cache.store(name).put(hashlib.sha256(name.encode()).hexdigest(), b"new")
    found = cache.search.get_scored("b" * 64, 1, 3)
    assert found is not None
    assert found[0].tolist() == [[2, 0, 1]]
    cache.search.put("c" * 64, np.zeros((1, 1), np.int64))
    emb = HashingEmbedder(16)
    np.testing.assert_array_equal(
        cache.embeddings.embed(emb, TEXTS), emb.embed(TEXTS).astype(np.float32)
    )
    assert cache.embeddings.stats.hits == len(TEXTS)
    with pytest.warns(CacheWarning, match="read-only"):
        cache.embeddings.embed(emb, ["a text never seen"])
    assert cache.answers().read_only
    # nothing written, nothing renamed: the damaged entry is still in place
    assert snapshot(tmp_path) == before


def test_one_object_per_directory_in_a_process(tmp_path: Path) -> None:
    forget_open()
    first = cache_at(tmp_path)
    assert cache_at(str(tmp_path)) is first
    assert cache_at(first) is first
    given = EmbeddingCache(tmp_path / "other")
    wrapped = cache_at(given)
    assert wrapped.embeddings is given
    assert wrapped.directory == tmp_path / "other"
    forget_open()
    assert cache_at(tmp_path) is not first
