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

Layout (under the evaluation cache, ``default_cache_dir()``)::

    <cache>/answers/<role>/<identity-slug>-<hash>/
        identity.txt                  the identity, for `chunkeval cache info`
        <aa>/<digest>.json            one entry; <digest> hashes the whole key
        <aa>/<digest>.json.corrupt    an entry that failed its check, set aside

Every entry holds its full key and a SHA-256 checksum of key + value. A read
verifies both: an entry that is unreadable, of another key (a digest collision, a
copied file) or whose checksum fails is never trusted: it is reported with
:class:`AnswerCacheWarning`, set aside as ``*.corrupt`` and the caller computes the
answer again. Entries are written atomically (temp file + rename,
:mod:`pytest_chunkeval.util.files`), so concurrent processes (pytest-xdist workers,
parallel CI jobs) see a whole entry or none; two processes storing the same key
write the same answer and the last rename wins.

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
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from pytest_chunkeval.errors import ChunkevalWarning
from pytest_chunkeval.util.files import atomic_write_text, ensure_cache_root
from pytest_chunkeval.util.unwritable import refused_write, uncached_message

FORMAT = "chunkeval-answer/1"
ANSWERS_DIR = "answers"
_IDENTITY_FILE = "identity.txt"
_SUFFIX = ".json"
_CORRUPT_SUFFIX = ".corrupt"
LLM_ROLES = ("chunker", "generate", "judge", "relations")
"""The roles the package's LLM features ask under (``chunkeval cache clear
--role`` takes these and any other role found in the cache)."""

_ROLE = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


class AnswerCacheWarning(ChunkevalWarning):
    """A cached answer could not be trusted (corrupt, foreign key); it is set aside
    and computed again."""


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
    corrupt: int
    identities: dict[str, int]


def _checksum(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "checksum"}
    return hash_input(body)


def _slug(identity: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._@-]+", "_", identity).strip("._")[:60] or "answerer"
    return f"{slug}-{hash_input(identity)[:12]}"


class AnswerCache:
    """Verified, atomic, process-safe answers under ``<directory>/answers``.

    ``directory`` is the evaluation cache directory (the embedding cache's);
    nothing is created until the first :meth:`put`.
    """

    def __init__(
        self, directory: str | os.PathLike[str], *, read_only: bool = False
    ) -> None:
        self.directory = Path(directory)
        self.root = self.directory / ANSWERS_DIR
        self.stats = AnswerStats()
        self.read_only = read_only
        """Answers are read, never stored (a read-only cache directory)."""

    def __repr__(self) -> str:
        return f"AnswerCache({str(self.directory)!r})"

    def path(self, key: AnswerKey) -> Path:
        """Where the entry of ``key`` lives (whether or not it exists)."""
        digest = key.digest()
        return (
            self.root / key.role / _slug(key.identity) / digest[:2] / (digest + _SUFFIX)
        )

    def get(self, key: AnswerKey) -> CachedAnswer | None:
        """The verified answer for ``key``, or None (missing or not trustworthy)."""
        path = self.path(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            self._miss(key)
            return None
        except OSError as exc:
            self._distrust(path, f"unreadable ({exc})")
            self._miss(key)
            return None
        problem, record = _verify(raw, key)
        if problem is not None:
            self._distrust(path, problem)
            self._miss(key)
            return None
        self.stats.hits += 1
        self.stats._count(key.role, True)
        return CachedAnswer(record["value"], str(record.get("created", "")))

    def put(self, key: AnswerKey, value: Any) -> Path:
        """Store ``value`` (JSON-serializable) for ``key``; returns the entry's path
        (nothing is written when the cache is read-only)."""
        record: dict[str, Any] = {
            "format": FORMAT,
            **key.as_dict(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "value": value,
        }
        try:
            record["checksum"] = _checksum(record)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"answer for role {key.role!r} is not JSON-serializable: {exc}"
            ) from exc
        path = self.path(key)
        if self.read_only:
            return path
        text = json.dumps(record, ensure_ascii=False, sort_keys=True)
        try:
            ensure_cache_root(self.directory)
            identity_file = path.parent.parent / _IDENTITY_FILE
            if not identity_file.exists():
                atomic_write_text(identity_file, key.identity + "\n")
            atomic_write_text(path, text)
        except OSError as exc:
            if not refused_write(exc):
                raise
            self.read_only = True  # one warning, then answered and not stored
            message = uncached_message(f"{key.role} answers", self.directory, exc)
            warnings.warn(message, AnswerCacheWarning, stacklevel=3)
            return path
        self.stats.writes += 1
        return path

    def _miss(self, key: AnswerKey) -> None:
        self.stats.misses += 1
        self.stats._count(key.role, False)

    def _distrust(self, path: Path, problem: str) -> None:
        self.stats.corrupt += 1
        warnings.warn(
            f"{path}: cached answer not used ({problem}); it is set aside as "
            f"{path.name}{_CORRUPT_SUFFIX} and computed again",
            AnswerCacheWarning,
            stacklevel=3,
        )
        with contextlib.suppress(OSError):  # another process may have moved it
            os.replace(path, path.with_name(path.name + _CORRUPT_SUFFIX))

    # ----------------------------------------------------------------- listing

    def _identity_dirs(
        self, role: str | None = None
    ) -> Iterator[tuple[str, str, Path]]:
        if not self.root.is_dir():
            return
        for role_dir in sorted(self.root.iterdir()):
            if not role_dir.is_dir() or not _ROLE.match(role_dir.name):
                continue
            if role is not None and role_dir.name != role:
                continue
            for ident_dir in sorted(role_dir.iterdir()):
                if not ident_dir.is_dir():
                    continue
                try:
                    identity = (ident_dir / _IDENTITY_FILE).read_text("utf-8").strip()
                except OSError:
                    identity = ident_dir.name
                yield role_dir.name, identity, ident_dir

    def info(self) -> dict[str, RoleInfo]:
        """Per role: entries, bytes, corrupt entries set aside, entries per identity."""
        result: dict[str, RoleInfo] = {}
        for role, identity, path in self._identity_dirs():
            info = result.setdefault(
                role, RoleInfo(entries=0, bytes=0, corrupt=0, identities={})
            )
            count = 0
            for entry in path.glob("*/*"):
                with contextlib.suppress(FileNotFoundError):
                    info["bytes"] += entry.stat().st_size
                if entry.name.endswith(_CORRUPT_SUFFIX):
                    info["corrupt"] += 1
                elif entry.name.endswith(_SUFFIX) and not entry.name.startswith("."):
                    count += 1
            info["entries"] += count
            info["identities"][identity] = info["identities"].get(identity, 0) + count
        return result

    def clear(self, role: str | None = None, identity: str | None = None) -> int:
        """Delete the entries of one role / identity (all if None); returns how many
        entries were removed. Only files the cache wrote are deleted."""
        removed = 0
        for _, ident, path in list(self._identity_dirs(role)):
            if identity is not None and ident != identity:
                continue
            for entry in list(path.glob("*/*")):
                name = entry.name
                ours = name.endswith((_SUFFIX, _CORRUPT_SUFFIX)) or (
                    name.startswith(".") and name.endswith(".tmp")
                )
                if not ours:
                    continue
                with contextlib.suppress(FileNotFoundError):
                    entry.unlink()
                    if name.endswith(_SUFFIX) and not name.startswith("."):
                        removed += 1
            for sub in list(path.iterdir()):
                with contextlib.suppress(OSError):  # not empty: a concurrent writer
                    sub.rmdir()
            with contextlib.suppress(FileNotFoundError):
                (path / _IDENTITY_FILE).unlink()
            with contextlib.suppress(OSError):
                path.rmdir()
        return removed


def _verify(raw: bytes, key: AnswerKey) -> tuple[str | None, dict[str, Any]]:
    """(None, record) for an entry that is whole and of ``key``; else (why, {})."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return f"not valid JSON: {exc}", {}
    if not isinstance(record, dict):
        return "not a JSON object", {}
    if record.get("format") != FORMAT:
        return f"format {record.get('format')!r}, expected {FORMAT!r}", {}
    for name, expected in key.as_dict().items():
        if record.get(name) != expected:
            return f"stored for another {name} ({record.get(name)!r})", {}
    if "value" not in record or record.get("checksum") != _checksum(record):
        return "checksum mismatch", {}
    return None, record
