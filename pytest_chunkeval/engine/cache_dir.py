"""The evaluation cache directory: one object for every cache in it.

A :class:`CacheDir` owns what lives under one directory (docs/embedders.md,
"The embedding cache"): the embedding packs (:attr:`CacheDir.embeddings`), the
named entries of the verify-on-read helper (:meth:`CacheDir.store`: ``tokens``,
``chunkings``, ``copies``, ``search``, ``results``; listed with their formats in
``util/cache_kinds.py``), the search results (:attr:`CacheDir.search`) and the
LLM answers (:meth:`CacheDir.answers`). A read-only directory is read and never
written, by every one of them.

Opening one (:func:`open_cache`, for the plugin and the CLI alike) checks the
directory first: one that cannot be created or used is a one-line error naming
the setting; a read-only one is read and never written (docs/troubleshooting.md,
"The cache directory cannot be written"). :func:`cache_at` gives the process's
one object per directory, so that packs loaded once serve every evaluation.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from pytest_chunkeval.embedders.cache import EmbeddingCache, default_cache_dir
from pytest_chunkeval.engine.search_cache import SearchCache
from pytest_chunkeval.errors import FileAccessError
from pytest_chunkeval.llm.answers import AnswerCache
from pytest_chunkeval.util.cache_kinds import VERIFIED_KINDS, verified_store
from pytest_chunkeval.util.files import cache_dir_access
from pytest_chunkeval.util.unwritable import PLUGIN_CACHE_SETTING
from pytest_chunkeval.util.verified import VerifiedStore

__all__ = ["PLUGIN_SETTING", "CacheDir", "cache_at", "forget_open", "open_cache"]

PLUGIN_SETTING = PLUGIN_CACHE_SETTING
"""How the pytest plugin's users set the cache directory."""


class CacheDir:
    """Every cache under one directory (see the module doc)."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        read_only: bool = False,
        embeddings: EmbeddingCache | None = None,
    ) -> None:
        self.directory = Path(directory).expanduser()
        self.embeddings = embeddings or EmbeddingCache(
            self.directory, read_only=read_only
        )
        """Vectors keyed by (embedder identity, exact text)."""
        self._read_only = read_only or self.embeddings.read_only
        self._stores: dict[str, VerifiedStore] = {}
        self._search: SearchCache | None = None

    @property
    def read_only(self) -> bool:
        """Entries are read, never written (a read-only directory, or one whose
        disk refused a write in this run)."""
        return self._read_only or self.embeddings.read_only

    def __repr__(self) -> str:
        return f"CacheDir({str(self.directory)!r})"

    def store(self, name: str) -> VerifiedStore:
        """The verified entries of kind ``name`` (one of ``VERIFIED_KINDS``)."""
        if name not in VERIFIED_KINDS:
            raise ValueError(f"no verified cache kind {name!r}: {VERIFIED_KINDS}")
        store = self._stores.get(name)
        if store is None:
            store = verified_store(self.directory, name, self.read_only)
            self._stores[name] = store
        store.read_only = store.read_only or self.read_only
        return store

    @property
    def search(self) -> SearchCache:
        """Retrieval results (the ``search`` entries)."""
        if self._search is None:
            self._search = SearchCache(self.store("search"))
        else:
            self.store("search")  # read-only from now on if the directory is
        return self._search

    def answers(self) -> AnswerCache:
        """The LLM answers kept here."""
        return AnswerCache(self.directory, store=self.store("answers"))


_OPEN: dict[str, CacheDir] = {}
_OPEN_LOCK = threading.Lock()


def cache_at(cache: CacheDir | EmbeddingCache | str | Path | None) -> CacheDir:
    """The evaluation cache: the one given, the process's one at a directory
    (``default_cache_dir()`` when None), or one holding a given embedding cache."""
    if isinstance(cache, CacheDir):
        return cache
    if isinstance(cache, EmbeddingCache):
        return CacheDir(cache.directory, embeddings=cache)
    directory = Path(default_cache_dir() if cache is None else cache).expanduser()
    where = os.path.abspath(directory)
    with _OPEN_LOCK:
        found = _OPEN.get(where)
        if found is None:
            found = _OPEN[where] = CacheDir(directory)
        return found


def forget_open() -> None:
    """Forget the caches opened in this process (their loaded packs): the next
    use reads the directory again, as a new process would."""
    with _OPEN_LOCK:
        _OPEN.clear()


def open_cache(directory: str, setting: str = PLUGIN_SETTING) -> CacheDir:
    """The cache in ``directory`` for a session or a command (its own object:
    its statistics are that run's), created if need be and checked before
    anything is embedded; ``setting`` is how the user chose it (named in the
    error)."""
    try:
        writable = cache_dir_access(directory)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise FileAccessError(
            f"the cache directory {directory} cannot be used ({reason}); set "
            f"{setting} to a writable directory"
        ) from None
    return CacheDir(directory, read_only=not writable)
