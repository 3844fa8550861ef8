"""The OpenAI-compatible test server, driven by the real ``openai`` client."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import numpy as np
import openai
import pytest
from support.openai_server import OpenAIServer, ScriptedResponse

KEY = "sk-server-test"


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY) as srv:
        yield srv


@pytest.fixture
def client(server: OpenAIServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(api_key=KEY, base_url=server.base_url, max_retries=2) as c:
        yield c


def ask(client: openai.OpenAI) -> str | None:
    answer = client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "split this"}]
    )
    return answer.choices[0].message.content


def test_chat_answers_in_queue_order(
    server: OpenAIServer, client: openai.OpenAI
) -> None:
    server.enqueue_chat("split_after: 3, 5")
    server.enqueue_chat("split_after: 7")
    assert ask(client) == "split_after: 3, 5"
    assert ask(client) == "split_after: 7"
    [first, _] = server.requests_to("chat")
    assert first.json["messages"][0]["content"] == "split this"
    assert first.headers["authorization"] == f"Bearer {KEY}"


def test_chat_429_then_success(server: OpenAIServer, client: openai.OpenAI) -> None:
    server.enqueue_error("chat", 429, "rate limited", headers={"retry-after-ms": "1"})
    server.enqueue_chat("ok")
    assert ask(client) == "ok"
    assert len(server.requests_to("chat")) == 2
    assert server.pending("chat") == 0


def test_chat_500_exhausts_retries(server: OpenAIServer, client: openai.OpenAI) -> None:
    for _ in range(3):
        server.enqueue_error("chat", 500, "boom", headers={"retry-after-ms": "1"})
    with pytest.raises(openai.InternalServerError, match="boom"):
        ask(client)
    assert len(server.requests_to("chat")) == 3


def test_chat_malformed_body(server: OpenAIServer, client: openai.OpenAI) -> None:
    server.enqueue_raw("chat", 200, b'{"choices": [')
    with pytest.raises(json.JSONDecodeError):
        ask(client)


def test_chat_handler_and_empty_queue(
    server: OpenAIServer, client: openai.OpenAI
) -> None:
    with pytest.raises(openai.BadRequestError, match="no scripted response"):
        ask(client)

    def handler(request: Any) -> str | ScriptedResponse:
        return "echo: " + str(request["messages"][-1]["content"])

    server.chat_handler = handler
    assert ask(client) == "echo: split this"


def test_wrong_key_is_rejected(server: OpenAIServer) -> None:
    bad = openai.OpenAI(api_key="sk-wrong", base_url=server.base_url, max_retries=0)
    with bad, pytest.raises(openai.AuthenticationError):
        bad.embeddings.create(model="m", input=["a"])
    assert server.requests[0].headers["authorization"] == "Bearer sk-wrong"


def test_embeddings_float_and_base64(
    server: OpenAIServer, client: openai.OpenAI
) -> None:
    floats = client.embeddings.create(
        model="m", input=["hello", "world"], encoding_format="float"
    )
    b64 = client.embeddings.create(model="m", input=["hello"], encoding_format="base64")
    want = OpenAIServer.embedding_vector("hello", 32)
    np.testing.assert_allclose(floats.data[0].embedding, want, rtol=1e-6)
    raw = b64.data[0].embedding
    assert isinstance(raw, str)
    np.testing.assert_array_equal(np.frombuffer(base64.b64decode(raw), "<f4"), want)


def test_unknown_route_is_404(server: OpenAIServer) -> None:
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(f"{server.url}/v1/models", timeout=5)
    info.value.close()
    assert info.value.code == 404
    assert server.requests[-1].path == "/v1/models"
