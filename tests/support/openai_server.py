"""A small OpenAI-compatible HTTP server for tests: no network, stdlib + numpy only.

Use it with the real ``openai`` client::

    from support.openai_server import OpenAIServer

    with OpenAIServer(api_key="sk-test") as server:
        client = openai.OpenAI(api_key="sk-test", base_url=server.base_url)
        # or: monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)

        server.enqueue_error("embeddings", 429, headers={"retry-after-ms": "1"})
        client.embeddings.create(model="m", input=["a", "b"])   # 429, retried, 200

        server.enqueue_chat("split_after: 3, 5")                # next chat answer
        server.enqueue_raw("chat", 200, b"{not json")           # malformed body
        server.chat_handler = lambda request: "..."             # queue empty: ask this
        server.embedding_handler = lambda request: None         # None: the default

        server.requests                   # every request, in order (RecordedRequest)
        server.requests_to("embeddings")  # only those of one route
        server.embedded                   # Counter: texts answered with a vector
        server.embedding_delay = 0.05     # seconds each embeddings answer waits
        server.max_in_flight              # most embeddings requests served at once

Routes (under ``/v1``):

- ``POST /embeddings``: deterministic vectors, :meth:`OpenAIServer.embedding_vector`
  of each input (``dimensions`` from the request, else ``embedding_dim``), as floats or
  base64 per ``encoding_format``, like the real API. ``max_inputs`` (default 2048)
  rejects larger batches with HTTP 400. Each answer waits ``embedding_delay``
  seconds first (a server's fixed cost per request; requests are served
  concurrently), and counts its inputs in ``embedded``.
  ``embedding_handler(request_json)``, when set, is asked first (after the
  scripted queue): a :class:`ScriptedResponse` answers instead, None lets the
  default answer.
- ``POST /chat/completions``: the next scripted response of the ``"chat"`` queue, else
  ``chat_handler(request_json)``, else HTTP 400 "no scripted response" (400, not 5xx,
  so the client does not retry and the test fails at once).

Scripted responses (``enqueue*``) are consumed first-in first-out per route and take
precedence over the default behaviour; each has a status, a body (dict -> JSON, str or
bytes sent as is) and headers. Send ``retry-after-ms`` with a 429/5xx to keep the
client's backoff short. With ``api_key`` set, a request without
``Authorization: Bearer <api_key>`` gets HTTP 401 (and is still recorded).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from support.openai_bodies import (  # re-exported: tests import them from here
    ScriptedResponse,
    chat_completion,
    error_body,
)

ROUTES = {"embeddings": "/v1/embeddings", "chat": "/v1/chat/completions"}


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON (None if it is not JSON)."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def route(self) -> str | None:
        """``"embeddings"``, ``"chat"`` or None."""
        for name, path in ROUTES.items():
            if self.path.split("?", 1)[0] == path:
                return name
        return None


__all__ = ["OpenAIServer", "RecordedRequest", "ScriptedResponse"]
__all__ += ["chat_completion", "error_body"]

ChatHandler = Callable[[Any], "str | ScriptedResponse"]
EmbeddingHandler = Callable[[Any], "ScriptedResponse | None"]


class OpenAIServer:
    """An OpenAI-compatible server on ``127.0.0.1`` and a free port, in a thread."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        embedding_dim: int = 32,
        max_inputs: int = 2048,
        host: str = "127.0.0.1",
    ) -> None:
        self.api_key = api_key
        self.embedding_dim = embedding_dim
        self.max_inputs = max_inputs
        self.chat_handler: ChatHandler | None = None
        self.embedding_handler: EmbeddingHandler | None = None
        self.embedding_delay = 0.0
        self.embedded: Counter[str] = Counter()
        self.max_in_flight = 0
        self._in_flight = 0
        self._host = host
        self._lock = threading.Lock()
        self._queues: dict[str, deque[ScriptedResponse]] = {
            name: deque() for name in ROUTES
        }
        self._requests: list[RecordedRequest] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> OpenAIServer:
        """Bind a free port and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        handler = type("_Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer((self._host, 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},  # quick stop() at teardown
            name="openai-test-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("OpenAIServer is not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{self._host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What to give ``openai.OpenAI(base_url=...)`` / ``OPENAI_BASE_URL``."""
        return f"{self.url}/v1"

    # -- scripting

    def enqueue(self, route: str, response: ScriptedResponse) -> None:
        """Queue ``response`` for the next request to ``route`` (embeddings/chat)."""
        if route not in ROUTES:
            raise ValueError(f"unknown route {route!r}; one of {sorted(ROUTES)}")
        with self._lock:
            self._queues[route].append(response)

    def enqueue_chat(
        self, content: str, *, model: str = "test-model", finish_reason: str = "stop"
    ) -> None:
        """Queue a successful chat completion answering ``content``."""
        self.enqueue(
            "chat",
            ScriptedResponse(
                200, chat_completion(content, model=model, finish_reason=finish_reason)
            ),
        )

    def enqueue_error(
        self,
        route: str,
        status: int,
        message: str = "scripted error",
        *,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Queue an OpenAI-style error (e.g. 429 with ``retry-after-ms``, 500)."""
        self.enqueue(
            route, ScriptedResponse(status, error_body(message), dict(headers or {}))
        )

    def enqueue_raw(
        self,
        route: str,
        status: int,
        body: bytes | str,
        *,
        content_type: str = "application/json",
    ) -> None:
        """Queue a body sent verbatim (malformed JSON, truncated answers)."""
        raw = body.encode("utf-8") if isinstance(body, str) else body
        self.enqueue(
            route, ScriptedResponse(status, raw, {"content-type": content_type})
        )

    def pending(self, route: str) -> int:
        """Scripted responses of ``route`` not consumed yet."""
        with self._lock:
            return len(self._queues[route])

    def _next_scripted(self, route: str) -> ScriptedResponse | None:
        with self._lock:
            queue = self._queues[route]
            return queue.popleft() if queue else None

    # -- records

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, route: str) -> list[RecordedRequest]:
        """The requests of one route ("embeddings" or "chat")."""
        return [r for r in self.requests if r.route == route]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    # -- default behaviour

    @staticmethod
    def embedding_vector(
        text: str, dim: int = 32
    ) -> np.ndarray[Any, np.dtype[np.float32]]:
        """The (not normalized) float32 vector the server returns for ``text``."""
        seed = int.from_bytes(
            hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little"
        )
        return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)

    def _embeddings(self, payload: Any) -> ScriptedResponse:
        if (
            not isinstance(payload, dict)
            or "input" not in payload
            or "model" not in payload
        ):
            return ScriptedResponse(
                400,
                error_body(
                    "'model' and 'input' are required", kind="invalid_request_error"
                ),
            )
        inputs = payload["input"]
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            return ScriptedResponse(
                400,
                error_body(
                    "'input' must be a string or a list of strings",
                    kind="invalid_request_error",
                ),
            )
        if any(t == "" for t in inputs):
            return ScriptedResponse(
                400,
                error_body(
                    "'$.input' is invalid: empty string", kind="invalid_request_error"
                ),
            )
        if len(inputs) > self.max_inputs:
            return ScriptedResponse(
                400,
                error_body(
                    f"too many inputs: {len(inputs)} > {self.max_inputs}",
                    kind="invalid_request_error",
                ),
            )
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        time.sleep(self.embedding_delay)
        with self._lock:
            self._in_flight -= 1
            self.embedded.update(inputs)
        dim = int(payload.get("dimensions") or self.embedding_dim)
        as_base64 = payload.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(inputs):
            vector = self.embedding_vector(text, dim)
            encoded: Any = (
                base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
                if as_base64
                else [float(x) for x in vector]
            )
            data.append({"object": "embedding", "index": i, "embedding": encoded})
        tokens = sum(len(t.split()) for t in inputs)
        return ScriptedResponse(
            200,
            {
                "object": "list",
                "data": data,
                "model": payload["model"],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _chat(self, payload: Any) -> ScriptedResponse:
        if self.chat_handler is None:
            return ScriptedResponse(
                400,
                error_body(
                    "OpenAIServer: no scripted response queued for "
                    "/v1/chat/completions",
                    kind="invalid_request_error",
                ),
            )
        answer = self.chat_handler(payload)
        if isinstance(answer, ScriptedResponse):
            return answer
        model = (
            payload.get("model", "test-model")
            if isinstance(payload, dict)
            else "test-model"
        )
        return ScriptedResponse(200, chat_completion(answer, model=model))

    def _respond(self, request: RecordedRequest) -> ScriptedResponse:
        self._record(request)
        route = request.route
        if route is None or request.method != "POST":
            return ScriptedResponse(
                404,
                error_body(
                    f"no route {request.method} {request.path}",
                    kind="invalid_request_error",
                ),
            )
        if (
            self.api_key is not None
            and request.headers.get("authorization") != f"Bearer {self.api_key}"
        ):
            return ScriptedResponse(
                401,
                error_body(
                    "Incorrect API key provided",
                    kind="invalid_request_error",
                    code="invalid_api_key",
                ),
            )
        scripted = self._next_scripted(route)
        if scripted is not None:
            return scripted
        payload = request.json
        if route == "embeddings" and self.embedding_handler is not None:
            answer = self.embedding_handler(payload)
            if answer is not None:
                return answer
        return (
            self._embeddings(payload) if route == "embeddings" else self._chat(payload)
        )


class _Handler(BaseHTTPRequestHandler):
    server_state: OpenAIServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        try:
            response = self.server_state._respond(request)
        except Exception as exc:  # a bug in a test's chat_handler: say so
            response = ScriptedResponse(
                400, error_body(f"OpenAIServer handler failed: {exc!r}")
            )
        if response.delay:
            time.sleep(response.delay)
        payload, content_type = response.encode()
        self.send_response(response.status)
        headers = {
            "content-type": content_type,
            **{k.lower(): v for k, v in response.headers.items()},
        }
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_POST = _handle
    do_GET = _handle

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests read server.requests, not stderr
