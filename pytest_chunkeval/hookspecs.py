"""Hooks through which a ``conftest.py`` or an installed plugin adds chunkers,
embedders, stores and tokenizers by name.

Each hook receives a :class:`~pytest_chunkeval.config.registry.Registry`; call
``registry.register(name, factory, form)``. ``factory`` receives everything after
``name:`` in a spec string (``""`` for a bare ``name``) and returns the object. The
name is then accepted wherever a spec string is: ``chunkeval_chunkers``,
``--chunkeval-embedder``, ``@pytest.mark.chunkeval(embedder=...)``,
``chunkeval.evaluate("name:args")``. Spec strings follow one grammar (docs:
"Spec strings"); pass ``signature=Signature(...)`` to have the arguments
converted, defaults filled in and equivalent spellings share one canonical form
(one test id and baseline file).

Example, in the ``conftest.py`` at your rootdir::

    from my_rag.chunking import MarkdownChunker
    from my_rag.embedding import MyEmbedder


    def pytest_chunkeval_register_chunkers(registry):
        # "markdown:300" -> MarkdownChunker(max_tokens=300)
        registry.register(
            "markdown",
            lambda rest: MarkdownChunker(max_tokens=int(rest or 400)),
            "markdown[:MAX_TOKENS]",
        )


    def pytest_chunkeval_register_embedders(registry):
        registry.register("mine", lambda rest: MyEmbedder(), "mine")

and in ``pyproject.toml``::

    [tool.pytest.ini_options]
    chunkeval_chunkers = ["markdown:300", "recursive:400:0"]
    chunkeval_embedder = "mine"

A chunker is any object with a ``name`` and ``chunk_spans(text) -> (n, 2)`` offsets
(or a plain function ``str -> list[str]``, adapted for you); an embedder has an
``identity`` (its cache key) and ``embed(texts) -> (n, d)`` vectors; a store has a
``name`` and ``index(key, vectors)``.

The hooks are called once per process, before any spec is resolved: at start-up when
a chunkeval setting is configured (so that a wrong name is a usage error right
away), otherwise when a test first uses a chunkeval fixture. Implement them in the
rootdir ``conftest.py`` or in a plugin so they are registered by then. If the same
``conftest.py`` must also work with ``-p no:chunkeval``, decorate the hooks with
``@pytest.hookimpl(optionalhook=True)`` (pytest otherwise rejects unknown hooks).

This module imports only pluggy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from pytest_chunkeval.config.registry import Registry

hookspec = pluggy.HookspecMarker("pytest")


@hookspec
def pytest_chunkeval_register_chunkers(registry: Registry[Any]) -> None:
    """Register chunker factories: ``registry.register(name, factory, form)``.

    ``factory(rest)`` returns a chunker (``name`` + ``chunk_spans``) for the spec
    ``name:rest``. Built-in forms: ``fixed:SIZE:OVERLAP``,
    ``recursive:SIZE:OVERLAP``, ``sentence:SIZE``, ...
    """


@hookspec
def pytest_chunkeval_register_embedders(registry: Registry[Any]) -> None:
    """Register embedder factories: ``registry.register(name, factory, form)``.

    ``factory(rest)`` returns an object with ``identity`` (a string naming the model
    and everything that changes its vectors: the embedding cache is keyed by it) and
    ``embed(texts) -> (n, d)`` float vectors.
    """


@hookspec
def pytest_chunkeval_register_stores(registry: Registry[Any]) -> None:
    """Register vector store factories: ``registry.register(name, factory, form)``.

    ``factory(rest)`` returns an object with ``name`` and ``index(key, vectors)``
    whose result has ``search(query_vectors, k) -> (q, k)`` row ids, best first.
    """


@hookspec
def pytest_chunkeval_register_tokenizers(registry: Registry[Any]) -> None:
    """Register tokenizer factories: ``registry.register(name, factory, form)``.

    ``factory(rest)`` returns an object with ``name``, ``token_bounds(text) -> (n, 2)``
    character ranges, ``count(text)`` and ``count_batch(texts)``. A bare name that
    is not registered is a tiktoken encoding (``cl100k_base``).
    """


@hookspec
def pytest_chunkeval_register_extractors(registry: Registry[Any]) -> None:
    """Register relationship extractor factories (Graph-RAG evaluation):
    ``registry.register(name, factory, form)``.

    ``factory(rest)`` returns an object with ``identity`` (its name and version: the
    answer cache is keyed by it) and ``extract(text) -> [(subject, predicate,
    object, evidence), ...]``, e.g. ``CallableExtractor(fn, name=...,
    cache_version=...)`` (without a ``cache_version`` a function is asked on
    every run, docs/relationships.md). Built-in forms: ``llm:MODEL``,
    ``python:MODULE:ATTR``.
    """


@hookspec
def pytest_chunkeval_register_judges(registry: Registry[Any]) -> None:
    """Register context-relevance judges (docs/judged.md#the-two-measures):
    ``registry.register(name, factory, form)``.

    ``factory(rest)`` returns a judge with an ``identity`` (its name and version:
    judgments are cached and committed under it), e.g.
    ``CallableJudge(fn, name=..., version=...)`` where
    ``fn(question, context) -> [sentence, ...]`` returns sentences of the context.
    Built-in form: ``llm:MODEL``.
    """
