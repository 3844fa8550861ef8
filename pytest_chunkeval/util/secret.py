"""Secrets (API keys, passwords in connection strings, credentials in URLs) held
so that nothing prints them (docs/embedders.md, "openai:MODEL").

A :class:`Secret`'s ``str``, ``repr``, ``format`` and pickle-free JSON show
``***``; only :meth:`Secret.reveal` gives the value, to be called in the
argument list of the call that needs it, so that no local variable of a frame
holds it (pytest's ``--showlocals`` prints every local with ``repr``).
Identities, files and reports never contain a secret: a URL is shown as
:func:`redact_url` writes it and named in an identity as :func:`url_identity`
does, without its user info or its key-like query parameters.
"""

from __future__ import annotations

import hmac
from typing import Any
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "***"

# Query parameters that carry credentials (Azure's api-key, signed URLs...).
_KEY_PARAMS = frozenset(
    {
        "key",
        "api_key",
        "api-key",
        "apikey",
        "access_token",
        "token",
        "auth",
        "password",
        "pass",
        "secret",
        "sig",
        "signature",
        "code",
    }
)


class Secret:
    """A secret string: shown everywhere as ``***``, given only by :meth:`reveal`."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if isinstance(value, Secret):
            value = value.reveal()
        if not isinstance(value, str):
            raise TypeError(f"a Secret holds a str, not {type(value).__name__}")
        self._value = value

    def reveal(self) -> str:
        """The value: pass it straight to the call that needs it."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"

    def __str__(self) -> str:
        return REDACTED

    def __format__(self, spec: str) -> str:
        return format(REDACTED, spec)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: Any) -> Secret:
        return self

    def __reduce__(self) -> Any:
        # Pickles end up in files and worker channels: a secret is not sent.
        raise TypeError("a Secret is not pickled; pass it again where needed")


def as_secret(value: str | Secret | None) -> Secret | None:
    """``value`` as a :class:`Secret` (None and ``""`` stay absent)."""
    if value is None or isinstance(value, Secret):
        return value or None
    return Secret(value) if value else None


def _split(url: str | Secret) -> SplitResult:
    return urlsplit(url.reveal() if isinstance(url, Secret) else url)


def _host(parts: SplitResult) -> str:
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return host + (f":{port}" if port is not None else "")


def redact_url(url: str | Secret) -> str:
    """``url`` as it may be shown: a password in its user info and the values of
    key-like query parameters replaced by ``***``."""
    parts = _split(url)
    netloc = _host(parts)
    if parts.username is not None:
        user = parts.username + (f":{REDACTED}" if parts.password is not None else "")
        netloc = f"{user}@{netloc}"
    query = [
        (k, REDACTED if k.lower() in _KEY_PARAMS else v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit(
        (parts.scheme, netloc, parts.path, urlencode(query, safe="*"), "")
    )


def url_identity(url: str | Secret) -> str:
    """What names a server in an identity: scheme, host, port and path, with the
    query parameters that are not credentials; never user info or a key (two
    keys of one server get the same vectors)."""
    parts = _split(url)
    query = sorted(
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in _KEY_PARAMS
    )
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, _host(parts), path, urlencode(query), ""))


def has_credentials(url: str | Secret) -> bool:
    """Whether ``url`` holds a user, a password or a key-like query parameter."""
    parts = _split(url)
    return parts.username is not None or any(
        k.lower() in _KEY_PARAMS for k, _ in parse_qsl(parts.query)
    )
