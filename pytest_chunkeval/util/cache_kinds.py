"""Every kind of file the evaluation cache holds, in one list.

Each kind is read back only after a check (a checksum over its key and content), and
a file that fails it is reported, set aside and computed again: a cache can cost
time, never a wrong number. The fault-injection test (``tests/test_cache_faults.py``)
corrupts every file of every kind listed here and requires results identical to a
clean run, and fails on any cache file that matches no kind: a new cache must be
listed here (with its check) to pass.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

from pytest_chunkeval.util.verified import SET_ASIDE, VerifiedStore


@dataclass(frozen=True)
class CacheKind:
    """One kind of cache entry: where its files are and what checks them."""

    name: str
    pattern: str
    """Glob of its files, relative to the cache directory."""
    module: str
    """The module that writes and verifies them."""
    check: str
    magic: bytes = b""
    """A verified store's tag (``util/verified.py``: 8 bytes, its format
    version last); empty for a kind with a format of its own."""
    what: str = ""
    """What an entry holds, in warnings."""

    @property
    def suffix(self) -> str:
        return self.pattern.rsplit("*", 1)[1]


CACHE_KINDS: tuple[CacheKind, ...] = (
    CacheKind(
        "embeddings",
        "*/*.pack",
        "pytest_chunkeval.embedders.cache",
        "SHA-256 of the identity and the pack (util/verified.py's header); "
        "identity hash and sizes checked",
    ),
    CacheKind(
        "search",
        "search/*/*.ids",
        "pytest_chunkeval.engine.search_cache",
        "SHA-256 of the key (store, chunks/vectors, queries, k) and the ids; "
        "shape checked",
        magic=b"CEVSRCH4",
        what="search results",
    ),
    CacheKind(
        "copies",
        "copies/*/*.occ",
        "pytest_chunkeval.engine.copies",
        "SHA-256 of the key (corpus, query set) and the occurrences; counts checked",
        magic=b"CEVCOPY2",
        what="excerpt copies",
    ),
    CacheKind(
        "tokens",
        "tokens/*/*.tok",
        "pytest_chunkeval.engine.token_cache",
        "SHA-256 of the key (tokenizer, document) and the bounds; bounds in the text",
        magic=b"CEVTOKN1",
        what="token bounds",
    ),
    CacheKind(
        "chunkings",
        "chunkings/*/*.chk",
        "pytest_chunkeval.engine.chunking_cache",
        "SHA-256 of the key (chunker, document) and the spans; spans in the text",
        magic=b"CEVCHNK1",
        what="chunkings",
    ),
    CacheKind(
        "results",
        "results/*/*.res",
        "pytest_chunkeval.engine.result_cache",
        "SHA-256 of the key (code, configuration, data, components) and the "
        "result; configuration and questions compared",
        magic=b"CEVRSLT1",
        what="evaluation results",
    ),
    CacheKind(
        "answers",
        "answers/*/*.ans",
        "pytest_chunkeval.llm.answers",
        "SHA-256 of the key (role, answerer, prompt version, input) and the "
        "answer; the key's parts are stored and compared",
        magic=b"CEVANSW2",
        what="LLM answers",
    ),
)

METADATA_PATTERNS: tuple[str, ...] = (
    ".gitignore",
    "CACHEDIR.TAG",
    "*/identity.txt",
    "*/.compact.lock",
)
"""Files that only describe the cache (never read as results)."""

SET_ASIDE_SUFFIX = SET_ASIDE
"""Entries that failed their check are renamed with this suffix, never read again."""


def kind_of(relative: str | PurePosixPath) -> CacheKind | None:
    """The kind of a cache file (a path relative to the cache directory)."""
    path = PurePosixPath(relative).as_posix()
    for kind in CACHE_KINDS:
        if fnmatch(path, kind.pattern) and path.count("/") == kind.pattern.count("/"):
            return kind
    return None


def is_metadata(relative: str | PurePosixPath) -> bool:
    """True for the cache's own description files and set-aside entries."""
    path = PurePosixPath(relative).as_posix()
    if path.endswith(SET_ASIDE_SUFFIX):
        return True
    return any(
        fnmatch(path, p) and path.count("/") == p.count("/") for p in METADATA_PATTERNS
    )


def verified_store(
    cache_dir: str | os.PathLike[str], name: str, read_only: bool = False
) -> VerifiedStore:
    """The entries of the verified kind ``name`` in a cache directory (the one
    place their directory, tag and suffix are written)."""
    kind = next(k for k in CACHE_KINDS if k.name == name and k.magic)
    return VerifiedStore(
        Path(cache_dir) / kind.pattern.split("/", 1)[0],
        magic=kind.magic,
        suffix=kind.suffix,
        what=kind.what,
        read_only=read_only,
    )


VERIFIED_KINDS = tuple(kind.name for kind in CACHE_KINDS if kind.magic)
"""The kinds stored by the verify-on-read helper."""
