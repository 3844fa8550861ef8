"""One chat request, answered by a model or by a plain Python callable.

:class:`ChatModel` is ``llm:<model>`` through the shared client
(:mod:`pytest_chunkeval.llm.client`: key from ``OPENAI_API_KEY`` only, base URL
from ``OPENAI_BASE_URL``, 429/5xx retried by the ``openai`` client with backoff).
:class:`CallableModel` wraps ``fn(messages) -> str`` registered with a name and a
version. Both answer a list of chat messages with a :class:`Reply`: the text, or a
:class:`Rejection` for what a run can survive (HTTP errors after retries,
timeouts, malformed bodies, refusals); authentication, permission and
unknown-model errors raise :class:`LLMError` at once.

Both have an ``identity`` (``llm:<model>`` / ``<name>@<version>``) for the answer
cache key (:mod:`pytest_chunkeval.llm.answers`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pytest_chunkeval.core.locate import preview
from pytest_chunkeval.errors import UnavailableError
from pytest_chunkeval.llm.client import DEFAULT_BASE_URL, LazyClient, server_part
from pytest_chunkeval.util.secret import Secret, as_secret

Messages = list[dict[str, str]]

# Rejection reasons every role shares; roles add their own (e.g. "not verbatim").
MALFORMED = "malformed"
REFUSED = "refused"
API_ERROR = "api error"


class LLMError(UnavailableError):
    """A model cannot be used at all (bad key, unknown model, a server that keeps
    failing), or a callable answered with the wrong type."""


@dataclass(frozen=True)
class Rejection:
    """Why an answer was not usable (a reason such as :data:`MALFORMED`) and a
    detail for the summary."""

    reason: str
    detail: str


@dataclass(frozen=True)
class Reply:
    """What one request produced: text or a rejection, and the tokens it used."""

    content: str | None
    rejection: Rejection | None
    prompt_tokens: int = 0
    completion_tokens: int = 0


@runtime_checkable
class Answerer(Protocol):
    """Anything that answers chat messages and has a cache identity."""

    @property
    def identity(self) -> str: ...

    def __call__(self, messages: Messages) -> Reply: ...


class ChatModel:
    """``llm:<model>`` via the shared OpenAI client stack."""

    def __init__(
        self,
        model: str,
        *,
        who: str = "an LLM role",
        client: Any = None,
        api_key: str | Secret | None = None,
        base_url: str | Secret | None = None,
        temperature: float | None = 0.0,
        json_mode: bool = False,
        max_tokens: int | None = None,
        max_retries: int = 5,
        timeout: float = 120.0,
    ) -> None:
        # first: a traceback's locals then show the key and the URL redacted
        api_key, base_url = as_secret(api_key), as_secret(base_url)
        if not model.strip():
            raise ValueError("model name is empty")
        self.model = model
        self.temperature = temperature
        self.json_mode = json_mode
        self.max_tokens = max_tokens
        self._connection = LazyClient(
            who=who,
            api_key=api_key,
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout,
            error=LLMError,
            client=client,
        )

    @property
    def identity(self) -> str:
        """What answers, for the answer cache and the committed judgments: the
        model, a temperature other than 0 and, when it is not OpenAI's, the
        server (its URL without credentials, ``util/secret.url_identity``),
        read when used: one model name on two servers is two identities."""
        extra = "" if self.temperature in (None, 0.0) else f"@t={self.temperature:g}"
        server = server_part(self._connection.base_url_identity)
        return f"llm:{self.model}{extra}{server}"

    @property
    def base_url(self) -> str:
        return self._connection.base_url

    def __repr__(self) -> str:
        return f"ChatModel({self.model!r})"

    def __call__(self, messages: Messages) -> Reply:
        return request_chat(
            self._connection.get(),
            self.model,
            messages,
            temperature=self.temperature,
            json_mode=self.json_mode,
            max_tokens=self.max_tokens,
        )


class NamedVersion:
    """A user's function as a role (model, judge): its identity is its name and
    version, which key its cached answers; change the version when it changes."""

    name: str
    version: str

    @property
    def identity(self) -> str:
        return f"{self.name}@{self.version}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.identity!r})"


class CallableModel(NamedVersion):
    """A plain ``fn(messages) -> str`` as a model; ``version`` is its identity:
    change it when the function changes, or cached answers are reused."""

    def __init__(
        self, fn: Callable[[Messages], str], *, name: str, version: str
    ) -> None:
        if not callable(fn):
            raise TypeError(f"{name!r}: expected a callable, got {type(fn).__name__}")
        if not name.strip() or not str(version).strip():
            raise ValueError("a callable model needs a name and a version")
        self.fn = fn
        self.name = name
        self.version = str(version)

    def __call__(self, messages: Messages) -> Reply:
        answer = self.fn(messages)
        if not isinstance(answer, str):
            raise LLMError(
                f"{self.identity} returned {type(answer).__name__}, expected str"
            )
        if not answer.strip():
            return Reply(None, Rejection(MALFORMED, "empty answer"))
        return Reply(answer, None)


def _client_url(client: Any) -> str:
    return str(getattr(client, "base_url", "") or DEFAULT_BASE_URL).rstrip("/")


def request_chat(
    client: Any,
    model: str,
    messages: Messages,
    *,
    temperature: float | None = None,
    json_mode: bool = False,
    max_tokens: int | None = None,
    error: type[Exception] = LLMError,
) -> Reply:
    """One chat completion (see the module docstring for what raises ``error``)."""
    import openai

    kwargs: dict[str, Any] = {"model": model, "messages": messages}
    if temperature is not None:
        kwargs["temperature"] = temperature
    if json_mode:
        kwargs["response_format"] = {"type": "json_object"}
    if max_tokens is not None:
        kwargs["max_tokens"] = max_tokens
    where = f"{_client_url(client)}/chat/completions"
    try:
        response = client.chat.completions.create(**kwargs)
    except (
        openai.AuthenticationError,
        openai.PermissionDeniedError,
        openai.NotFoundError,
    ) as exc:
        raise error(
            f"{where} answered HTTP {exc.status_code} for model {model!r}: "
            f"{exc.message}"
        ) from None
    except openai.APIStatusError as exc:
        return Reply(
            None,
            Rejection(API_ERROR, f"{where}: HTTP {exc.status_code}: {exc.message}"),
        )
    except openai.APIError as exc:  # connection errors, timeouts
        detail = f"{where}: {type(exc).__name__}: {exc}"
        return Reply(None, Rejection(API_ERROR, detail))
    except ValueError as exc:  # a body that is not JSON
        return Reply(
            None, Rejection(MALFORMED, f"{where}: malformed response body ({exc})")
        )
    usage = getattr(response, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)

    def reply(content: str | None, rejection: Rejection | None = None) -> Reply:
        return Reply(content, rejection, prompt_tokens, completion_tokens)

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
