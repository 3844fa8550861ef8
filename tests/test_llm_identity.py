"""An LLM's identity (the judge's, a relationship extractor's, generation's)
names its server, read when used and without credentials (docs/judged.md,
"Cached judgments"): one model name on two OpenAI-compatible servers is two
identities, so the answers of one are never served for the other."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.openai_server import OpenAIServer

from pytest_chunkeval.generation.asking import Asker
from pytest_chunkeval.judging.judge import LLMJudge
from pytest_chunkeval.judging.run import Judging
from pytest_chunkeval.llm.answers import AnswerCache
from pytest_chunkeval.llm.chat import ChatModel
from pytest_chunkeval.relationships.llm import LLMExtractor

KEY = "sk-test-key"
CONTEXT = "Backups run nightly at 02:00 UTC. They are kept for 30 days."


@pytest.fixture(autouse=True)
def no_server_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def test_openais_api_is_not_named() -> None:
    assert ChatModel("gpt-4o-mini").identity == "llm:gpt-4o-mini"
    warm = ChatModel("gpt-4o-mini", temperature=0.7)
    assert warm.identity == "llm:gpt-4o-mini@t=0.7"
    assert LLMJudge("gpt-4o-mini").identity == "llm:gpt-4o-mini"


def test_another_server_is_named_without_its_credentials() -> None:
    secret = "sk-SECRET-in-url"
    url = f"http://user:pa55word@127.0.0.1:8000/v1/?api-key={secret}&deployment=a"
    judge = LLMJudge("gpt-4o-mini", base_url=url)
    assert judge.identity == (
        "llm:gpt-4o-mini+server=http://127.0.0.1:8000/v1?deployment=a"
    )
    assert "pa55word" not in judge.identity
    assert secret not in judge.identity
    other = LLMJudge("gpt-4o-mini", base_url="http://127.0.0.1:9000/v1")
    assert other.identity != judge.identity


def test_the_server_is_read_when_used(monkeypatch: pytest.MonkeyPatch) -> None:
    judge = LLMJudge("m")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://10.0.0.1:8000/v1")
    assert judge.identity == "llm:m+server=http://10.0.0.1:8000/v1"


def test_a_given_clients_server_is_named() -> None:
    import openai

    client = openai.OpenAI(api_key=KEY, base_url="http://127.0.0.1:7000/v1")
    model = ChatModel("m", client=client)
    assert model.identity == "llm:m+server=http://127.0.0.1:7000/v1"
    asker = Asker(client, "m")
    assert asker.identity == "llm:m+server=http://127.0.0.1:7000/v1"
    assert Asker(openai.OpenAI(api_key=KEY), "m").identity == "llm:m"


def test_an_extractor_names_its_server() -> None:
    extractor = LLMExtractor("m", base_url="http://127.0.0.1:7000/v1")
    assert extractor.identity.endswith("+server=http://127.0.0.1:7000/v1")


@pytest.fixture
def servers() -> Iterator[tuple[OpenAIServer, OpenAIServer]]:
    with OpenAIServer(api_key=KEY) as first, OpenAIServer(api_key=KEY) as second:
        yield first, second


def test_two_servers_of_one_model_name_share_no_judgment(
    servers: tuple[OpenAIServer, OpenAIServer], tmp_path: Path
) -> None:
    """The first server finds the first sentence relevant, the second none: the
    second's judging asks the second, not the first's cached answer."""
    first, second = servers
    first.chat_handler = lambda request: json.dumps(
        {"sentences": ["Backups run nightly at 02:00 UTC."]}
    )
    second.chat_handler = lambda request: "Insufficient Information"
    cache = AnswerCache(tmp_path / "cache")

    def judged(server: OpenAIServer) -> Any:
        judge = LLMJudge("gpt-4o-mini", base_url=server.base_url, max_retries=0)
        return Judging(judge, cache=cache).judge_all([("When?", CONTEXT)])

    one, two = judged(first), judged(second)
    assert len(second.requests_to("chat")) == 1
    assert one != two
    assert judged(second) == two  # cached under its own server
    assert len(second.requests_to("chat")) == 1
