"""Other libraries' embedding objects as embedders: a LangChain ``Embeddings``, a
Chroma ``EmbeddingFunction`` (docs/embedders.md, "In Python").

Such an object is named after its class and model (``langchain:CLASS:MODEL``,
``chroma:NAME:CONFIG``), but a name is a cache key only when it determines the
vectors. Its vectors are cached under:

- the ``identity=`` given, or a ``cache_version`` the object declares (the user's
  promise, as for a function);
- else a derived identity, only when everything that computes the vectors is in
  it: the class comes from a LangChain or Chroma distribution (its version is
  in the identity: the code), and its settings (a LangChain object's declared
  fields, the model among them; a named Chroma function's ``get_config()``) are
  plain data (digested; credentials left out, URLs without user info or keys)
  naming no local file or folder (whose contents no name can see);
- else nothing: it is embedded every time (:attr:`ForeignEmbedder.cache_identity`
  is None), as a function without a ``cache_version`` is.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import json
import os
import re
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from pytest_chunkeval.embedders.adapters import (
    CallableEmbedder,
    chroma_identity,
    langchain_identity,
)
from pytest_chunkeval.util.secret import url_identity

LIBRARIES = ("langchain", "chroma")
"""The distributions whose classes are trusted to be versioned code (their name
contains one of these)."""

_CREDENTIAL = re.compile(
    r"(^|[_-])(api_?key|key|keys|token|access_token|secret|password|passwd|"
    r"credentials?|auth|authorization)$",
    re.IGNORECASE,
)


class _NotDetermining(Exception):
    """A setting whose value does not say what it does (an object, a path)."""


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    from importlib.metadata import packages_distributions

    return packages_distributions()


def library_of(cls: type) -> str | None:
    """``DIST==VERSION`` of the LangChain or Chroma distribution that defines
    ``cls``; None for a class of any other origin (a user's own)."""
    from importlib.metadata import PackageNotFoundError, version

    top = cls.__module__.split(".", 1)[0]
    for dist in _distributions().get(top, []):
        if any(library in dist.lower() for library in LIBRARIES):
            try:
                return f"{dist}=={version(dist)}"
            except PackageNotFoundError:
                return None
    return None


def _plain(value: Any, name: str) -> Any:
    """``value`` as JSON data for a digest: credentials as None, URLs without
    credentials; :class:`_NotDetermining` for anything else."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, enum.Enum):
        return _plain(value.value, name)
    if type(value).__name__.startswith("Secret") or _CREDENTIAL.search(name):
        return None  # a key changes no vector (docs/embedders.md)
    if isinstance(value, str):
        if "://" in value:
            return url_identity(value)
        if value.strip() and len(value) < 4096 and os.path.exists(value):
            raise _NotDetermining(name)  # a local model: its files decide
        return value
    if isinstance(value, list | tuple):
        return [_plain(item, name) for item in value]
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return {k: _plain(v, k) for k, v in sorted(value.items())}
    raise _NotDetermining(name)


def settings_digest(settings: Mapping[str, Any]) -> str | None:
    """A digest of plain settings; None when one is not plain data or names a
    local file or folder."""
    try:
        data = {name: _plain(value, name) for name, value in settings.items()}
    except _NotDetermining:
        return None
    blob = json.dumps(data, sort_keys=True).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def langchain_settings(obj: object) -> dict[str, Any] | None:
    """A pydantic LangChain object's declared fields and their values (those
    marked ``exclude``, its clients, left out); None for another object, whose
    settings are not declared."""
    fields = getattr(type(obj), "model_fields", None)
    if not isinstance(fields, Mapping):
        return None
    return {
        name: getattr(obj, name, None)
        for name, info in fields.items()
        if getattr(info, "exclude", None) is not True
    }


def chroma_settings(ef: object) -> dict[str, Any] | None:
    """A Chroma function's ``get_config()`` (``device`` left out), None without."""
    try:
        config = ef.get_config()  # type: ignore[attr-defined]
    except Exception:
        return None
    if not isinstance(config, dict):
        return None
    return {k: v for k, v in config.items() if k != "device"}


def chroma_name(ef: object) -> str | None:
    """A Chroma function's ``name()``, None without one."""
    with warnings.catch_warnings():  # legacy functions warn from name()
        warnings.simplefilter("ignore")
        try:
            name = ef.name()  # type: ignore[attr-defined]
        except Exception:
            return None
    return name if isinstance(name, str) and name else None


class ForeignEmbedder(CallableEmbedder):
    """A LangChain object (``langchain``) or a Chroma function, embedding through
    ``fn``; its identities read when used (the module docstring)."""

    def __init__(
        self,
        obj: object,
        fn: Callable[[list[str]], Any],
        *,
        langchain: bool,
        identity: str | None = None,
    ) -> None:
        super().__init__(fn, identity=identity)
        self.obj = obj
        self.langchain = langchain

    @property
    def identity(self) -> str:
        """The ``identity=`` given, else its class and model (LangChain) or name
        and configuration (Chroma): what reports and baselines show."""
        if self._identity:
            return self._identity
        if self.langchain:
            return langchain_identity(self.obj)
        return chroma_identity(self.obj)

    @property
    def cache_identity(self) -> str | None:
        """What its vectors are cached under (the module docstring), None:
        embedded every time."""
        if self._identity:
            return self._identity
        version = getattr(self.obj, "cache_version", None)
        if isinstance(version, str) and version:
            return f"{self.identity}?cache_version={version}"
        library = library_of(type(self.obj))
        if library is None:
            return None
        if self.langchain:
            settings = langchain_settings(self.obj)
        elif chroma_name(self.obj) is not None:
            settings = chroma_settings(self.obj)
        else:
            settings = None
        digest = None if settings is None else settings_digest(settings)
        return None if digest is None else f"{self.identity}@{library}#{digest}"

    def __repr__(self) -> str:
        return f"ForeignEmbedder({self.identity!r})"
