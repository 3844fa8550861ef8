"""A tiny project for ``chunkeval eval`` runs: two documents, two questions
with one excerpt each, and the command line that evaluates them with the fast
``hashing`` embedder and the ``exact`` store."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query

DOCS = {
    "a.md": "Cats sleep all day. Dogs bark at night.\n\nFish swim in schools.",
    "b.md": "Mars is red. The Moon has craters.\n\nJupiter is huge.",
}


def write_project(folder: Path) -> Path:
    """The documents and ``queries.jsonl`` written into ``folder``; ``folder``."""
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    corpus = Corpus.from_mapping(DOCS)

    def query(qid: str, question: str, doc: str, sentence: str) -> Query:
        start = DOCS[doc].index(sentence)
        excerpt = Excerpt(sentence, doc, start, start + len(sentence))
        return Query(qid, question, (excerpt,), doc)

    QuerySet(
        [
            query("q1", "Do dogs bark?", "a.md", "Dogs bark at night."),
            query("q2", "What does the Moon have?", "b.md", "The Moon has craters."),
        ]
    ).validated(corpus).save(folder / "queries.jsonl")
    return folder


def eval_args(project: Path, *extra: str, cache: Path | None = None) -> list[str]:
    """``chunkeval eval``'s arguments on ``project`` (cache: ``project/cache``),
    then ``extra``."""
    return [
        "eval",
        "--corpus",
        str(project / "a.md"),
        str(project / "b.md"),
        "--queries",
        str(project / "queries.jsonl"),
        "--embedder",
        "hashing",
        "--store",
        "exact",
        "--cache-dir",
        str(project / "cache" if cache is None else cache),
        *extra,
    ]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project written into the test's ``tmp_path``."""
    return write_project(tmp_path)
