"""Issue 12, "no silent wrong numbers": each numbered case of the issue reproduced.

Every test here failed (or gave a wrong number with a green tick) before the fix.
The cache fault injection is in ``test_cache_faults.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_engine import DOCS, make_queries

from pytest_chunkeval.chunkers import ChunkerError
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.cache import EmbeddingCache
from pytest_chunkeval.engine.evaluate import EvaluationError, evaluate, score
from pytest_chunkeval.engine.results import EvalResult

# -------------------------------------------------- 5. symlink loops in a corpus glob


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_glob_through_a_symlink_loop_reads_each_file_once(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("alpha")
    (docs / "sub").mkdir()
    (docs / "sub" / "b.md").write_text("beta")
    (docs / "sub" / "loop").symlink_to(docs, target_is_directory=True)
    (docs / "same.md").symlink_to(docs / "a.md")
    corpus = Corpus.from_paths([str(docs / "**" / "*.md")])
    # a.md and same.md are one file: the shorter id (then the first in order) wins
    assert corpus.ids == ("a.md", "sub/b.md")
    assert not any(os.path.isabs(i) for i in corpus.ids)


# ------------------------------------- 2. a bare str (or None) from a chunker/retriever


def _data(tmp_path: Path) -> tuple[Corpus, QuerySet, EmbeddingCache]:
    corpus = Corpus.from_mapping(DOCS, name="tiny")
    return corpus, make_queries(corpus), EmbeddingCache(tmp_path / "cache")


def _evaluate(chunker: object, tmp_path: Path, **kw: object) -> EvalResult:
    corpus, queries, cache = _data(tmp_path)
    return evaluate(
        chunker,  # type: ignore[arg-type]
        corpus,
        queries,
        embedder=HashingEmbedder(),
        store="exact",
        cache=cache,
        **kw,  # type: ignore[arg-type]
    )


def whole_text(text: str) -> str:
    return text  # the bug: a str, not [text]


def nothing(text: str) -> None:
    return None


@pytest.mark.parametrize(
    ("chunker", "message"),
    [
        (whole_text, r"chunker 'whole_text' returned a single str 'Cats sleep"),
        (nothing, r"chunker 'nothing' returned NoneType \(None\) instead of a list"),
    ],
)
def test_a_chunker_returning_a_str_or_none_is_an_error(
    tmp_path: Path, chunker: object, message: str
) -> None:
    with pytest.raises(ChunkerError, match=r"document 'animals.md': " + message):
        _evaluate(chunker, tmp_path)


class StrChunker:
    name = "str-chunker"

    def chunk_spans(self, text: str) -> str:
        return text


def test_a_chunker_object_returning_a_str_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ChunkerError, match="'str-chunker' returned a single str"):
        _evaluate(StrChunker(), tmp_path)


@pytest.mark.parametrize(
    ("retriever", "message"),
    [
        (lambda q: "Cats sleep most of the day.", "returned a single str 'Cats"),
        (lambda q: None, r"returned NoneType \(None\) instead of a list"),
    ],
)
def test_a_retriever_returning_a_str_or_none_is_an_error(
    tmp_path: Path, retriever: object, message: str
) -> None:
    corpus, queries, _ = _data(tmp_path)
    with pytest.raises(
        EvaluationError,
        match=r"retriever .*<lambda>\(\) for query 'q1' \('How long do parrots live\?'"
        r"\) " + message,
    ):
        score(retriever, corpus, queries)
    with pytest.raises(EvaluationError, match="the results mapping for query 'q1'"):
        score({"q1": "Cats sleep most of the day."}, corpus, queries)


# ------------------------------------------------------------ 4. an empty query set


def test_an_evaluation_without_questions_is_an_error(tmp_path: Path) -> None:
    corpus = Corpus.from_mapping(DOCS, name="tiny")
    path = tmp_path / "queries.jsonl"
    path.write_text(json.dumps({"chunkeval_queries": 1}) + "\n")
    empty = QuerySet.load(path, corpus)
    assert len(empty) == 0
    cache = EmbeddingCache(tmp_path / "cache")
    with pytest.raises(EvaluationError, match=r"queries.jsonl holds no query"):
        evaluate("recursive:20:0", corpus, empty, embedder=HashingEmbedder(),
                 store="exact", cache=cache)
    with pytest.raises(EvaluationError, match=r"holds no query"):
        score(lambda q: [], corpus, empty)
