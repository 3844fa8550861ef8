"""bfloat16 embedding: opt-in, recorded in the identity, float32 where not native."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from pytest_chunkeval.embedders import precision
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.precision import PrecisionWarning, parse_dtype
from pytest_chunkeval.embedders.registry import get_embedder
from pytest_chunkeval.embedders.sentence_transformers import SentenceTransformerEmbedder

MINILM = "sentence-transformers:all-MiniLM-L6-v2"


@pytest.fixture
def native(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: True)


@pytest.fixture
def not_native(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: False)
    monkeypatch.setattr(precision, "_warned", set())


class FakeModel:
    """Records the dtype autocast is set to while encoding."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, Any]] = []

    def encode(self, texts: Sequence[str], **kwargs: Any) -> np.ndarray:
        import torch

        self.calls.append((len(texts), torch.is_autocast_enabled("cpu")))
        return np.ones((len(texts), 4), dtype=np.float32) + np.arange(4)


def fresh(spec: str) -> SentenceTransformerEmbedder:
    embedder = get_embedder(spec)
    assert isinstance(embedder, SentenceTransformerEmbedder)
    # get_embedder keeps one instance per spec; the dtype is decided per instance.
    return SentenceTransformerEmbedder(
        embedder.name, dtype=embedder.requested_dtype, device=embedder.device
    )


def test_dtype_values() -> None:
    assert parse_dtype("bf16") == parse_dtype("BFloat16") == "bfloat16"
    assert parse_dtype("fp32") == "float32"
    with pytest.raises(ValueError, match="float32 or bfloat16"):
        parse_dtype("float16")
    from pytest_chunkeval.config.registry import UnknownSpec

    with pytest.raises(UnknownSpec, match="dtype"):
        get_embedder(f"{MINILM}?dtype=int8")


def test_bf16_identity_differs_from_float32(native: None) -> None:
    fp32 = fresh(MINILM)
    bf16 = fresh(f"{MINILM}?dtype=bfloat16")
    assert bf16.dtype == "bfloat16"
    assert fp32.dtype == "float32"
    assert bf16.identity == fp32.identity + ":bf16"
    assert fresh(f"{MINILM}?dtype=float32").identity == fp32.identity
    assert not bf16.is_loaded  # the identity comes from files


def test_without_native_bf16_it_warns_once_and_runs_and_records_float32(
    not_native: None,
) -> None:
    pytest.importorskip("torch")  # the fp32 fallback encodes under torch
    fp32 = fresh(MINILM)
    bf16 = fresh(f"{MINILM}?dtype=bf16")
    with pytest.warns(PrecisionWarning, match="no native bf16"):
        identity = bf16.identity
    assert identity == fp32.identity
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = fresh(f"{MINILM}?dtype=bf16")
        assert again.dtype == "float32"  # no second warning
    bf16._model = FakeModel()
    bf16.embed(["a", "b"])
    assert bf16._model.calls == [(2, False)]


def test_bf16_runs_under_autocast_and_is_cached_apart(native: None, tmp_path) -> None:
    pytest.importorskip("torch")
    cache = EmbeddingCache(tmp_path)
    fp32, bf16 = fresh(MINILM), fresh(f"{MINILM}?dtype=bfloat16")
    fp32._model, bf16._model = FakeModel(), FakeModel()
    texts = ["one text", "another"]
    cache.embed(fp32, texts, progress=False)
    cache.embed(bf16, texts, progress=False)
    assert fp32._model.calls == [(2, False)]
    assert bf16._model.calls == [(2, True)]  # a miss: not served fp32 vectors
    cache.embed(bf16, texts, progress=False)
    assert bf16._model.calls == [(2, True)]  # and then a hit of its own


def test_a_baseline_sees_a_precision_change(native: None) -> None:
    from support.fake_results import CONFIG, make_result
    from support.fake_results import config_change_lines as changes

    from pytest_chunkeval.gate.files.baseline import Baseline

    fp32 = fresh(MINILM).identity
    made = {**CONFIG, "embedder_identity": fp32}
    baseline = Baseline.from_result(make_result([0.5], config=made), "test_x")
    bf16 = {**CONFIG, "embedder_identity": fp32 + ":bf16"}
    assert changes(baseline, make_result([0.5], config=bf16)) == [
        f"embedder_identity: {fp32} -> {fp32}:bf16"
    ]
    unresolved = f"{MINILM}@main:bf16"
    assert changes(
        baseline, make_result([0.5], config={**CONFIG, "embedder_identity": unresolved})
    )


def test_cpu_flags_are_read_from_cpuinfo(tmp_path, monkeypatch) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor: 0\nflags\t\t: fpu sse avx512f avx512_bf16\n")
    monkeypatch.setattr(precision, "CPUINFO", info)
    precision.cpu_has_native_bf16.cache_clear()
    try:
        assert precision.cpu_has_native_bf16()
        info.write_text("flags: fpu sse avx2\n")
        precision.cpu_has_native_bf16.cache_clear()
        assert not precision.cpu_has_native_bf16()
        info.unlink()
        precision.cpu_has_native_bf16.cache_clear()
        assert not precision.cpu_has_native_bf16()
    finally:
        precision.cpu_has_native_bf16.cache_clear()


@pytest.mark.slow
def test_real_minilm_in_bf16_agrees_with_float32() -> None:
    pytest.importorskip("sentence_transformers")
    if not precision.cpu_has_native_bf16():
        pytest.skip("this CPU has no native bf16")
    texts = [
        "The Moon orbits the Earth every 27 days.",
        "Mars has two small moons, Phobos and Deimos.",
        "Parrots can imitate human speech.",
    ]
    fp32 = fresh(MINILM).embed(texts)
    bf16 = fresh(f"{MINILM}?dtype=bfloat16").embed(texts)
    assert bf16.dtype == np.float32
    cosine = (fp32 * bf16).sum(axis=1)
    assert cosine.min() > 0.999
    assert not np.array_equal(fp32, bf16)  # bf16 did run
