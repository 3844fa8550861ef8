"""Benchmarks shipped inside the package: a corpus plus its query set.

``general`` is the public dataset of Chroma's report "Evaluating Chunking Strategies
for Retrieval" (MIT, Brandon Smith / Chroma; see ``data/general/README.md``).

A benchmark is a directory ``data/<name>/`` holding ``corpora/`` (one text file per
document; ids are the file names) and a query set: ``queries.jsonl``,
``queries.json`` or the reference ``questions_df.csv``.
"""

from __future__ import annotations

import functools
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_chunkeval.config.registry import UnknownSpec
from pytest_chunkeval.data.corpus import (
    TEXT_SUFFIXES,
    Corpus,
    CorpusError,
    Document,
    read_text,
)
from pytest_chunkeval.data.queries import QuerySet

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

_QUERY_FILES = ("queries.jsonl", "queries.json", "questions_df.csv")

_CREDITS = {
    "general": (
        "Chroma technical report 'Evaluating Chunking Strategies for Retrieval' "
        "dataset, by Brandon Smith and Chroma (MIT license, Copyright (c) 2024 "
        "Brandon Smith)"
    ),
}


class UnknownBenchmark(UnknownSpec):
    """No bundled benchmark has this name."""


def _data_dir() -> Traversable:
    return resources.files("pytest_chunkeval").joinpath("data")


def _queries_file(directory: Traversable) -> Traversable | None:
    for fname in _QUERY_FILES:
        candidate = directory.joinpath(fname)
        if candidate.is_file():
            return candidate
    return None


def benchmark_names() -> list[str]:
    """Names of the bundled benchmarks, sorted."""
    return list(_names())


@functools.lru_cache(maxsize=1)
def _names() -> tuple[str, ...]:
    data = _data_dir()
    if not data.is_dir():
        return ()
    return tuple(
        sorted(
            d.name
            for d in data.iterdir()
            if d.is_dir() and d.joinpath("corpora").is_dir() and _queries_file(d)
        )
    )


def load_benchmark(name: str = "general") -> tuple[Corpus, QuerySet]:
    """The corpus and validated query set of bundled benchmark ``name``.

    Loaded once per process and cached: treat both as read-only.
    """
    names = _names()
    if name not in names:
        raise UnknownBenchmark(
            f"unknown benchmark {name!r}; available: {', '.join(names) or '(none)'}"
        )
    return _load(name)


@functools.cache
def _load(name: str) -> tuple[Corpus, QuerySet]:
    directory = _data_dir().joinpath(name)
    corpus = Corpus(_read_documents(directory.joinpath("corpora")), name=name)
    qfile = _queries_file(directory)
    assert qfile is not None  # benchmark_names() checked it
    source = f"{name}/{qfile.name}"
    text = qfile.read_bytes().decode("utf-8")
    suffix = Path(qfile.name).suffix
    queries = QuerySet.from_text(text, suffix, corpus, source=source)
    metadata = {
        **queries.metadata,
        "benchmark": name,
        "corpus_hash": corpus.content_hash,
    }
    if name in _CREDITS:
        metadata["credit"] = _CREDITS[name]
    return corpus, QuerySet(queries.queries, metadata, source=source)


def _read_documents(corpora: Traversable) -> list[Document]:
    docs: list[Document] = []
    for entry in sorted(corpora.iterdir(), key=lambda e: e.name):
        if not entry.is_file() or entry.name.startswith("."):
            continue
        if Path(entry.name).suffix.lower() not in TEXT_SUFFIXES:
            continue
        if isinstance(entry, Path):  # an ordinary install: keep the file's path
            docs.append(Document(entry.name, read_text(entry), entry))
            continue
        try:  # e.g. a zipped install: no filesystem path
            text = entry.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorpusError(f"benchmark file {entry} is not UTF-8: {exc}") from None
        docs.append(Document(entry.name, text))
    return docs
