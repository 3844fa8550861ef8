"""When a cache write fails because the disk cannot take it: a full disk, a quota,
a read-only mount, a folder without write permission. Each cache then stops
storing for the rest of the run and warns once; the run goes on uncached, as it
does on a cache directory that was read-only from the start
(docs/troubleshooting.md, "The cache directory").
Standard library only."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "PLUGIN_CACHE_SETTING",
    "cache_setting",
    "refused_write",
    "setting_named",
    "uncached_message",
]

PLUGIN_CACHE_SETTING = (
    "chunkeval_cache_dir / --chunkeval-cache-dir (or CHUNKEVAL_CACHE_DIR)"
)
"""How the pytest plugin's users set the cache directory."""

_setting = [PLUGIN_CACHE_SETTING]


def cache_setting() -> str:
    """How the user of the running command sets the cache directory: the
    plugin's ini key and flag, or the CLI's flag while it runs
    (:func:`setting_named`). The cache warnings name it."""
    return _setting[-1]


@contextmanager
def setting_named(text: str) -> Iterator[None]:
    """Within: the cache directory is set by ``text`` (the CLI's
    ``--cache-dir``); the plugin's again after."""
    _setting.append(text)
    try:
        yield
    finally:
        _setting.pop()


_REFUSED = frozenset(
    code
    for code in (
        errno.ENOSPC,  # disk full
        getattr(errno, "EDQUOT", None),  # quota exceeded
        errno.EROFS,  # read-only file system
        errno.EACCES,
        errno.EPERM,
        getattr(errno, "EFBIG", None),  # file size limit
    )
    if code is not None
)


def refused_write(exc: BaseException) -> bool:
    """True when ``exc`` says the disk refused a write (full, read-only, no
    permission): the cache goes without storing; any other error is a bug."""
    return isinstance(exc, OSError) and exc.errno in _REFUSED


def uncached_message(what: str, directory: object, exc: OSError) -> str:
    """The one warning a cache gives when it stops storing: ``what`` (the
    cache), where, and why."""
    reason = exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc))
    return (
        f"chunkeval cache: cannot store {what} in {directory} ({reason}): cached "
        "entries are used, new ones are not stored for the rest of this run (free "
        f"space, or set {cache_setting()} to a writable directory)"
    )
