"""The on-disk embedding cache: hits, misses, corruption, concurrency, no model load."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from support.counting import CountingEmbedder, expected

from pytest_chunkeval.config.defaults import DEFAULT_EMBEDDER
from pytest_chunkeval.embedders import packs as packs_module
from pytest_chunkeval.embedders.base import FloatArray, embedder_cache_identity
from pytest_chunkeval.embedders.cache import (
    CacheStats,
    EmbeddingCache,
    default_cache_dir,
)
from pytest_chunkeval.embedders.packs import CacheWarning, identity_dirname
from pytest_chunkeval.embedders.registry import get_embedder

ROOT = Path(__file__).resolve().parents[1]


def packs(directory: Path) -> list[Path]:
    return sorted(directory.glob("*/*.pack"))


def test_identical_texts_are_embedded_once_and_order_is_kept(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    emb = CountingEmbedder()
    texts = ["b", "a", "b", "c", "a"]
    vectors = cache.embed(emb, texts)
    assert sorted(emb.embedded) == ["a", "b", "c"]
    np.testing.assert_allclose(vectors, expected(texts), rtol=1e-6)
    assert vectors.dtype == np.float32
    assert (cache.stats.hits, cache.stats.misses) == (0, 3)


def test_second_run_hits_everything_and_never_calls_the_embedder(
    tmp_path: Path,
) -> None:
    texts = [f"text {i}" for i in range(50)]
    first = EmbeddingCache(tmp_path).embed(CountingEmbedder(), texts)
    emb = CountingEmbedder()
    cache = EmbeddingCache(tmp_path)
    again = cache.embed(emb, texts)
    assert emb.calls == []
    np.testing.assert_array_equal(again, first)
    assert (cache.stats.hits, cache.stats.misses) == (50, 0)
    assert str(cache.stats) == "embedding cache: 50 hits, 0 misses (100.0% hit rate)"


def test_only_new_texts_are_embedded(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.embed(CountingEmbedder(), ["a", "b", "c"])
    emb = CountingEmbedder()
    vectors = cache.embed(emb, ["c", "d", "a", "e"])
    assert emb.embedded == ["d", "e"]
    np.testing.assert_allclose(vectors, expected(["c", "d", "a", "e"]), rtol=1e-6)
    assert (cache.stats.hits, cache.stats.misses) == (2, 5)


def test_identities_do_not_share_vectors(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.embed(CountingEmbedder("test:one"), ["a"])
    other = CountingEmbedder("test:two")
    cache.embed(other, ["a"])
    assert other.embedded == ["a"]
    assert set(cache.info()) == {"test:one", "test:two"}


def test_texts_are_exact_keys(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.embed(CountingEmbedder(), ["Hello world"])
    emb = CountingEmbedder()
    cache.embed(emb, ["Hello world ", "hello world", "Hello world", "\ud800 lone"])
    assert emb.embedded == ["Hello world ", "hello world", "\ud800 lone"]


def test_vectors_are_normalized_once_and_zero_stays_zero(tmp_path: Path) -> None:
    class Raw:
        identity = "test:raw"

        def embed(self, texts: Sequence[str]) -> FloatArray:
            return np.array(
                [[3.0, 4.0] if t else [0.0, 0.0] for t in texts], dtype=np.float64
            )

    vectors = EmbeddingCache(tmp_path).embed(Raw(), ["x", ""])
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
    assert not np.isnan(vectors).any()


def test_bad_embedder_output_is_a_clear_error(tmp_path: Path) -> None:
    class Short:
        identity = "test:short"

        def embed(self, texts: Sequence[str]) -> FloatArray:
            return np.ones((len(texts) - 1, 4), dtype=np.float32)

    with pytest.raises(ValueError, match=r"test:short.*shape \(2, 4\) for 3 texts"):
        EmbeddingCache(tmp_path).embed(Short(), ["a", "b", "c"])


def test_a_new_dimension_under_an_old_identity_is_an_error(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.embed(CountingEmbedder("test:same", dim=8), ["a"])
    with pytest.raises(ValueError, match=r"16-dim vectors but the cache at .* 8-dim"):
        cache.embed(CountingEmbedder("test:same", dim=16), ["b"])


def test_non_str_text_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="text #1 is int"):
        EmbeddingCache(tmp_path).embed(CountingEmbedder(), ["a", 3])  # type: ignore[list-item]


def test_empty_input(tmp_path: Path) -> None:
    emb = CountingEmbedder()
    out = EmbeddingCache(tmp_path).embed(emb, [])
    assert out.shape[0] == 0
    assert emb.calls == []


def test_misses_are_embedded_in_batches(tmp_path: Path) -> None:
    emb = CountingEmbedder()
    texts = [f"t{i}" * (i + 1) for i in range(10)]
    EmbeddingCache(tmp_path, batch_size=4).embed(emb, texts)
    assert [len(c) for c in emb.calls] == [4, 4, 2]
    # longest first: batches of similar lengths pad less
    assert emb.calls[0][0] == texts[-1]


def test_partial_results_survive_an_interrupted_run(tmp_path: Path) -> None:
    class Failing(CountingEmbedder):
        def embed(self, texts: Sequence[str]) -> FloatArray:
            if len(self.calls) == 2:
                raise KeyboardInterrupt
            return super().embed(texts)

    with pytest.raises(KeyboardInterrupt):
        EmbeddingCache(tmp_path, batch_size=2).embed(Failing(), list("abcdef"))
    emb = CountingEmbedder()
    EmbeddingCache(tmp_path).embed(emb, list("abcdef"))
    assert len(emb.embedded) == 2  # the first two batches were kept


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[:-7], "truncated"),
        (lambda data: data[:-5] + bytes([data[-5] ^ 0xFF]) + data[-4:], "checksum"),
        (lambda data: b"garbage!" + data[8:], "bad magic"),
        (lambda data: data[:10], "truncated"),
    ],
)
def test_corrupt_pack_is_reported_set_aside_and_recomputed(
    tmp_path: Path, damage: object, reason: str
) -> None:
    texts = ["alpha", "beta", "gamma"]
    EmbeddingCache(tmp_path).embed(CountingEmbedder(), texts)
    [pack] = packs(tmp_path)
    pack.write_bytes(damage(pack.read_bytes()))  # type: ignore[operator]

    emb = CountingEmbedder()
    cache = EmbeddingCache(tmp_path)
    with pytest.warns(CacheWarning, match=f"{pack.name}.*{reason}"):
        vectors = cache.embed(emb, texts)
    assert sorted(emb.embedded) == sorted(texts)
    np.testing.assert_allclose(vectors, expected(texts), rtol=1e-6)
    assert pack.with_name(pack.name + ".corrupt").exists()

    # Reported once: the next process neither warns nor recomputes.
    emb = CountingEmbedder()
    EmbeddingCache(tmp_path).embed(emb, texts)
    assert emb.calls == []
    assert cache.info()["test:counting"]["corrupt"] == 1


def test_pack_of_another_format_version_is_skipped_silently(tmp_path: Path) -> None:
    EmbeddingCache(tmp_path).embed(CountingEmbedder(), ["a"])
    [pack] = packs(tmp_path)
    pack.write_bytes(b"CEVPACK9" + pack.read_bytes()[8:])
    emb = CountingEmbedder()
    EmbeddingCache(tmp_path).embed(emb, ["a"])  # filterwarnings=error: no warning
    assert emb.embedded == ["a"]
    assert pack.exists()  # left for the chunkeval version that wrote it


def test_pack_of_another_identity_is_not_trusted(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.embed(CountingEmbedder("test:one"), ["a"])
    cache.embed(CountingEmbedder("test:two"), ["b"])
    [one] = (tmp_path / identity_dirname("test:one")).glob("*.pack")
    (tmp_path / identity_dirname("test:two") / one.name).write_bytes(one.read_bytes())
    emb = CountingEmbedder("test:two")
    with pytest.warns(CacheWarning, match="another embedder identity"):
        EmbeddingCache(tmp_path).embed(emb, ["a", "b"])
    assert emb.embedded == ["a"]


def test_compaction_merges_packs_without_losing_vectors(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, compact_after=3)
    for i in range(8):
        cache.embed(CountingEmbedder(), [f"x{i}", f"y{i}", "shared"])
    assert len(packs(tmp_path)) <= 3
    emb = CountingEmbedder()
    texts = [f"{p}{i}" for p in "xy" for i in range(8)] + ["shared"]
    vectors = EmbeddingCache(tmp_path).embed(emb, texts)
    assert emb.calls == []
    np.testing.assert_allclose(vectors, expected(texts), rtol=1e-6)
    assert EmbeddingCache(tmp_path).info()["test:counting"]["entries"] == 17


def test_explicit_compact(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    for i in range(4):
        cache.embed(CountingEmbedder(), [str(i)])
    assert len(packs(tmp_path)) == 4
    assert cache.compact() == 1
    assert len(packs(tmp_path)) == 1
    assert not list(tmp_path.glob("*/.compact.lock"))


def test_reader_survives_a_pack_vanishing_under_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process merges the packs between our listing and our read."""
    writer = EmbeddingCache(tmp_path)
    for i in range(3):
        writer.embed(CountingEmbedder(), [f"v{i}"])
    real_read = packs_module._read_pack_bytes
    state = {"compacted": False}

    def read_then_compact(path: Path) -> bytes:
        if not state["compacted"]:
            state["compacted"] = True
            # the "other process": its own store, merging every pack into a new one
            other = packs_module.IdentityStore(path.parent, "test:counting")
            assert other.compact(force=True)
        return real_read(path)

    monkeypatch.setattr(packs_module, "_read_pack_bytes", read_then_compact)
    emb = CountingEmbedder()
    vectors = EmbeddingCache(tmp_path).embed(emb, ["v0", "v1", "v2"])
    assert emb.calls == []
    np.testing.assert_allclose(vectors, expected(["v0", "v1", "v2"]), rtol=1e-6)


WORKER = textwrap.dedent(
    """
    import sys, warnings
    import numpy as np
    warnings.simplefilter("error")  # any CacheWarning (torn read) fails the worker
    sys.path.insert(0, {tests!r})
    from support.counting import CountingEmbedder, expected
    from pytest_chunkeval.embedders.cache import EmbeddingCache

    worker = int(sys.argv[1])
    rng = np.random.default_rng(worker)
    for round in range(25):
        texts = [f"t{{i}}" for i in rng.choice(300, size=40, replace=False)]
        got = EmbeddingCache({cache!r}, compact_after=2, batch_size=16).embed(
            CountingEmbedder(), texts
        )
        np.testing.assert_allclose(got, expected(texts), rtol=1e-6)
    """
)


def test_concurrent_processes_share_one_cache_safely(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    script = WORKER.format(tests=str(ROOT / "tests"), cache=str(cache_dir))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(w)],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(4)
    ]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], "\n".join(errors)
    info = EmbeddingCache(cache_dir).info()["test:counting"]
    assert info["corrupt"] == 0
    emb = CountingEmbedder()
    texts = sorted({f"t{i}" for i in range(300)})
    vectors = EmbeddingCache(cache_dir).embed(emb, texts)
    np.testing.assert_allclose(vectors, expected(texts), rtol=1e-6)
    assert len(emb.embedded) == 300 - info["entries"]
    assert not list(cache_dir.glob("*/.*.tmp"))


def test_info_and_clear(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.embed(CountingEmbedder("test:one", dim=4), ["a", "b"])
    cache.embed(CountingEmbedder("test:one", dim=4), ["c"])
    cache.embed(CountingEmbedder("test:two", dim=8), ["a"])
    info = cache.info()
    assert info["test:one"]["entries"] == 3
    assert info["test:one"]["files"] == 2
    assert info["test:one"]["dimension"] == 4
    assert info["test:one"]["bytes"] > 3 * 4 * 4
    assert info["test:two"]["entries"] == 1

    assert cache.clear("test:one") == 3
    assert set(cache.info()) == {"test:two"}
    emb = CountingEmbedder("test:one", dim=4)
    cache.embed(emb, ["a"])
    assert emb.embedded == ["a"]  # cleared means recomputed, also in this process

    assert cache.clear("test:missing") == 0
    assert cache.clear() == 2
    assert cache.info() == {}


def test_clear_only_deletes_cache_files(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.embed(CountingEmbedder(), ["a"])
    [identity_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
    keep = identity_dir / "notes.txt"
    keep.write_text("mine")
    (tmp_path / "unrelated").mkdir()
    (tmp_path / "unrelated" / "data.bin").write_bytes(b"x")
    assert cache.clear() == 1
    assert keep.read_text() == "mine"
    assert (tmp_path / "unrelated" / "data.bin").exists()


def test_new_cache_directory_is_git_ignored(tmp_path: Path) -> None:
    root = tmp_path / "project" / ".chunkeval" / "cache"
    EmbeddingCache(root).embed(CountingEmbedder(), ["a"])
    assert (root / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (root / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172")


def test_default_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    assert default_cache_dir(tmp_path) == tmp_path / ".chunkeval" / "cache"
    monkeypatch.chdir(tmp_path)
    assert default_cache_dir() == tmp_path / ".chunkeval" / "cache"
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert default_cache_dir(tmp_path / "ignored") == tmp_path / "elsewhere"


def test_put_then_embed(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.put("test:counting", ["a", "b"], [[3.0, 4.0], [1.0, 0.0]])
    emb = CountingEmbedder(dim=2)
    want = np.array([[1.0, 0.0], [0.6, 0.8]])
    np.testing.assert_allclose(cache.embed(emb, ["b", "a"]), want, rtol=1e-6)
    assert emb.calls == []


def test_progress_bar_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    EmbeddingCache(tmp_path).embed(CountingEmbedder(), ["a", "b"], progress=True)
    assert "embedding (test:counting)" in capsys.readouterr().err
    EmbeddingCache(tmp_path / "2").embed(CountingEmbedder(), ["a", "b"])
    assert capsys.readouterr().err == ""  # not a tty: quiet


def test_stats_str() -> None:
    assert str(CacheStats()) == "embedding cache: no lookups"
    assert str(CacheStats(1, 3)) == "embedding cache: 1 hits, 3 misses (25.0% hit rate)"


def test_fully_cached_run_never_imports_torch(tmp_path: Path) -> None:
    """The default model's vectors come from the cache without loading the model."""
    texts = ["what is a chunk?", "a chunk is a span"]
    vectors = np.eye(2, 384, dtype=np.float32)
    EmbeddingCache(tmp_path).put(
        embedder_cache_identity(get_embedder(DEFAULT_EMBEDDER)), texts, vectors
    )
    script = textwrap.dedent(
        f"""
        import sys
        from pytest_chunkeval.embedders.cache import EmbeddingCache
        from pytest_chunkeval.embedders.registry import get_embedder
        out = EmbeddingCache({str(tmp_path)!r}).embed(get_embedder(), {texts!r})
        assert out.shape == (2, 384) and out[0, 0] == 1.0 and out[1, 1] == 1.0, out
        heavy = [m for m in ("torch", "sentence_transformers", "transformers")
                 if m in sys.modules]
        print("heavy:", heavy)
        """
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "heavy: []"
