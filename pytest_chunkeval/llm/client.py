"""One way to build an ``openai.OpenAI`` client, shared by every OpenAI feature.

The key comes from the caller or ``OPENAI_API_KEY``, the API root from the caller or
``OPENAI_BASE_URL`` (any OpenAI-compatible server). A local server (Ollama, LM
Studio, vLLM) usually needs no key: with a base URL and no key a placeholder is sent.
429 and 5xx answers are retried by the client with exponential backoff. The key is
never stored here beyond the client itself: only a digest decides when to rebuild.
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
from typing import Any

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEYLESS_PLACEHOLDER = "no-key"  # the client insists on a key; keyless servers ignore it


def base_url_of(base_url: str | None) -> str:
    """The API root requests go to: the argument, ``OPENAI_BASE_URL``, or OpenAI's."""
    return base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL


def openai_client(
    *,
    who: str,
    api_key: str | None = None,
    base_url: str | None = None,
    max_retries: int = 5,
    timeout: float = 60.0,
    error: type[Exception] = RuntimeError,
) -> Any:
    """A client for ``who`` (named in errors); ``error`` is the exception raised for
    a missing key or a missing ``openai`` package."""
    key = api_key or os.environ.get("OPENAI_API_KEY")
    url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    if not key:
        if url is None:
            raise error(
                f"{who} needs an API key: set the OPENAI_API_KEY environment variable "
                "(for an OpenAI-compatible server without keys, set OPENAI_BASE_URL "
                "or give its base URL)"
            )
        key = KEYLESS_PLACEHOLDER
    try:
        import openai
    except ImportError as exc:
        raise error(
            f"{who} needs the openai package: pip install 'pytest-chunkeval[openai]'"
        ) from exc
    return openai.OpenAI(
        api_key=key, base_url=url, max_retries=max_retries, timeout=timeout
    )


class LazyClient:
    """A client built at first use and rebuilt when the key or URL in the
    environment changes, so a run that needs no request needs no key."""

    def __init__(
        self,
        *,
        who: str,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 5,
        timeout: float = 60.0,
        error: type[Exception] = RuntimeError,
        client: Any = None,
    ) -> None:
        self.who = who
        self._api_key = api_key
        self._base_url = base_url
        self.max_retries = max_retries
        self.timeout = timeout
        self._error = error
        self._given = client
        self._client: Any = None
        self._built_for: str | None = None
        self._lock = threading.RLock()
        self._closer: weakref.finalize[[], LazyClient] | None = None

    @property
    def base_url(self) -> str:
        return base_url_of(self._base_url)

    def get(self) -> Any:
        """The client (the caller's own when one was given)."""
        if self._given is not None:
            return self._given
        key = self._api_key or os.environ.get("OPENAI_API_KEY") or ""
        url = self._base_url or os.environ.get("OPENAI_BASE_URL") or ""
        settings = hashlib.sha256(f"{key}\0{url}".encode()).hexdigest()
        with self._lock:  # a batch's threads ask at once: build one client
            if self._client is None or self._built_for != settings:
                self.close()
                self._client = openai_client(
                    who=self.who,
                    api_key=self._api_key,
                    base_url=self._base_url,
                    max_retries=self.max_retries,
                    timeout=self.timeout,
                    error=self._error,
                )
                self._built_for = settings
                # Its connections are closed when this object goes, not left to
                # the garbage collector (which reports each open socket as a leak).
                self._closer = weakref.finalize(self, self._client.close)
            return self._client

    def close(self) -> None:
        """Close the client built here (never the caller's own); the next request
        builds a new one."""
        with self._lock:
            if self._closer is not None:
                self._closer()
            self._client = self._closer = None
            self._built_for = None
