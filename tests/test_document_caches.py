"""Token bounds and chunkings cached per document: a warm run tokenizes, chunks and
searches nothing; a damaged entry is set aside and recomputed; a changed document
is tokenized and chunked again alone; a chunker whose identity does not determine
its output is never cached. And the verify-on-read helper they are built on."""

from __future__ import annotations

import hashlib
import shutil
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.tiny_corpus import DOCS, make_queries

from pytest_chunkeval.chunkers import FunctionChunker, RecursiveTokenChunker, as_chunker
from pytest_chunkeval.chunkers.fixed import FixedTokenChunker
from pytest_chunkeval.chunkers.sentence import SentenceChunker
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.cache_dir import forget_open
from pytest_chunkeval.engine.chunking import Chunking
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.retrieve import RetrievalInputs
from pytest_chunkeval.engine.token_cache import (
    decode_bounds,
    encode_bounds,
    token_columns,
    token_store,
)
from pytest_chunkeval.stores.exact import ExactIndex
from pytest_chunkeval.tokenizers.base import (
    OffsetsTokenizer,
    TiktokenTokenizer,
    TokenizerUnavailable,
)
from pytest_chunkeval.util.verified import (
    CacheWarning,
    EntryRefused,
    VerifiedStore,
    entry_key,
)

CALLS: Counter[str] = Counter()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts every tokenization, chunking and exact search (per text for the
    first two, so a test can say which document was processed)."""
    CALLS.clear()

    def wrap(cls: Any, name: str, label: str) -> None:
        original = getattr(cls, name)

        def spy(self: Any, arg: Any, *rest: Any, **kw: Any) -> Any:
            CALLS[label] += 1
            if isinstance(arg, str):
                CALLS[f"{label}:{arg[:12]}"] += 1
            return original(self, arg, *rest, **kw)

        monkeypatch.setattr(cls, name, spy)

    wrap(TiktokenTokenizer, "token_bounds", "tokenize")
    wrap(TiktokenTokenizer, "encode_array", "encode")
    wrap(RecursiveTokenChunker, "chunk_spans", "chunk")
    wrap(RecursiveTokenChunker, "spans_from_tokens", "chunk")
    wrap(FixedTokenChunker, "chunk_spans", "chunk")
    wrap(FixedTokenChunker, "spans_from_tokens", "chunk")
    wrap(SentenceChunker, "chunk_spans", "chunk")
    wrap(SentenceChunker, "spans_from_tokens", "chunk")
    wrap(ExactIndex, "search", "search")
    loaded = RetrievalInputs.vectors_of_chunks

    def vectors(self: RetrievalInputs) -> Any:
        CALLS["chunk vectors"] += 1
        return loaded(self)

    monkeypatch.setattr(RetrievalInputs, "vectors_of_chunks", vectors)
    return CALLS


def run(cache_dir: Path, chunker: Any = "recursive:20:0", docs: Any = None) -> Any:
    """A fresh process's evaluation (nothing remembered from earlier runs but the
    cache directory), without its timings. The stored evaluation results are
    removed first: they would spare the run every step these tests count
    (engine/result_cache.py; tests/test_result_cache.py covers them)."""
    shutil.rmtree(cache_dir / "results", ignore_errors=True)
    forget_open()
    corpus = Corpus.from_mapping(docs or DOCS, name="tiny")
    result = evaluate(
        chunker,
        corpus,
        make_queries(Corpus.from_mapping(DOCS, name="tiny")),
        store="exact",
        k=2,
        embedder=HashingEmbedder(),
        cache=EmbeddingCache(cache_dir),
    )
    data = result.to_json()
    data.pop("timings", None)
    return data


def copy(cache_dir: Path, tmp_path: Path, name: str) -> Path:
    # Another directory: the process-level memos (unit maps, copies) miss too.
    target = tmp_path / name
    shutil.copytree(cache_dir, target)
    return target


@pytest.mark.parametrize("chunker", ["recursive:20:0", "fixed:12:2", "sentence:15"])
def test_a_warm_run_tokenizes_chunks_and_searches_nothing(
    tmp_path: Path, counted: Counter[str], chunker: str
) -> None:
    cold = run(tmp_path / "cache", chunker)
    # each document tokenized once: for the unit map, and the chunker's windows
    # (fixed) or piece counts (recursive: tests/test_doc_counts.py) from the
    # same bounds
    assert counted["tokenize"] == counted["encode"] == len(DOCS)
    assert counted["chunk"] == len(DOCS)
    # one search, past k for the margins (the scored ranks are its prefix)
    assert counted["search"] == 1
    assert counted["chunk vectors"] == 1
    counted.clear()
    warm = run(copy(tmp_path / "cache", tmp_path, "warm"), chunker)
    assert warm == cold  # the margins too: read with the cached rows
    # no tokenizing, chunking, search, nor chunk vectors loaded
    assert counted == Counter(), counted


def test_a_warm_run_never_loads_the_tokenizer(tmp_path: Path) -> None:
    def chunker() -> RecursiveTokenChunker:
        return RecursiveTokenChunker(20, 0, encoding=TiktokenTokenizer("cl100k_base"))

    cold = run(tmp_path / "cache", chunker())
    warm_chunker = chunker()
    assert warm_chunker.tokenizer._loaded is None  # type: ignore[attr-defined]
    # the unit map's tokenizer (the default) is not this one: check ours stays
    # unloaded while the chunks come from the cache
    assert run(copy(tmp_path / "cache", tmp_path, "warm"), warm_chunker) == cold
    assert warm_chunker.tokenizer._loaded is None  # type: ignore[attr-defined]


def test_an_unknown_tiktoken_encoding_fails_when_made() -> None:
    with pytest.raises((TokenizerUnavailable, ValueError)):
        TiktokenTokenizer("no_such_encoding")


@pytest.mark.parametrize("kind", ["tokens", "chunkings"])
def test_a_damaged_entry_is_set_aside_and_recomputed(
    tmp_path: Path, counted: Counter[str], kind: str
) -> None:
    cold = run(tmp_path / "cache", "recursive:20:0")
    damaged = copy(tmp_path / "cache", tmp_path, "damaged")
    files = sorted((damaged / kind).glob("*/*.*"))
    assert len(files) == len(DOCS)
    for path in files:
        data = bytearray(path.read_bytes())
        data[-1] ^= 0x01  # the same size, one bit off
        path.write_bytes(bytes(data))
    counted.clear()
    with pytest.warns(CacheWarning, match="checksum mismatch") as caught:
        assert run(damaged, "recursive:20:0") == cold
    named = " ".join(str(w.message) for w in caught)
    assert all(path.name in named for path in files)
    assert all(path.with_name(path.name + ".corrupt").exists() for path in files)
    label = "tokenize" if kind == "tokens" else "chunk"
    assert counted[label] == len(DOCS)  # computed again, and stored again
    counted.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run(copy(damaged, tmp_path, "again"), "recursive:20:0") == cold
    assert counted[label] == 0


def test_a_changed_document_is_tokenized_and_chunked_again_alone(
    tmp_path: Path, counted: Counter[str]
) -> None:
    run(tmp_path / "cache", "recursive:20:0")
    edited = dict(DOCS)
    edited["space.md"] = "Saturn has rings. " + DOCS["space.md"]
    counted.clear()
    run(copy(tmp_path / "cache", tmp_path, "edited"), "recursive:20:0", edited)
    assert counted["tokenize"] == 1
    assert counted["tokenize:Saturn has r"] == 1
    assert counted["chunk"] == 1
    assert counted["chunk:Saturn has r"] == 1


def test_a_users_callable_is_never_cached(tmp_path: Path) -> None:
    seen: list[str] = []

    def paragraphs(text: str) -> list[str]:
        seen.append(text)
        return [p for p in text.split("\n\n") if p]

    cache = tmp_path / "cache"
    first = run(cache, paragraphs)
    second = run(copy(cache, tmp_path, "warm"), paragraphs)
    assert first == second
    assert len(seen) == 2 * len(DOCS)  # chunked in both runs
    assert not list((cache / "chunkings").glob("*/*"))


def test_a_callable_with_a_cache_version_is_cached(tmp_path: Path) -> None:
    seen: list[str] = []

    def paragraphs(text: str) -> list[str]:
        seen.append(text)
        return [p for p in text.split("\n\n") if p]

    paragraphs.cache_version = "1"  # type: ignore[attr-defined]
    chunker = as_chunker(paragraphs)
    assert isinstance(chunker, FunctionChunker)
    assert chunker.cache_identity is not None
    cache = tmp_path / "cache"
    first = run(cache, chunker)
    assert run(copy(cache, tmp_path, "warm"), chunker) == first
    assert len(seen) == len(DOCS)


def test_a_tokenizer_without_identity_is_never_cached(tmp_path: Path) -> None:
    class Words:
        def encode_with_offsets(self, text: str) -> list[tuple[int, int]]:
            return [(i, i + 1) for i in range(len(text))]

    tokenizer = OffsetsTokenizer(Words())
    chunker = RecursiveTokenChunker(20, 0, encoding=tokenizer)
    assert chunker.cache_identity is None
    corpus = Corpus.from_mapping(DOCS, name="tiny")
    Chunking(chunker, corpus, tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_identities_tell_configurations_apart() -> None:
    a = RecursiveTokenChunker(20, 0).cache_identity
    assert a is not None
    assert RecursiveTokenChunker(20, 5).cache_identity != a
    assert RecursiveTokenChunker(20, 0, separators=["\n", ""]).cache_identity != a
    o200k = RecursiveTokenChunker(20, 0, encoding="o200k_base")
    assert o200k.cache_identity != a
    assert FixedTokenChunker(20, 0).cache_identity != a


@pytest.mark.parametrize(
    "text",
    ["plain ascii, words.", "héllo wörld ✓ 😀😀 日本語のテキスト", "", " " * 600],
)
def test_token_bounds_round_trip(text: str) -> None:
    bounds = TiktokenTokenizer().token_bounds(text)
    payload = encode_bounds(bounds)
    assert np.array_equal(decode_bounds(memoryview(payload), len(text)), bounds)
    if text:
        with pytest.raises(EntryRefused):  # bounds past the end of the text
            decode_bounds(memoryview(payload), len(text) - 1)


def test_token_bounds_of_any_shape_round_trip() -> None:
    odd = np.array([[0, 300], [2, 400], [400, 401]], dtype=np.int64)  # wide, back
    payload = encode_bounds(odd)
    assert np.array_equal(decode_bounds(memoryview(payload), 401), odd)


class _Mixed(OffsetsTokenizer):
    """Characters as tokens, but bounds the compact format cannot hold (a wide
    token, a gap) in a document holding "odd": both entry formats in one corpus."""

    identity = "mixed@1"

    def __init__(self) -> None:
        super().__init__(self)

    def encode_with_offsets(self, text: str) -> list[tuple[int, int]]:
        if "odd" in text:
            return [(0, 3), (1, 2), (5, len(text))]
        return [(i, i + 1) for i in range(len(text))]


@pytest.mark.parametrize("tokenizer", ["cl100k_base", "mixed"])
def test_the_unit_axis_from_cached_bounds_is_the_tokenizers(
    tmp_path: Path, tokenizer: str
) -> None:
    docs = {
        "a.md": "héllo wörld ✓ 😀😀 日本語",
        "empty.md": "",
        "odd.md": "an odd one, wider",
        "b.md": "plain text " * 40,
    }
    corpus = Corpus.from_mapping(docs, name="mixed")
    tok = _Mixed() if tokenizer == "mixed" else TiktokenTokenizer(tokenizer)
    expected = UnitMap(corpus.ids, [d.text for d in corpus], "token", tok)
    cold = token_columns(corpus, tok, tmp_path)  # tokenized and stored
    warm = token_columns(corpus, tok, tmp_path)  # laid out from the entries
    for got in (cold, warm):
        assert [got.starts().tolist(), got.ends.tolist(), got.counts.tolist()] == [
            *(a.tolist() for a in expected.token_char_bounds()),
            np.diff(expected.unit_offsets).tolist(),
        ]
    assert warm.ends.dtype == np.int32


def test_a_cached_token_starting_before_its_text_is_refused(tmp_path: Path) -> None:
    corpus = Corpus.from_mapping({"a.md": "abc"}, name="one")
    tok = TiktokenTokenizer()
    token_columns(corpus, tok, tmp_path)
    (path,) = (tmp_path / "tokens").glob("*/*.tok")
    key = path.name.removesuffix(".tok")
    store = token_store(tmp_path)
    # one token of 0 characters that overlaps the one before the text
    store.put(key, encode_bounds(np.array([[0, 0], [-1, 3]])))
    with pytest.warns(CacheWarning, match="before the text"):
        axis = token_columns(corpus, tok, tmp_path)
    assert axis.starts().min() >= 0


def test_one_pass_gives_the_document_and_the_corpus_hashes() -> None:
    docs = {"a.md": "héllo", "b.md": "", "c.md": "x" * 1000}
    first = Corpus.from_mapping(docs, name="one")
    by_text = tuple(hashlib.sha256(t.encode()).hexdigest() for t in docs.values())
    assert first.document_hashes == by_text  # asked first
    second = Corpus.from_mapping(docs, name="two")
    corpus_hash = second.content_hash  # asked first
    assert second.document_hashes == by_text
    assert first.content_hash == corpus_hash
    assert Corpus.from_mapping({**docs, "b.md": " "}).content_hash != corpus_hash


def test_the_verified_store(tmp_path: Path) -> None:
    store = VerifiedStore(tmp_path, magic=b"TESTKND1", suffix=".t", what="test")
    key, other = entry_key("v1", "a"), entry_key("v1", "b")
    assert entry_key("v1", "ab") != entry_key("v1a", "b")  # parts are delimited
    assert store.get(key, bytes) is None
    store.put(key, b"value")
    assert store.get(key, bytes) == b"value"
    # a whole, valid entry copied under another key is refused
    store.path(other).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(store.path(key), store.path(other))
    with pytest.warns(CacheWarning, match="checksum mismatch"):
        assert store.get(other, bytes) is None
    assert store.path(other).with_name(store.path(other).name + ".corrupt").exists()

    def refuse(payload: memoryview) -> bytes:
        raise EntryRefused("counts do not add up")

    with pytest.warns(CacheWarning, match="counts do not add up"):
        assert store.get(key, refuse) is None
    assert not store.path(key).exists()
    assert store.size() == (0, 0, 2)
    store.put(key, b"again")
    assert store.clear() == 1
    assert store.size() == (0, 0, 0)


def test_a_read_only_store_leaves_a_damaged_entry_in_place(tmp_path: Path) -> None:
    store = VerifiedStore(tmp_path, magic=b"TESTKND1", suffix=".t", what="test")
    key = entry_key("v1", "a")
    store.put(key, b"value")
    store.path(key).write_bytes(b"garbage")
    reader = VerifiedStore(
        tmp_path, magic=b"TESTKND1", suffix=".t", what="test", read_only=True
    )
    with pytest.warns(CacheWarning, match="bad or missing header"):
        assert reader.get(key, bytes) is None
    assert store.path(key).exists()
    reader.put(key, b"new")
    assert store.path(key).read_bytes() == b"garbage"


def test_a_full_disk_is_warned_about_once_per_cache_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    import pytest_chunkeval.util.verified as verified

    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(verified, "atomic_writer", full)
    root = tmp_path / "cache"
    tokens = VerifiedStore(root / "tokens", magic=b"TESTKND1", suffix=".t", what="a")
    chunks = VerifiedStore(root / "chunks", magic=b"TESTKND2", suffix=".t", what="b")
    with pytest.warns(CacheWarning, match=r"cannot store a in .*No space left"):
        tokens.put(entry_key("v1", "x"), b"value")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chunks.put(entry_key("v1", "y"), b"value")  # same directory: no warning
        tokens.put(entry_key("v1", "z"), b"value")
    assert verified.storing_stopped(root)
    assert not verified.storing_stopped(tmp_path / "other")


def test_cache_info_lists_and_cache_clear_removes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_chunkeval.cli.main import main

    cache = tmp_path / "cache"
    run(cache, "recursive:20:0")
    assert main(["cache", "info", "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr().out
    assert f"token bounds: {len(DOCS)} documents" in out
    assert f"chunkings: {len(DOCS)} documents" in out
    assert main(["cache", "clear", "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr().out
    assert f"{len(DOCS)} token bounds and {len(DOCS)} chunkings" in out
    assert not list(cache.glob("tokens/*/*"))
    assert not list(cache.glob("chunkings/*/*"))
