"""One way to build an ``openai.OpenAI`` client, shared by every OpenAI feature.

The key comes from the caller or ``OPENAI_API_KEY``, the API root from the caller or
``OPENAI_BASE_URL`` (any OpenAI-compatible server). A local server (Ollama, LM
Studio, vLLM) usually needs no key: with a base URL and no key a placeholder is sent.
429 and 5xx answers are retried by the client with exponential backoff. The key is
never stored here beyond the client itself: only a digest decides when to rebuild.
Key and URL are held as ``util/secret.Secret`` (shown redacted everywhere).
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
from typing import Any

from pytest_chunkeval.util.secret import Secret, as_secret, redact_url, url_identity

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEYLESS_PLACEHOLDER = "no-key"  # the client insists on a key; keyless servers ignore it


def _key(api_key: str | Secret | None) -> Secret | None:
    return as_secret(api_key) or as_secret(os.environ.get("OPENAI_API_KEY"))


def _url(base_url: str | Secret | None) -> Secret | None:
    return as_secret(base_url) or as_secret(os.environ.get("OPENAI_BASE_URL"))


def base_url_of(base_url: str | Secret | None) -> str:
    """The API root requests go to, as it may be shown (credentials in it
    redacted, ``util/secret.py``): the argument, ``OPENAI_BASE_URL``, or
    OpenAI's."""
    url = _url(base_url)
    return DEFAULT_BASE_URL if url is None else redact_url(url)


def base_url_identity(base_url: str | Secret | None) -> str:
    """The API root as an identity names it: without user info or keys."""
    url = _url(base_url)
    return url_identity(DEFAULT_BASE_URL if url is None else url)


def client_url_identity(client: Any) -> str:
    """The API root of an OpenAI client object (its ``base_url``, else
    OpenAI's) as an identity names it: without user info or keys."""
    url = getattr(client, "base_url", None)
    if url is None or url == "":
        return url_identity(DEFAULT_BASE_URL)
    return url_identity(url if isinstance(url, Secret) else str(url))


def server_part(server: str, sep: str = "+server=") -> str:
    """What an identity says of its server: nothing for OpenAI's API, else
    ``sep`` and the server (its URL without credentials)."""
    return "" if server == url_identity(DEFAULT_BASE_URL) else f"{sep}{server}"


def openai_client(
    *,
    who: str,
    api_key: str | Secret | None = None,
    base_url: str | Secret | None = None,
    max_retries: int = 5,
    timeout: float = 60.0,
    error: type[Exception] = RuntimeError,
) -> Any:
    """A client for ``who`` (named in errors); ``error`` is the exception raised for
    a missing key or a missing ``openai`` package. The key and the URL stay
    :class:`~pytest_chunkeval.util.secret.Secret` in every local variable (a
    traceback's locals print them redacted)."""
    key, url = _key(api_key), _url(base_url)
    api_key = base_url = None  # only the Secrets stay in this frame
    if key is None:
        if url is None:
            raise error(
                f"{who} needs an API key: set the OPENAI_API_KEY environment variable "
                "(for an OpenAI-compatible server without keys, set OPENAI_BASE_URL "
                "or give its base URL)"
            )
        key = Secret(KEYLESS_PLACEHOLDER)
    try:
        import openai
    except ImportError as exc:
        raise error(
            f"{who} needs the openai package: pip install 'pytest-chunkeval[openai]'"
        ) from exc
    return openai.OpenAI(
        api_key=key.reveal(),
        base_url=None if url is None else url.reveal(),
        max_retries=max_retries,
        timeout=timeout,
    )


class LazyClient:
    """A client built at first use and rebuilt when the key or URL in the
    environment changes, so a run that needs no request needs no key."""

    def __init__(
        self,
        *,
        who: str,
        api_key: str | Secret | None = None,
        base_url: str | Secret | None = None,
        max_retries: int = 5,
        timeout: float = 60.0,
        error: type[Exception] = RuntimeError,
        client: Any = None,
    ) -> None:
        self.who = who
        self._api_key = as_secret(api_key)
        self._base_url = as_secret(base_url)
        api_key = base_url = None  # only the Secrets stay in this frame
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
        """Where requests go, as it may be shown (credentials redacted)."""
        return base_url_of(self._base_url)

    @property
    def base_url_identity(self) -> str:
        """Where requests go, as an identity names it (no credentials): the
        given client's own root when a client was given."""
        given = getattr(self._given, "base_url", None)
        if given is not None and not callable(given):  # a str, an httpx URL
            return client_url_identity(self._given)
        return base_url_identity(self._base_url)

    def get(self) -> Any:
        """The client (the caller's own when one was given)."""
        if self._given is not None:
            return self._given
        key, url = _key(self._api_key), _url(self._base_url)
        settings = hashlib.sha256(
            b"\0".join(b"" if s is None else s.reveal().encode() for s in (key, url))
        ).hexdigest()
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
