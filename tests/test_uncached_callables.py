"""A user's function (embedder, chunker, store, retriever) is cached only when
it declares a ``cache_version`` (docs/performance.md, "What a cache keys on"):
without one its output may change with nothing in its name saying so, so it is
computed every time, no cache read or written for it, and a warm run (a cache
filled by an earlier run) gives what a cold run (an empty cache) gives."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
from support.tiny_corpus import DOCS

from pytest_chunkeval.chunkers import as_chunker
from pytest_chunkeval.chunkers.semantic import KamradtSemanticChunker
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import Excerpt, Query, QuerySet
from pytest_chunkeval.embedders.base import embedder_cache_identity
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
    assert list(cache.info()) == [embedder_cache_identity(HashingEmbedder())]


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


EXTRACT = """
def extract(text):
    found = []
    for sentence in text.split("."):
        w = [x for x in sentence.split() if any(c.isalnum() for c in x)]
        if w:
            found.append((w[min({word}, len(w) - 1)], "says", w[-1], sentence.strip()))
    return found
"""


def user_extractor(word: int, **attributes: Any) -> Any:
    """``user_facts.extract`` as a module's source defines it: ``word`` edits
    its body (which word is the subject); the name stays."""
    namespace: dict[str, Any] = {"__name__": "user_facts"}
    exec(EXTRACT.format(word=word), namespace)  # a user's edit of the body
    extract = namespace["extract"]
    for name, value in attributes.items():
        setattr(extract, name, value)
    return extract


def related(
    cache_dir: Path, extractor: Any, chunker: Any = "recursive:12:0"
) -> EvalResult:
    forget_open()
    corpus, queries = data()
    return evaluate_relationships(
        chunker,
        corpus,
        queries,
        extractor=extractor,
        embedder=HashingEmbedder(),
        store="exact",
        k=1,
        cache=EmbeddingCache(cache_dir),
    )


def test_an_extractor_function_edited_without_cache_version_is_extracted_anew(
    tmp_path: Path,
) -> None:
    before = related(tmp_path / "warm", user_extractor(0))
    edited = user_extractor(1)  # same module and name, another body
    warm = related(tmp_path / "warm", edited)
    cold = related(tmp_path / "cold", edited)
    assert numbers(warm) == numbers(cold)
    assert numbers(cold) != numbers(before)  # the edit shows
    assert warm.graph == cold.graph
    assert cold.graph["extraction"]["cached"] == 0
    assert not any(f.startswith("answers") for f in files(tmp_path / "cold"))
    assert warm.config["extractor_identity"] == "callable:user_facts.extract"


def test_an_extractor_function_is_asked_each_text_once_per_evaluation(
    tmp_path: Path,
) -> None:
    from pytest_chunkeval.relationships.extractors import CallableExtractor

    asked: list[str] = []
    extract = user_extractor(0)

    def counting(text: str) -> Any:
        asked.append(text)
        return extract(text)

    def sentences(text: str) -> list[tuple[int, int]]:  # the excerpts are chunks
        cuts = {0, len(text)}
        for _, _, sentence in ASKED.values():
            if (at := text.find(sentence)) >= 0:
                cuts |= {at, at + len(sentence)}
        ordered = sorted(cuts)
        return [(a, b) for a, b in itertools.pairwise(ordered) if text[a:b].strip()]

    wrapped = CallableExtractor(counting, name="counting")
    assert wrapped.cache_identity is None
    first = related(tmp_path / "cache", wrapped, as_chunker(sentences))
    assert len(asked) == len(set(asked))
    reused = first.graph["extraction"]["reused"]
    assert reused > 0
    assert first.graph["extraction"]["texts"] == (
        first.graph["extraction"]["extracted"] + reused
    )
    count = len(asked)
    related(tmp_path / "cache", wrapped, as_chunker(sentences))
    assert len(asked) == 2 * count  # another evaluation: asked again


def test_an_extractor_function_with_cache_version_is_cached_under_it(
    tmp_path: Path,
) -> None:
    from pytest_chunkeval.relationships.extractors import CallableExtractor

    first = related(tmp_path / "cache", user_extractor(0, cache_version="1"))
    assert first.config["extractor_identity"] == "callable:user_facts.extract@1"
    again = related(tmp_path / "cache", user_extractor(1, cache_version="1"))
    assert again.graph["extraction"]["extracted"] == 0  # read from the cache
    assert numbers(again) == numbers(first)  # its promise, kept by the cache
    raised = related(tmp_path / "cache", user_extractor(1, cache_version="2"))
    assert numbers(raised) == numbers(
        related(tmp_path / "cold", user_extractor(1, cache_version="2"))
    )
    given = CallableExtractor(user_extractor(1), version=3)
    assert given.identity == given.cache_identity == "callable:user_facts.extract@3"
