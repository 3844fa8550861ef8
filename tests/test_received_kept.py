"""Remote embeddings received are kept when the process is stopped half-way
(docs/embedders.md, "openai:MODEL"): each request's vectors are stored as
they arrive, so a run stopped by SIGTERM (what CI cancellation and ``timeout``
send) resends nothing it received, and one stopped by SIGKILL at most what was in
flight. A child process embeds through the local counting server; the test stops
it once some requests were answered, then embeds the same texts again here."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from support.openai_server import OpenAIServer

from pytest_chunkeval.embedders.base import l2_normalize
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.openai import OpenAIEmbedder

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="POSIX signals sent to a child process"
)

KEY = "sk-test-received"
TEXTS = [f"passage number {i}" for i in range(42)]
CHILD = textwrap.dedent(
    """
    import sys
    from pytest_chunkeval.embedders.cache import EmbeddingCache
    from pytest_chunkeval.embedders.openai import OpenAIEmbedder

    texts = [f"passage number {i}" for i in range(42)]
    emb = OpenAIEmbedder("m", max_batch=1, concurrency=int(sys.argv[2]))
    EmbeddingCache(sys.argv[1]).embed(emb, texts)
    print("finished")
    """
)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY, embedding_dim=8) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        yield srv


def stop_half_way(
    server: OpenAIServer, cache: Path, concurrency: int, signum: int
) -> int:
    """Run the child until 10 of its 42 requests were answered, send ``signum``;
    returns how many requests the server answered in all."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(cache), str(concurrency)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while sum(server.embedded.values()) < 10:
            if child.poll() is not None or time.monotonic() > deadline:
                out, err = child.communicate()
                pytest.fail(f"the child did not get to 10 requests: {out}{err}")
            time.sleep(0.01)
        os.kill(child.pid, signum)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signum, err  # stopped as the signal stops it
    assert "finished" not in out
    answered = sum(server.embedded.values())
    assert answered < len(TEXTS)
    return answered


@pytest.mark.parametrize("concurrency", [1, 3])
def test_sigterm_keeps_every_answer_received(
    server: OpenAIServer, tmp_path: Path, concurrency: int
) -> None:
    server.embedding_delay = 0.02
    answered = stop_half_way(server, tmp_path, concurrency, signal.SIGTERM)
    kept = EmbeddingCache(tmp_path).info()
    assert sum(v["entries"] for v in kept.values()) == answered

    emb = OpenAIEmbedder("m", max_batch=1, concurrency=concurrency)
    vectors = EmbeddingCache(tmp_path).embed(emb, TEXTS)
    want = np.stack([OpenAIServer.embedding_vector(t, 8) for t in TEXTS])
    np.testing.assert_allclose(vectors, l2_normalize(want), rtol=1e-6)
    # Over both runs every text was asked once: nothing answered was sent again.
    assert server.embedded == dict.fromkeys(TEXTS, 1)
    # one file per request, merged as they pile up (compact_after 16)
    assert len(list(tmp_path.glob("*/*.pack"))) <= 16


def test_sigkill_loses_at_most_what_was_in_flight(
    server: OpenAIServer, tmp_path: Path
) -> None:
    server.embedding_delay = 0.02
    answered = stop_half_way(server, tmp_path, 1, signal.SIGKILL)
    emb = OpenAIEmbedder("m", max_batch=1, concurrency=1)
    EmbeddingCache(tmp_path).embed(emb, TEXTS)
    assert set(server.embedded) == set(TEXTS)
    sent_again = sum(server.embedded.values()) - len(TEXTS)
    # the request in flight, and one answered but not yet stored, at most
    assert sent_again <= 2, (answered, sent_again)
