"""Kamradt's semantic chunker and the size-bounded KamradtModifiedChunker."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest

from pytest_chunkeval.benchmarks import load_benchmark
from pytest_chunkeval.cache import EmbeddingCache
from pytest_chunkeval.chunkers import Chunker, RecursiveTokenChunker, validate_chunks
from pytest_chunkeval.chunkers.cluster import ClusterSemanticChunker
from pytest_chunkeval.chunkers.semantic import (
    KamradtModifiedChunker,
    KamradtSemanticChunker,
    join_units,
    window_texts,
)
from pytest_chunkeval.chunkers.semantic_specs import register_semantic
from pytest_chunkeval.chunkers.sentence import sentence_spans
from pytest_chunkeval.hashing import HashingEmbedder
from pytest_chunkeval.registry import Registry, UnknownSpec
from pytest_chunkeval.tokenizers import get_tokenizer


class CountingEmbedder:
    """HashingEmbedder that records how many texts it embeds."""

    def __init__(self, dim: int = 64) -> None:
        self.inner = HashingEmbedder(dim)
        self.identity = f"counting-hashing:{dim}"
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return self.inner.embed(texts)


class TopicEmbedder:
    """Counts topic words: the distance between two windows is known exactly."""

    identity = "topic-test:2"
    words = (("cat", "cats", "kitten"), ("stock", "stocks", "market"))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 2), dtype=np.float32)
        for row, text in enumerate(texts):
            tokens = re.findall(r"\w+", text.lower())
            for col, vocab in enumerate(self.words):
                out[row, col] = sum(t in vocab for t in tokens)
        return out


class WordTokenizer:
    """One token per run of non-space characters."""

    name = "words"

    def token_bounds(self, text: str) -> np.ndarray:
        spans = [m.span() for m in re.finditer(r"\S+", text)]
        return np.array(spans, dtype=np.int64).reshape(-1, 2)

    def count(self, text: str) -> int:
        return len(text.split())

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) for t in texts]


@pytest.fixture
def cache(tmp_path):
    return EmbeddingCache(tmp_path / "cache")


def random_sentences(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    topics = [
        ["cat", "kitten", "purr", "fur", "whisker", "nap", "mouse", "claw"],
        ["stock", "market", "bond", "yield", "trader", "price", "share", "fund"],
        ["rain", "cloud", "storm", "river", "flood", "wind", "snow", "thunder"],
    ]
    out = []
    for i in range(n):
        words = rng.choice(topics[(i * 3) // n], size=int(rng.integers(4, 9)))
        end = rng.choice([".", "?", "!"])
        out.append(" ".join(words).capitalize() + str(end))
    return out


def notebook_kamradt(
    text: str, embedder: object, percentile: float = 95.0
) -> list[str]:
    """Kamradt's notebook: regex sentences, windows re-joined with spaces."""
    sentences = re.split(r"(?<=[.?!])\s+", text)
    windows = [
        " ".join(sentences[max(0, i - 1) : i + 2]) for i in range(len(sentences))
    ]
    vectors = np.asarray(embedder.embed(windows), dtype=np.float64)  # type: ignore[attr-defined]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    distances = [
        1 - float(vectors[i] @ vectors[i + 1]) for i in range(len(vectors) - 1)
    ]
    threshold = np.percentile(distances, percentile)
    chunks, start = [], 0
    for i, distance in enumerate(distances):
        if distance > threshold:
            chunks.append(" ".join(sentences[start : i + 1]))
            start = i + 1
    chunks.append(" ".join(sentences[start:]))
    return chunks


# ------------------------------------------------------------------- Kamradt


def test_kamradt_cuts_where_the_topic_changes(cache):
    sentences = [f"The cat number {i} sleeps." for i in range(10)]
    sentences += [f"The stock number {i} rises." for i in range(10)]
    text = " ".join(sentences)
    chunker = KamradtSemanticChunker(embedder=TopicEmbedder(), cache=cache)
    spans = chunker.chunk_spans(text)
    # Windows 8 -> 9 -> 10 -> 11 drift (3,0) (2,1) (1,2) (0,3): the middle step is
    # the only distance above the 95th percentile.
    assert [text[s:e] for s, e in spans.tolist()] == [
        " ".join(sentences[:10]),
        " ".join(sentences[10:]),
    ]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_kamradt_matches_the_notebook(cache, seed):
    text = " ".join(random_sentences(seed, 40))
    embedder = HashingEmbedder(32)
    chunker = KamradtSemanticChunker(embedder=embedder, cache=cache)
    spans = chunker.chunk_spans(text)
    assert [text[s:e] for s, e in spans.tolist()] == notebook_kamradt(text, embedder)


def test_kamradt_spans_keep_the_document_whitespace(cache):
    sentences = random_sentences(9, 30)
    gaps = ["  ", "\n", " \t", "\n\n", "   \n  "]
    text = "\n  " + "".join(s + gaps[i % len(gaps)] for i, s in enumerate(sentences))
    chunker = KamradtSemanticChunker(90, embedder=HashingEmbedder(32), cache=cache)
    spans = chunker.chunk_spans(text)
    validate_chunks(text, spans, chunker=chunker.name, doc_id="gaps")
    assert spans.shape[0] > 1
    units = sentence_spans(text)
    assert spans[0, 0] == units[0, 0]
    assert spans[-1, 1] == units[-1, 1]
    # Consecutive chunks: only whitespace between them, none inside the chunks lost.
    for end, start in zip(spans[:-1, 1].tolist(), spans[1:, 0].tolist(), strict=True):
        assert end <= start
        assert not text[end:start].strip()
    # The windows are slices of the document, gaps included.
    windows = window_texts(text, units, 1)
    assert windows[1] == text[units[0, 0] : units[2, 1]]


def test_repeated_sentences_keep_their_positions(cache):
    block = " ".join(random_sentences(5, 12))
    text = f"{block} {block} {block}"
    chunker = KamradtSemanticChunker(80, embedder=HashingEmbedder(32), cache=cache)
    spans = chunker.chunk_spans(text)
    assert np.all(spans[1:, 0] > spans[:-1, 1])
    assert spans[-1, 1] == len(text)
    assert "".join(text[s:e] for s, e in spans.tolist()).replace(" ", "") == (
        text.replace(" ", "")
    )


def test_kamradt_short_documents_are_not_embedded(cache):
    embedder = CountingEmbedder()
    chunker = KamradtSemanticChunker(embedder=embedder, cache=cache)
    assert chunker.chunk_spans("").shape == (0, 2)
    assert chunker.chunk_spans("  Just one sentence.  ").tolist() == [[2, 20]]
    assert embedder.calls == []


def test_kamradt_embeds_through_the_cache(cache):
    text = " ".join(random_sentences(3, 25))
    embedder = CountingEmbedder()
    first = KamradtSemanticChunker(embedder=embedder, cache=cache).chunk_spans(text)
    assert sum(embedder.calls) == 25  # one window per sentence
    again = KamradtSemanticChunker(embedder=embedder, cache=cache).chunk_spans(text)
    assert np.array_equal(first, again)
    assert sum(embedder.calls) == 25


def test_kamradt_names_and_arguments(cache):
    assert KamradtSemanticChunker(cache=cache).name == "kamradt"
    assert KamradtSemanticChunker(90, cache=cache).name == "kamradt:90"
    assert (
        KamradtSemanticChunker(buffer=2, embedder=TopicEmbedder(), cache=cache).name
        == "kamradt+buffer2@topic-test:2"
    )
    with pytest.raises(ValueError, match="percentile"):
        KamradtSemanticChunker(101, cache=cache)
    with pytest.raises(ValueError, match="buffer"):
        KamradtSemanticChunker(buffer=-1, cache=cache)


# ------------------------------------------------------------------- modified


def excerpt(name: str, chars: int) -> str:
    corpus, _ = load_benchmark("general")
    return corpus[name].text[:chars]


@pytest.mark.parametrize("max_tokens", [60, 150])
def test_modified_never_exceeds_the_size_and_uses_the_fewest_cuts(cache, max_tokens):
    text = excerpt("state_of_the_union.md", 12_000)
    chunker = KamradtModifiedChunker(
        max_tokens, embedder=HashingEmbedder(64), cache=cache
    )
    spans = chunker.chunk_spans(text)
    validate_chunks(text, spans, chunker=chunker.name, doc_id="sotu")
    tokenizer = get_tokenizer()
    sizes = tokenizer.count_batch([text[s:e] for s, e in spans.tolist()])
    assert max(sizes) <= max_tokens
    # Cuts are exactly the distances above one threshold ...
    units = chunker.units(text)
    distances = chunker.distances(text, units)
    ends = units[:, 1].tolist()
    cut_after = [ends.index(e) for e in spans[:-1, 1].tolist()]
    cut = np.zeros(distances.shape[0], dtype=bool)
    cut[cut_after] = True
    assert distances[cut].min() > distances[~cut].max()
    # ... and the next larger threshold (the lowest cut level uncut) is too long.
    fewer = join_units(units, np.flatnonzero(distances > distances[cut].min()))
    assert max(tokenizer.count_batch([text[s:e] for s, e in fewer.tolist()])) > (
        max_tokens
    )


def test_modified_splits_a_sentence_longer_than_the_size(cache):
    long_sentence = " ".join(f"word{i} and more" for i in range(120))  # no period
    text = f"A short start. {long_sentence}. Then a short end."
    chunker = KamradtModifiedChunker(50, embedder=HashingEmbedder(32), cache=cache)
    units = chunker.units(text)
    start = text.index(long_sentence)
    sentence_end = start + len(long_sentence) + 1
    pieces = RecursiveTokenChunker(50, 0).chunk_spans(text[start:sentence_end]) + start
    inside = units[(units[:, 0] >= start) & (units[:, 1] <= sentence_end)]
    assert np.array_equal(inside, pieces)
    assert units.shape[0] == pieces.shape[0] + 2
    spans = chunker.chunk_spans(text)
    sizes = get_tokenizer().count_batch([text[s:e] for s, e in spans.tolist()])
    assert max(sizes) <= 50
    assert spans[0, 0] == 0
    assert spans[-1, 1] == len(text)


def test_modified_keeps_a_short_document_whole_without_embedding(cache):
    embedder = CountingEmbedder()
    chunker = KamradtModifiedChunker(300, embedder=embedder, cache=cache)
    text = " ".join(random_sentences(2, 10))
    assert chunker.chunk_spans(text).tolist() == [[0, len(text)]]
    assert embedder.calls == []


def test_modified_names_and_arguments(cache):
    assert KamradtModifiedChunker(300, cache=cache).name == "kamradt-modified:300"
    named = KamradtModifiedChunker(
        300, embedder=HashingEmbedder(16), cache=cache, encoding=WordTokenizer()
    )
    assert named.name == "kamradt-modified:300+words@hashing:16@1"
    with pytest.raises(ValueError, match="max_tokens"):
        KamradtModifiedChunker(0, cache=cache)


# ------------------------------------------------------------------- specs


@pytest.fixture
def registry() -> Registry[Chunker]:
    reg: Registry[Chunker] = Registry("chunker")
    register_semantic(reg)
    return reg


def test_spec_strings(registry, monkeypatch, tmp_path):
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(tmp_path / "default-cache"))
    kamradt = registry.create("kamradt")
    assert isinstance(kamradt, KamradtSemanticChunker)
    assert kamradt.name == "kamradt"
    assert kamradt.cache.directory == tmp_path / "default-cache"
    assert registry.create("kamradt:90").name == "kamradt:90"
    modified = registry.create("kamradt-modified:300")
    assert isinstance(modified, KamradtModifiedChunker)
    assert modified.max_tokens == 300
    # An embedder after "@", options and colons included; the default adds nothing.
    assert (
        registry.create(
            "kamradt-modified:300@sentence-transformers:all-MiniLM-L6-v2"
        ).name
        == "kamradt-modified:300"
    )
    openai_named = registry.create("kamradt:95@openai:text-embedding-3-small")
    assert openai_named.name == "kamradt@openai:text-embedding-3-small:d1536"
    cluster = registry.create(
        "cluster:200@openai:text-embedding-3-large?dimensions=256"
    )
    assert isinstance(cluster, ClusterSemanticChunker)
    assert cluster.name == "cluster:200@openai:text-embedding-3-large:d256"
    assert set(registry.forms()) >= {
        "cluster:MAX_TOKENS[:MIN_TOKENS][@EMBEDDER]",
        "kamradt[:PERCENTILE[@EMBEDDER]]",
        "kamradt-modified:MAX_TOKENS[@EMBEDDER]",
    }


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("kamradt-modified", "MAX_TOKENS is required"),
        ("kamradt-modified:big", "MAX_TOKENS must be an integer"),
        ("kamradt:high", "PERCENTILE must be a number"),
        ("kamradt:120", "percentile must be in"),
        ("kamradt:95@nope:x", "unknown embedder"),
    ],
)
def test_bad_spec_strings(registry, spec, message):
    with pytest.raises(UnknownSpec, match=message):
        registry.create(spec)


# ------------------------------------------------------------------- real model


@pytest.mark.slow
def test_real_minilm_separates_topics(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    pytest.importorskip("sentence_transformers")
    cats = [
        "Cats are small domesticated carnivores kept as pets.",
        "A kitten learns to hunt by watching its mother.",
        "Many cats sleep for more than twelve hours a day.",
        "The domestic cat purrs when it is content.",
    ]
    markets = [
        "The central bank raised interest rates by a quarter point.",
        "Bond yields climbed as investors sold government debt.",
        "Stock markets fell after the inflation report.",
        "Traders expect another rate increase next quarter.",
    ]
    text = " ".join(cats + markets)
    cache = EmbeddingCache(tmp_path / "cache")
    chunker = KamradtSemanticChunker(embedder=None, cache=cache)
    spans = chunker.chunk_spans(text)
    assert text.index(markets[0]) in spans[:, 0].tolist()
    # Pieces of <= 15 tokens are about a sentence each; groups of up to 4 pieces.
    cluster = ClusterSemanticChunker(60, 15, cache=cache)
    chunks = [text[s:e] for s, e in cluster.chunk_spans(text).tolist()]
    assert len(chunks) >= 2
    for chunk in chunks:
        about_cats = any(w in chunk for w in ("Cats", "kitten", "cats", "cat "))
        about_money = any(w in chunk for w in ("bank", "Bond", "Stock", "Traders"))
        assert not (about_cats and about_money), chunk
