"""Start a real Chroma server (``chroma run``) on 127.0.0.1 for a test, then stop it.

Plain Python (no pytest) so any test module or benchmark script can use it::

    with ChromaServer.start(tmp_path / "chroma") as server:
        store = get_store(server.spec)   # "chroma+http://127.0.0.1:PORT"

A module-scoped fixture is the intended use (server start takes ~1 s). The server
dies with the process that started it, even one killed before its teardown
(``support.lifeline``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from support.lifeline import Tie, TiedProcess, start_tied

HOST = "127.0.0.1"
START_TIMEOUT = 30.0


class ChromaServerError(RuntimeError):
    """The server could not be started; the message ends with its log."""


def chroma_executable() -> str | None:
    """The ``chroma`` CLI next to this interpreter (the venv's), else on PATH."""
    local = Path(sys.executable).with_name("chroma")
    if local.exists():
        return str(local)
    return shutil.which("chroma")


def free_port(host: str = HOST) -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


# Loopback checks must not go through an HTTP proxy set in the environment.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def is_healthy(url: str, timeout: float = 1.0) -> bool:
    """Whether ``GET url/api/v2/heartbeat`` answers 200."""
    try:
        with _DIRECT.open(f"{url}/api/v2/heartbeat", timeout=timeout) as r:
            return int(r.status) == 200
    except (OSError, urllib.error.URLError):
        return False


@dataclass
class ChromaServer:
    """A running ``chroma run`` process."""

    tied: TiedProcess
    port: int
    path: Path
    log_path: Path
    host: str = HOST
    startup_seconds: float = field(default=0.0)

    @property
    def process(self) -> subprocess.Popen[bytes]:
        return self.tied.process

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def spec(self) -> str:
        """The store spec naming this server."""
        return f"chroma+{self.url}"

    def log(self) -> str:
        """Everything the server wrote so far (stdout and stderr)."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    @classmethod
    def start(
        cls,
        path: Path,
        *,
        timeout: float = START_TIMEOUT,
        attempts: int = 3,
        executable: str | None = None,
        tie: Tie | None = None,
    ) -> ChromaServer:
        """Start a server storing its data under ``path`` and wait until healthy.

        A port picked free may be taken before the server binds it; a server that
        exits early is retried on a new port, up to ``attempts`` times. ``tie``: how
        the server dies with this process (``support.lifeline``; default: the
        platform's).
        """
        exe = executable or chroma_executable()
        if exe is None:
            raise ChromaServerError("the `chroma` CLI is not installed (chromadb)")
        path.mkdir(parents=True, exist_ok=True)
        error: ChromaServerError | None = None
        for attempt in range(attempts):
            server = cls._launch(exe, path, path / f"server-{attempt}.log", tie)
            try:
                server._wait(timeout)
                return server
            except ChromaServerError as exc:
                exited_early = server.process.poll() is not None
                server.stop()
                error = exc
                if not exited_early:  # hung, not a port clash: retrying won't help
                    break
        assert error is not None
        raise error

    @classmethod
    def _launch(
        cls, exe: str, path: Path, log_path: Path, tie: Tie | None
    ) -> ChromaServer:
        port = free_port()
        data = path / "data"
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"}
        with log_path.open("wb") as log:
            tied = start_tied(
                [exe, "run", "--path", str(data), "--host", HOST, "--port", str(port)],
                tie=tie,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=path,
            )
        return cls(tied=tied, port=port, path=data, log_path=log_path)

    def _wait(self, timeout: float) -> None:
        began = time.monotonic()
        deadline = began + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ChromaServerError(
                    f"chroma run exited with code {self.process.returncode} before "
                    f"answering on {self.url}; its log:\n{self.log()}"
                )
            if is_healthy(self.url, timeout=min(1.0, timeout)):
                self.startup_seconds = time.monotonic() - began
                return
            time.sleep(0.1)
        raise ChromaServerError(
            f"chroma run did not answer on {self.url} within {timeout:.0f} s; "
            f"its log:\n{self.log()}"
        )

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server (kill it if it does not exit within ``timeout``)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        self.tied.stop_watchdog()

    def __enter__(self) -> ChromaServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
