"""One chat request of query generation: the client, the call, and its reply or
the rejection it amounts to (an API error after the client's retries)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_chunkeval.core.locate import preview
from pytest_chunkeval.generation.answers import API_ERROR, MALFORMED, REFUSED, Rejection
from pytest_chunkeval.generation.settings import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    GenerationError,
)
from pytest_chunkeval.llm.client import DEFAULT_BASE_URL
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


@dataclass(frozen=True)
class ChatReply:
    """What one chat request produced: text or a rejection, and tokens used."""

    content: str | None
    rejection: Rejection | None
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _client_url(client: Any) -> str:
    return str(getattr(client, "base_url", "") or DEFAULT_BASE_URL).rstrip("/")


def request_chat(
    client: Any,
    model: str,
    messages: list[dict[str, str]],
    *,
    temperature: float | None = None,
    json_mode: bool = False,
) -> ChatReply:
    """One chat completion. Failures the run can survive (429/5xx after the client's
    retries, timeouts, malformed bodies, refusals) come back as a rejection;
    authentication, permission and unknown-model errors raise GenerationError."""
    import openai

    kwargs: dict[str, Any] = {"model": model, "messages": messages}
    if temperature is not None:
        kwargs["temperature"] = temperature
    if json_mode:
        kwargs["response_format"] = {"type": "json_object"}
    where = f"{_client_url(client)}/chat/completions"
    try:
        response = client.chat.completions.create(**kwargs)
    except (
        openai.AuthenticationError,
        openai.PermissionDeniedError,
        openai.NotFoundError,
    ) as exc:
        raise GenerationError(
            f"{where} answered HTTP {exc.status_code} for model {model!r}: "
            f"{exc.message}"
        ) from None
    except openai.APIStatusError as exc:
        return ChatReply(
            None,
            Rejection(API_ERROR, f"{where}: HTTP {exc.status_code}: {exc.message}"),
        )
    except openai.APIError as exc:  # connection errors, timeouts
        return ChatReply(
            None, Rejection(API_ERROR, f"{where}: {type(exc).__name__}: {exc}")
        )
    except ValueError as exc:  # a body that is not JSON
        return ChatReply(
            None, Rejection(MALFORMED, f"{where}: malformed response body ({exc})")
        )
    usage = getattr(response, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)

    def reply(content: str | None, rejection: Rejection | None = None) -> ChatReply:
        return ChatReply(content, rejection, prompt_tokens, completion_tokens)

    choices = getattr(response, "choices", None)
    if not choices:
        return reply(None, Rejection(MALFORMED, f"{where}: response without choices"))
    choice = choices[0]
    message = getattr(choice, "message", None)
    refusal = getattr(message, "refusal", None)
    finish = getattr(choice, "finish_reason", None)
    content = getattr(message, "content", None)
    if refusal:
        return reply(None, Rejection(REFUSED, preview(str(refusal))))
    if finish == "content_filter":
        return reply(None, Rejection(REFUSED, "stopped by the content filter"))
    if not isinstance(content, str) or not content.strip():
        return reply(None, Rejection(MALFORMED, "empty answer"))
    if finish == "length":
        return reply(None, Rejection(MALFORMED, "answer cut off (max tokens)"))
    return reply(content)
