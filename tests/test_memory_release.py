"""Freed heap memory handed back to the system after a search (util/memory.py,
docs/performance.md "Memory"): glibc only, and nothing in use is touched."""

from __future__ import annotations

import os
import sys

import pytest

from pytest_chunkeval.util.memory import release_free_memory


def _glibc() -> bool:
    try:
        return bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (AttributeError, OSError, ValueError):
        return False


def _resident() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


GLIBC = sys.platform.startswith("linux") and _glibc()


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc_trim")
def test_freed_heap_memory_goes_back_to_the_system() -> None:
    release_free_memory()
    # 32 MiB in blocks under glibc's mmap threshold (on the heap), all freed but
    # the last, which keeps the heap's top from being trimmed on its own
    blocks = [bytearray(b"x" * (96 << 10)) for _ in range(340)]
    kept = blocks[-1]
    del blocks
    before = _resident()
    assert release_free_memory()
    assert before - _resident() > 16 << 20
    assert bytes(kept) == b"x" * (96 << 10)  # what is in use stays


def test_elsewhere_it_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_chunkeval.util import memory

    def no_glibc(name: str) -> str:
        raise ValueError(name)

    memory._malloc_trim.cache_clear()
    monkeypatch.setattr(os, "confstr", no_glibc)
    try:
        assert release_free_memory() is False
    finally:
        memory._malloc_trim.cache_clear()
