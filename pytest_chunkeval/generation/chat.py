"""One chat request of query generation: the client, the call, and its reply or
the rejection it amounts to (an API error after the client's retries)."""

from __future__ import annotations

from typing import Any

from pytest_chunkeval.generation.settings import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    GenerationError,
)
from pytest_chunkeval.llm import chat
from pytest_chunkeval.llm.chat import Reply
from pytest_chunkeval.llm.client import openai_client as _openai_client


def openai_client(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: float = DEFAULT_TIMEOUT,
) -> Any:
    """An ``openai.OpenAI`` client for chat completions (see :mod:`.openai_api`)."""
    return _openai_client(
        who="query generation",
        api_key=api_key,
        base_url=base_url,
        max_retries=max_retries,
        timeout=timeout,
        error=GenerationError,
    )


def request_chat(
    client: Any,
    model: str,
    messages: list[dict[str, str]],
    *,
    temperature: float | None = None,
    json_mode: bool = False,
) -> Reply:
    """One chat completion through the shared request (:func:`llm.chat.request_chat
    <pytest_chunkeval.llm.chat.request_chat>`): failures the run can survive come
    back as a rejection; authentication, permission and unknown-model errors raise
    :class:`GenerationError`."""
    return chat.request_chat(
        client,
        model,
        messages,
        temperature=temperature,
        json_mode=json_mode,
        error=GenerationError,
    )
