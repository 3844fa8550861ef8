"""A LangChain or Chroma embedding object is cached only under an identity that
determines its vectors (docs/embedders.md, "In Python"): its class's library and
version with every setting, or a declared ``identity=`` / ``cache_version``;
otherwise it is embedded every time, so a warm run gives what a cold one gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.tiny_corpus import fresh_run

from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.foreign import settings_digest
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.embedders.registry import get_embedder


class OwnEmbeddings:
    """A LangChain-style object of the user's own (embed_documents), without a
    model attribute; ``flat`` switches it to one vector for every text."""

    def __init__(self) -> None:
        self.flat = False
        self.calls = 0

    def embed_documents(self, texts: list[str]) -> Any:
        self.calls += 1
        vectors = HashingEmbedder().embed(texts)
        return np.repeat(vectors[:1] + 1.0, len(texts), 0) if self.flat else vectors


class NamedEmbeddings(OwnEmbeddings):
    """The same with a model name: the name says nothing of ``flat``."""

    model = "fake-embed-1"


def numbers(cache: Path, embedder: Any) -> Any:
    result = fresh_run(cache, embedder=embedder).to_json()
    return result["metrics"], result["queries"]


@pytest.mark.parametrize("kind", [OwnEmbeddings, NamedEmbeddings])
def test_a_langchain_object_of_ones_own_is_embedded_every_time(
    tmp_path: Path, kind: type[OwnEmbeddings]
) -> None:
    obj = kind()
    assert get_embedder(obj).cache_identity is None
    before = numbers(tmp_path / "warm", get_embedder(obj))
    obj.flat = True  # another output, the same class and model
    warm = numbers(tmp_path / "warm", get_embedder(obj))
    assert warm == numbers(tmp_path / "cold", get_embedder(obj))
    assert warm != before
    assert list(EmbeddingCache(tmp_path / "cold").info()) == []  # no vector kept


def test_a_declared_identity_or_cache_version_is_trusted(tmp_path: Path) -> None:
    obj = NamedEmbeddings()
    assert get_embedder(obj, identity="mine-1").cache_identity == "mine-1"
    obj.cache_version = "2"  # type: ignore[attr-defined]
    embedder = get_embedder(obj)
    assert embedder.cache_identity == f"{embedder.identity}?cache_version=2"
    numbers(tmp_path / "cache", embedder)
    calls = obj.calls
    numbers(tmp_path / "cache", get_embedder(obj))
    assert obj.calls == calls  # read from the cache


def test_a_langchain_class_is_keyed_on_its_version_and_every_setting() -> None:
    fake = pytest.importorskip("langchain_core.embeddings.fake")
    small = get_embedder(fake.DeterministicFakeEmbedding(size=8))
    assert small.identity.startswith("langchain:langchain_core.")
    identity = small.cache_identity
    assert identity is not None
    assert "@langchain-core==" in identity
    other = get_embedder(fake.DeterministicFakeEmbedding(size=16)).cache_identity
    assert other not in (None, identity)

    class Mine(fake.DeterministicFakeEmbedding):  # a user's subclass: its code
        pass

    assert get_embedder(Mine(size=8)).cache_identity is None


def test_settings_leave_out_credentials_and_refuse_objects_and_paths(
    tmp_path: Path,
) -> None:
    base = {"model": "m", "openai_api_key": "sk-one", "base_url": "http://h/v1"}
    same = {**base, "openai_api_key": "sk-two", "base_url": "http://u:pw@h/v1"}
    assert settings_digest(base) == settings_digest(same)
    assert settings_digest({**base, "model": "n"}) != settings_digest(base)
    headers = {"default_headers": {"Authorization": "Bearer a"}}
    assert settings_digest(headers) == settings_digest(
        {"default_headers": {"Authorization": "Bearer b"}}
    )
    assert settings_digest({**base, "client": object()}) is None
    (tmp_path / "model").mkdir()
    assert settings_digest({"model_name": str(tmp_path / "model")}) is None


def test_a_chroma_function_of_ones_own_is_embedded_every_time() -> None:
    pytest.importorskip("chromadb")
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

    class Length(EmbeddingFunction[Documents]):
        def __init__(self) -> None:
            pass

        def __call__(self, input: Documents) -> Embeddings:
            return [np.array([len(t), 1.0], dtype=np.float32) for t in input]

        @staticmethod
        def name() -> str:
            return "length"

        def get_config(self) -> dict[str, Any]:
            return {}

    embedder = get_embedder(Length())
    assert embedder.identity.startswith("chroma:length:")
    assert embedder.cache_identity is None  # not Chroma's own code
    Length.cache_version = "1"  # type: ignore[attr-defined]
    assert get_embedder(Length()).cache_identity is not None
