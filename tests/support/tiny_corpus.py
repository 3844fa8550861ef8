"""Two tiny documents (animals, space) and three questions on them, for the
engine's tests with fast components (the hashing embedder, the exact store)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.cache_dir import forget_open
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult

DOCS = {
    "animals.md": (
        "Cats sleep most of the day. They hunt at dawn and dusk.\n\n"
        "Dogs were domesticated from wolves. Dogs bark at strangers.\n\n"
        "Parrots can imitate human speech. Some parrots live eighty years."
    ),
    "space.md": (
        "The Moon orbits the Earth every 27 days.\n\n"
        "Mars has two small moons, Phobos and Deimos.\n\n"
        "Jupiter is the largest planet of the solar system."
    ),
}


def make_queries(corpus: Corpus) -> QuerySet:
    def q(qid: str, question: str, doc: str, *sentences: str) -> Query:
        text = corpus[doc].text
        excerpts = []
        for s in sentences:
            start = text.index(s)
            excerpts.append(Excerpt(s, doc, start, start + len(s)))
        return Query(qid, question, tuple(excerpts), doc)

    return QuerySet(
        [
            q(
                "q1",
                "How long do parrots live?",
                "animals.md",
                "Some parrots live eighty years.",
            ),
            q(
                "q2",
                "What moons does Mars have?",
                "space.md",
                "Mars has two small moons, Phobos and Deimos.",
            ),
            q(
                "q3",
                "Where do dogs come from and do they bark?",
                "animals.md",
                "Dogs were domesticated from wolves.",
                "Dogs bark at strangers.",
            ),
        ]
    )


def docs_with(edit: Callable[[str], str] | None = None) -> dict[str, str]:
    docs = dict(DOCS)
    if edit is not None:
        docs["space.md"] = edit(docs["space.md"])
    return docs


def fresh_run(
    cache_dir: Path,
    chunker: Any = "recursive:20:0",
    *,
    docs: dict[str, str] | None = None,
    queries: QuerySet | None = None,
    **kw: Any,
) -> EvalResult:
    """A fresh process's evaluation (nothing remembered but the cache directory)."""
    forget_open()
    corpus = Corpus.from_mapping(docs or DOCS, name="tiny")
    settings: dict[str, Any] = {"store": "exact", "k": 2, "embedder": HashingEmbedder()}
    settings.update(kw)
    return evaluate(
        chunker,
        corpus,
        queries if queries is not None else make_queries(corpus),
        cache=EmbeddingCache(cache_dir),
        **settings,
    )
