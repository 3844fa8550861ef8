"""The OpenAI-compatible embedder at size, against the local test server through the
real ``openai`` client: requests in flight, retries, and a run that stops half-way
resuming from the embedding cache without sending again what it received."""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.openai_server import OpenAIServer, ScriptedResponse, error_body

from pytest_chunkeval.config.registry import SpecError
from pytest_chunkeval.embedders.base import (
    EmbeddingRequestError,
    PartialEmbedder,
    l2_normalize,
)
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.openai import OpenAIEmbedder
from pytest_chunkeval.embedders.registry import get_embedder

KEY = "sk-test-remote"
TEXTS = [f"text number {i}" for i in range(20)]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY, embedding_dim=8) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        yield srv


def server_vectors(texts: list[str]) -> np.ndarray[Any, Any]:
    return l2_normalize(np.stack([OpenAIServer.embedding_vector(t, 8) for t in texts]))


@pytest.mark.parametrize("concurrency", [1, 4])
def test_requests_in_flight(server: OpenAIServer, concurrency: int) -> None:
    server.embedding_delay = 0.1
    emb = OpenAIEmbedder("m", max_batch=2, concurrency=concurrency)
    vectors = emb.embed(TEXTS[:12])
    np.testing.assert_allclose(vectors, server_vectors(TEXTS[:12]), rtol=1e-6)
    assert len(server.requests_to("embeddings")) == 6
    assert server.max_in_flight == concurrency


def test_concurrency_is_a_spec_option_outside_the_identity() -> None:
    emb = get_embedder("openai:m?dimensions=8&concurrency=16")
    assert isinstance(emb, OpenAIEmbedder)
    assert emb.concurrency == 16
    assert emb.identity == get_embedder("openai:m?dimensions=8").identity
    assert get_embedder("openai:m?dimensions=8").concurrency == 4  # type: ignore[attr-defined]
    with pytest.raises(SpecError, match="concurrency"):
        get_embedder("openai:m?concurrency=0")
    with pytest.raises(ValueError, match="concurrency must be >= 1"):
        OpenAIEmbedder("m", concurrency=0)


def test_a_renamed_remote_embedder_still_hands_over_parts() -> None:
    assert isinstance(get_embedder("openai:m", identity="my-server"), PartialEmbedder)
    assert not isinstance(
        get_embedder("hashing", identity="my-hashing"), PartialEmbedder
    )


def test_retries_with_requests_in_flight(server: OpenAIServer) -> None:
    for status in (429, 503, 429):
        server.enqueue_error(
            "embeddings", status, "busy", headers={"retry-after-ms": "1"}
        )
    emb = OpenAIEmbedder("m", max_batch=2, concurrency=4, max_retries=3)
    vectors = emb.embed(TEXTS)
    np.testing.assert_allclose(vectors, server_vectors(TEXTS), rtol=1e-6)
    assert len(server.requests_to("embeddings")) == 10 + 3
    assert sum(server.embedded.values()) == 20


def fail_request(number: int) -> Any:
    """An embedding handler answering HTTP 500 to the ``number``-th request."""
    count = itertools.count(1)
    lock = threading.Lock()

    def handler(payload: Any) -> ScriptedResponse | None:
        with lock:
            n = next(count)
        return ScriptedResponse(500, error_body("gave up")) if n == number else None

    return handler


def test_a_failed_run_resumes_without_sending_what_it_received(
    server: OpenAIServer, tmp_path: Path
) -> None:
    cache = EmbeddingCache(tmp_path)
    emb = OpenAIEmbedder("m", max_batch=2, concurrency=3, max_retries=0)
    server.embedding_delay = 0.05
    server.embedding_handler = fail_request(4)
    with pytest.raises(EmbeddingRequestError, match="500"):
        cache.embed(emb, TEXTS)
    received = set(server.embedded)
    # 3 requests answered before the 4th failed; those in flight then, too.
    assert 6 <= len(received) < 20
    assert cache.info()[emb.identity]["entries"] == len(received)

    server.embedding_handler = None
    vectors = EmbeddingCache(tmp_path).embed(emb, TEXTS)
    np.testing.assert_allclose(vectors, server_vectors(TEXTS), rtol=1e-6)
    # Every text was embedded once over the two runs: nothing received was resent.
    assert server.embedded == dict.fromkeys(TEXTS, 1)


def test_ctrl_c_keeps_the_answers_in_flight(
    server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C reaches the main thread where it waits for answers: on the third wait.
    real_wait = cf.wait
    waits = itertools.count(1)

    def interrupted_wait(fs: Any, **kwargs: Any) -> Any:
        if kwargs.get("return_when") == cf.FIRST_COMPLETED and next(waits) == 3:
            raise KeyboardInterrupt
        return real_wait(fs, **kwargs)

    monkeypatch.setattr(cf, "wait", interrupted_wait)
    server.embedding_delay = 0.05
    cache = EmbeddingCache(tmp_path)
    emb = OpenAIEmbedder("m", max_batch=2, concurrency=4)
    with pytest.raises(KeyboardInterrupt):
        cache.embed(emb, TEXTS)
    received = set(server.embedded)
    assert 4 <= len(received) < 20
    assert cache.info()[emb.identity]["entries"] == len(received)
    assert not [t for t in threading.enumerate() if t.name.startswith("chunkeval-")]

    monkeypatch.setattr(cf, "wait", real_wait)
    EmbeddingCache(tmp_path).embed(emb, TEXTS)
    assert server.embedded == dict.fromkeys(TEXTS, 1)
