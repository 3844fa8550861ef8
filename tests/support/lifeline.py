"""Start a server process that dies with the process that started it.

A fixture's teardown stops the server it started; a test process that is killed (an
xdist worker crashing, Ctrl-C on a hung run, a CI job's timeout) runs no teardown, and
its server lived on as an orphan holding a port and a temporary folder. Two ties:

- ``pdeathsig`` (Linux): a small launcher asks the kernel to SIGKILL it when its
  parent dies (``prctl(PR_SET_PDEATHSIG)``), checks the parent is still the one that
  started it, then ``exec``s the server, which keeps the setting. The launcher is a
  separate interpreter rather than a ``preexec_fn``, which is unsafe in a process
  with threads (xdist workers have some). The kernel sends the signal when the
  *thread* that started the server exits: start it from the main thread (fixtures
  run there).
- ``watchdog`` (any POSIX system, the fallback): a second small process polls, five
  times a second, whether its parent is still the process that started the server,
  and SIGKILLs the server when it is not. ``TiedProcess.stop_watchdog`` ends it once
  the server is stopped. Also the tie for a server run as another user, who may
  not be allowed to run the launcher's interpreter.

Plain Python (no pytest), like the servers using it (``support.chroma_server``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Tie = Literal["pdeathsig", "watchdog"]
TIES: tuple[Tie, ...] = ("pdeathsig", "watchdog")

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

_LAUNCH = f"""
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl({PR_SET_PDEATHSIG}, signal.SIGKILL, 0, 0, 0) != 0:
    sys.exit(f"prctl(PR_SET_PDEATHSIG) failed: {{os.strerror(ctypes.get_errno())}}")
if os.getppid() != int(sys.argv[1]):  # the parent died before the prctl
    sys.exit(1)
os.execvp(sys.argv[2], sys.argv[2:])
"""

_WATCH = """
import os, signal, sys, time
parent, server = int(sys.argv[1]), int(sys.argv[2])
while os.getppid() == parent:
    try:
        os.kill(server, 0)
    except OSError:  # the server is gone (and was reaped): nothing to watch
        sys.exit(0)
    time.sleep(0.2)
try:
    os.kill(server, signal.SIGKILL)
except OSError:
    pass
"""


def default_tie() -> Tie:
    """``pdeathsig`` where the kernel offers it (Linux), else ``watchdog``."""
    return "pdeathsig" if sys.platform.startswith("linux") else "watchdog"


@dataclass
class TiedProcess:
    """A server process and, under the ``watchdog`` tie, its watchdog."""

    process: subprocess.Popen[bytes]
    watchdog: subprocess.Popen[bytes] | None = None

    def stop_watchdog(self) -> None:
        """End the watchdog (call once the server is stopped)."""
        if self.watchdog is not None and self.watchdog.poll() is None:
            self.watchdog.kill()
            self.watchdog.wait()


def start_tied(
    args: Sequence[str], *, tie: Tie | None = None, **popen: Any
) -> TiedProcess:
    """``subprocess.Popen(args, **popen)``, the process tied to this one's life.

    ``args[0]`` is an executable's path (or a name on PATH).
    """
    parent = str(os.getpid())
    chosen = tie or default_tie()
    if chosen == "pdeathsig":
        launcher = [sys.executable, "-S", "-c", _LAUNCH, parent]
        return TiedProcess(subprocess.Popen([*launcher, *args], **popen))
    process = subprocess.Popen(list(args), **popen)
    watchdog = subprocess.Popen(
        [sys.executable, "-S", "-c", _WATCH, parent, str(process.pid)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return TiedProcess(process, watchdog)


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a live process: neither gone nor a zombie (a killed orphan
    stays a zombie where nothing reaps it, e.g. a container's PID 1)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            state = stat.read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            return False
        return state not in {"Z", "X"}
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True
