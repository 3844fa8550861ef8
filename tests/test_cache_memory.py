"""The embedding cache keeps one copy of what it computes (docs/performance.md,
"Memory"): a pack it writes is read back only when asked for again, and the
vectors it returns are those it stores, bitwise."""

from __future__ import annotations

import gc
import warnings
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.counting import CountingEmbedder, expected
from support.tiny_corpus import fresh_run

from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.packs import IdentityStore, text_key


def test_a_pack_written_here_keeps_no_vectors_and_reads_them_back_bitwise(
    tmp_path: Path,
) -> None:
    store = IdentityStore(tmp_path / "ident", "ident@1")
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((5, 8)).astype(np.float32)
    keys = [text_key(f"t{i}") for i in range(5)]
    path = store.add(keys, vectors)
    [pack] = store.packs.values()
    assert pack.held is None
    out = np.zeros((5, 8), dtype=np.float32)
    codes = np.array([store.index[k] for k in reversed(keys)], dtype=np.int64)
    assert store.gather(codes, out, np.arange(5, dtype=np.int64))
    assert out.tobytes() == vectors[::-1].tobytes()
    assert pack.held is not None  # read once, then kept
    # another process' store reads the same file
    other = IdentityStore(tmp_path / "ident", "ident@1")
    other.refresh()
    [read] = other.packs.values()
    assert read.keys == b"".join(keys)
    assert read.held is not None
    assert read.held.tobytes() == vectors.tobytes()
    assert path.exists()
    # a second pack written here, gone before it is read back: forgotten
    more = [text_key("u")]
    store.add(more, vectors[:1]).unlink()
    assert not store.gather(
        np.array([store.index[more[0]]]), out, np.zeros(1, dtype=np.int64)
    )
    assert more[0] not in store.index
    assert set(store.index) == set(keys)


@pytest.mark.parametrize("fault", ["merged away", "damaged"])
def test_a_pack_written_here_that_cannot_be_read_back_is_embedded_again(
    tmp_path: Path, fault: str
) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.embed(CountingEmbedder(), ["a", "b"])
    [path] = tmp_path.glob("*/*.pack")
    if fault == "merged away":
        path.unlink()
    else:
        data = bytearray(path.read_bytes())
        data[-1] ^= 0xFF
        path.write_bytes(bytes(data))
    emb = CountingEmbedder()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = cache.embed(emb, ["b", "c"])
    assert sorted(emb.embedded) == ["b", "c"]
    np.testing.assert_allclose(got, expected(["b", "c"]), rtol=1e-6)
    said = [str(w.message) for w in caught]
    if fault == "damaged":
        assert any("ignoring corrupt file" in m and path.name in m for m in said)
        assert path.with_name(path.name + ".corrupt").exists()
    else:
        assert said == []


def test_hits_misses_and_repeats_come_back_in_order_bitwise(tmp_path: Path) -> None:
    """Cached rows are gathered and new ones written into the same array;
    repeated texts are copied out of it; distinct texts return it as is."""
    cache = EmbeddingCache(tmp_path, batch_size=2)
    first = cache.embed(CountingEmbedder(), ["c", "a", "e"])
    texts = ["a", "b", "a", "c", "d", "e", "b"]
    emb = CountingEmbedder()
    got = cache.embed(emb, texts)
    assert sorted(emb.embedded) == ["b", "d"]
    np.testing.assert_allclose(got, expected(texts), rtol=1e-6)
    np.testing.assert_array_equal(got[[3, 0, 5]], first)
    distinct = cache.embed(CountingEmbedder(), ["e", "d", "f"])
    np.testing.assert_array_equal(distinct[:2], got[[5, 4]])
    assert distinct.flags.writeable
    assert distinct.flags.owndata
    # what the next process reads from disk is what this one returned
    again = EmbeddingCache(tmp_path).embed(CountingEmbedder(), texts)
    assert again.tobytes() == got.tobytes()


def test_an_evaluation_leaves_no_vectors_alive_once_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing (no reference cycle waiting for the collector) holds the
    question or chunk vectors while the result is assembled and after."""
    made: list[weakref.ref[np.ndarray]] = []
    real = EmbeddingCache.embed

    def spy(self: EmbeddingCache, *args: Any, **kwargs: Any) -> Any:
        out = real(self, *args, **kwargs)
        made.append(weakref.ref(out))
        return out

    monkeypatch.setattr(EmbeddingCache, "embed", spy)
    gc.collect()
    gc.disable()
    try:
        result = fresh_run(tmp_path / "cache")
        assert len(made) == 2  # the questions', then the chunks'
        assert [w() for w in made] == [None, None]
    finally:
        gc.enable()
    assert result.metrics
