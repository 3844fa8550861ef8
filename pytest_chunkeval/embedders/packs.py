"""The embedding cache's files: immutable, checksummed packs of vectors, one
directory per embedder identity (:class:`IdentityStore`), with the lock that
lets one process merge them (``pack_lock.py``). See
:mod:`pytest_chunkeval.embedders.cache`.

Layout::

    <cache>/
      .gitignore, CACHEDIR.TAG           written when the cache creates the directory
      <slug>-<hash>/                     one directory per embedder identity
        identity.txt                     the identity string, for `chunkeval cache info`
        <uuid>.pack                      immutable packs of vectors
        <uuid>.pack.corrupt              a pack that failed its check, kept aside

A pack is one binary file checked as every cache entry is (``util/verified.py``'s
header: magic ``CEVPACK2``, payload length, SHA-256 of the identity's hash and the
payload), whose payload is the dimension, the count and an 8-byte hash of the
identity, then the 16-byte BLAKE2b digests of the texts, then the float32
little-endian vectors. It is written
to a temp file and renamed into place, so a reader sees a whole pack or none. Packs
are never modified; when an identity has more than ``compact_after`` packs, the
writer merges them into one new pack and deletes the ones it merged. A pack
read from disk stays in memory for the process; a pack the process wrote does
not (it holds the vectors it computed) and is read back at the first lookup
that needs it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import struct
import threading
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.embedders.base import FloatArray
from pytest_chunkeval.embedders.pack_lock import remove_stale_temps, try_lock
from pytest_chunkeval.util.files import atomic_write_text, atomic_writer
from pytest_chunkeval.util.verified import HEADER_SIZE, check, seal
from pytest_chunkeval.util.verified import CacheWarning as CacheWarning

DEFAULT_COMPACT_AFTER = 16

_MAGIC = b"CEVPACK2"
_META = struct.Struct("<IQ8s4x")  # dim, n, identity hash: the payload's start
KEY_SIZE = 16
PACK_SUFFIX = ".pack"
CORRUPT_SUFFIX = ".corrupt"
IDENTITY_FILE = "identity.txt"
LOCK_FILE = ".compact.lock"


def identity_hash(identity: str) -> bytes:
    return hashlib.blake2b(identity.encode("utf-8"), digest_size=8).digest()


def text_key(text: str) -> bytes:
    """The 16-byte digest a text is stored under."""
    return hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=KEY_SIZE
    ).digest()


def identity_dirname(identity: str) -> str:
    """A filesystem-safe, unique directory name for an identity."""
    slug = re.sub(r"[^A-Za-z0-9._@-]+", "_", identity).strip("._")[:80] or "embedder"
    return f"{slug}-{identity_hash(identity).hex()[:12]}"


@dataclass
class CacheStats:
    """Unique texts found in the cache (hits) and embedded (misses), cumulative."""

    hits: int = 0
    misses: int = 0

    @property
    def total(self) -> int:
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float:
        return self.hits / self.total if self.total else 0.0

    def __str__(self) -> str:
        if not self.total:
            return "embedding cache: no lookups"
        return (
            f"embedding cache: {self.hits} hits, {self.misses} misses "
            f"({100 * self.hit_rate:.1f}% hit rate)"
        )


class IdentityInfo(TypedDict):
    """What :meth:`EmbeddingCache.info` reports for one embedder identity."""

    entries: int
    bytes: int
    files: int
    dimension: int | None
    corrupt: int
    path: str


class _CorruptPack(Exception):
    pass


class _OtherVersion(Exception):
    """A pack written by another format version: skipped, never set aside."""


class _PackGone(Exception):
    """A pack this process wrote and did not keep in memory could not be read
    back (merged away by another process, or damaged): it is forgotten, so a
    lookup made again (:meth:`IdentityStore.refresh` first) finds its texts in
    the pack that merged them, or misses them."""


@dataclass(eq=False)
class _Pack:
    keys: bytes  # n * 16 bytes
    n: int
    dim: int
    held: FloatArray | None
    """``(n, dim)``, a read-only view of the file's bytes; None for a pack this
    process wrote: read from ``name`` at the first lookup that needs it."""
    name: str = ""

    def iter_keys(self) -> Iterator[bytes]:
        keys = self.keys
        return (keys[i : i + KEY_SIZE] for i in range(0, len(keys), KEY_SIZE))


def _encode_pack(
    id_hash: bytes, keys: bytes, vectors: FloatArray
) -> list[bytes | memoryview]:
    """The header and payload parts of a pack of C-contiguous little-endian
    float32 ``vectors``: the vectors' own bytes, not a copy of them."""
    n, dim = vectors.shape
    meta = _META.pack(dim, n, id_hash)
    body: list[bytes | memoryview] = [
        meta,
        keys,
        vectors.reshape(-1).view(np.uint8).data,
    ]
    return [seal(_MAGIC, id_hash.hex(), body), *body]


def _decode_pack(data: bytes, id_hash: bytes) -> _Pack:
    start = HEADER_SIZE + _META.size
    if len(data) < start:
        raise _CorruptPack(f"truncated: {len(data)} bytes, shorter than the header")
    magic = data[:8]
    if magic != _MAGIC:
        if magic[:7] == _MAGIC[:7]:
            raise _OtherVersion(magic.decode("ascii", "replace"))
        raise _CorruptPack("not a chunkeval pack (bad magic bytes)")
    dim, n, stored_id = _META.unpack_from(data, HEADER_SIZE)
    expected = start + n * (KEY_SIZE + 4 * dim)
    if len(data) != expected:
        raise _CorruptPack(
            f"truncated or padded: {len(data)} bytes, expected {expected}"
        )
    if stored_id != id_hash:
        raise _CorruptPack("it belongs to another embedder identity")
    problem = check(data, _MAGIC, id_hash.hex(), "embedding pack")
    if problem is not None:
        raise _CorruptPack(problem)
    keys_end = start + n * KEY_SIZE
    vectors = np.frombuffer(data, dtype="<f4", count=n * dim, offset=keys_end)
    return _Pack(data[start:keys_end], n, dim, vectors.reshape(n, dim))


def _read_pack_bytes(path: Path) -> bytes:
    """The bytes of a pack (a seam for tests of packs vanishing mid-read)."""
    return path.read_bytes()


class IdentityStore:
    """The packs of one identity directory, loaded once per process and refreshed."""

    def __init__(self, directory: Path, identity: str) -> None:
        self.directory = directory
        self.identity = identity
        self.id_hash = identity_hash(identity)
        self.lock = threading.RLock()
        self.packs: dict[str, _Pack] = {}
        self.slots: list[_Pack] = []
        # key -> slot << 32 | row: ints are much lighter than tuples at 1e6 entries.
        self.index: dict[bytes, int] = {}
        self.dim: int | None = None
        self._ignored: set[str] = set()

    def _pack_names(self) -> set[str]:
        try:
            with os.scandir(self.directory) as entries:
                return {
                    e.name
                    for e in entries
                    if e.name.endswith(PACK_SUFFIX) and not e.name.startswith(".")
                }
        except FileNotFoundError:
            return set()

    def refresh(self) -> None:
        """Load packs written since the last look; forget packs that were merged."""
        for _ in range(5):
            names = self._pack_names() - self._ignored
            gone = self.packs.keys() - names
            vanished = False
            for name in sorted(names - self.packs.keys()):
                path = self.directory / name
                try:
                    pack = _decode_pack(_read_pack_bytes(path), self.id_hash)
                except FileNotFoundError:
                    vanished = True  # merged by another process: list again
                    continue
                except _CorruptPack as exc:
                    self._set_aside(path, str(exc))
                    continue
                except _OtherVersion:
                    self._ignored.add(name)  # a newer chunkeval shares this cache
                    continue
                if self.dim is None:
                    self.dim = pack.dim
                elif pack.dim != self.dim:
                    self._ignored.add(name)
                    warnings.warn(
                        CacheWarning(
                            f"chunkeval cache: ignoring {path}: {pack.dim}-dimensional "
                            f"vectors where identity {self.identity!r} has {self.dim}; "
                            "two different embedders share this identity"
                        ),
                        stacklevel=4,
                    )
                    continue
                pack.name = name
                self.packs[name] = pack
            if gone:
                for name in gone:
                    del self.packs[name]
            if gone or len(self.slots) != len(self.packs):
                self._reindex()
            if not vanished:
                return

    def _reindex(self) -> None:
        self.slots = []
        self.index = {}
        # Insertion in name order; a key present in two packs keeps its first copy.
        for name in sorted(self.packs):
            self._index_pack(self.packs[name])
        if not self.packs:
            self.dim = None

    def _index_pack(self, pack: _Pack) -> None:
        slot = len(self.slots)
        self.slots.append(pack)
        base = slot << 32
        index = self.index
        for row, key in enumerate(pack.iter_keys()):
            index.setdefault(key, base | row)

    def _set_aside(self, path: Path, reason: str) -> None:
        self._ignored.add(path.name)
        warnings.warn(
            CacheWarning(
                f"chunkeval cache: ignoring corrupt file {path} ({reason}); its "
                "vectors will be recomputed; the file is renamed "
                f"{path.name}{CORRUPT_SUFFIX}"
            ),
            stacklevel=4,
        )
        with contextlib.suppress(OSError):  # another process may have moved it
            os.replace(path, path.with_name(path.name + CORRUPT_SUFFIX))

    def gather(
        self,
        codes: npt.NDArray[np.int64],
        out: FloatArray,
        targets: npt.NDArray[np.int64],
    ) -> bool:
        """Copy the vectors of index values ``codes`` to rows ``targets`` of
        ``out``. False when a pack written here could not be read back: it is
        forgotten, and the caller looks its keys up again."""
        slots = codes >> 32
        rows = codes & 0xFFFFFFFF
        try:
            if len(self.slots) == 1:  # the usual case once packs are compacted
                out[targets] = self._vectors(self.slots[0])[rows]
                return True
            for slot in set(slots.tolist()):  # (np.unique imports numpy.ma: 25 ms)
                sel = slots == slot
                out[targets[sel]] = self._vectors(self.slots[slot])[rows[sel]]
        except _PackGone:
            return False
        return True

    def _vectors(self, pack: _Pack) -> FloatArray:
        """A pack's vectors, read back from its file the first time for a pack
        this process wrote (then kept, as a pack read at :meth:`refresh` is)."""
        if pack.held is not None:
            return pack.held
        path = self.directory / pack.name
        try:
            read = _decode_pack(_read_pack_bytes(path), self.id_hash)
            if read.keys != pack.keys:
                raise _CorruptPack("its texts are not those this process wrote")
        except (FileNotFoundError, _OtherVersion):
            self._forget(pack)
            raise _PackGone(str(path)) from None
        except _CorruptPack as exc:
            self._set_aside(path, str(exc))
            self._forget(pack)
            raise _PackGone(str(path)) from None
        pack.held = read.held
        assert pack.held is not None
        return pack.held

    def _forget(self, pack: _Pack) -> None:
        self.packs.pop(pack.name, None)
        self._reindex()

    def add(self, keys: list[bytes], vectors: FloatArray) -> Path:
        """Write a new pack and index it. The pack does not keep the vectors:
        this process computed them and holds what it asked for; a later lookup
        of the same texts reads them back from the file (:meth:`_vectors`;
        docs/performance.md, "Memory")."""
        self.directory.mkdir(parents=True, exist_ok=True)
        id_file = self.directory / IDENTITY_FILE
        if not id_file.exists():
            atomic_write_text(id_file, self.identity + "\n")
        name = f"{uuid.uuid4().hex}{PACK_SUFFIX}"
        path = self.directory / name
        vectors = np.ascontiguousarray(vectors, dtype="<f4")
        n, dim = vectors.shape
        pack = _Pack(b"".join(keys), n, dim, None, name)
        if len(pack.keys) != KEY_SIZE * n:
            raise ValueError(f"{len(keys)} keys for {n} vectors")
        with atomic_writer(path, "wb") as fh:
            for part in _encode_pack(self.id_hash, pack.keys, vectors):
                fh.write(part)
        self.packs[name] = pack
        if self.dim is None:
            self.dim = dim
        self._index_pack(pack)
        return path

    def _smallest(self, every: bool) -> list[str]:
        """The packs a merge takes: every one, or the smallest ones (at least
        two) while the next is no larger than those taken together."""
        by_size = sorted(self.packs, key=lambda name: (self.packs[name].n, name))
        if every:
            return by_size
        taken = 0
        for count, name in enumerate(by_size):
            if count >= 2 and self.packs[name].n > taken:
                return by_size[:count]
            taken += self.packs[name].n
        return by_size

    def compact(
        self, *, force: bool = False, threshold: int = DEFAULT_COMPACT_AFTER
    ) -> bool:
        """Merge packs; True if it did. ``force``: all of them into one; else,
        past ``threshold`` packs, the smallest ones while the next is no larger
        than those taken together: a run storing each request's vectors as they
        arrive (thousands of small packs) rewrites a vector a few times (4.6 on
        average over 8,000 packs), not once per merge."""
        self.refresh()
        if len(self.packs) <= (1 if force else threshold):
            return False
        lock = self.directory / LOCK_FILE
        if not try_lock(lock):
            return False  # another process is compacting
        try:
            self.refresh()
            merged_names = self._smallest(force)
            if len(merged_names) <= 1:
                return False
            merged = {id(self.packs[name]) for name in merged_names}
            chosen = {
                key: code
                for key, code in self.index.items()
                if id(self.slots[code >> 32]) in merged
            }
            keys = list(chosen)
            codes = np.fromiter(chosen.values(), dtype=np.int64, count=len(keys))
            assert self.dim is not None
            vectors = np.empty((len(keys), self.dim), dtype=np.float32)
            if not self.gather(codes, vectors, np.arange(len(keys), dtype=np.int64)):
                return False  # a pack went away under us: merge another time
            for name in merged_names:
                del self.packs[name]
            self.add(keys, vectors)
            self._reindex()
            # Only now delete the merged packs: a reader that misses one of them
            # lists the directory again and finds the merged pack.
            for name in merged_names:
                # Gone already, or open elsewhere on Windows: a duplicate is harmless.
                with contextlib.suppress(OSError):
                    os.unlink(self.directory / name)
            remove_stale_temps(self.directory)
            return True
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)


def read_keys(path: Path) -> tuple[set[bytes], int | None]:
    """The text keys and dimension of a pack, reading only its header and keys."""
    with open(path, "rb") as fh:
        head = fh.read(HEADER_SIZE + _META.size)
        if len(head) < HEADER_SIZE + _META.size or head[:8] != _MAGIC:
            return set(), None
        dim, n, _ = _META.unpack_from(head, HEADER_SIZE)
        block = fh.read(n * KEY_SIZE)
    return {block[i : i + KEY_SIZE] for i in range(0, len(block), KEY_SIZE)}, dim
