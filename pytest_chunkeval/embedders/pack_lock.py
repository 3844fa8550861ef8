"""The lock that lets one process merge an identity's packs, and the cleanup
of temp files crashed writers left (``embedders/packs.py``)."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

_LOCK_STALE_SECONDS = 600.0
_TEMP_STALE_SECONDS = 3600.0


def try_lock(path: Path) -> bool:
    """Take the merge lock at ``path`` (False: another process holds it; a
    lock older than ten minutes is a crashed merger's and is taken over)."""
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                age = time.time() - path.stat().st_mtime
            except FileNotFoundError:
                continue
            if age < _LOCK_STALE_SECONDS:
                return False
            with contextlib.suppress(FileNotFoundError):  # a crashed compactor's lock
                os.unlink(path)
            continue
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return True
    return False


def remove_stale_temps(directory: Path) -> None:
    """Delete temp files that crashed writers left behind (never a live one)."""
    now = time.time()
    with contextlib.suppress(FileNotFoundError), os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    if now - entry.stat().st_mtime > _TEMP_STALE_SECONDS:
                        os.unlink(entry.path)
