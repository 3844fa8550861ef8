"""Freed heap memory handed back to the system (docs/performance.md, "Memory").

glibc's allocator keeps memory a program frees for its next allocations: after
a large block is freed it raises its thresholds, and up to twice that block's
size of free memory then stays in the process, counted in its resident size
though nothing uses it. After a step that freed much (a search's score tiles,
the copies search's tables), :func:`release_free_memory` asks glibc to return
it (``malloc_trim``). It frees nothing that is in use and changes no result;
it only lowers the resident size. Elsewhere than glibc (macOS, musl, Windows)
it does nothing.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None on another C library."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return None
    except (AttributeError, OSError, ValueError):  # not glibc, or not POSIX
        return None
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own C library
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_free_memory() -> bool:
    """Hand the heap's free memory back to the system (glibc's
    ``malloc_trim(0)``); whether it could be asked."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
