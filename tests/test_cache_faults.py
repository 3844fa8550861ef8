"""Fault injection: every kind of cache file, corrupted, changes no number.

A clean run fills a cache with every kind listed in
:data:`pytest_chunkeval.util.cache_kinds.CACHE_KINDS` (embeddings, dense and text
search results, LLM answers). Then, for each kind and each fault (truncated, the
same size with bits flipped, a file of another type in its place), a copy of the
cache with every file of that kind damaged must give results identical to the clean
run, with a warning naming the file. A file that matches no listed kind fails the
test: a cache added later must be listed, with its check, to be covered.
"""

from __future__ import annotations

import shutil
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.llm_chunking import DOC as LLM_DOC
from support.llm_chunking import KEY, every_third
from support.openai_server import OpenAIServer
from support.tiny_corpus import DOCS, make_queries

from pytest_chunkeval.chunkers.llm import LLMSemanticChunker
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.cache_dir import forget_open
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.llm.answers import AnswerCacheWarning
from pytest_chunkeval.util.cache_kinds import CACHE_KINDS, is_metadata, kind_of
from pytest_chunkeval.util.verified import CacheWarning

pytest.importorskip("bm25s")


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY) as srv:
        srv.chat_handler = every_third  # deterministic: a re-asked window agrees
        yield srv


def run_all(cache_dir: Path, server: OpenAIServer) -> list[dict[str, Any]]:
    """Every cached stage once: embeddings and a dense search, a text search, an
    LLM chunker's answers. What each result says, without its timings."""
    forget_open()  # a fresh process: nothing remembered from other runs
    corpus = Corpus.from_mapping(DOCS, name="tiny")
    queries = make_queries(corpus)
    llm_corpus = Corpus.from_mapping({"doc.md": LLM_DOC}, name="llm")
    start = LLM_DOC.index("bravo charlie")
    excerpt = Excerpt("bravo", "doc.md", start, start + 5)
    llm_queries = QuerySet([Query("q", "bravo?", (excerpt,), "doc.md")])
    chunker = LLMSemanticChunker(
        "test-model",
        api_key=KEY,
        base_url=server.base_url,
        max_retries=0,
        window_tokens=100,
    )
    runs = [
        evaluate("recursive:20:0", corpus, queries, store="exact", k=2,
                 embedder=HashingEmbedder(), cache=EmbeddingCache(cache_dir)),
        evaluate("recursive:20:0", corpus, queries, store="bm25", k=2,
                 cache=EmbeddingCache(cache_dir)),
        evaluate(chunker, llm_corpus, llm_queries, store="exact", k=2,
                 embedder=HashingEmbedder(), cache=EmbeddingCache(cache_dir)),
    ]  # fmt: skip
    out = []
    for result in runs:
        data = result.to_json()
        data.pop("timings", None)
        out.append(data)
    return out


def files_of(cache_dir: Path) -> dict[str, list[Path]]:
    """Cache files by kind; fails on a file of no listed kind."""
    found: dict[str, list[Path]] = {kind.name: [] for kind in CACHE_KINDS}
    for path in sorted(p for p in cache_dir.rglob("*") if p.is_file()):
        relative = path.relative_to(cache_dir).as_posix()
        kind = kind_of(relative)
        if kind is not None:
            found[kind.name].append(path)
        else:
            assert is_metadata(relative), (
                f"{relative}: a cache file of no kind listed in "
                "pytest_chunkeval.util.cache_kinds.CACHE_KINDS; list it (with the "
                "check that verifies it) so that this test corrupts it"
            )
    return found


def truncated(data: bytes, other: bytes) -> bytes:
    return data[: len(data) // 2]


def bits_flipped(data: bytes, other: bytes) -> bytes:
    # Same size, a few bits off, in the header and in the payload's middle and end.
    damaged = bytearray(data)
    for at in (len(data) // 3, len(data) // 2, len(data) - 2):
        damaged[at] ^= 0x10
    return bytes(damaged)


def other_type(data: bytes, other: bytes) -> bytes:
    return other  # a whole, valid file of another kind under this name


SHADOWS = {"answers": "chunkings"}
"""A kind read only when another is missing: the LLM chunker's answers are asked
for only when its chunking is not cached."""


def shadows(kind: str) -> list[str]:
    """The kinds removed so that ``kind`` is read at all: every kind but the
    evaluation results is read only when the result is not cached."""
    found = [SHADOWS[kind]] if kind in SHADOWS else []
    return found if kind == "results" else [*found, "results"]


FAULTS: dict[str, Callable[[bytes, bytes], bytes]] = {
    "truncated": truncated,
    "bits flipped": bits_flipped,
    "other type": other_type,
}


@pytest.fixture(scope="module")
def clean(
    tmp_path_factory: pytest.TempPathFactory, server: OpenAIServer
) -> tuple[Path, list[dict[str, Any]]]:
    cache_dir = tmp_path_factory.mktemp("clean") / "cache"
    first = run_all(cache_dir, server)
    assert run_all(cache_dir, server) == first  # the cache itself changes nothing
    return cache_dir, first


def test_a_clean_run_fills_every_kind_of_cache(
    clean: tuple[Path, list[dict[str, Any]]],
) -> None:
    cache_dir, _ = clean
    found = files_of(cache_dir)
    empty = [name for name, files in found.items() if not files]
    assert not empty, f"the clean run wrote no {empty} files: cover them in run_all"
    assert {"embeddings", "search", "answers"} <= set(found)
    # dense and text searches both cached
    assert len(found["search"]) >= 2


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("kind", [k.name for k in CACHE_KINDS])
def test_a_corrupt_cache_file_changes_no_result(
    clean: tuple[Path, list[dict[str, Any]]],
    server: OpenAIServer,
    tmp_path: Path,
    kind: str,
    fault: str,
) -> None:
    cache_dir, expected = clean
    damaged_dir = tmp_path / "cache"
    shutil.copytree(cache_dir, damaged_dir)
    found = files_of(damaged_dir)
    donor = next(f for k, files in found.items() if k != kind for f in files)
    for shadow in shadows(kind):
        for path in found[shadow]:
            path.unlink()  # so that the damaged kind is read at all
    for path in found[kind]:
        path.write_bytes(FAULTS[fault](path.read_bytes(), donor.read_bytes()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert run_all(damaged_dir, server) == expected
    reported = " ".join(
        str(w.message)
        for w in caught
        if issubclass(w.category, (CacheWarning, AnswerCacheWarning))
    )
    unnamed = [p.name for p in found[kind] if p.name not in reported]
    assert not unnamed, f"damaged files no warning names: {unnamed}"
    # set aside, and the next run is clean again (no warning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run_all(damaged_dir, server) == expected


def test_a_same_size_edit_of_search_results_is_caught(
    clean: tuple[Path, list[dict[str, Any]]], server: OpenAIServer, tmp_path: Path
) -> None:
    # The case: ids rewritten in place (recall 97.2 -> 73.8, no warning).
    cache_dir, expected = clean
    damaged_dir = tmp_path / "cache"
    shutil.copytree(cache_dir, damaged_dir)
    found = files_of(damaged_dir)
    for path in found["results"]:
        path.unlink()  # so that the searches are read at all
    for path in found["search"]:
        data = bytearray(path.read_bytes())
        # after the header (48 bytes) and the shape (16): the ids
        ids = np.frombuffer(bytes(data[64:]), dtype="<i8")[::-1].copy()
        data[64:] = ids.tobytes()  # other valid row ids, same size
        path.write_bytes(bytes(data))
    with pytest.warns(CacheWarning, match="checksum mismatch"):
        assert run_all(damaged_dir, server) == expected
