"""Cache entries that are verified when read: the helper every evaluation cache uses.

A cache can cost time, never a wrong number. An entry is one file named by a content
hash (the *key*: a hex digest of everything the value depends on), written
atomically (:func:`~pytest_chunkeval.util.files.atomic_writer`), and checked before
its value is used::

    <directory>/<key[:2]>/<key><suffix>

    header   magic (8 bytes, one per kind), payload length (8 bytes, little
             endian), SHA-256 of the key and the payload (32 bytes)
    payload  the value, encoded by the cache that owns the kind

The key is hashed into the checksum, so a whole, valid entry copied under another
name fails as surely as a truncated file or a flipped bit. An entry that fails
(unreadable, another kind's magic, truncated or padded, checksum mismatch, or a
payload its cache's decoder refuses) is reported with :class:`CacheWarning` naming
the file, renamed ``*.corrupt`` (deleted if it cannot be renamed; left alone in a
read-only cache) and the value is computed again. A kind is listed in
:mod:`pytest_chunkeval.util.cache_kinds`, so that the fault-injection test damages
its files.

Usage (``engine/copies.py``, ``engine/token_cache.py``,
``engine/chunking_cache.py``)::

    store = VerifiedStore(cache_dir / "tokens", magic=b"CEVTOKN1", suffix=".tok",
                          what="token bounds")
    value = store.get(key, decode)      # None: missing or set aside
    if value is None:
        value = compute()
        store.put(key, encode(value))   # nothing in a read-only cache
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from pytest_chunkeval.errors import ChunkevalWarning, DataError
from pytest_chunkeval.util.files import atomic_writer
from pytest_chunkeval.util.unwritable import refused_write, uncached_message

T = TypeVar("T")

SET_ASIDE = ".corrupt"
"""Suffix of an entry that failed its check; never read again."""

_HEADER = struct.Struct("<8sQ32s")  # magic, payload length, SHA-256(key, payload)


class CacheWarning(ChunkevalWarning):
    """A cache file could not be used (corrupt, truncated, foreign); it is ignored."""


class EntryRefused(DataError):
    """Raised by a decoder: the payload passed its checksum but is not a valid value
    (a count that does not add up, a shape other than the one expected). Caught
    by :meth:`VerifiedStore.get`, which sets the entry aside."""


_STOPPED: set[str] = set()


def stop_storing(cache_dir: str | os.PathLike[str], what: str, exc: OSError) -> None:
    """A write under ``cache_dir`` that the disk refused (full, read-only, no
    permission: ``util/unwritable.py``): warn once per cache directory for the
    process, whichever cache hit it first, and store nothing more there (see
    :func:`storing_stopped`). Any other error is a bug and is raised."""
    if not refused_write(exc):
        raise exc
    where = os.path.abspath(cache_dir)
    if where in _STOPPED:
        return
    _STOPPED.add(where)
    message = uncached_message(what, cache_dir, exc)
    warnings.warn(message, CacheWarning, stacklevel=4)


def storing_stopped(cache_dir: str | os.PathLike[str]) -> bool:
    """True once a write under ``cache_dir`` was refused in this process."""
    return os.path.abspath(cache_dir) in _STOPPED


def entry_key(*parts: str) -> str:
    """A key from the parts a value depends on (a format version first): the
    SHA-256 hex digest of the parts, each length-prefixed so none can run into the
    next."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _checksum(key: str, parts: Sequence[bytes | memoryview]) -> bytes:
    h = hashlib.sha256(key.encode("ascii") + b"\0")
    for part in parts:
        h.update(part)
    return h.digest()


HEADER_SIZE = _HEADER.size
"""Bytes before an entry's payload."""


def seal(magic: bytes, key: str, parts: Sequence[bytes | memoryview]) -> bytes:
    """The header of an entry of ``key`` whose payload is ``parts`` joined: what
    :class:`VerifiedStore` writes, and the embedding packs (``embedders/packs.py``:
    many vectors to a file, merged as they pile up) write in their own files."""
    length = sum(len(part) for part in parts)
    return _HEADER.pack(magic, length, _checksum(key, parts))


def check(data: bytes, magic: bytes, key: str, what: str) -> str | None:
    """Why ``data`` is not a whole, unaltered entry of ``key`` (None: it is)."""
    if len(data) < _HEADER.size or data[:8] != magic:
        return f"not a chunkeval {what} entry (bad or missing header)"
    _, length, digest = _HEADER.unpack_from(data)
    if len(data) != _HEADER.size + length:
        return f"truncated or padded: {len(data)} bytes"
    if _checksum(key, [memoryview(data)[_HEADER.size :]]) != digest:
        return "checksum mismatch"
    return None


class VerifiedStore:
    """One kind of verify-on-read entry in one directory (see the module doc)."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        magic: bytes,
        suffix: str,
        what: str,
        read_only: bool = False,
    ) -> None:
        if len(magic) != 8:
            raise ValueError("magic must be 8 bytes")
        self.directory = Path(directory)
        self.magic = magic
        self.suffix = suffix
        self.what = what
        """What an entry holds, for warnings (``"token bounds"``)."""
        self.read_only = read_only
        """Entries are read, never written (a read-only cache directory)."""

    def path(self, key: str) -> Path:
        """Where the entry of ``key`` is."""
        return self.directory / key[:2] / f"{key}{self.suffix}"

    def get(self, key: str, decode: Callable[[memoryview], T]) -> T | None:
        """The decoded value of ``key``; None when there is no entry or it failed
        its check (then warned about and set aside). ``decode`` may raise
        :class:`EntryRefused` (or ``ValueError``) for a payload it cannot use."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.set_aside(path, f"unreadable ({exc})")
            return None
        problem = self._check(data, key)
        if problem is None:
            try:
                return decode(memoryview(data)[_HEADER.size :])
            except ValueError as exc:
                problem = f"not a valid entry ({exc})"
        self.set_aside(path, problem)
        return None

    def _check(self, data: bytes, key: str) -> str | None:
        return check(data, self.magic, key, self.what)

    def set_aside(self, path: Path, problem: str) -> None:
        """Warn that ``path`` is not used, and rename it ``*.corrupt`` (or delete
        it) so that it is never read again; a read-only cache is left as it is."""
        warnings.warn(
            f"{path}: {self.what} cache entry not used ({problem}); it is set aside "
            f"as {path.name}{SET_ASIDE} and computed again",
            CacheWarning,
            stacklevel=3,
        )
        if self.read_only:
            return
        try:
            os.replace(path, path.with_name(path.name + SET_ASIDE))
        except OSError:
            with contextlib.suppress(OSError):  # moved by another process
                path.unlink()

    def put(self, key: str, payload: bytes) -> None:
        """Write the entry of ``key`` atomically (nothing in a read-only cache).
        A disk that refuses the write (full, read-only, no permission) is warned
        about once; this store then stores nothing more and the run goes on
        (``util/unwritable.py``)."""
        if self.read_only or storing_stopped(self.directory.parent):
            return
        head = seal(self.magic, key, [payload])
        try:
            with atomic_writer(self.path(key), "wb") as fh:
                fh.write(head)
                fh.write(payload)
        except OSError as exc:
            self.read_only = True
            stop_storing(self.directory.parent, self.what, exc)

    def entries(self) -> list[Path]:
        """Every stored entry (set-aside ones excluded)."""
        return sorted(self.directory.glob(f"*/*{self.suffix}"))

    def size(self) -> tuple[int, int, int]:
        """(entries, bytes, set-aside files) on disk."""
        count = size = corrupt = 0
        for path in self.directory.glob("*/*"):
            with contextlib.suppress(OSError):
                if path.name.endswith(self.suffix):
                    count += 1
                    size += path.stat().st_size
                elif path.name.endswith(self.suffix + SET_ASIDE):
                    corrupt += 1
        return count, size, corrupt

    def clear(self) -> int:
        """Remove every entry (and set-aside file); returns how many entries."""
        removed = 0
        for path in list(self.directory.glob("*/*")):
            name = path.name
            if name.endswith(self.suffix) or name.endswith(self.suffix + SET_ASIDE):
                removed += name.endswith(self.suffix)
                path.unlink(missing_ok=True)
        return removed
