"""Kamradt's semantic chunker and KamradtModifiedChunker (max and mean targets)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest

from pytest_chunkeval.chunkers import Chunker, RecursiveTokenChunker, validate_chunks
from pytest_chunkeval.chunkers.cluster import ClusterSemanticChunker
from pytest_chunkeval.chunkers.semantic import (
    DEFAULT_PIECE_TOKENS,
    KamradtModifiedChunker,
    KamradtSemanticChunker,
    join_units,
    window_texts,
)
from pytest_chunkeval.chunkers.semantic_specs import register_semantic
from pytest_chunkeval.chunkers.sentence import sentence_spans
from pytest_chunkeval.config.registry import Registry, UnknownSpec
from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.tokenizers.base import get_tokenizer


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
        == "kamradt?buffer=2@topic-test:2"
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
    assert named.name == "kamradt-modified:300?tokenizer=words@hashing:16@1"
    with pytest.raises(ValueError, match="max_tokens"):
        KamradtModifiedChunker(0, cache=cache)


# ------------------------------------------------------------- modified: mean


def reference_bisection_cuts(distances: np.ndarray, n_cuts: int) -> np.ndarray:
    """The report code's threshold search: bisection on [0, 1] down to 1e-6."""
    lower, upper = 0.0, 1.0
    threshold = 0.5
    while upper - lower > 1e-6:
        threshold = (upper + lower) / 2.0
        if np.sum(distances > threshold) > n_cuts:
            lower = threshold
        else:
            upper = threshold
    return np.flatnonzero(distances > threshold)


def chunk_tokens(text: str, spans: np.ndarray) -> list[int]:
    return get_tokenizer().count_batch([text[s:e] for s, e in spans.tolist()])


@pytest.mark.parametrize("size", [100, 300])
def test_modified_mean_targets_the_average_size(cache, size):
    text = excerpt("state_of_the_union.md", 30_000)
    chunker = KamradtModifiedChunker(
        size, target="mean", embedder=HashingEmbedder(64), cache=cache
    )
    spans = chunker.chunk_spans(text)
    validate_chunks(text, spans, chunker=chunker.name, doc_id="sotu")
    units = chunker.units(text)
    assert np.array_equal(
        units, RecursiveTokenChunker(DEFAULT_PIECE_TOKENS, 0).chunk_spans(text)
    )
    total = sum(chunk_tokens(text, units))
    n_cuts = total // size
    assert n_cuts >= 15  # a real multi-chunk document, not a corner case
    assert n_cuts - 1 <= spans.shape[0] - 1 <= n_cuts  # ties may only merge chunks
    sizes = chunk_tokens(text, spans)
    assert 0.8 * size <= np.mean(sizes) <= 1.2 * size
    # Cut at the largest distances, as the reference's bisection does.
    distances = chunker.distances(text, units)
    cut_after = np.searchsorted(units[:, 1], spans[:-1, 1])
    assert np.array_equal(units[cut_after, 1], spans[:-1, 1])
    cut = np.zeros(distances.shape[0], dtype=bool)
    cut[cut_after] = True
    assert distances[cut].min() > distances[~cut].max()
    # The reference's bisection stops on either side of the (n_cuts + 1)-th largest
    # distance, so it makes n_cuts or n_cuts + 1 cuts: ours are its first n_cuts.
    assert distances.max() <= 1.0  # inside the reference's search interval
    reference = reference_bisection_cuts(distances, n_cuts)
    assert set(cut_after.tolist()) <= set(reference.tolist())
    assert reference.shape[0] - cut_after.shape[0] in (0, 1)


def test_modified_mean_spans_cover_the_document_exactly(cache):
    text = excerpt("chatlogs.md", 8_000)
    chunker = KamradtModifiedChunker(
        120, target="mean", embedder=HashingEmbedder(32), cache=cache
    )
    spans = chunker.chunk_spans(text)
    assert spans.dtype == np.int64
    assert spans.shape[0] > 2
    # Only whitespace lies outside the chunks, and chunks follow one another.
    assert not text[: spans[0, 0]].strip()
    assert not text[spans[-1, 1] :].strip()
    for end, start in zip(spans[:-1, 1].tolist(), spans[1:, 0].tolist(), strict=True):
        assert end <= start
        assert not text[end:start].strip()
    units = chunker.units(text)
    assert spans[0, 0] == units[0, 0]
    assert spans[-1, 1] == units[-1, 1]


def test_modified_mean_windows_span_three_pieces_each_side(cache):
    text = excerpt("finance.md", 4_000)
    chunker = KamradtModifiedChunker(
        200, target="mean", embedder=HashingEmbedder(32), cache=cache
    )
    assert chunker.buffer == 3
    units = chunker.units(text)
    embedder = CountingEmbedder(32)
    probe = KamradtModifiedChunker(200, target="mean", embedder=embedder, cache=cache)
    probe.chunk_spans(text)
    assert sum(embedder.calls) == units.shape[0]  # one window per piece
    windows = window_texts(text, units, 3)
    assert windows[5] == text[units[2, 0] : units[8, 1]]


def test_modified_mean_keeps_a_short_document_whole_without_embedding(cache):
    embedder = CountingEmbedder()
    chunker = KamradtModifiedChunker(300, target="mean", embedder=embedder, cache=cache)
    text = " ".join(random_sentences(2, 10))
    assert chunker.chunk_spans(text).tolist() == [[0, len(text)]]
    assert embedder.calls == []
    assert chunker.chunk_spans("").shape == (0, 2)


def test_modified_mean_and_max_differ_on_the_same_text(cache):
    text = excerpt("state_of_the_union.md", 12_000)
    embedder = HashingEmbedder(64)
    bounded = KamradtModifiedChunker(150, embedder=embedder, cache=cache)
    mean = KamradtModifiedChunker(150, target="mean", embedder=embedder, cache=cache)
    assert bounded.target == "max"
    assert max(chunk_tokens(text, bounded.chunk_spans(text))) <= 150
    mean_spans = mean.chunk_spans(text)
    # The average mode lets some chunks run over the size: it only targets the mean.
    assert max(chunk_tokens(text, mean_spans)) > 150
    assert mean_spans.shape[0] < bounded.chunk_spans(text).shape[0]


def test_modified_mean_names_and_arguments(cache):
    assert (
        KamradtModifiedChunker(300, target="mean", cache=cache).name
        == "kamradt-modified:300:mean"
    )
    assert KamradtModifiedChunker(300, target="max", cache=cache).name == (
        "kamradt-modified:300"
    )
    named = KamradtModifiedChunker(
        300,
        target="mean",
        embedder=HashingEmbedder(16),
        cache=cache,
        encoding=WordTokenizer(),
    )
    assert named.name == "kamradt-modified:300:mean?tokenizer=words@hashing:16@1"
    # Each mode's own default buffer adds nothing; the other's is marked.
    assert KamradtModifiedChunker(300, buffer=3, cache=cache).name == (
        "kamradt-modified:300?buffer=3"
    )
    assert KamradtModifiedChunker(300, target="mean", buffer=1, cache=cache).name == (
        "kamradt-modified:300:mean?buffer=1"
    )
    pieces = KamradtModifiedChunker(300, target="mean", piece_tokens=25, cache=cache)
    assert pieces.name == "kamradt-modified:300:mean?pieces=25"
    assert KamradtModifiedChunker(300, cache=cache).buffer == 1
    with pytest.raises(ValueError, match="target must be 'max' or 'mean'"):
        KamradtModifiedChunker(300, target="avg", cache=cache)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="piece_tokens"):
        KamradtModifiedChunker(300, target="mean", piece_tokens=0, cache=cache)


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
        "kamradt[:PERCENTILE][@EMBEDDER]",
        "kamradt-modified:SIZE[:max|mean][@EMBEDDER]",
    }


def test_kamradt_modified_target_spec_strings(registry, monkeypatch, tmp_path):
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(tmp_path / "default-cache"))
    mean = registry.create("kamradt-modified:300:mean")
    assert isinstance(mean, KamradtModifiedChunker)
    assert (mean.target, mean.max_tokens, mean.buffer) == ("mean", 300, 3)
    assert mean.name == "kamradt-modified:300:mean"
    assert registry.create(mean.name).name == mean.name  # the name is its spec
    bounded = registry.create("kamradt-modified:300:max")
    assert bounded.target == "max"
    assert bounded.name == "kamradt-modified:300"
    assert registry.create("kamradt-modified: 300 : mean ").name == mean.name
    hashed = registry.create("kamradt-modified:300:mean@hashing:16")
    assert hashed.name == "kamradt-modified:300:mean@hashing:16@1"
    default = registry.create(
        "kamradt-modified:300:mean@sentence-transformers:all-MiniLM-L6-v2"
    )
    assert default.name == "kamradt-modified:300:mean"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("kamradt-modified", "SIZE is required"),
        ("kamradt-modified:big", "SIZE must be an integer"),
        ("kamradt-modified:big:mean", "SIZE must be an integer"),
        ("kamradt-modified::mean", "empty argument"),
        ("kamradt-modified:300:avg", "TARGET must be 'max' or 'mean', got 'avg'"),
        ("kamradt-modified:300:mean:3", "3 argument.s. given, at most 2"),
        ("kamradt-modified:0:mean", "max_tokens must be >= 1"),
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
