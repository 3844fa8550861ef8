"""The one disk cache of LLM answers, shared by every LLM role.

Generation, the LLM chunker, judging and relationship extraction all store what a
model (or a registered Python callable) answered here, so a re-run, a resumed run or
another role with the same question never pays for it twice.

An answer is keyed by :class:`AnswerKey`:

- ``role``: who asks (``"judge"``, ``"generate"``, ``"chunker"``, ``"relations"``...);
- ``identity``: what answers: ``llm:<model>`` or ``<callable name>@<version>``,
  plus anything else that changes the answer (temperature...), as the role decides;
- ``prompt_version``: bump it when the prompt or the parsing changes;
- ``input``: a digest of everything the answer depends on, from
  :func:`hash_input` (for a judge: question, exact context text, splitter).

The value is any JSON value (a role stores what it needs: raw text, parsed spans).

Layout (under the evaluation cache, ``default_cache_dir()``; one kind of
``util/verified.py`` entry, ``util/cache_kinds.py``)::

    <cache>/answers/<aa>/<digest>.ans          one entry; <digest> hashes the whole key
    <cache>/answers/<aa>/<digest>.ans.corrupt  an entry that failed its check

An entry is checked as every cache entry is (``util/verified.py``: its header's
SHA-256 of the digest and the payload), and its payload, the key's parts and the
value as JSON, must name this key: an entry that fails is never trusted, it is
reported with :class:`AnswerCacheWarning`, set aside as ``*.corrupt`` and the
caller computes the answer again. Entries are written atomically, so concurrent
processes (pytest-xdist workers, parallel CI jobs) see a whole entry or none;
two processes storing the same key write the same answer and the last rename
wins. Answers an earlier version stored (``*.json`` under a folder per role and
answerer, with a checksum of their own) are not read: asked again once.

Typical use (see :mod:`pytest_chunkeval.llm.batch` for asking many at once)::

    cache = AnswerCache(default_cache_dir())
    key = AnswerKey("judge", "llm:gpt-4o-mini", "1", hash_input([question, context]))
    entry = cache.get(key)
    if entry is None:
        value = ask(...)
        cache.put(key, value)
    else:
        value = entry.value
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from pytest_chunkeval.util.cache_kinds import verified_store
from pytest_chunkeval.util.files import ensure_cache_root
from pytest_chunkeval.util.verified import (
    SET_ASIDE,
    CacheWarning,
    EntryRefused,
    VerifiedStore,
)

FORMAT = "chunkeval-answer/2"
LLM_ROLES = ("chunker", "generate", "judge", "relations")
"""The roles the package's LLM features ask under (``chunkeval cache clear
--role`` takes these and any other role found in the cache)."""

_ROLE = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


AnswerCacheWarning = CacheWarning
"""A cached answer could not be trusted (corrupt, foreign key): it is set aside
and computed again (``util/verified.py``'s warning)."""


def hash_input(value: Any) -> str:
    """SHA-256 (hex) of a JSON value in canonical form: what an answer depends on.

    Strings are hashed exactly (no normalization): a context that differs by one
    space is another input.
    """
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class AnswerKey:
    """What determines one answer (see the module docstring)."""

    role: str
    identity: str
    prompt_version: str
    input: str

    def __post_init__(self) -> None:
        if not _ROLE.match(self.role):
            raise ValueError(
                f"answer cache role {self.role!r}: expected a short lower-case name "
                "such as 'judge'"
            )
        if not self.identity.strip():
            raise ValueError("answer cache identity is empty")
        if not isinstance(self.prompt_version, str):
            kind = type(self.prompt_version).__name__
            raise TypeError(f"prompt_version must be a str, got {kind}")
        if not re.fullmatch(r"[0-9a-f]{64}", self.input):
            raise ValueError(
                f"answer cache input {self.input!r}: expected a SHA-256 hex digest "
                "(use hash_input())"
            )

    def digest(self) -> str:
        """The entry's file name: a hash of the whole key."""
        return hash_input(
            [FORMAT, self.role, self.identity, self.prompt_version, self.input]
        )

    def as_dict(self) -> dict[str, str]:
        return {
            "role": self.role,
            "identity": self.identity,
            "prompt_version": self.prompt_version,
            "input": self.input,
        }


@dataclass(frozen=True)
class CachedAnswer:
    """A verified entry: its value and when it was stored (UTC ISO-8601)."""

    value: Any
    created: str


@dataclass
class AnswerStats:
    """Lookups of one :class:`AnswerCache` object, cumulative."""

    hits: int = 0
    misses: int = 0
    corrupt: int = 0
    writes: int = 0
    by_role: dict[str, list[int]] = field(default_factory=dict)

    def _count(self, role: str, hit: bool) -> None:
        counts = self.by_role.setdefault(role, [0, 0])
        counts[0 if hit else 1] += 1


class RoleInfo(TypedDict):
    """What :meth:`AnswerCache.info` reports for one role."""

    entries: int
    bytes: int
    identities: dict[str, int]


class AnswerCache:
    """Verified, atomic, process-safe answers under ``<directory>/answers``.

    ``directory`` is the evaluation cache directory (the embedding cache's);
    ``store``: its ``answers`` entries when a ``CacheDir`` owns them
    (``engine/cache_dir.py``). Nothing is created until the first :meth:`put`.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        read_only: bool = False,
        store: VerifiedStore | None = None,
    ) -> None:
        self.directory = Path(directory)
        self._store = store or verified_store(self.directory, "answers", read_only)
        self._store.read_only = self._store.read_only or read_only
        self.root = self._store.directory
        self.stats = AnswerStats()

    @property
    def read_only(self) -> bool:
        """Answers are read, never stored (a read-only cache directory)."""
        return self._store.read_only

    @read_only.setter
    def read_only(self, value: bool) -> None:
        self._store.read_only = value

    def __repr__(self) -> str:
        return f"AnswerCache({str(self.directory)!r})"

    def path(self, key: AnswerKey) -> Path:
        """Where the entry of ``key`` lives (whether or not it exists)."""
        return self._store.path(key.digest())

    def get(self, key: AnswerKey) -> CachedAnswer | None:
        """The verified answer for ``key``, or None (missing or not trustworthy)."""
        digest = key.digest()
        present = self._store.path(digest).exists()
        record = self._store.get(digest, lambda payload: _decode(payload, key))
        if record is None:
            self.stats.corrupt += present
            self.stats.misses += 1
            self.stats._count(key.role, False)
            return None
        self.stats.hits += 1
        self.stats._count(key.role, True)
        return CachedAnswer(record["value"], str(record.get("created", "")))

    def put(self, key: AnswerKey, value: Any) -> Path:
        """Store ``value`` (JSON-serializable) for ``key``; returns the entry's path
        (nothing is written when the cache is read-only or its disk refused a
        write: warned about once, ``util/verified.py``)."""
        record: dict[str, Any] = {
            "format": FORMAT,
            **key.as_dict(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "value": value,
        }
        try:
            text = json.dumps(record, ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"answer for role {key.role!r} is not JSON-serializable: {exc}"
            ) from exc
        path = self.path(key)
        if self.read_only:
            return path
        with contextlib.suppress(OSError):  # a refused write is the store's to tell
            ensure_cache_root(self.directory)
        self._store.put(key.digest(), text.encode("utf-8", "surrogatepass"))
        self.stats.writes += not self.read_only
        return path

    # ----------------------------------------------------------------- listing

    def _entries(
        self, role: str | None = None
    ) -> Iterator[tuple[Path, dict[str, Any]]]:
        """Every entry (of ``role``) that passes its check, with its record."""
        for path in self._store.entries():
            digest = path.name.removesuffix(self._store.suffix)
            record = self._store.get(digest, _record)
            if record is not None and role in (None, record.get("role")):
                yield path, record

    def info(self) -> dict[str, RoleInfo]:
        """Per role: entries, bytes, entries per identity."""
        result: dict[str, RoleInfo] = {}
        for path, record in self._entries():
            role = str(record.get("role"))
            info = result.setdefault(role, RoleInfo(entries=0, bytes=0, identities={}))
            with contextlib.suppress(FileNotFoundError):
                info["bytes"] += path.stat().st_size
            info["entries"] += 1
            identity = str(record.get("identity"))
            info["identities"][identity] = info["identities"].get(identity, 0) + 1
        return result

    def set_aside(self) -> int:
        """Entries that failed their check, kept aside (whose role is not known)."""
        return len(list(self.root.glob(f"*/*{self._store.suffix}{SET_ASIDE}")))

    def clear(self, role: str | None = None, identity: str | None = None) -> int:
        """Delete the entries of one role / identity (all if None, set-aside ones
        too); returns how many entries were removed."""
        if role is None and identity is None:
            return self._store.clear()
        removed = 0
        for path, record in list(self._entries(role)):
            if identity is None or record.get("identity") == identity:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    removed += 1
        return removed


def _record(payload: memoryview) -> dict[str, Any]:
    """An entry's record (its checksum passed), else :class:`EntryRefused`."""
    try:
        record = json.loads(bytes(payload).decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise EntryRefused(f"not valid JSON: {exc}") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise EntryRefused(f"not an answer of format {FORMAT!r}")
    if "value" not in record:
        raise EntryRefused("no value")
    return record


def _decode(payload: memoryview, key: AnswerKey) -> dict[str, Any]:
    """The record of ``key``'s entry: whole, and stored for this very key."""
    record = _record(payload)
    for name, expected in key.as_dict().items():
        if record.get(name) != expected:
            raise EntryRefused(f"stored for another {name} ({record.get(name)!r})")
    return record
