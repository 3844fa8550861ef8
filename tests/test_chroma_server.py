"""A real Chroma server (``chroma run`` on 127.0.0.1), and agreement of every store
with exact search on a realistic set: 2,000 clustered 384-d vectors, 200 queries,
k = 5 and 10.

Run with ``-s`` to see how many retrieved lists differ from exact search.
"""

from __future__ import annotations

import importlib.util
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from support.agreement import (
    Agreement,
    clustered_vectors,
    index_in_subprocess,
    rotations,
)
from support.chroma_server import ChromaServer, ChromaServerError, free_port

from pytest_chunkeval.core.ranking import content_ties
from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.stores import ChromaIndex, StoreError, get_store

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("chromadb") is None, reason="chromadb is not installed"
)

N_VECTORS = 2_000
N_QUERIES = 200
KS = (5, 10)
KEY = "c0ffee" * 10 + "beef"  # a 64-digit hex key, like a real one
# HNSW is approximate. Measured on this set (and on 4,000 vectors, which took
# twice the time to index): 200/200 lists identical to exact for the server,
# ephemeral and persistent stores at k=5 and 10, the plugin re-ranking Chroma's
# k + 8 candidates (docs/stores.md). The bars leave room for other platforms'
# float noise.
MIN_IDENTICAL = 0.95
MIN_SAME_SET = 0.98


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    try:
        server = ChromaServer.start(tmp_path_factory.mktemp("chroma-server"))
    except ChromaServerError as exc:
        pytest.fail(str(exc), pytrace=False)
    print(f"\nchroma server at {server.url} up in {server.startup_seconds:.2f} s")
    with server:
        yield server


@pytest.fixture(scope="module")
def realistic() -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    return clustered_vectors(N_VECTORS, N_QUERIES, dim=384, seed=42)


@pytest.fixture(scope="module")
def exact_ids(
    realistic: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]],
) -> dict[int, npt.NDArray[np.int64]]:
    vectors, queries = realistic
    index = get_store("exact").index(KEY, vectors)
    return {k: index.search(queries, k) for k in KS}


def check_agreement(
    label: str,
    index: ChromaIndex,
    queries: npt.NDArray[np.float32],
    exact_ids: dict[int, npt.NDArray[np.int64]],
) -> None:
    for k in KS:
        agreement = Agreement.of(index.search(queries, k), exact_ids[k])
        print(f"{label:>10} k={k:<2} {agreement}")
        assert agreement.identical >= MIN_IDENTICAL * agreement.queries, agreement
        assert agreement.same_set >= MIN_SAME_SET * agreement.queries, agreement


def test_server_agrees_with_exact_and_is_reused(
    chroma_server: ChromaServer,
    realistic: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]],
    exact_ids: dict[int, npt.NDArray[np.int64]],
) -> None:
    vectors, queries = realistic
    began = time.perf_counter()
    index = get_store(chroma_server.spec).index(KEY, vectors)
    built = time.perf_counter() - began
    assert isinstance(index, ChromaIndex)
    assert not index.reused
    check_agreement("server", index, queries, exact_ids)
    # A new client (as a warm re-run would make) finds the collection complete.
    began = time.perf_counter()
    again = get_store(chroma_server.spec).index(KEY, vectors)
    warm = time.perf_counter() - began
    assert isinstance(again, ChromaIndex)
    assert again.reused
    print(f"{'server':>10} built in {built:.2f} s, reused in {warm:.3f} s")
    np.testing.assert_array_equal(again.search(queries, 5), index.search(queries, 5))


def test_server_ranks_its_candidates_by_the_plugins_scorer_and_tie_rule(
    chroma_server: ChromaServer,
) -> None:
    # the server's float32 distances split equal cosines; the plugin re-ranks
    # them in float64, so they tie and go by content as in exact search
    rows, query = rotations()
    ties = content_ties([f"chunk {i}" for i in range(len(rows))])
    index = get_store(f"{chroma_server.spec}?ef_search=1").index(KEY, rows)
    exact = get_store("exact").index(KEY, rows)
    np.testing.assert_array_equal(
        index.search(query, len(rows), ties=ties),
        exact.search(query, len(rows), ties=ties),  # type: ignore[call-arg]
    )


def test_ephemeral_agrees_with_exact(
    realistic: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]],
    exact_ids: dict[int, npt.NDArray[np.int64]],
) -> None:
    vectors, queries = realistic
    began = time.perf_counter()
    index = get_store("chroma").index(KEY, vectors)
    print(f"\n{'ephemeral':>10} indexed in {time.perf_counter() - began:.2f} s")
    assert isinstance(index, ChromaIndex)
    check_agreement("ephemeral", index, queries, exact_ids)


def test_persistent_reopened_agrees_with_exact(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    realistic: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]],
    exact_ids: dict[int, npt.NDArray[np.int64]],
) -> None:
    vectors, queries = realistic
    np.save(tmp_path / "vectors.npy", vectors)
    spec = f"chroma:{tmp_path / 'db'}"
    assert index_in_subprocess(spec, KEY, tmp_path / "vectors.npy") == "reused=False"

    from chromadb.api.models.Collection import Collection

    def no_add(*args: object, **kwargs: object) -> None:
        raise AssertionError("a reopened collection must not be re-added")

    monkeypatch.setattr(Collection, "add", no_add)
    began = time.perf_counter()
    index = get_store(spec).index(KEY, vectors)
    print(f"\n{'persistent':>10} reopened in {time.perf_counter() - began:.3f} s")
    assert isinstance(index, ChromaIndex)
    assert index.reused
    check_agreement("persistent", index, queries, exact_ids)


def _unreachable() -> tuple[int, str]:
    port = free_port()
    with socket.socket() as probe:  # nobody listens there
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    return port, f"chroma+http://127.0.0.1:{port}"


def test_unreachable_server_is_one_clear_error() -> None:
    port, spec = _unreachable()
    with pytest.raises(StoreError) as info:
        get_store(spec).index(KEY, np.eye(3, dtype=np.float32))
    message = str(info.value)
    assert f"cannot reach Chroma server http://127.0.0.1:{port}" in message
    assert "chroma run" in message
    # One error, not a chain of transport tracebacks.
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__


@pytest.mark.perf
def test_unreachable_server_fails_without_retrying() -> None:
    _, spec = _unreachable()
    with pytest.raises(StoreError):  # the first call pays for importing the client
        get_store(spec).index(KEY, np.eye(3, dtype=np.float32))
    began = time.perf_counter()
    with pytest.raises(StoreError):
        get_store(spec).index(KEY, np.eye(3, dtype=np.float32))
    assert time.perf_counter() - began < 5


def test_server_start_failure_shows_its_log(tmp_path: Path) -> None:
    fake = tmp_path / "chroma"
    fake.write_text("#!/bin/sh\necho 'cannot bind: permission denied' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(ChromaServerError, match=r"(?s)exited with code 3.*cannot bind"):
        ChromaServer.start(tmp_path / "s", executable=str(fake), attempts=2)


def test_server_going_away_is_a_clear_error(tmp_path: Path) -> None:
    vectors = np.eye(4, dtype=np.float32)
    with ChromaServer.start(tmp_path / "short-lived") as server:
        index = get_store(server.spec).index(KEY, vectors)
        assert index.search(vectors[:1], 1).tolist() == [[0]]
    with pytest.raises(StoreError, match=f"lost the connection to .*{server.url}"):
        index.search(vectors[:1], 1)


@pytest.mark.slow
def test_bundled_benchmark_retrieval_agrees_across_stores(
    chroma_server: ChromaServer, tmp_path: Path
) -> None:
    """One configuration of the report's benchmark through the whole engine, with
    the real all-MiniLM-L6-v2 embeddings: the embedded store, the server and exact
    search retrieve the same chunks (HNSW is approximate, so a few may differ)."""
    corpus, queries = load_benchmark("general")
    cache = EmbeddingCache(tmp_path / "cache")
    results = {
        spec: evaluate("recursive:200:0", corpus, queries, store=spec, k=5, cache=cache)
        for spec in ("exact", "chroma", chroma_server.spec)
    }

    def texts(result: EvalResult) -> list[list[str]]:
        # The corpora repeat some chunks word for word; equal vectors tie, and which
        # copy a store returns is arbitrary, so lists are compared by chunk text.
        return [[result.text(span) for span in q.retrieved] for q in result.queries]

    exact = texts(results["exact"])
    for spec in ("chroma", chroma_server.spec):
        got = texts(results[spec])
        differ = sum(a != b for a, b in zip(got, exact, strict=True))
        print(f"\n{spec}: {differ} of {len(exact)} top-5 lists differ from exact")
        assert differ <= 0.02 * len(exact)
        # the copy chosen among repeated chunks moves recall a little (positions)
        assert results[spec].mean("recall") == pytest.approx(
            results["exact"].mean("recall"), abs=0.015
        )
