"""A user's function (embedder, chunker, store, retriever) is cached only when
it declares a ``cache_version`` (docs/performance.md, "What a cache keys on"):
without one its output may change with nothing in its name saying so, so it is
computed every time, no cache read or written for it, and a warm run (a cache
filled by an earlier run) gives what a cold run (an empty cache) gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from support.tiny_corpus import DOCS

from pytest_chunkeval.chunkers import as_chunker
from pytest_chunkeval.chunkers.semantic import KamradtSemanticChunker
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import Excerpt, Query, QuerySet
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.cache_dir import forget_open
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.relationships.evaluate import evaluate_relationships
from pytest_chunkeval.stores import ExactStore

ASKED = {
    "q1": ("How long do parrots live?", "animals.md", "Some parrots live eighty"),
    "q2": ("What moons does Mars have?", "space.md", "Mars has two small moons"),
    "q3": ("Where do dogs come from?", "animals.md", "Dogs were domesticated"),
    "q4": ("Which is the largest planet?", "space.md", "Jupiter is the largest"),
}


def data() -> tuple[Corpus, QuerySet]:
    corpus = Corpus.from_mapping(DOCS, name="tiny")
    queries = []
    for qid, (question, doc, sentence) in ASKED.items():
        start = corpus[doc].text.index(sentence)
        excerpt = Excerpt(sentence, doc, start, start + len(sentence))
        queries.append(Query(qid, question, (excerpt,), doc))
    return corpus, QuerySet(queries)


class Switch:
    """A user's function whose output changes with ``on`` while its name does
    not (a changed global, a closure's variable, an edited body)."""

    def __init__(self) -> None:
        self.on = False
        self.calls = 0


def switched_embedder(switch: Switch) -> Any:
    """Hashing vectors; switched on, every vector is the first text's (all
    chunks tie, recall falls)."""
    hashing = HashingEmbedder()

    def embed(texts: list[str]) -> Any:
        switch.calls += 1
        vectors = hashing.embed(texts)
        return np.repeat(vectors[:1] + 1.0, len(texts), 0) if switch.on else vectors

    return embed


def run(cache_dir: Path, chunker: Any = "recursive:12:0", **kw: Any) -> EvalResult:
    """A fresh process's evaluation (nothing remembered but the cache directory)."""
    forget_open()
    corpus, queries = data()
    settings: dict[str, Any] = {"store": "exact", "k": 1, "embedder": HashingEmbedder()}
    settings.update(kw)
    return evaluate(
        chunker, corpus, queries, cache=EmbeddingCache(cache_dir), **settings
    )


def numbers(result: EvalResult) -> dict[str, Any]:
    """What a result says per question, no timings."""
    data = result.to_json()
    return {"metrics": data["metrics"], "queries": data["queries"]}


def files(directory: Path) -> list[str]:
    """Every file in a cache directory but its markers."""
    if not directory.exists():
        return []
    skip = {".gitignore", "CACHEDIR.TAG"}
    return sorted(
        p.relative_to(directory).as_posix()
        for p in directory.rglob("*")
        if p.is_file() and p.name not in skip and not p.name.endswith(".lock")
    )


def test_a_function_embedder_without_cache_version_is_embedded_every_time(
    tmp_path: Path,
) -> None:
    switch = Switch()
    embed = switched_embedder(switch)
    before = run(tmp_path / "warm", embedder=embed)
    switch.on = True
    warm = run(tmp_path / "warm", embedder=embed)
    cold = run(tmp_path / "cold", embedder=embed)
    assert numbers(warm) == numbers(cold)
    assert numbers(cold) != numbers(before)  # the change shows
    # nothing of it was stored: no vectors, no result (a search is keyed on
    # the vectors themselves)
    assert not [f for f in files(tmp_path / "cold") if "callable" in f]
    assert not any(f.startswith("results") for f in files(tmp_path / "cold"))


def test_a_function_embedder_with_cache_version_is_cached_under_it(
    tmp_path: Path,
) -> None:
    switch = Switch()
    embed = switched_embedder(switch)
    embed.cache_version = "1"  # type: ignore[attr-defined]
    run(tmp_path / "cache", embedder=embed)
    calls = switch.calls
    run(tmp_path / "cache", embedder=embed)
    assert switch.calls == calls  # read from the cache
    switch.on = True
    embed.cache_version = "2"  # type: ignore[attr-defined]
    raised = run(tmp_path / "cache", embedder=embed)
    assert switch.calls > calls
    assert numbers(raised) == numbers(run(tmp_path / "cold", embedder=embed))


def test_a_given_identity_is_trusted_as_a_cache_version_is(tmp_path: Path) -> None:
    from pytest_chunkeval.embedders.registry import get_embedder

    switch = Switch()
    embedder = get_embedder(switched_embedder(switch), identity="mine-1")
    run(tmp_path / "cache", embedder=embedder)
    calls = switch.calls
    run(tmp_path / "cache", embedder=embedder)
    assert switch.calls == calls


def test_a_semantic_chunker_on_a_function_embedder_is_chunked_every_time(
    tmp_path: Path,
) -> None:
    switch = Switch()
    embed = switched_embedder(switch)

    def chunker() -> KamradtSemanticChunker:
        return KamradtSemanticChunker(embedder=embed, percentile=50.0)

    assert chunker().cache_identity is None
    run(tmp_path / "warm", chunker())
    switch.on = True
    warm = run(tmp_path / "warm", chunker())
    cold = run(tmp_path / "cold", chunker())
    assert numbers(warm) == numbers(cold)
    assert not any(f.startswith("chunkings") for f in files(tmp_path / "cold"))


def test_a_function_chunker_without_cache_version_is_chunked_every_time(
    tmp_path: Path,
) -> None:
    switch = Switch()

    def halves(text: str) -> list[str]:
        switch.calls += 1
        if switch.on:
            return [text]
        middle = len(text) // 2
        return [text[:middle], text[middle:]]

    run(tmp_path / "warm", as_chunker(halves))
    switch.on = True
    calls = switch.calls
    warm = run(tmp_path / "warm", as_chunker(halves))
    assert switch.calls > calls
    assert numbers(warm) == numbers(run(tmp_path / "cold", as_chunker(halves)))


class WorstFirst:
    """A user's store: exact search, switched on the worst rows first."""

    name = "worst-first"

    def __init__(self, switch: Switch) -> None:
        self.switch = switch
        self.exact = ExactStore()

    def index(self, key: str, vectors: Any) -> Any:
        switch, inner = self.switch, self.exact.index(key, vectors)

        class Index:
            def search(self, queries: Any, k: int) -> Any:
                switch.calls += 1
                if not switch.on:
                    return inner.search(queries, k)
                return np.argsort(queries @ vectors.T, axis=1)[:, :k]

        return Index()


def test_a_users_store_without_cache_version_is_searched_every_time(
    tmp_path: Path,
) -> None:
    switch = Switch()
    run(tmp_path / "warm", store=WorstFirst(switch))
    switch.on = True
    warm = run(tmp_path / "warm", store=WorstFirst(switch))
    assert numbers(warm) == numbers(run(tmp_path / "cold", store=WorstFirst(switch)))
    assert warm.mean("recall") < 0.5


def test_a_retriever_function_is_asked_every_time(tmp_path: Path) -> None:
    switch = Switch()
    corpus, queries = data()

    def retriever(question: str) -> list[str]:
        switch.calls += 1
        if switch.on:
            return ["Cats sleep most of the day."]
        return [sentence for q, _, sentence in ASKED.values() if q == question]

    def scored() -> EvalResult:
        forget_open()
        return score(retriever, corpus, queries, cache=tmp_path / "cache")

    assert scored().mean("recall") == 1.0
    switch.on = True
    assert scored().mean("recall") == 0.0


def test_relationships_on_a_function_embedder_are_embedded_every_time(
    tmp_path: Path,
) -> None:
    switch = Switch()
    embed = switched_embedder(switch)
    corpus, queries = data()

    def extractor(text: str) -> list[tuple[str, str, str, str]]:
        sentences = [s.strip() for s in text.split(".") if s.strip()]
        return [(s.split()[0], "says", s.split()[-1], s) for s in sentences]

    def related(cache_dir: Path) -> Any:
        forget_open()
        return evaluate_relationships(
            "recursive:12:0",
            corpus,
            queries,
            extractor=extractor,
            embedder=embed,
            store="exact",
            k=1,
            cache=EmbeddingCache(cache_dir),
        )

    related(tmp_path / "warm")
    switch.on = True
    warm, cold = related(tmp_path / "warm"), related(tmp_path / "cold")
    assert numbers(warm) == numbers(cold)


def test_an_uncached_embedder_gives_what_the_cache_would(tmp_path: Path) -> None:
    from pytest_chunkeval.embedders.registry import get_embedder

    cache = EmbeddingCache(tmp_path)
    function = get_embedder(lambda texts: HashingEmbedder().embed(texts))
    texts = ["a b", "c d", "a b"]
    assert np.array_equal(
        cache.embed(function, texts), cache.embed(HashingEmbedder(), texts)
    )
    assert cache.embed(function, []).shape[0] == 0
    assert cache.stats.misses == 4  # the function's 2 texts, the hashing ones
    assert list(cache.info()) == [HashingEmbedder().identity]


class FirstWords:
    """A user's text store: questions ranked by the chunks sharing their first
    word; switched on, the reverse order."""

    name = "first-words"
    identity = "first-words"

    def __init__(self, switch: Switch) -> None:
        self.switch = switch

    def index_texts(self, texts: Any) -> Any:
        switch, chunks = self.switch, list(texts)

        class Index:
            def search_texts(self, queries: Any, k: int) -> Any:
                switch.calls += 1
                rows = []
                for query in queries:
                    words = set(query.lower().split())
                    shared = [len(words & set(c.lower().split())) for c in chunks]
                    order = np.argsort(shared, kind="stable")
                    rows.append((order if switch.on else order[::-1])[:k])
                return np.asarray(rows, dtype=np.int64)

        return Index()


def test_a_users_text_store_without_cache_version_is_searched_every_time(
    tmp_path: Path,
) -> None:
    switch = Switch()
    before = run(tmp_path / "warm", store=FirstWords(switch))
    switch.on = True
    warm = run(tmp_path / "warm", store=FirstWords(switch))
    cold = run(tmp_path / "cold", store=FirstWords(switch))
    assert numbers(warm) == numbers(cold)
    assert numbers(cold) != numbers(before)
    versioned = FirstWords(switch)
    versioned.cache_version = "1"  # type: ignore[attr-defined]
    run(tmp_path / "versioned", store=versioned)
    calls = switch.calls
    run(tmp_path / "versioned", store=versioned)
    assert switch.calls == calls  # cached under its version
