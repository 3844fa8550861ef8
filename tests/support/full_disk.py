"""Whether this machine lets a test mount a small tmpfs inside ``unshare -m``:
a real full disk (the tests patch a write raising ENOSPC where it does not)."""

from __future__ import annotations

import shutil
import subprocess
import sys


def _can_unshare() -> bool:
    if not shutil.which("unshare") or not sys.platform.startswith("linux"):
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


UNSHARE = _can_unshare()
